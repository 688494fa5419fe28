import EdgeConfig
import EdgeCredentials
import EdgeGatewayTestSupport
import EdgePairing
import EdgeStore
import Foundation
import GatewayConfigurationFile
import HummingbirdTesting
import ListenerUsersFile
import Logging
import Testing
import UpstreamDialer

@testable import EdgeGatewayApp

@Suite("The status page on the ops endpoint")
struct StatusPageTests {
    /// A name with every character that HTML treats specially; user names may hold them, node names too.
    static let hostileUser = "<i>eve&co's</i>"
    static let password = "correct horse battery staple"

    @Test("/ shows the node, its health, the listener with its fingerprint and the pairing code, all escaped")
    func page() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("edge-page-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let usersFile = try Self.writeUsersFile(in: directory)
        let configuration = try GatewayTOML(
            name: "Shed <b>&'north'</b>", dataDirectory: directory.path,
            listeners: [GatewayTOML.listener(tls: "self-signed", auth: "basic", usersFile: usersFile)]
        ).configuration()
        let application = try await buildApplication(configuration: configuration, logger: Logger(label: "page"))
        try await application.test(.live) { client in
            let entry = try await Self.waitForPairing(client)
            let port = try PairingPayload(decoding: entry.payload).port
            let nodeID = try String(contentsOf: directory.appendingPathComponent("node-id"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)

            let page = try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                #expect(response.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
                #expect(response.headers[.cacheControl] == "no-store")
                return String(buffer: response.body)
            }
            #expect(page.hasPrefix("<!doctype html>"))
            #expect(page.contains(#"<meta name="viewport" content="width=device-width, initial-scale=1">"#))
            #expect(page.contains(#"<script src="/status-page/script.js" defer></script>"#))
            #expect(page.contains(#"<main id="live" data-source="/status-page/live">"#))
            // Nothing is loaded from anywhere but the ops endpoint itself.
            #expect(!page.contains("src=\"http") && !page.contains("href=\"http") && !page.contains("url("))

            #expect(page.contains("<h1>Shed &lt;b&gt;&amp;&#39;north&#39;&lt;/b&gt;</h1>"))
            #expect(!page.contains("<b>&"))
            #expect(page.contains("<title>Shed &lt;b&gt;&amp;&#39;north&#39;&lt;/b&gt; · EdgeGateway</title>"))
            #expect(page.contains("<code>\(nodeID)</code>"))
            #expect(page.contains("<dd>\(EdgeGatewayVersion.current)</dd>"))
            #expect(page.contains(#"<span class="state state-up" data-figure="health">up</span>"#))
            #expect(page.contains(#"data-component="store/inventory"><span class="state state-up">up</span>"#))
            #expect(page.contains(#"data-component="listener/lan"><span class="state state-up">up</span>"#))

            #expect(page.contains("<code class=\"url\">wss://127.0.0.1:\(port)/inventory</code>"))
            #expect(page.contains("SHA-256 <code class=\"digest\">\(entry.sha256)</code>"))
            #expect(page.contains(#"<b class="figure" data-figure="listener.lan.open">0</b>"#))
            #expect(page.contains("No device connected."))
            #expect(page.contains("No upstream is configured."))

            // The pairing code is the payload's, with the payload as text under it (its `&`s escaped).
            #expect(entry.payload.contains("&"))
            let svg = try QRCode(encoding: entry.payload).svgRendering()
            #expect(page.contains(svg))
            #expect(
                page.contains(
                    "<code class=\"payload\">\(entry.payload.replacingOccurrences(of: "&", with: "&amp;"))</code>"))

            // No secret: not the password, not its hash, not the key.
            let hash = try String(contentsOfFile: usersFile, encoding: .utf8)
            #expect(!page.contains(Self.password))
            #expect(!page.contains("$scrypt$") && !hash.isEmpty)
            #expect(!page.contains("PRIVATE KEY") && !page.contains("BEGIN"))

            let live = try await client.execute(uri: "/status-page/live", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                return String(buffer: response.body)
            }
            #expect(!live.contains("<html") && !live.contains("<script"))
            #expect(live.contains("<h1>Shed &lt;b&gt;&amp;&#39;north&#39;&lt;/b&gt;</h1>"))
            #expect(live.contains(svg))

            try await client.execute(uri: "/status-page/style.css", method: .get) { response in
                #expect(response.headers[.contentType] == "text/css; charset=utf-8")
                #expect(String(buffer: response.body).contains(".qr-code"))
            }
            try await client.execute(uri: "/status-page/script.js", method: .get) { response in
                #expect(response.headers[.contentType] == "text/javascript; charset=utf-8")
                #expect(String(buffer: response.body).contains("data-source"))
            }
        }
    }

    @Test("a replication over a real socket shows on both pages: the device with its user and counts, the upstream")
    func replicationShows() async throws {
        let hubDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "edge-hub-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: hubDirectory) }
        let usersFile = try Self.writeUsersFile(in: hubDirectory)
        try await Self.seed(hubDirectory, documents: ["hub-1", "hub-2"])
        let hubConfiguration = try GatewayTOML(
            name: "hub", dataDirectory: hubDirectory.path,
            listeners: [GatewayTOML.listener(auth: "basic", usersFile: usersFile)]
        ).configuration()
        let hub = try await buildApplication(configuration: hubConfiguration, logger: Logger(label: "hub"))
        try await hub.test(.live) { hubClient in
            let port = try await UpstreamTests.listenerPort(hubClient)
            let before = try await Self.live(hubClient)
            #expect(before.contains(#"data-figure="listener.lan.open">0<"#))
            #expect(before.contains(#"data-figure="listener.lan.total">0<"#))
            #expect(before.contains("No TLS listener is serving, so there is nothing to pair with."))
            #expect(before.contains("Listener lan has TLS off: there is no certificate to pair with."))
            #expect(before.contains(#"<span class="warn">off: plain ws://, unencrypted</span>"#))
            #expect(before.contains(#"<span class="detail" data-detail="lastSequence">last sequence <b>2</b></span>"#))

            let edgeDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "edge-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: edgeDirectory) }
            try await Self.seed(edgeDirectory, documents: ["edge-1", "edge-2", "edge-3", "edge-4", "edge-5"])
            let edgeConfiguration = try GatewayTOML(
                name: "edge", dataDirectory: edgeDirectory.path,
                upstreams: [
                    GatewayTOML.upstream(url: "ws://127.0.0.1:\(port)/inventory").setting(
                        "username", .string(Self.hostileUser)
                    ).setting("remote_uuid", "hub-inventory")
                ]
            ).configuration(environment: ["EDGE_GATEWAY_UPSTREAM_HUB_PASSWORD": Self.password])
            let edge = try await buildApplication(configuration: edgeConfiguration, logger: Logger(label: "edge"))
            try await edge.test(.live) { edgeClient in
                let during = try await Self.waitForLive(hubClient) {
                    $0.contains(#"data-figure="listener.lan.pushed">5<"#)
                        && $0.contains(#"data-figure="listener.lan.pulled">2<"#)
                }
                #expect(during.contains(#"data-figure="listener.lan.open">1<"#))
                #expect(during.contains(#"data-figure="listener.lan.total">1<"#))
                #expect(during.contains(#"<td data-label="Device"><code>127.0.0.1:"#))
                #expect(during.contains(#"<td data-label="User">&lt;i&gt;eve&amp;co&#39;s&lt;/i&gt;</td>"#))
                #expect(during.contains(#"<td data-label="Database">inventory</td>"#))
                // Which app and protocol generation the device runs: the edge's replicator (`protocol = "auto"`)
                // speaks CBMobile_4 to another gateway.
                #expect(
                    during.contains(
                        #"<span class="muted">CBMobile_4, version vectors (Couchbase Lite 4)</span></span></td>"#))
                #expect(during.contains(#"<td data-label="Since"><time datetime=""#))
                #expect(during.contains(#" s ago)</span></td>"#))
                #expect(during.contains(#"<td data-label="Pushed" class="number">5</td>"#))
                #expect(during.contains(#"<td data-label="Pulled" class="number">2</td>"#))
                #expect(
                    during.contains(#"<span class="detail" data-detail="lastSequence">last sequence <b>7</b></span>"#))
                #expect(!during.contains(Self.hostileUser))
                // The ops API reports the same connection, as JSON.
                let listeners = try await hubClient.execute(uri: "/listeners", method: .get) { response in
                    try #require(
                        try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [[String: Any]])
                }
                let connection = try #require((listeners.first?["connections"] as? [[String: Any]])?.first)
                #expect(connection["user"] as? String == Self.hostileUser)
                #expect(connection["database"] as? String == "inventory")
                #expect(connection["subprotocol"] as? String == "BLIP_3+CBMobile_4")
                #expect((connection["userAgent"] as? String)?.isEmpty == false)
                #expect((connection["peer"] as? String)?.hasPrefix("127.0.0.1:") == true)
                #expect(connection["documentsPushed"] as? Int == 5)
                #expect(connection["documentsPulled"] as? Int == 2)
                #expect(connection["since"] is String)
                #expect(listeners.first?["documentsPushed"] as? Int == 5)
                #expect(!during.contains(Self.password))

                let upstream = try await Self.waitForLive(edgeClient) {
                    $0.contains(#"data-figure="upstream.hub.activity">idle<"#)
                        && $0.contains(#"<dt>Last success</dt><dd><time datetime=""#)
                }
                // Seven documents went one way or the other; revisions the other side already had count too.
                let progress = try #require(
                    upstream.firstMatch(of: #/<b data-figure="upstream.hub.completed">(\d+)</b> of (\d+) revisions/#))
                #expect(Int(progress.1)! >= 7 && progress.1 == progress.2)
                #expect(upstream.contains("<code class=\"url\">ws://127.0.0.1:\(port)/inventory</code>"))
                #expect(upstream.contains("<dd><code>hub-inventory</code></dd>"))
                #expect(upstream.contains("<dd>inventory · push-and-pull, continuous</dd>"))
                #expect(upstream.contains("<dt>Last error</dt><dd>none</dd>"))
                #expect(
                    upstream.contains(
                        #"<dt>Protocol</dt><dd>CBMobile_4, version vectors (Couchbase Lite 4)<span class="muted"> (protocol = "auto")</span></dd>"#
                    ))
                #expect(!upstream.contains(Self.password))
            }
            // The edge has stopped: its connection is gone, what it moved stays in the listener's totals.
            let after = try await Self.waitForLive(hubClient) { $0.contains(#"data-figure="listener.lan.open">0<"#) }
            #expect(after.contains(#"data-figure="listener.lan.total">1<"#))
            #expect(after.contains(#"data-figure="listener.lan.pushed">5<"#))
            #expect(after.contains("No device connected."))
        }
    }

    @Test("an upstream that cannot connect shows as degraded, with its error")
    func upstreamError() async throws {
        try await withClosedLoopbackPort { unreachable in
            try await withTemporaryGateway(
                upstreams: [GatewayTOML.upstream(url: "ws://127.0.0.1:\(unreachable)/inventory", type: "push")]
            ) { application in
                try await application.test(.live) { client in
                    // The attempt's error is recorded a moment before the upstream's state moves to retrying.
                    let live = try await Self.waitForLive(client) {
                        $0.contains("<span class=\"error\">")
                            && $0.contains(#"data-component="upstream/hub"><span class="state state-degraded">"#)
                    }
                    #expect(live.contains(#"data-figure="health">degraded<"#))
                    #expect(live.contains("<dt>Last success</dt><dd>not yet</dd>"))
                    let offline = try await Self.waitForLive(client) {
                        $0.contains(#"data-figure="upstream.hub.activity">offline<"#)
                    }
                    #expect(offline.contains(#"<span class="reason">retrying after attempt"#))
                }
            }
        }
    }

    @Test("escaping covers the five characters that can start markup or end an attribute")
    func escaping() {
        #expect(
            "<a href=\"x\">Tom & Jerry's</a>".htmlEscaped
                == "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;")
        let name = "<script>alert(1)</script>"
        let html: HTML = "<p title=\"\(name)\">\(name)</p>"
        #expect(
            html.markup
                == "<p title=\"&lt;script&gt;alert(1)&lt;/script&gt;\">&lt;script&gt;alert(1)&lt;/script&gt;</p>")
        #expect(StatusPageSnapshot.duration(seconds: 12) == "12 s")
        #expect(StatusPageSnapshot.duration(seconds: 4 * 60 + 10) == "4 min 10 s")
        #expect(StatusPageSnapshot.duration(seconds: 2 * 3600 + 5 * 60 + 9) == "2 h 5 min")
        #expect(StatusPageSnapshot.duration(seconds: 3 * 86_400 + 4 * 3600) == "3 d 4 h")
        #expect(StatusPageSnapshot.words("lastSequence") == "last sequence")
        #expect(StatusPageSnapshot.words("remoteUUID") == "remote UUID")
        #expect(StatusPageSnapshot.words("tls") == "tls")
        #expect(StatusPageSnapshot.clockTime(Date(timeIntervalSince1970: 0)) == "1970-01-01 00:00:00 UTC")
    }

    // MARK: - Helpers

    static func writeUsersFile(in directory: URL) throws -> String {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("users.toml").path
        let hash = try PasswordHash.make(
            password: password, parameters: .init(logRounds: 4, blockSize: 8, parallelism: 1))
        try UsersFile.write([ListenerUser(name: hostileUser, passwordHash: hash)], to: path)
        return path
    }

    static func seed(_ directory: URL, documents: [String]) async throws {
        let store = try DocumentStore(dataDirectory: directory)
        let database = try await store.database(named: "inventory")
        for id in documents {
            try await database.save(id, body: Data(#"{"secret":"body of \#(id)"}"#.utf8), parentRevID: nil)
        }
        try database.close()
    }

    static func live(_ client: some TestClientProtocol) async throws -> String {
        try await client.execute(uri: "/status-page/live", method: .get) { String(buffer: $0.body) }
    }

    static func waitForLive(
        _ client: some TestClientProtocol, until condition: (String) -> Bool
    ) async throws -> String {
        var last = ""
        for _ in 0..<200 {
            last = try await live(client)
            if condition(last) {
                #expect(!last.contains("body of"), "the page shows no document contents")
                return last
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("the status page never showed the expected state; last:\n\(last)")
        throw CancellationError()
    }

    static func waitForPairing(_ client: some TestClientProtocol) async throws -> PairingService.Entry {
        for _ in 0..<50 {
            let entries = try await client.execute(uri: "/pairing", method: .get) { response in
                try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [[String: String]]
            }
            if let entry = entries?.first, let payload = entry["payload"], let sha256 = entry["sha256"] {
                return PairingService.Entry(
                    listener: entry["listener"] ?? "", database: entry["database"] ?? "", payload: payload,
                    sha256: sha256)
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CancellationError()
    }
}

/// A device the gateway cannot serve shows on the status page, escaped, with the hint, and in the metrics.
@Suite("Turned-away devices on the status page and in the metrics")
struct TurnedAwayStatusTests {
    @Test("a 4.x-and-later app offering only a newer subprotocol: a row with its user-agent, offer and hint; counted")
    func turnedAwayDevice() async throws {
        try await withTemporaryGateway(listeners: [GatewayTOML.listener()]) { gateway in
            try await gateway.test(.live) { client in
                let port = try await UpstreamTests.listenerPort(client)
                let dialer = try TestGateway.dialer(
                    port: port, database: "inventory", subprotocols: ["BLIP_3+CBMobile_5"],
                    userAgent: "CouchbaseLite/5.0.0 (<b>phone</b>)")
                let refusal = await ListenerUpgradeRefusal.status(of: dialer)
                #expect(refusal == 403)
                let page = try await client.execute(uri: "/", method: .get) { String(buffer: $0.body) }
                #expect(page.contains("Devices turned away"))
                #expect(page.contains("CouchbaseLite/5.0.0 (&lt;b&gt;phone&lt;/b&gt;)"))
                #expect(!page.contains("<b>phone</b>"))
                #expect(page.contains("<code>BLIP_3+CBMobile_5</code>"))
                #expect(page.contains("newer than this gateway speaks"))
                let metrics = try await MetricsEndpointTests.scrape(client)
                #expect(
                    metrics.value(
                        "edgegateway_listener_turned_away_total",
                        ["listener": "lan", "reason": "no_common_subprotocol"]) == 1)
                #expect(
                    metrics.value(
                        "edgegateway_listener_turned_away_total",
                        ["listener": "lan", "reason": "incompatible_versioning"]) == 0)
            }
        }
    }
}

/// The status a refused upgrade got; nil when it was accepted or failed otherwise.
enum ListenerUpgradeRefusal {
    static func status(of dialer: UpstreamDialer) async -> Int? {
        do {
            try await dialer.run { _ in }
        } catch let UpstreamDialError.upgradeRefused(_, status, _, _, _) {
            return status
        } catch {}
        return nil
    }
}
