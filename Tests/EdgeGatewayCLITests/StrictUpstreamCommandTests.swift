import EdgeGatewayTestSupport
import EdgeIdentity
import Foundation
import Logging
import NIOSSL
import Testing
import UpstreamStandIns

/// `replicate` and `pairing = "…"` upstreams against an upstream as strict as LiteCore's listeners: a real
/// gateway (a child process) behind a front door that answers 405 to any upgrade request not laid out exactly as
/// Couchbase Lite lays it out.
@Suite("The command line against a LiteCore-strict upstream")
struct StrictUpstreamCommandTests {
    @Test("replicate --url pushes and pulls through the strict upstream over ws://")
    func replicateOverPlainWebSocket() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        var hub = try GatewayProcess(directory: root.appendingPathComponent("hub"))
        let listenerPort = hub.listenerPort
        #expect(try await hub.run(["docs", "put", "from-hub", #"{"n": 1}"#]).status == 0)
        let client = ["--data-dir", root.appendingPathComponent("client").path]
        #expect(try await EdgeGatewayExecutable.run(["docs", "put", "from-client", #"{"n": 2}"#] + client).status == 0)
        try await hub.start()
        defer { _ = hub.terminate() }

        try await StrictUpgradeProxy.run(backendPort: listenerPort) { port, proxy in
            let replicate = try await EdgeGatewayExecutable.run(
                ["replicate", "--url", "ws://127.0.0.1:\(port)/inventory"] + client)
            #expect(replicate.status == 0, "\(replicate.standardError)")
            #expect(proxy.refusals == 0)
            #expect(proxy.requestHeads.count >= 1)
        }
        #expect(try await hub.run(["docs", "get", "from-client"]).standardOutput.contains(#""n""#))
        #expect(
            try await EdgeGatewayExecutable.run(["docs", "get", "from-hub"] + client).standardOutput.contains(#""n""#))
    }

    /// Runs `body` with a strict front door that presents `hub`'s own certificate and relays to its TLS listener,
    /// and `hub`'s pairing payload rewritten to name the front door's port.
    static func withStrictFrontDoor(
        of hub: GatewayProcess, listenerPort: Int,
        _ body: (_ payload: String, _ proxy: StrictUpgradeProxy) async throws -> Void
    ) async throws {
        let pair = try await hub.run(["pair", "--format", "text", "--address", "127.0.0.1"])
        #expect(pair.status == 0, "\(pair.standardError)")
        let payload = try #require(pair.standardOutput.split(separator: "\n").first { $0.hasPrefix("edgegw://") })
        let identity = try TLSIdentity.loadOrCreateSelfSigned(
            directory: hub.directory.appendingPathComponent("data/identity").path, commonName: "hub",
            logger: Logger(label: "test"))
        let frontTLS = try NIOSSLContext(configuration: try identity.serverTLSConfiguration())
        try await StrictUpgradeProxy.run(
            backendPort: listenerPort, options: .init(frontTLS: frontTLS, backendTLS: true)
        ) { port, proxy in
            let rewritten = payload.replacingOccurrences(of: "&p=\(listenerPort)&", with: "&p=\(port)&")
            #expect(rewritten != String(payload), "the payload names its port as p=…")
            try await body(rewritten, proxy)
        }
    }

    @Test("replicate --pairing and a pairing = \"…\" upstream sync through the strict upstream over wss://")
    func pairingOverTLS() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let listenerPort = try freeLoopbackPort()
        var hub = try PairedUpstreamTests.listenerNode(
            directory: root.appendingPathComponent("hub"), port: listenerPort)
        try await Self.withStrictFrontDoor(of: hub, listenerPort: listenerPort) { payload, proxy in
            try await hub.start()
            defer { _ = hub.terminate() }

            let client = ["--data-dir", root.appendingPathComponent("client").path]
            #expect(
                try await EdgeGatewayExecutable.run(["docs", "put", "by-command", #"{"n": 1}"#] + client).status == 0)
            let replicate = try await EdgeGatewayExecutable.run(["replicate", "--pairing", payload, "--push"] + client)
            #expect(replicate.status == 0, "\(replicate.standardError)")
            #expect(try await hub.run(["docs", "get", "by-command"]).standardOutput.contains(#""n""#))

            let fingerprint = try await PairingCommandTests.showSHA256(config: hub.configPath)
            let pinned = try await EdgeGatewayExecutable.run(
                [
                    "replicate", "--url", "wss://127.0.0.1:\(Self.payloadPort(payload))/inventory", "--pull",
                    "--pinned-sha256", fingerprint,
                ] + client)
            #expect(pinned.status == 0, "\(pinned.standardError)")

            var node = try PairedUpstreamTests.upstreamNode(
                directory: root.appendingPathComponent("node"), target: ["pairing": .string(payload)])
            #expect(try await node.run(["docs", "put", "by-upstream", #"{"n": 2}"#]).status == 0)
            try await node.start()
            defer { _ = node.terminate() }
            try await PairedUpstreamTests.eventually("by-upstream to reach the hub") {
                try await hub.run(["docs", "get", "by-upstream"]).standardOutput.contains(#""n""#)
            }
            #expect(proxy.refusals == 0)
        }
    }

    static func payloadPort(_ payload: String) -> String {
        URLComponents(string: payload)?.queryItems?.first { $0.name == "p" }?.value ?? ""
    }
}
