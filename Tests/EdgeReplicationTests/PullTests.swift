import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import ReplicationProtocol
import Testing

@Suite("Pulling from the passive peer")
struct PullTests {
    @Test("one-shot pull: changes batch with [seq, id, rev, 0, size], revs with sequence, then caught up")
    func oneShotPull() async throws {
        try await TestGateway.run { gateway in
            let database = try await gateway.database
            var saved: [SavedRevision] = []
            for index in 0..<3 {
                saved.append(
                    try await database.save(
                        "passive-doc-\(index)", body: Data(#"{"n":\#(index)}"#.utf8), parentRevID: nil))
            }
            let recorder = PullRecorder()
            try await ActivePeer.connect(port: gateway.port, configure: { await recorder.install(on: $0) }) { peer in
                try await peer.send(SubChangesRequest(batchSize: 200, activeOnly: true))
                try await eventually("3 revs and caught up") {
                    await recorder.has(revisions: 3, caughtUp: 1)
                }
            }
            let rows = await recorder.changeRows
            #expect(rows.map(\.docID) == ["passive-doc-0", "passive-doc-1", "passive-doc-2"])
            #expect(rows.map(\.sequence) == saved.map { .integer(Int($0.sequence)) })
            #expect(rows.allSatisfy { $0.flags.isEmpty && $0.bodySize == 7 })
            let revisions = await recorder.revisions.sorted { $0.docID < $1.docID }
            #expect(revisions.map(\.revision.description) == saved.map(\.revID.description))
            #expect(revisions.map(\.sequence) == saved.map { .integer(Int($0.sequence)) })
            #expect(try revisions.map { try $0.bodyObject() } == (0..<3).map { ["n": .integer($0)] })
        }
    }

    @Test("a pulled tombstone carries deleted: 1 and its history; activeOnly leaves it out")
    func tombstones() async throws {
        try await TestGateway.run { gateway in
            let database = try await gateway.database
            let first = try await database.save("gone", body: Data(#"{"v":1}"#.utf8), parentRevID: nil)
            let tombstone = try await database.delete("gone", parentRevID: first.revID)
            try await database.save("live", body: Data(#"{"v":1}"#.utf8), parentRevID: nil)

            let everything = PullRecorder()
            try await ActivePeer.connect(port: gateway.port, configure: { await everything.install(on: $0) }) { peer in
                try await peer.send(SubChangesRequest(batchSize: 200))
                try await eventually("2 revs") { await everything.has(revisions: 2, caughtUp: 1) }
            }
            let rev = try #require(await everything.revisions.first { $0.docID == "gone" })
            #expect(rev.deleted)
            #expect(rev.revision.description == tombstone.revID.description)
            #expect(rev.history.ancestors.map(\.description) == [first.revID.description])
            #expect(await everything.changeRows.first { $0.docID == "gone" }?.flags == .deleted)

            let activeOnly = PullRecorder()
            try await ActivePeer.connect(port: gateway.port, configure: { await activeOnly.install(on: $0) }) { peer in
                try await peer.send(SubChangesRequest(batchSize: 200, activeOnly: true))
                try await eventually("caught up") { await activeOnly.has(revisions: 1, caughtUp: 1) }
            }
            #expect(await activeOnly.changeRows.map(\.docID) == ["live"])
        }
    }

    @Test("since skips what the client has; small batches; continuous pull streams a later change")
    func continuousPull() async throws {
        try await TestGateway.run { gateway in
            let database = try await gateway.database
            let first = try await database.save("a", body: Data(#"{"v":1}"#.utf8), parentRevID: nil)
            try await database.save("b", body: Data(#"{"v":1}"#.utf8), parentRevID: nil)
            try await database.save("c", body: Data(#"{"v":1}"#.utf8), parentRevID: nil)
            let recorder = PullRecorder()
            try await ActivePeer.connect(port: gateway.port, configure: { await recorder.install(on: $0) }) { peer in
                try await peer.send(
                    SubChangesRequest(since: .integer(Int(first.sequence)), continuous: true, batchSize: 1))
                try await eventually("backlog") { await recorder.has(revisions: 2, caughtUp: 1) }
                try await database.save("late", body: Data(#"{"v":1}"#.utf8), parentRevID: nil)
                try await eventually("live change") { await recorder.revisions.count == 3 }
            }
            // The recorder's handlers run concurrently, so one-row batches may be recorded out of order.
            let rows = await recorder.changeRows.map(\.docID)
            #expect(rows.count == 3)
            #expect(Set(rows) == ["b", "c", "late"])
        }
    }

    @Test("a large update is pulled as a delta against the ancestor the client has")
    func deltaPull() async throws {
        try await TestGateway.run { gateway in
            let database = try await gateway.database
            let (first, second) = try await database.saveDeltaCandidate()
            let recorder = PullRecorder()
            await recorder.setKnownAncestors(["doc": [first.revID]])
            try await ActivePeer.connect(port: gateway.port, configure: { await recorder.install(on: $0) }) { peer in
                try await peer.send(SubChangesRequest(batchSize: 200))
                try await eventually("the rev") { await recorder.revisions.count == 1 }
            }
            let rev = try #require(await recorder.revisions.first)
            #expect(rev.revision.description == second.revID.description)
            #expect(rev.deltaSource?.description == first.revID.description)
            #expect(rev.history.ancestors.map(\.description) == [first.revID.description])
            #expect(try rev.bodyObject() == ["count": 2])
        }
    }

    /// Saves `doc` and returns a recorder that, between the offer of that revision and its answer,
    /// updates the document four times: the offered revision's body falls out of the store's retention
    /// (three ancestors), as on a busy document.
    static func offerRevisionThatLosesItsBody(
        in database: DocumentDatabase
    ) async throws -> (first: SavedRevision, recorder: PullRecorder) {
        let first = try await database.save("doc", body: Data(#"{"v":1}"#.utf8), parentRevID: nil)
        let recorder = PullRecorder()
        await recorder.setBeforeFirstAnswer {
            var parent = first.revID
            for value in 2...5 {
                parent = try await database.save("doc", body: Data(#"{"v":\#(value)}"#.utf8), parentRevID: parent).revID
            }
        }
        return (first, recorder)
    }

    @Test("with sendReplacementRevs, a requested revision whose body is gone is replaced by the current one")
    func replacementRevision() async throws {
        try await TestGateway.run { gateway in
            let database = try await gateway.database
            let (first, recorder) = try await Self.offerRevisionThatLosesItsBody(in: database)
            try await ActivePeer.connect(port: gateway.port, configure: { await recorder.install(on: $0) }) { peer in
                try await peer.send(SubChangesRequest(batchSize: 200, sendReplacementRevs: true))
                try await eventually("the replacement rev") {
                    await recorder.revisions.contains { $0.replacedRevision != nil }
                }
            }
            let current = try #require(try await database.document("doc"))
            let replacement = try #require(await recorder.revisions.first { $0.replacedRevision != nil })
            #expect(replacement.replacedRevision?.description == first.revID.description)
            #expect(replacement.revision.description == current.revID.description)
            #expect(replacement.history.ancestors.count == 4)
            #expect(try replacement.bodyObject() == ["v": 5])
        }
    }

    @Test("without sendReplacementRevs, a requested revision whose body is gone gets a norev")
    func noReplacementRequested() async throws {
        try await TestGateway.run { gateway in
            let database = try await gateway.database
            let (first, recorder) = try await Self.offerRevisionThatLosesItsBody(in: database)
            try await ActivePeer.connect(port: gateway.port, configure: { await recorder.install(on: $0) }) { peer in
                try await peer.send(SubChangesRequest(batchSize: 200))
                try await eventually("the norev") { await recorder.noRevisions.count == 1 }
            }
            #expect(await recorder.revisions.allSatisfy { $0.revision.description != first.revID.description })
            #expect(await recorder.noRevisions.first?.revision.description == first.revID.description)
        }
    }
}
