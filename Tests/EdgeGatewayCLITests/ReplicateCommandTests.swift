import EdgeGatewayTestSupport
import Foundation
import GatewayConfigurationFile
import Testing

@Suite("edge-gateway replicate and status")
struct ReplicateCommandTests {
    @Test("replicate pushes a local database to a running gateway with plain progress lines; status reports it")
    func pushFromTheCommandLine() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        var hub = try GatewayProcess(directory: root.appendingPathComponent("hub"))
        let listenerPort = hub.listenerPort
        let client = ["--data-dir", root.appendingPathComponent("client").path]
        for index in 0..<5 {
            let put = try await EdgeGatewayExecutable.run(
                ["docs", "put", "doc-\(index)", #"{"n": \#(index)}"#] + client)
            #expect(put.status == 0, "\(put.standardError)")
        }
        try await hub.start()
        defer { _ = hub.terminate() }

        let replicate = try await EdgeGatewayExecutable.run(
            ["replicate", "--url", "ws://127.0.0.1:\(listenerPort)/inventory", "--push"] + client)
        #expect(replicate.status == 0, "\(replicate.standardError)")
        // Not a terminal: plain lines, the last one the final state.
        #expect(replicate.standardOutput.split(separator: "\n").last == "stopped 5/5")
        #expect(try await hub.run(["docs", "get", "doc-4"]).standardOutput.contains(#""n""#))
        // The same checkpoint over rev trees: nothing is left to push.
        let overRevisionTrees = try await EdgeGatewayExecutable.run(
            ["replicate", "--url", "ws://127.0.0.1:\(listenerPort)/inventory", "--push", "--protocol", "3"] + client)
        #expect(overRevisionTrees.status == 0, "\(overRevisionTrees.standardError)")
        let unknownProtocol = try await EdgeGatewayExecutable.run(
            ["replicate", "--url", "ws://127.0.0.1:\(listenerPort)/inventory", "--push", "--protocol", "5"] + client)
        #expect(unknownProtocol.status != 0)
        #expect(unknownProtocol.standardError.contains("--protocol"), "\(unknownProtocol.standardError)")

        let refused = try await EdgeGatewayExecutable.run(
            ["replicate", "--url", "ws://127.0.0.1:\(listenerPort)/nothing", "--push"] + client)
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("HTTP 404"), "\(refused.standardError)")

        let status = try await hub.run(["status"])
        #expect(status.status == 0, "\(status.standardError)")
        #expect(status.standardOutput.contains("Listeners"))
        #expect(status.standardOutput.contains("lan: up"))
    }

    @Test("replicate --collection pushes a named collection; one the database lacks is refused by name")
    func pushNamedCollection() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let collections: GatewayTOML.Value = .strings(["_default._default", "store.orders"])
        var hub = try GatewayProcess(directory: root.appendingPathComponent("hub")) {
            $0.databases[0]["collections"] = collections
        }
        let listenerPort = hub.listenerPort
        let client = try GatewayProcess(directory: root.appendingPathComponent("client")) {
            $0.databases[0]["collections"] = collections
            $0.listeners = []
        }
        for index in 0..<3 {
            let put = try await client.run(
                ["docs", "put", "order-\(index)", #"{"qty": \#(index)}"#, "--collection", "store.orders"])
            #expect(put.status == 0, "\(put.standardError)")
        }
        try await hub.start()
        defer { _ = hub.terminate() }
        let url = "ws://127.0.0.1:\(listenerPort)/inventory"

        let replicate = try await client.run(["replicate", "--url", url, "--push", "--collection", "store.orders"])
        #expect(replicate.status == 0, "\(replicate.standardError)")
        #expect(replicate.standardOutput.split(separator: "\n").last == "stopped 3/3")
        let pushed = try await hub.run(["docs", "get", "order-2", "--collection", "store.orders"])
        #expect(pushed.standardOutput.contains(#""qty""#), "\(pushed.standardError)")

        let refused = try await client.run(["replicate", "--url", url, "--push", "--collection", "store.returns"])
        #expect(refused.status != 0)
        #expect(
            refused.standardError.contains("store.returns is not a collection of database 'inventory'"),
            "\(refused.standardError)")
    }

    @Test("replicate --pairing finds the hub through the kit past an unreachable address; a forged digest exits 1")
    func pushThroughPairing() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let listenerPort = try freeLoopbackPort()
        var hub = try PairedUpstreamTests.listenerNode(
            directory: root.appendingPathComponent("hub"), port: listenerPort)
        // 127.0.0.2 is loopback too, but the listener is bound to 127.0.0.1 only: that address refuses.
        let pair = try await hub.run(["pair", "--format", "text", "--address", "127.0.0.2"])
        let unreachableFirst = try #require(pair.standardOutput.split(separator: "\n").first.map(String.init))
            .replacingOccurrences(of: "a=127.0.0.2&", with: "a=127.0.0.2,127.0.0.1&")
        let client = ["--data-dir", root.appendingPathComponent("client").path]
        #expect(try await EdgeGatewayExecutable.run(["docs", "put", "paired", #"{"ok": true}"#] + client).status == 0)
        try await hub.start()
        defer { _ = hub.terminate() }

        let replicate = try await EdgeGatewayExecutable.run(
            ["replicate", "--pairing", unreachableFirst, "--push"] + client)
        #expect(replicate.status == 0, "\(replicate.standardError)")
        #expect(replicate.standardOutput.split(separator: "\n").last == "stopped 1/1")
        #expect(try await hub.run(["docs", "get", "paired"]).status == 0)

        let sha256 = try #require(PairingCommandTests.sha256Parameter(unreachableFirst))
        let forged = unreachableFirst.replacingOccurrences(
            of: "s256=\(sha256)",
            with: "s256="
                + PairingCommandTests.base64URL(colonHex: Array(repeating: "AB", count: 32).joined(separator: ":")))
        let refused = try await EdgeGatewayExecutable.run(["replicate", "--pairing", forged, "--push"] + client)
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("pair again"), "\(refused.standardError)")
        let pinned = try await EdgeGatewayExecutable.run(
            ["replicate", "--pairing", unreachableFirst, "--self-signed-only", "--push"] + client)
        #expect(pinned.status != 0)
        #expect(pinned.standardError.contains("--pairing pins the certificate"), "\(pinned.standardError)")
    }
}
