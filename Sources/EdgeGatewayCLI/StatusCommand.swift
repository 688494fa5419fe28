import ArgumentParser
import EdgeConfig
import EdgeGatewayApp
import EdgeStore
import Foundation

/// What a gateway is doing: each store, listener, upstream and discovery, as its /health reports them; and, when no
/// gateway runs, what the data directory remembers about the upstreams (their remote UUIDs).
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract:
            "Show the running gateway's listeners, upstreams (activity, progress, errors, remote UUIDs) and stores.",
        discussion: "Exits 0 when the gateway answers, 1 when it does not (its stored remote UUIDs are shown then)."
    )

    @OptionGroup var options: ConfigurationOptions

    @Flag(help: "Print the ops endpoint's JSON report as it is.")
    var json = false

    func run() async throws {
        // As `serve` reads it: a listener or upstream whose file is missing is reported by the gateway, not refused.
        let configuration = try options.load(unusableFiles: .disableEntry)
        let ops = configuration.ops
        let host = ["0.0.0.0", "::", ""].contains(ops.address) ? "127.0.0.1" : ops.address
        let answer: HealthProbe.Answer
        do {
            answer = try await HealthProbe(host: host, port: ops.port, timeout: .seconds(5)).fetch(path: "/health")
        } catch {
            print("Gateway \(configuration.node.name): not running (\(host):\(ops.port): \(error))")
            try await printStoredUpstreams(configuration)
            throw ExitCode(1)
        }
        if json {
            print(String(decoding: answer.body, as: UTF8.self))
            return
        }
        guard let report = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any] else {
            printError("the ops endpoint answered HTTP \(answer.statusCode) without a JSON report")
            throw ExitCode(1)
        }
        print("Gateway \(configuration.node.name) at \(host):\(ops.port): \(report["status"] as? String ?? "unknown")")
        let components = report["components"] as? [[String: Any]] ?? []
        for kind in ["store", "listener", "upstream", "discovery"] {
            let ofKind = components.filter { ($0["kind"] as? String) == kind }
            guard !ofKind.isEmpty else { continue }
            print("\n\(kind.capitalized)s")
            for component in ofKind {
                print(Self.describe(component))
            }
        }
    }

    static func describe(_ component: [String: Any]) -> String {
        let name = component["name"] as? String ?? "?"
        let status = component["status"] as? String ?? "?"
        var lines = ["  \(name): \(status)" + ((component["reason"] as? String).map { " (\($0))" } ?? "")]
        let details = component["details"] as? [String: Any] ?? [:]
        for key in details.keys.sorted() {
            guard let value = details[key], !(value is NSNull) else { continue }
            lines.append("    \(key): \(value)")
        }
        return lines.joined(separator: "\n")
    }

    private func printStoredUpstreams(_ configuration: GatewayConfiguration) async throws {
        guard !configuration.upstreams.isEmpty else { return }
        print("\nUpstreams (from the data directory)")
        let store = try DocumentStore.forConfiguration(configuration)
        for upstream in configuration.upstreams {
            let database = try await store.openConfigured(try configuration.databaseSettings(named: upstream.database))
            var uuid = upstream.remoteUUID
            if uuid == nil {
                uuid = try await UpstreamRemoteUUID.stored(upstream: upstream.name, in: database)
            }
            print("  \(upstream.name): \(upstream.database) → \(upstream.url.absoluteString)")
            print("    remoteUUID: \(uuid ?? "none yet (generated on first contact)")")
        }
    }
}

/// Upstream maintenance that works on the data directory.
struct UpstreamCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upstream",
        abstract: "Show or reset an upstream's remote UUID.",
        subcommands: [ResetUUID.self]
    )

    struct ResetUUID: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-uuid",
            abstract: "Forget the generated remote UUID of an upstream, e.g. after pointing it at another server.",
            discussion: """
                The next start generates a new one, so the upstream is treated as new: replication starts from no \
                checkpoint and compares every document again (what the other side already has is not sent twice). \
                Stop the gateway first: a running one keeps the UUID it started with. A configured remote_uuid is \
                not affected; change it in the file instead.
                """
        )

        @OptionGroup var options: ConfigurationOptions

        @Argument(help: "The [[upstream]] name.")
        var name: String

        func run() async throws {
            let configuration = try options.load()
            guard let upstream = configuration.upstreams.first(where: { $0.name == name }) else {
                printError(
                    "no upstream named \"\(name)\"; configured: \(configuration.upstreams.map(\.name).joined(separator: ", "))"
                )
                throw ExitCode(2)
            }
            if let configured = upstream.remoteUUID {
                printError(
                    "upstream \"\(name)\" has remote_uuid = \"\(configured)\" in its configuration; change it there")
                throw ExitCode(1)
            }
            let store = try DocumentStore.forConfiguration(configuration)
            let database = try await store.openConfigured(try configuration.databaseSettings(named: upstream.database))
            if let previous = try await UpstreamRemoteUUID.reset(upstream: name, in: database) {
                print(
                    "Forgot remote UUID \(previous) of upstream \"\(name)\"; a new one is generated at the next start.")
            } else {
                print("Upstream \"\(name)\" has no stored remote UUID yet.")
            }
        }
    }
}
