import BLIPCodec
import BLIPConnection
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import Hummingbird
import HummingbirdWebSocket
import ReplicationProtocol
import SyncIdentifiers
import Synchronization
import Testing

@testable import EdgeReplication

/// An upstream that answers the checkpoint requests like a passive peer and everything else as `configure`
/// scripts it.
enum ScriptedUpstream {
    static let subprotocol = "BLIP_3+CBMobile_3"

    /// Its pull feed is a script: after answering `subChanges`, `feed` sends whatever it likes.
    static func run(
        feed: @escaping @Sendable (BLIPConnection) async throws -> Void, _ body: (_ port: Int) async throws -> Void
    ) async throws {
        try await run(
            configure: { connection in
                await connection.setHandler(for: Profile.subChanges.rawValue) { request in
                    Task { try await feed(connection) }
                    return request.reply()
                }
            }, body)
    }

    static func run(
        subprotocol: String = subprotocol,
        configure: @escaping @Sendable (BLIPConnection) async -> Void, _ body: (_ port: Int) async throws -> Void
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
            await configure(connection)
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
        try await whileRunning(app, logger: testLogger) {
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }
            try await body(port)
        }
    }
}

@Suite("The active puller against a scripted upstream")
struct ScriptedUpstreamTests {
    @Test(
        "a rev that does not decode is refused and reported, and the one-shot pull still finishes",
        .timeLimit(.minutes(1)))
    func undecodableRev() async throws {
        let badRevision = try RevisionID("1-" + String(repeating: "a", count: 40))
        let goodRevision = try RevisionID("1-" + String(repeating: "b", count: 40))
        let refusal = SharedErrorBox()
        try await ScriptedUpstream.run(feed: { connection in
            let rows = [
                ChangeRow(sequence: 1, docID: "doc-a", revision: .tree(badRevision)),
                ChangeRow(sequence: 2, docID: "doc-b", revision: .tree(goodRevision)),
            ]
            _ = try await connection.sendRequest(.request(ChangesRequest(rows: rows)))
            // A first-generation revision cannot have a history: the puller cannot decode this `rev`.
            do {
                let properties: BLIPProperties = [
                    "id": "doc-a", "rev": badRevision.description, "sequence": "1", "history": goodRevision.description,
                ]
                _ = try await connection.sendRequest(
                    .request(profile: "rev", properties: properties, body: Array(#"{"a":1}"#.utf8)))
            } catch let error as BLIPErrorReply {
                refusal.set(error)
            }
            _ = try await connection.sendRequest(
                .request(
                    RevRequest(
                        docID: "doc-b", revision: .tree(goodRevision), sequence: 2, body: Array(#"{"b":2}"#.utf8))))
            _ = try await connection.sendRequest(.request(ChangesRequest(rows: [])))
        }) { port in
            try await LocalDatabase.run { local in
                let replicator = ActiveReplicator(
                    database: local.database,
                    configuration: .init(
                        remoteURL: "ws://127.0.0.1:\(port)/db", remoteUUID: "scripted", direction: .pull),
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

@Suite("The active pusher against a scripted upstream")
struct ScriptedPushTests {
    @Test(
        "a continuous push keeps several batches of a burst of local writes proposed at once",
        .timeLimit(.minutes(2)))
    func continuousPushPipelines() async throws {
        let proposals = ProposalCounter()
        try await ScriptedUpstream.run(configure: { connection in
            await connection.setHandler(for: Profile.proposeChanges.rawValue) { request in
                let rows = try ProposeChangesRequest(
                    properties: MessageProperties(request.properties.pairs), body: request.body
                ).rows
                proposals.begin()
                // Held until three are open at once: a pusher with one batch in flight at a time never gets
                // there and is let go after 10 s. Waiting for a count rather than sleeping keeps the test
                // independent of how loaded the machine is.
                try await proposals.waitUntilOpen(atLeast: 3, orFor: .seconds(10))
                proposals.end(documents: rows.count)
                return request.reply(with: ProposeChangesReply(statuses: rows.map { _ in .accepted }))
            }
            await connection.setHandler(for: Profile.rev.rawValue) { request in
                proposals.received()
                return request.reply()
            }
        }) { port in
            try await LocalDatabase.run { local in
                let replicator = ActiveReplicator(
                    database: local.database,
                    configuration: .init(
                        remoteURL: "ws://127.0.0.1:\(port)/db", remoteUUID: "scripted", direction: .push,
                        continuous: true, batchSize: 100),
                    logger: testLogger)
                let run = Task { try await replicator.run() }
                try await eventually("the empty push is idle") { await replicator.status().activity == .idle }
                // One commit of 1,000 revisions: ten batches for the feed to read while earlier ones are proposed.
                let burst = try (0..<1_000).map { index in
                    ExistingRevision(
                        docID: "burst-\(index)", revID: try RevisionID("1-" + String(repeating: "c", count: 40)),
                        history: [], body: Data(#"{"n":\#(index)}"#.utf8))
                }
                _ = try await local.database.insertExistingRevisions(burst)
                try await eventually("every revision arrived") { proposals.receivedRevisions == 1_000 }
                #expect(proposals.proposedDocuments == 1_000)
                #expect(proposals.mostAtOnce >= 3)
                #expect(proposals.mostAtOnce <= ActiveReplicatorSession.maxPushBatchesInFlight)
                run.cancel()
                try await run.value
            }
        }
    }
}

/// What the scripted upstream saw of the pusher's proposals.
final class ProposalCounter: Sendable {
    private struct Counts {
        var open = 0
        var mostAtOnce = 0
        var proposedDocuments = 0
        var receivedRevisions = 0
    }

    private let counts = Mutex(Counts())

    func begin() {
        counts.withLock {
            $0.open += 1
            $0.mostAtOnce = max($0.mostAtOnce, $0.open)
        }
    }

    func end(documents: Int) {
        counts.withLock {
            $0.open -= 1
            $0.proposedDocuments += documents
        }
    }

    func received() { counts.withLock { $0.receivedRevisions += 1 } }

    /// Returns once `count` proposals were open at the same time (now or earlier), or after `limit`.
    func waitUntilOpen(atLeast count: Int, orFor limit: Duration) async throws {
        let deadline = ContinuousClock.now + limit
        while mostAtOnce < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    var mostAtOnce: Int { counts.withLock { $0.mostAtOnce } }
    var proposedDocuments: Int { counts.withLock { $0.proposedDocuments } }
    var receivedRevisions: Int { counts.withLock { $0.receivedRevisions } }
}

/// The error reply the scripted feed got back, read by the test afterwards.
final class SharedErrorBox: Sendable {
    private let storage = Mutex<BLIPErrorReply?>(nil)

    func set(_ error: BLIPErrorReply) { storage.withLock { $0 = error } }
    var value: BLIPErrorReply? { storage.withLock { $0 } }
}
