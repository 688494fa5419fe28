import EdgeGatewayTestSupport
import Foundation
import Testing

@Suite("edge-gateway replicate and status")
struct ReplicateCommandTests {
    @Test("replicate pushes a local database to a running gateway with plain progress lines; status reports it")
    func pushFromTheCommandLine() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let listenerPort = try freeLoopbackPort()
        let hub = try PairedUpstreamTests.Node(
            name: "hub", directory: root.appendingPathComponent("hub"),
            body: PairedUpstreamTests.listenerSection(port: listenerPort, tls: "off"))
        let client = ["--data-dir", root.appendingPathComponent("client").path]
        for index in 0..<5 {
            let put = try await EdgeGatewayBinary.run(["docs", "put", "doc-\(index)", #"{"n": \#(index)}"#] + client)
            #expect(put.status == 0, "\(put.standardError)")
        }
        let server = try await hub.serve()
        defer { PairedUpstreamTests.stop(server) }

        let replicate = try await EdgeGatewayBinary.run(
            ["replicate", "--url", "ws://127.0.0.1:\(listenerPort)/inventory", "--push"] + client)
        #expect(replicate.status == 0, "\(replicate.standardError)")
        // Not a terminal: plain lines, the last one the final state.
        #expect(replicate.standardOutput.split(separator: "\n").last == "stopped 5/5")
        #expect(try await hub.run(["docs", "get", "doc-4"]).standardOutput.contains(#""n""#))

        let refused = try await EdgeGatewayBinary.run(
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
        let listenerPort = try freeLoopbackPort()
        // Right after the node's [[database]] header, so the key belongs to the `inventory` database.
        let collections = #"collections = ["_default._default", "store.orders"]"#
        let hub = try PairedUpstreamTests.Node(
            name: "hub", directory: root.appendingPathComponent("hub"),
            body: collections + "\n\n" + PairedUpstreamTests.listenerSection(port: listenerPort, tls: "off"))
        let client = try PairedUpstreamTests.Node(
            name: "client", directory: root.appendingPathComponent("client"), body: collections)
        for index in 0..<3 {
            let put = try await client.run(
                ["docs", "put", "order-\(index)", #"{"qty": \#(index)}"#, "--collection", "store.orders"])
            #expect(put.status == 0, "\(put.standardError)")
        }
        let server = try await hub.serve()
        defer { PairedUpstreamTests.stop(server) }
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
        let hub = try PairedUpstreamTests.listenerNode(
            directory: root.appendingPathComponent("hub"), port: listenerPort)
        // 127.0.0.2 is loopback too, but the listener is bound to 127.0.0.1 only: that address refuses.
        let pair = try await hub.run(["pair", "--format", "text", "--address", "127.0.0.2"])
        let unreachableFirst = try #require(pair.standardOutput.split(separator: "\n").first.map(String.init))
            .replacingOccurrences(of: "a=127.0.0.2&", with: "a=127.0.0.2,127.0.0.1&")
        let client = ["--data-dir", root.appendingPathComponent("client").path]
        #expect(try await EdgeGatewayBinary.run(["docs", "put", "paired", #"{"ok": true}"#] + client).status == 0)
        let server = try await hub.serve()
        defer { PairedUpstreamTests.stop(server) }

        let replicate = try await EdgeGatewayBinary.run(
            ["replicate", "--pairing", unreachableFirst, "--push"] + client)
        #expect(replicate.status == 0, "\(replicate.standardError)")
        #expect(replicate.standardOutput.split(separator: "\n").last == "stopped 1/1")
        #expect(try await hub.run(["docs", "get", "paired"]).status == 0)

        let sha256 = try #require(PairingCommandTests.sha256Parameter(unreachableFirst))
        let forged = unreachableFirst.replacingOccurrences(
            of: "s256=\(sha256)",
            with: "s256="
                + PairingCommandTests.base64URL(colonHex: Array(repeating: "AB", count: 32).joined(separator: ":")))
        let refused = try await EdgeGatewayBinary.run(["replicate", "--pairing", forged, "--push"] + client)
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("pair again"), "\(refused.standardError)")
        let pinned = try await EdgeGatewayBinary.run(
            ["replicate", "--pairing", unreachableFirst, "--self-signed-only", "--push"] + client)
        #expect(pinned.status != 0)
        #expect(pinned.standardError.contains("--pairing pins the certificate"), "\(pinned.standardError)")
    }
}
