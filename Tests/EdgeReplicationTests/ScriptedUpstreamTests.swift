import BLIPCodec
import BLIPConnection
import EdgeStore
import Foundation
import Hummingbird
import HummingbirdWebSocket
import ReplicationProtocol
import Synchronization
import Testing

@testable import EdgeReplication

/// An upstream whose pull feed is a script: it answers the checkpoint and `subChanges` requests like a passive
/// peer, then `feed` sends whatever it likes on the connection.
enum ScriptedUpstream {
    static let subprotocol = "BLIP_3+CBMobile_3"

    static func run(
        feed: @escaping @Sendable (BLIPConnection) async throws -> Void, _ body: (_ port: Int) async throws -> Void
    ) async throws {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.ws("/db/_blipsync") { _, _ in
            .upgrade([.secWebSocketProtocol: subprotocol])
        } onUpgrade: { inbound, outbound, _ in
            let connection = try BLIPConnection(subprotocol: subprotocol, logger: testLogger)
            await connection.setHandler(for: Profile.getCheckpoint.rawValue) { _ in
                throw ErrorReply.http(404, "missing").blipError
            }
            await connection.setHandler(for: Profile.setCheckpoint.rawValue) { request in
                request.reply(with: SetCheckpointReply(revision: "1-cc"))
            }
            await connection.setHandler(for: Profile.subChanges.rawValue) { request in
                Task { try await feed(connection) }
                return request.reply()
            }
            try await connection.run(inbound: inbound, outbound: outbound)
        }
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: Router(),
            server: .http1WebSocketUpgrade(webSocketRouter: router),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portSink.yield(channel.localAddress?.port ?? 0) },
            logger: testLogger
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }
            try await body(port)
            group.cancelAll()
        }
    }
}

@Suite("The active puller against a scripted upstream")
struct ScriptedUpstreamTests {
    @Test(
        "a rev that does not decode is refused and reported, and the one-shot pull still finishes",
        .timeLimit(.minutes(1)))
    func undecodableRev() async throws {
        let badRevision = try WireRevisionID("1-" + String(repeating: "a", count: 40))
        let goodRevision = try WireRevisionID("1-" + String(repeating: "b", count: 40))
        let refusal = SharedErrorBox()
        try await ScriptedUpstream.run(feed: { connection in
            let rows = [
                ChangeRow(sequence: 1, docID: "doc-a", revisionID: badRevision),
                ChangeRow(sequence: 2, docID: "doc-b", revisionID: goodRevision),
            ]
            _ = try await connection.sendRequest(.request(ChangesRequest(rows: rows)))
            // A first-generation revision cannot have a history: the puller cannot decode this `rev`.
            do {
                let properties: BLIPProperties = [
                    "id": "doc-a", "rev": badRevision.description, "sequence": "1", "history": goodRevision.description,
                ]
                _ = try await connection.sendRequest(.request(profile: "rev", properties: properties, body: Array(#"{"a":1}"#.utf8)))
            } catch let error as BLIPErrorReply {
                refusal.set(error)
            }
            _ = try await connection.sendRequest(
                .request(RevRequest(docID: "doc-b", revisionID: goodRevision, sequence: 2, body: Array(#"{"b":2}"#.utf8))))
            _ = try await connection.sendRequest(.request(ChangesRequest(rows: [])))
        }) { port in
            try await LocalDatabase.run { local in
                let replicator = ActiveReplicator(
                    database: local.database,
                    configuration: .init(remoteURL: "ws://127.0.0.1:\(port)/db", remoteUUID: "scripted", direction: .pull),
                    logger: testLogger)
                try await replicator.run()
                let status = await replicator.status()
                #expect(status.completed == 1)
                #expect(status.lastError?.contains("rev") == true)
                #expect(refusal.value?.domain == "HTTP")
                #expect(refusal.value?.code == 400)
                let stored = try await local.database.document("doc-b")
                #expect(stored?.revID.description == goodRevision.description)
                #expect(try await local.database.document("doc-a") == nil)
            }
        }
    }
}

/// The error reply the scripted feed got back, read by the test afterwards.
final class SharedErrorBox: Sendable {
    private let storage = Mutex<BLIPErrorReply?>(nil)

    func set(_ error: BLIPErrorReply) { storage.withLock { $0 = error } }
    var value: BLIPErrorReply? { storage.withLock { $0 } }
}
