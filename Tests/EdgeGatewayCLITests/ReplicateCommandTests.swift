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
            body: """
                [[listener]]
                name = "lan"
                interface = "127.0.0.1"
                port = \(listenerPort)
                tls = "off"
                auth = "none"
                databases = ["inventory"]
                """)
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
}
