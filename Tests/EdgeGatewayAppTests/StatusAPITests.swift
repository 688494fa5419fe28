import EdgeConfig
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import GatewayConfigurationFile
import HummingbirdTesting
import Logging
import Testing

@testable import EdgeGatewayApp

@Suite("Ops API: listeners, upstreams and pending documents")
struct StatusAPITests {
    @Test("/upstreams reports status and remote UUID; /pending lists unpushed documents; unknown names are 404")
    func upstreamsAndPending() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "edge-status-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let seed = try DocumentStore(dataDirectory: directory)
        let database = try await seed.database(named: "inventory")
        for index in 0..<3 {
            try await database.save("doc-\(index)", body: Data(#"{"n":\#(index)}"#.utf8), parentRevID: nil)
        }
        try database.close()
        try await withClosedLoopbackPort { unreachable in
            let configuration = try GatewayTOML(
                name: "status", dataDirectory: directory.path, listeners: [GatewayTOML.listener()],
                upstreams: [
                    GatewayTOML.upstream(url: "ws://127.0.0.1:\(unreachable)/inventory", type: "push").setting(
                        "remote_uuid", "hub-uuid")
                ]
            ).configuration()
            let application = try await buildApplication(configuration: configuration, logger: Logger(label: "status"))
            try await application.test(.live) { client in
                try await client.execute(uri: "/upstreams", method: .get) { response in
                    #expect(response.status == .ok)
                    let upstreams = try #require(
                        try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [[String: Any]])
                    #expect(upstreams.first?["name"] as? String == "hub")
                    #expect(upstreams.first?["remoteUUID"] as? String == "hub-uuid")
                    #expect(upstreams.first?["direction"] as? String == "push")
                }
                try await client.execute(uri: "/upstreams/hub/pending", method: .get) { response in
                    #expect(response.status == .ok)
                    let report = try #require(
                        try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
                    #expect(report["documentIDs"] as? [String] == ["doc-0", "doc-1", "doc-2"])
                }
                try await client.execute(uri: "/upstreams/hub/pending/doc-1", method: .get) { response in
                    #expect(String(buffer: response.body).contains(#""pending":true"#))
                }
                try await client.execute(uri: "/upstreams/hub/pending/other", method: .get) { response in
                    #expect(String(buffer: response.body).contains(#""pending":false"#))
                }
                try await client.execute(uri: "/upstreams/nope/pending", method: .get) { response in
                    #expect(response.status == .notFound)
                }
                try await client.execute(uri: "/listeners", method: .get) { response in
                    #expect(response.status == .ok)
                    let listeners = try #require(
                        try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [[String: Any]])
                    #expect(listeners.first?["name"] as? String == "lan")
                    #expect(listeners.first?["activeConnections"] as? Int == 0)
                    #expect(
                        (listeners.first?["databases"] as? [[String: Any]])?.first?["name"] as? String == "inventory")
                }
            }
        }
    }
}
