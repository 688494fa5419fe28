import EdgeGatewayTestSupport
import EdgeIdentity
import EdgeStore
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import ReplicationProtocol
import Testing
import UpstreamDialer
import UpstreamStandIns

@testable import EdgeReplication

/// The active replicator against an upstream as strict as LiteCore's listeners: its upgrade request must carry
/// exactly what Couchbase Lite 3.2.4 sends, or it is answered 405 and nothing syncs.
@Suite("Active replicator against a LiteCore-strict upstream")
struct StrictUpstreamTests {
    /// The recorded Couchbase Lite 3.2.4 upgrade requests (the repository's copies of the fixtures).
    static func recordedRequestHeads(
        release: String = "cbl-3.2.4", sessions: [String] = ["push-oneshot", "auth-fail", "pull-oneshot"]
    ) throws -> [String] {
        let directory = packageRoot.appendingPathComponent("Tests/BLIPCodecTests/Fixtures/\(release)")
        var heads: [String] = []
        for name in sessions {
            let text = try String(contentsOf: directory.appendingPathComponent("\(name).jsonl"), encoding: .utf8)
            for line in text.split(separator: "\n") {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                if object?["kind"] as? String == "http_request", let request = object?["text"] as? String {
                    heads.append(request.components(separatedBy: "\r\n\r\n")[0])
                }
            }
        }
        return heads
    }

    /// `(name, value)` pairs of a head's header lines, as written.
    static func headerFields(_ head: String) -> [(name: String, value: String)] {
        head.components(separatedBy: "\r\n").dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
    }

    static func replicate(
        _ direction: ActiveReplicator.Direction, url: String, in database: DocumentDatabase,
        authentication: ActiveReplicator.Authentication = .none, tls: ClientTLSConfiguration? = nil,
        subprotocols: [ReplicationSubprotocol] = ReplicationSubprotocol.revisionTreeOffer
    ) async throws -> ActiveReplicator.Status {
        let replicator = ActiveReplicator(
            database: database,
            configuration: .init(
                remoteURL: url, remoteUUID: "strict-\(direction)", direction: direction,
                authentication: authentication, tls: tls, subprotocols: subprotocols),
            logger: testLogger)
        try await replicator.run()
        return await replicator.status()
    }

    /// A TLS server context for the proxy from a fresh self-signed identity, and a client pin for it.
    static func proxyTLS() throws -> (server: NIOSSLContext, pin: ClientTLSConfiguration, directory: URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "edge-strict-\(UUID().uuidString)")
        let identity = try TLSIdentity.loadOrCreateSelfSigned(
            directory: directory.path, commonName: "strict-upstream", logger: testLogger)
        let server = try NIOSSLContext(configuration: try identity.serverTLSConfiguration())
        let pin = try ServerTrustPolicy.pinned(certificateDER: identity.derBytes).clientTLSConfiguration()
        return (server, pin, directory)
    }

    @Test("LiteCore's rule: Connection exactly Upgrade and Upgrade exactly websocket, nothing else")
    func strictRule() {
        let base = "GET /db/_blipsync HTTP/1.1\r\nHost: 127.0.0.1:4984\r\n"
        #expect(
            StrictUpgradeProxy.refusalReason(requestHead: base + "Connection: Upgrade\r\nUpgrade: websocket") == nil)
        #expect(
            StrictUpgradeProxy.refusalReason(requestHead: base + "Connection: upgrade\r\nUpgrade: websocket") != nil)
        #expect(
            StrictUpgradeProxy.refusalReason(
                requestHead: base + "Connection: keep-alive, Upgrade\r\nUpgrade: websocket")
                != nil)
        #expect(
            StrictUpgradeProxy.refusalReason(requestHead: base + "Connection: Upgrade\r\nUpgrade: WebSocket") != nil)
        #expect(StrictUpgradeProxy.refusalReason(requestHead: base + "Upgrade: websocket") != nil)
    }

    @Test("the proxy answers NIO's own request layout (Connection: upgrade) with 405, as LiteCore does")
    func refusesLowercaseConnection() async throws {
        try await TestGateway.run { gateway in
            try await StrictUpgradeProxy.run(backendPort: gateway.port) { port, proxy in
                let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connect(host: "127.0.0.1", port: port) { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                        }
                    }
                let response = try await channel.executeThenClose { inbound, outbound in
                    try await outbound.write(
                        ByteBuffer(
                            string: "GET /db/_blipsync HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
                                + "Connection: upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                                + "Sec-WebSocket-Protocol: BLIP_3+CBMobile_3\r\n\r\n"))
                    var text = ""
                    for try await var chunk in inbound {
                        text += chunk.readString(length: chunk.readableBytes) ?? ""
                    }
                    return text
                }
                #expect(response.hasPrefix("HTTP/1.1 405 Method Not Allowed\r\n"))
                #expect(response.hasSuffix(StrictUpgradeProxy.refusalBody))
                #expect(proxy.refusals == 1)
            }
        }
    }

    @Test("the upgrade request carries exactly the headers Couchbase Lite 3.2.4 sends, in its order")
    func requestMatchesCouchbaseLite() async throws {
        let recorded = try Self.recordedRequestHeads()
        let withCredentials = try #require(recorded.first { $0.contains("\r\nAuthorization: ") })
        let withoutCredentials = try #require(recorded.first { !$0.contains("\r\nAuthorization: ") })
        try await TestGateway.run(settings: TestGateway.settings(authentication: TestGateway.users)) { gateway in
            try await StrictUpgradeProxy.run(backendPort: gateway.port) { port, proxy in
                try await LocalDatabase.run { local in
                    try await saveDocuments(2, prefix: "h", in: local.database)
                    _ = try await Self.replicate(
                        .push, url: "ws://127.0.0.1:\(port)/db", in: local.database,
                        authentication: .basic(user: "alice", password: "s3cret"))
                }
                let sent = try #require(proxy.requestHeads.first)
                #expect(sent.hasPrefix("GET /db/_blipsync HTTP/1.1\r\n"))
                let ours = Self.headerFields(sent)
                let theirs = Self.headerFields(withCredentials)
                #expect(ours.map(\.name) == theirs.map(\.name))
                for (name, value) in theirs
                where !["Host", "Authorization", "User-Agent", "Sec-WebSocket-Key"].contains(name) {
                    #expect(ours.first { $0.name == name }?.value == value, "\(name)")
                }
                #expect(ours.first { $0.name == "Host" }?.value == "127.0.0.1:\(port)")
                let basic = Data("alice:s3cret".utf8).base64EncodedString()
                #expect(ours.first { $0.name == "Authorization" }?.value == "Basic \(basic)")
                let key = try #require(ours.first { $0.name == "Sec-WebSocket-Key" }?.value)
                #expect(Data(base64Encoded: key)?.count == 16)
            }
        }
        try await TestGateway.run { gateway in
            try await StrictUpgradeProxy.run(backendPort: gateway.port) { port, proxy in
                try await LocalDatabase.run { local in
                    _ = try await Self.replicate(.pull, url: "ws://127.0.0.1:\(port)/db", in: local.database)
                }
                let sent = try #require(proxy.requestHeads.first)
                #expect(Self.headerFields(sent).map(\.name) == Self.headerFields(withoutCredentials).map(\.name))
            }
        }
    }

    /// A Couchbase Lite 4.0.3 pusher offers `BLIP_3+CBMobile_4` alone; with `protocol = "4"` so does the
    /// replicator, and the rest of its request is the same as 4.0.3's, header for header and in its order.
    @Test("with protocol 4 the upgrade request carries exactly the headers Couchbase Lite 4.0.3 sends, in its order")
    func requestMatchesCouchbaseLite4() async throws {
        let recorded = try #require(
            try Self.recordedRequestHeads(release: "cbl-4.0.3", sessions: ["push-oneshot"]).first)
        try await TestGateway.run { gateway in
            try await StrictUpgradeProxy.run(backendPort: gateway.port) { port, proxy in
                try await LocalDatabase.run { local in
                    try await saveDocuments(2, prefix: "h", in: local.database)
                    let status = try await Self.replicate(
                        .push, url: "ws://127.0.0.1:\(port)/db", in: local.database,
                        subprotocols: ReplicationSubprotocol.versionVectorOffer)
                    #expect(status.subprotocol == .cbMobile4)
                }
                let ours = Self.headerFields(try #require(proxy.requestHeads.first))
                let theirs = Self.headerFields(recorded)
                #expect(ours.map(\.name) == theirs.map(\.name))
                for (name, value) in theirs where !["Host", "User-Agent", "Sec-WebSocket-Key"].contains(name) {
                    #expect(ours.first { $0.name == name }?.value == value, "\(name)")
                }
            }
        }
    }

    @Test("push and pull sync through the strict upstream over ws:// and wss://", arguments: ["ws", "wss"])
    func syncsThroughStrictUpstream(scheme: String) async throws {
        let tls = scheme == "wss" ? try Self.proxyTLS() : nil
        defer { tls.map { try? FileManager.default.removeItem(at: $0.directory) } }
        try await TestGateway.run { gateway in
            let remote = try await gateway.database
            try await saveDocuments(20, prefix: "remote", in: remote)
            try await StrictUpgradeProxy.run(
                backendPort: gateway.port, options: .init(frontTLS: tls?.server)
            ) { port, proxy in
                try await LocalDatabase.run { local in
                    try await saveDocuments(30, prefix: "local", in: local.database)
                    let url = "\(scheme)://127.0.0.1:\(port)/db"
                    let pushed = try await Self.replicate(.push, url: url, in: local.database, tls: tls?.pin)
                    #expect(pushed.completed == 30)
                    let pulled = try await Self.replicate(.pull, url: url, in: local.database, tls: tls?.pin)
                    #expect(pulled.completed == 20, "the 30 pushed documents are offered back and already here")
                    #expect(try await local.database.document("remote-19") != nil)
                }
                #expect(try await remote.document("local-29") != nil)
                #expect(proxy.refusals == 0)
                #expect(proxy.requestHeads.count == 2)
            }
        }
    }

    @Test("a 405 on the upgrade names the URL, the status and the body, and is not retried")
    func refusalIsReported() async throws {
        try await ScriptedUpgradeServer.run(
            answer: .refuse(status: "405 Method Not Allowed", body: StrictUpgradeProxy.refusalBody)
        ) { port in
            try await LocalDatabase.run { local in
                let url = "ws://127.0.0.1:\(port)/db"
                do {
                    _ = try await Self.replicate(.push, url: url, in: local.database)
                    Issue.record("a refused upgrade synced")
                } catch let error as UpstreamDialError {
                    guard case .upgradeRefused(let target, 405, _, _, let body) = error else {
                        Issue.record("expected a 405 refusal, got \(error)")
                        return
                    }
                    #expect(target == url + "/_blipsync")
                    #expect(body == StrictUpgradeProxy.refusalBody)
                    #expect(error.description.contains(url))
                    #expect(error.description.contains("405"))
                    #expect(error.description.contains(StrictUpgradeProxy.refusalBody))
                    #expect(!error.isTransient)
                }
            }
        }
    }
}
