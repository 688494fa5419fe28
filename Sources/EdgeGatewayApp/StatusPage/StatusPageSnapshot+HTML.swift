import EdgePairing
import Foundation
import ReplicationProtocol
import SyncListener

extension StatusPageSnapshot {
    /// The whole page: the live part as of now, in a shell that links the stylesheet and the refresh script.
    /// It reads completely without the script; the script only keeps the live part current.
    func pageHTML(liveSource: String, stylesheet: String, script: String) -> String {
        let page: HTML = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="color-scheme" content="light dark">
            <title>\(health.node) · EdgeGateway</title>
            <link rel="icon" href="data:,">
            <link rel="stylesheet" href="\(stylesheet)">
            <script src="\(script)" defer></script>
            </head>
            <body>
            <div class="bar"><span class="brand">EdgeGateway</span>\
            <span id="refresh" class="refresh">Snapshot of \(Self.clockTime(takenAt)); reload to update</span></div>
            <main id="live" data-source="\(liveSource)">
            \(liveContent)
            </main>
            </body>
            </html>

            """
        return page.markup
    }

    /// The part of the page that the script replaces on every refresh.
    var liveHTML: String { liveContent.markup }

    private var liveContent: HTML {
        """
        \(nodeHeader)
        \(healthSection)
        \(listenersSection)
        \(upstreamsSection)
        \(pairingSection)
        <p class="taken">As of <time datetime="\(takenAt.ISO8601Format())">\(Self.clockTime(takenAt))</time></p>
        """
    }

    private var nodeIDText: HTML {
        nodeID.map { id -> HTML in "<code>\(id.description)</code>" }
            ?? "<span class=\"muted\">unknown: the data directory cannot be read</span>"
    }

    private var nodeHeader: HTML {
        """
        <header class="node">
        <div class="title"><h1>\(health.node)</h1>\(Self.badge(health.status.rawValue, figure: "health"))</div>
        <dl class="facts">
        <div><dt>Node ID</dt><dd>\(nodeIDText)</dd></div>
        <div><dt>Version</dt><dd>\(health.version)</dd></div>
        <div><dt>Up for</dt><dd data-figure="uptime">\(Self.duration(seconds: health.uptimeSeconds))</dd></div>
        <div><dt>Ready</dt><dd>\(health.ready ? "yes" : "starting")</dd></div>
        </dl>
        </header>
        """
    }

    private var healthSection: HTML {
        let rows = health.components.map { component -> HTML in
            // Listeners and upstreams have cards of their own below; repeating their figures here would bury the
            // store's and discovery's few.
            let hasCard = component.kind == .listener || component.kind == .upstream
            let details = component.details.sorted { $0.key < $1.key }.compactMap { key, value -> HTML? in
                guard !hasCard, let text = Self.text(of: value) else { return nil }
                return "<span class=\"detail\" data-detail=\"\(key)\">\(Self.words(key)) <b>\(text)</b></span>"
            }
            let reason: HTML =
                component.reason.map { reason -> HTML in "<span class=\"reason\">\(reason)</span>" } ?? ""
            return """
                <li data-component="\(component.kind.rawValue)/\(component.name)">\
                \(Self.badge(component.status.rawValue))\
                <span class="component"><span class="kind">\(component.kind.rawValue)</span> \
                <strong>\(component.name)</strong></span>\(reason)\
                <span class="details">\(details)</span></li>
                """
        }
        return """
            <section class="health"><h2>Health</h2>
            <ul class="components">\(rows)</ul>
            </section>
            """
    }

    private var listenersSection: HTML {
        guard !listeners.isEmpty else {
            let notStarted = health.components.contains { $0.kind == .listener }
            let text = notStarted ? "No listener is running: see Health for why." : "No listener is configured."
            return "<section><h2>Listeners</h2><p class=\"empty\">\(text)</p></section>"
        }
        return """
            <section class="listeners"><h2>Listeners</h2>
            \(listeners.map { Self.card(for: $0, at: takenAt) })
            </section>
            """
    }

    private static func card(for listener: Listener, at now: Date) -> HTML {
        let status = listener.status
        let name = status.name
        let urls: HTML =
            listener.urls.isEmpty
            ? "<span class=\"muted\">no address that devices can reach</span>"
            : "\(listener.urls.map { url -> HTML in "<code class=\"url\">\(url)</code>" })"
        let tls: HTML =
            listener.certificateSHA256.map { digest -> HTML in "SHA-256 <code class=\"digest\">\(digest)</code>" }
            ?? "<span class=\"warn\">off: plain ws://, unencrypted</span>"
        let connections = status.connections.map { connection -> HTML in
            """
            <tr><td data-label="Device"><code>\(connection.peer)</code></td>\
            <td data-label="App"><span>\(connection.userAgent ?? "—")<br>\
            <span class="muted">\(Self.protocolName(connection.subprotocol))</span></span></td>\
            <td data-label="User">\(connection.user ?? "—")</td>\
            <td data-label="Database">\(connection.database)</td>\
            <td data-label="Since">\(timestamp(connection.since, now: now))</td>\
            <td data-label="Pushed" class="number">\(connection.documentsPushed)</td>\
            <td data-label="Pulled" class="number">\(connection.documentsPulled)</td></tr>
            """
        }
        let table: HTML =
            connections.isEmpty
            ? "<p class=\"empty\">No device connected.</p>"
            : """
            <table class="connections"><thead><tr><th>Device</th><th>App</th><th>User</th><th>Database</th><th>Since</th>\
            <th class="number">Pushed</th><th class="number">Pulled</th></tr></thead>
            <tbody>\(connections)</tbody></table>
            """
        let turnedAway = status.turnedAway.reversed().map { client -> HTML in
            """
            <tr><td data-label="When">\(timestamp(client.at, now: now))</td>\
            <td data-label="Device"><code>\(client.peer)</code><br><span class="muted">\(client.userAgent ?? "no user-agent")</span></td>\
            <td data-label="Offered"><code>\(client.offered)</code></td>\
            <td data-label="Why">\(client.hint)</td></tr>
            """
        }
        let turnedAwayTable: HTML =
            turnedAway.isEmpty
            ? ""
            : """
            <h4 class="warn">Devices turned away: <b data-figure="listener.\(name).turnedAway">\
            \(status.turnedAwayCounts.values.reduce(0, +))</b> since start</h4>
            <table class="connections turned-away"><thead><tr><th>When</th><th>Device</th><th>Offered</th>\
            <th>Why</th></tr></thead>
            <tbody>\(turnedAway)</tbody></table>
            """
        return """
            <article class="card" data-listener="\(name)">
            <h3>\(name) \(badge(state(of: status.state), figure: "listener.\(name).state"))</h3>
            <dl class="pairs">
            <dt>URL</dt><dd class="urls">\(urls)</dd>
            <dt>TLS</dt><dd>\(tls)</dd>
            <dt>Sign-in</dt><dd>\(listener.authentication)</dd>
            <dt>Devices</dt><dd><b class="figure" data-figure="listener.\(name).open">\(status.activeConnections)</b> \
            connected (at most \(listener.maxConnections)) · \
            <b data-figure="listener.\(name).total">\(status.totalConnections)</b> since start · \
            <b data-figure="listener.\(name).pushed">\(status.documentsPushed)</b> documents pushed · \
            <b data-figure="listener.\(name).pulled">\(status.documentsPulled)</b> pulled</dd>
            </dl>
            \(table)
            \(turnedAwayTable)
            </article>
            """
    }

    /// How a connection's subprotocol reads to an operator: which generation of apps speaks it.
    static func protocolName(_ subprotocol: String) -> String {
        switch ReplicationSubprotocol(rawValue: subprotocol).replicationVersion {
        case 4?: "CBMobile_4, version vectors (Couchbase Lite 4)"
        case 3?: "CBMobile_3, revision trees (Couchbase Lite 3)"
        case 2?: "CBMobile_2, revision trees (Couchbase Lite 2)"
        default: subprotocol
        }
    }

    private var upstreamsSection: HTML {
        guard !upstreams.isEmpty else {
            let notStarted = health.components.contains { $0.kind == .upstream }
            let text = notStarted ? "No upstream is running: see Health for why." : "No upstream is configured."
            return "<section><h2>Upstreams</h2><p class=\"empty\">\(text)</p></section>"
        }
        let cards = upstreams.map { upstream -> HTML in
            let progress: HTML =
                upstream.total > 0
                ? "<progress max=\"\(upstream.total)\" value=\"\(min(upstream.completed, upstream.total))\"></progress> "
                : ""
            let error: HTML =
                upstream.lastError.map { error -> HTML in "<span class=\"error\">\(error)</span>" } ?? "none"
            return """
                <article class="card" data-upstream="\(upstream.name)">
                <h3>\(upstream.name) \(Self.badge(upstream.activity, figure: "upstream.\(upstream.name).activity"))</h3>
                <dl class="pairs">
                <dt>Database</dt><dd>\(upstream.database) · \(upstream.direction)\
                \(upstream.continuous ? ", continuous" : ", once")</dd>
                <dt>Remote</dt><dd><code class="url">\(upstream.url)</code></dd>
                <dt>Remote UUID</dt><dd><code>\(upstream.remoteUUID)</code></dd>
                <dt>Protocol</dt><dd>\(upstream.subprotocol.map(Self.protocolName) ?? "not connected yet")\
                <span class="muted"> (protocol = \"\(upstream.protocolSetting)\")</span></dd>
                <dt>Progress</dt><dd>\(progress)<b data-figure="upstream.\(upstream.name).completed">\(upstream.completed)\
                </b> of \(upstream.total) revisions</dd>
                <dt>Last success</dt><dd>\(upstream.lastSuccess.map { Self.timestamp($0, now: takenAt) } ?? "not yet")</dd>
                <dt>Last error</dt><dd>\(error)</dd>
                </dl>
                </article>
                """
        }
        return """
            <section class="upstreams"><h2>Upstreams</h2>
            \(cards)
            </section>
            """
    }

    private var pairingSection: HTML {
        let codes = pairing.map { entry -> HTML in
            let image: HTML
            do {
                image = .trusted(try QRCode(encoding: entry.payload).svgRendering())
            } catch {
                image = "<p class=\"error\">No QR code: \(String(describing: error))</p>"
            }
            return """
                <figure class="qr" data-pairing="\(entry.listener)/\(entry.database)">
                <div class="qr-code" role="img" aria-label="QR code pairing database \(entry.database)">\(image)</div>
                <figcaption><strong>\(entry.database)</strong> on listener \(entry.listener)
                <code class="payload">\(entry.payload)</code>
                <span class="muted">Certificate SHA-256 <code>\(entry.sha256)</code></span></figcaption>
                </figure>
                """
        }
        let withoutTLS = listenersWithoutTLS.map { name -> HTML in
            "<p class=\"muted\">Listener \(name) has TLS off: there is no certificate to pair with.</p>"
        }
        let intro: HTML =
            codes.isEmpty
            ? "<p class=\"empty\">No TLS listener is serving, so there is nothing to pair with.</p>"
            : """
            <p class="hint">Scan a code with the app to connect it to this gateway and pin its certificate; \
            <code>edge-gateway pair</code> prints the same codes.</p>
            """
        return """
            <section class="pairing"><h2>Pair a device</h2>
            \(intro)
            <div class="codes">\(codes)</div>
            \(withoutTLS)
            </section>
            """
    }

    private static func badge(_ state: String, figure: String? = nil) -> HTML {
        let attribute: HTML = figure.map { figure -> HTML in " data-figure=\"\(figure)\"" } ?? ""
        return "<span class=\"state state-\(state)\"\(attribute)>\(state)</span>"
    }

    private static func state(of state: ListenerStatus.State) -> String {
        switch state {
        case .starting: "starting"
        case .running: "running"
        case .stopped: "stopped"
        case .failed: "failed"
        }
    }

    private static func text(of value: HealthValue) -> String? {
        switch value {
        case .string(let text): text
        case .integer(let number): String(number)
        case .boolean(let flag): flag ? "yes" : "no"
        case .none: nil
        }
    }

    /// A health detail's key as words: `lastSequence` reads "last sequence", `remoteUUID` "remote UUID".
    static func words(_ key: String) -> String {
        var words = ""
        let characters = Array(key)
        for (index, character) in characters.enumerated() {
            let startsWord = character.isUppercase && index > 0 && characters[index - 1].isLowercase
            let beginsLowercaseWord = index + 1 < characters.count && characters[index + 1].isLowercase
            if startsWord { words.append(" ") }
            words.append(startsWord && beginsLowercaseWord ? Character(character.lowercased()) : character)
        }
        return words
    }

    /// `2026-11-24 21:30:05 UTC`: the page may be read from another time zone than the gateway's.
    static func clockTime(_ date: Date) -> String {
        date.ISO8601Format().replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
    }

    /// The time, and how long ago it was as of `now`: what a person wants to know at a glance.
    private static func timestamp(_ date: Date, now: Date) -> HTML {
        let ago = duration(seconds: max(0, Int(now.timeIntervalSince(date))))
        return
            "<time datetime=\"\(date.ISO8601Format())\">\(clockTime(date))</time> <span class=\"ago\">(\(ago) ago)</span>"
    }

    /// `3 d 4 h`, `2 h 5 min`, `4 min 10 s`, `12 s`: the two largest units are enough to read at a glance.
    static func duration(seconds: Int) -> String {
        let days = seconds / 86_400
        let hours = seconds % 86_400 / 3_600
        let minutes = seconds % 3_600 / 60
        let rest = seconds % 60
        if days > 0 { return "\(days) d \(hours) h" }
        if hours > 0 { return "\(hours) h \(minutes) min" }
        if minutes > 0 { return "\(minutes) min \(rest) s" }
        return "\(rest) s"
    }
}
