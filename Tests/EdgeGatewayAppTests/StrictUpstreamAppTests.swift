import EdgeConfig
import EdgeGatewayTestSupport
import EdgeIdentity
import EdgeStore
import Foundation
import GatewayConfigurationFile
import Hummingbird
import HummingbirdTesting
import Logging
import NIOSSL
import Testing
import UpstreamStandIns

@testable import EdgeGatewayApp

/// `[[upstream]]` entries of a running gateway against an upstream as strict as LiteCore's listeners, and what
/// /health and the status API say when an upstream refuses the upgrade.
@Suite("Upstreams against a LiteCore-strict listener")
struct StrictUpstreamAppTests {
    /// Runs a gateway whose `inventory` holds `documents` documents and whose only upstream is `upstream`.
    static func withEdge(
        documents: Int, upstream: GatewayTOML.Table,
        _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let directory = try await seededInventoryDirectory(documents: documents)
        try await withTemporaryGateway(upstreams: [upstream], dataDirectory: directory) { edge in
            try await edge.test(.live) { client in try await body(client) }
        }
    }

    @Test("an [[upstream]] pushes through the strict listener over ws:// and wss://", arguments: ["ws", "wss"])
    func upstreamPushes(scheme: String) async throws {
        let identityDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("edge-strict-identity-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: identityDirectory) }
        let identity = try TLSIdentity.loadOrCreateSelfSigned(
            directory: identityDirectory.path, commonName: "strict-hub", logger: Logger(label: "test"))
        let frontTLS = scheme == "wss" ? try NIOSSLContext(configuration: try identity.serverTLSConfiguration()) : nil
        try await withTemporaryGateway(
            listeners: [GatewayTOML.listener()]
        ) { hub in
            try await hub.test(.live) { hubClient in
                let hubPort = try await UpstreamTests.listenerPort(hubClient)
                try await StrictUpgradeProxy.run(backendPort: hubPort, options: .init(frontTLS: frontTLS)) {
                    port, proxy in
                    var upstream = GatewayTOML.upstream(
                        url: "\(scheme)://127.0.0.1:\(port)/inventory", type: "push", continuous: false)
                    if scheme == "wss" {
                        upstream["server_trust"] = "pinned"
                        upstream["pinned_sha256"] = .string(identity.sha256Fingerprint.colonHex)
                    }
                    try await Self.withEdge(documents: 25, upstream: upstream) { edgeClient in
                        let upstream = try await UpstreamTests.waitFor(.upstream, in: edgeClient) {
                            $0.details["completed"] == .integer(25)
                        }
                        #expect(upstream.status == .up)
                        try await UpstreamTests.waitFor(.store, in: hubClient) {
                            $0.details["lastSequence"] == .integer(25)
                        }
                    }
                    #expect(proxy.refusals == 0)
                    #expect(proxy.requestHeads.first?.contains("\r\nConnection: Upgrade\r\n") == true)
                }
            }
        }
    }

    @Test("a 405 on the upgrade stops the upstream; /health and the status API name the URL, status and body")
    func refusalIsReported() async throws {
        try await ScriptedUpgradeServer.run(
            answer: .refuse(status: "405 Method Not Allowed", body: StrictUpgradeProxy.refusalBody)
        ) { port in
            let url = "ws://127.0.0.1:\(port)/inventory"
            try await Self.withEdge(
                documents: 1,
                upstream: GatewayTOML.upstream(url: url, type: "push")
            ) { client in
                let upstream = try await UpstreamTests.waitFor(.upstream, in: client) { $0.status == .down }
                let reason = try #require(upstream.reason)
                #expect(reason.contains(url), "\(reason)")
                #expect(reason.contains("HTTP 405"), "\(reason)")
                #expect(reason.contains(StrictUpgradeProxy.refusalBody), "\(reason)")
                try await client.execute(uri: "/upstreams", method: .get) { response in
                    let text = String(buffer: response.body)
                    #expect(text.contains("HTTP 405"), "\(text)")
                    #expect(text.contains("127.0.0.1:\(port)"), "\(text)")
                    #expect(text.contains("Method Not Allowed"), "\(text)")
                }
            }
        }
    }
}
