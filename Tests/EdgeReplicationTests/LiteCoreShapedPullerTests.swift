import BLIPCodec
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON
import Testing

@testable import LiteCoreShapedPuller

@Suite("The LiteCore-shaped puller against the listener")
struct LiteCoreShapedPullerTests {
    /// `count` documents of about 1 KB, as the benchmark serves them.
    static func seed(_ database: DocumentDatabase, count: Int, from start: Int = 0) async throws {
        let padding = String(repeating: "x", count: 960)
        for first in stride(from: start, to: start + count, by: 500) {
            let batch = try (first..<min(first + 500, start + count)).map { index in
                ExistingRevision(
                    docID: "doc-\(index)", revID: try RevisionID("1-" + String(format: "%040x", index)),
                    history: [], body: Data(#"{"n":\#(index),"padding":"\#(padding)"}"#.utf8))
            }
            _ = try await database.insertExistingRevisions(batch)
        }
    }

    static func temporaryStore() throws -> (DocumentStore, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "edge-puller-\(UUID().uuidString)")
        return (try DocumentStore(dataDirectory: directory), directory)
    }

    @Test("pulls every document, within LiteCore's limits, deferring changes while 200 revs are outstanding")
    func pullsEverythingWithinLimits() async throws {
        let count = 3_000
        try await TestGateway.run { gateway in
            try await Self.seed(try await gateway.database, count: count)
            let (store, directory) = try Self.temporaryStore()
            defer { try? FileManager.default.removeItem(at: directory) }
            let local = try await store.database(named: "local")
            let puller = LiteCoreShapedPuller(
                database: local, configuration: .init(url: "ws://127.0.0.1:\(gateway.port)/db"), logger: testLogger)
            let report = try await puller.run()

            let counters = report.counters
            #expect(counters.revsReceived == count)
            #expect(counters.revsRequested == count)
            #expect(counters.unexpectedRevs == 0)
            #expect(counters.changesHandled == count / 200 + 1)
            #expect(counters.revsBeingRequested == 0 && counters.activeIncomingRevs == 0)
            #expect(counters.unfinishedIncomingRevs == 0)
            #expect(counters.peakRevsBeingRequestedWhenHandlingChanges <= 200)
            #expect(counters.peakActiveIncomingRevs <= 100)
            #expect(counters.peakUnfinishedIncomingRevs <= 200)
            #expect(counters.largestInsertionBatch <= 100)
            // The listener keeps more batches in flight than the puller handles at once, so some wait.
            #expect(counters.changesDeferred > 0)
            #expect(counters.peakRevsBeingRequested > 200)

            let pulled = try await local.changes(in: .default, since: 0, limit: count + 1)
            #expect(pulled.count == count)
            let sample = try #require(try await local.document("doc-1234"))
            #expect(String(decoding: sample.body, as: UTF8.self).hasPrefix(#"{"n":1234,"#))

            let served = try await gateway.database.changes(in: .default, since: 0, limit: count + 1)
            #expect(report.savedCheckpoint == .integer(Int(served.last!.sequence)))
            #expect(report.savedCheckpointBodies.last?.contains(#""remote":\#(served.last!.sequence)"#) == true)
        }
    }

    @Test("a second pull resumes from the saved checkpoint and asks only for what is new")
    func resumesFromCheckpoint() async throws {
        try await TestGateway.run { gateway in
            let served = try await gateway.database
            try await Self.seed(served, count: 250)
            let (store, directory) = try Self.temporaryStore()
            defer { try? FileManager.default.removeItem(at: directory) }
            let local = try await store.database(named: "local")
            let configuration = LiteCoreShapedPuller.Configuration(url: "ws://127.0.0.1:\(gateway.port)/db")
            let first = try await LiteCoreShapedPuller(
                database: local, configuration: configuration, logger: testLogger
            )
            .run()
            #expect(first.startedSince == nil)
            #expect(first.counters.revsReceived == 250)

            try await Self.seed(served, count: 30, from: 250)
            let second = try await LiteCoreShapedPuller(
                database: local, configuration: configuration, logger: testLogger
            )
            .run()
            #expect(second.startedSince == first.savedCheckpoint)
            #expect(second.counters.revsRequested == 30)
            #expect(try await local.changes(in: .default, since: 0, limit: 1_000).count == 280)
        }
    }

    @Test("subChanges carries LiteCore 3.2.4's properties in its order (pull-oneshot, pushpull-continuous)")
    func subscriptionProperties() {
        let tuning = LiteCorePullerTuning()
        let oneShot = LiteCoreShapedPuller.subscription(since: nil, continuous: false, activeOnly: true, tuning: tuning)
        #expect(
            oneShot.encode().properties.pairs.map { "\($0.key)=\($0.value)" } == [
                "Profile=subChanges", "batch=200", "sendReplacementRevs=1", "versioning=rev-trees",
                "activeOnly=true", "revocations=true",
            ])
        let continuous = LiteCoreShapedPuller.subscription(
            since: .integer(42), continuous: true, activeOnly: false, tuning: tuning)
        #expect(
            continuous.encode().properties.pairs.map { "\($0.key)=\($0.value)" } == [
                "Profile=subChanges", "since=42", "continuous=true", "batch=200", "sendReplacementRevs=1",
                "versioning=rev-trees", "revocations=true",
            ])
    }

    @Test("changes replies: ancestors or [], maxHistory 50 and blobs always, deltas only in the first")
    func changesReplies() async throws {
        let (store, directory) = try Self.temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let local = try await store.database(named: "local")
        let existing = try await local.save("old", body: Data(#"{"v":1}"#.utf8), parentRevID: nil)
        let tuning = LiteCorePullerTuning()
        let flow = PullFlowControl(tuning: tuning)
        let handlers = PullRequestHandlers(
            database: local, flow: flow,
            inserter: RevisionBatchInserter(database: local, collection: .default, tuning: tuning, committed: { _ in }),
            tuning: tuning)
        func changes(_ number: UInt64, _ rows: [ChangeRow]) -> BLIPMessage {
            let (properties, body) = ChangesRequest(rows: rows).encode()
            return BLIPMessage(kind: .request, number: number, properties: BLIPProperties(properties.pairs), body: body)
        }
        let newer = try RevisionID("2-" + String(repeating: "b", count: 40))
        let first = try await handlers.changes(
            changes(
                1,
                [
                    ChangeRow(
                        sequence: .integer(1), docID: "new",
                        revisionID: try RevisionID("1-" + String(repeating: "a", count: 40)), flags: [], bodySize: 10),
                    ChangeRow(sequence: .integer(2), docID: "old", revisionID: newer, flags: [], bodySize: 10),
                    ChangeRow(sequence: .integer(3), docID: "old", revisionID: existing.revID, flags: [], bodySize: 10),
                ]))
        #expect(
            first.properties.pairs.map { "\($0.key)=\($0.value)" } == ["maxHistory=50", "blobs=true", "deltas=true"])
        #expect(String(decoding: first.body, as: UTF8.self) == #"[[],["\#(existing.revID.description)"]]"#)
        #expect(first.isCompressed)
        let second = try await handlers.changes(
            changes(2, [ChangeRow(sequence: .integer(4), docID: "other", revisionID: newer, flags: [], bodySize: 10)]))
        #expect(second.properties.pairs.map { "\($0.key)=\($0.value)" } == ["maxHistory=50", "blobs=true"])
        #expect(await flow.counters.revsBeingRequested == 3)
    }

    @Test("a changes message waits, unanswered, while more than 200 requested revs have not started")
    func changesDeferral() async throws {
        var tuning = LiteCorePullerTuning()
        tuning.maxRevsBeingRequested = 4
        tuning.maxActiveIncomingRevs = 2
        tuning.maxIncomingRevs = 3
        let flow = PullFlowControl(tuning: tuning)
        func rows(_ count: Int, from first: Int) -> [(sequence: JSONValue, requested: Bool)] {
            (first..<first + count).map { (.integer($0), true) }
        }
        // Request 1 asks for 4 (0 outstanding before it); request 2 for 3 more (4 ≤ 4, still handled).
        #expect(await flow.enterChanges(1))
        await flow.finishChanges(offered: rows(4, from: 1), caughtUp: false)
        #expect(await flow.enterChanges(2))
        await flow.finishChanges(offered: rows(3, from: 5), caughtUp: false)
        #expect(await flow.counters.revsBeingRequested == 7)

        // Request 3 must wait until at most 4 requested revisions are outstanding; the 7 revs behind it
        // start only while fewer than 2 are active and 3 unfinished.
        let third = Task { await flow.enterChanges(3) }
        var revs: [Task<Bool, Never>] = []
        for number in UInt64(4)...10 {
            revs.append(Task { await flow.enterRev(number) })
        }
        try await waitFor { await flow.counters.revsDeferred == 5 }
        #expect(await flow.counters.activeIncomingRevs == 2)
        #expect(await flow.counters.revsBeingRequested == 5)
        #expect(await flow.counters.changesDeferred == 1)
        await flow.finishRevs([.integer(1), .integer(2)])
        #expect(await flow.counters.activeIncomingRevs == 2)
        #expect(await flow.counters.revsBeingRequested == 3)
        #expect(await third.value)
        #expect(await flow.counters.peakRevsBeingRequestedWhenHandlingChanges == 4)
        #expect(await flow.checkpointSequence == .integer(2))
        await flow.finishChanges(offered: [], caughtUp: true)
        await flow.finishRevs([.integer(3), .integer(4)])
        await flow.finishRevs([.integer(5), .integer(6)])
        #expect(await !flow.isDone)
        await flow.finishRevs([.integer(7)])
        for rev in revs { #expect(await rev.value) }
        #expect(await flow.isDone)
        #expect(await flow.checkpointSequence == .integer(7))
        #expect(await flow.counters.peakActiveIncomingRevs == 2)
        #expect(await flow.counters.peakUnfinishedIncomingRevs == 2)
        #expect(await flow.counters.revsReceived == 7)
    }

    private func waitFor(_ condition: @Sendable () async -> Bool) async throws {
        try await eventually("the flow control to settle") { await condition() }
    }
}
