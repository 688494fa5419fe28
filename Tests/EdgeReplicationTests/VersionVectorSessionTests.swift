import BLIPCodec
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON
import Testing
import VersionVectors

/// The listener on CBMobile_4: Couchbase Lite 4.0.3's recorded client frames replayed to it over a real WebSocket,
/// and Couchbase Lite 3.x and 4.x pullers on one database, each getting revisions named its own way.
@Suite("CBMobile_4 sessions: version vectors on the listener")
struct VersionVectorSessionTests {
    static let fourthGeneration = "cbl-4.0.3"
    static let pullerOffer4 = "BLIP_3+CBMobile_4,BLIP_3+CBMobile_3"

    @Test("push-oneshot (4.0.3): the documents are stored with the client's versions and a minted rev-tree ID each")
    func pushOneShot() async throws {
        let connections = try RecordedClientConnection.load("push-oneshot.jsonl", from: Self.fourthGeneration)
        #expect(connections.allSatisfy { $0.subprotocols == ["BLIP_3+CBMobile_4"] })
        try await TestGateway.run { gateway in
            let (pushed, exchanges) = try await RecordedClientReplayTests.replayExchanges(connections, to: gateway)
            #expect(!pushed.isEmpty)
            #expect(pushed.allSatisfy { $0.revID.contains("@") })
            try await RecordedClientReplayTests.expectStored(pushed, in: gateway)
            let database = try await gateway.database
            for revision in pushed {
                let stored = try #require(try await database.document(revision.docID))
                #expect(stored.revID.generation == 1, "\(revision.docID): \(stored.revID)")
            }
            // LiteCore 4's reply to the first proposal: blobs, deltas and sendReplacementRevs, no maxHistory.
            let proposal = try #require(exchanges.first { $0.profile == "proposeChanges" })
            #expect(proposal.reply.properties["maxHistory"] == nil)
            #expect(proposal.reply.properties["sendReplacementRevs"] == "1")
            #expect(proposal.reply.properties["blobs"] == "true")
        }
    }

    @Test("update-delete (4.0.3): a same-author update replaces the version; a delete stores a tombstone")
    func updateAndDelete() async throws {
        let connections = try RecordedClientConnection.load("update-delete.jsonl", from: Self.fourthGeneration)
        try await TestGateway.run { gateway in
            let pushed = try await RecordedClientReplayTests.replay(connections, to: gateway)
            #expect(pushed.contains { $0.deleted })
            try await RecordedClientReplayTests.expectStored(pushed, in: gateway)
            let database = try await gateway.database
            let updated = try #require(try await database.document("doc-000000"))
            let deleted = try #require(try await database.document("doc-000001"))
            #expect(updated.revID.generation == 2 && !updated.deleted)
            #expect(deleted.revID.generation == 2 && deleted.deleted)
        }
    }

    @Test("bulk-500 (4.0.3): five hundred proposals in three batches, all stored")
    func bulk() async throws {
        let connections = try RecordedClientConnection.load("bulk-500.jsonl", from: Self.fourthGeneration)
        try await TestGateway.run { gateway in
            let pushed = try await RecordedClientReplayTests.replay(connections, to: gateway)
            #expect(pushed.count == 500)
            try await RecordedClientReplayTests.expectStored(pushed, in: gateway)
        }
    }

    /// The pushing connections of `conflict`: A creates the document and later edits it; B, which pulled A's first
    /// version (connection 1, not replayable), edits that one concurrently and proposes it. Like LiteCore, the
    /// listener answers B's proposal with a 409 naming A's current version, and keeps A's. B's checkpoint was saved
    /// on its pull connection, which is not replayed, so its `setCheckpoint`s name a checkpoint revision this
    /// listener never issued and get the 409 a stale checkpoint gets.
    @Test("conflict (4.0.3): a concurrent version is refused in the proposeChanges reply with the current version")
    func concurrentProposal() async throws {
        let connections = try RecordedClientConnection.load(
            "conflict.jsonl", from: Self.fourthGeneration, only: [0, 2, 3, 4, 5])
        try await TestGateway.run { gateway in
            let (_, exchanges) = try await RecordedClientReplayTests.replayExchanges(
                connections, to: gateway, unchecked: ["setCheckpoint"])
            let failed = exchanges.filter { $0.reply.kind == .error }
            #expect(failed.allSatisfy { $0.profile == "setCheckpoint" && $0.reply.errorReply?.code == 409 })
            let database = try await gateway.database
            let stored = try #require(try await database.document("conflict-000000"))
            let current = try #require(stored.vector?.current)
            let replies = try exchanges.filter { $0.profile == "proposeChanges" }.map {
                try ProposeChangesReply(properties: MessageProperties($0.reply.properties.pairs), body: $0.reply.body)
            }
            let conflicts = replies.flatMap(\.statuses).filter { $0.code == 409 }
            #expect(conflicts == [.conflict(currentRevision: WireRevision(current))])
            #expect(current.description == "18ebd084db420001@W4IpzVcVScq75WMaxJ6WUA")
        }
    }

    /// Documents pushed by a 4.x client and by a 3.x client, pulled by each generation: the 4.x puller gets every
    /// revision by version (a 3.x client's gets a version this node minted), the 3.x puller by rev-tree ID.
    @Test("mixed fleet: 4.x and 3.x pushes, pulled by a 4.x and a 3.x client, each in its own terms")
    func mixedFleet() async throws {
        let connections = try RecordedClientConnection.load("push-oneshot.jsonl", from: Self.fourthGeneration)
        try await TestGateway.run { gateway in
            let pushed = try await RecordedClientReplayTests.replay(connections, to: gateway)
            let threeX = try await RecordedClientReplayTests.replay(
                try RecordedClientConnection.load("push-oneshot.jsonl"), to: gateway)
            let database = try await gateway.database
            let deleted = try await database.save("gone", body: Data(#"{"v":1}"#.utf8), parentRevID: nil)
            try await database.delete("gone", parentRevID: deleted.revID)
            let documentCount = pushed.count + threeX.count + 1

            let puller4 = PullRecorder()
            try await ActivePeer.connect(
                port: gateway.port, offering: Self.pullerOffer4, configure: { await puller4.install(on: $0) }
            ) { peer in
                try await peer.send(SubChangesRequest(batchSize: 200, versioning: .versionVectors))
                try await eventually("every revision pulled") {
                    await puller4.has(revisions: documentCount, caughtUp: 1)
                }
            }
            let rows4 = await puller4.changeRows
            #expect(rows4.allSatisfy { if case .vector = $0.revision { true } else { false } })
            for revision in pushed {
                #expect(rows4.first { $0.docID == revision.docID }?.revision.description == revision.revID)
            }
            // A CBMobile_4 tombstone row has no body size.
            let tombstoneRow = try #require(rows4.first { $0.docID == "gone" })
            #expect(tombstoneRow.flags == .deleted && tombstoneRow.bodySize == nil)
            for revision in await puller4.revisions {
                guard case .vector(let vector) = revision.revision else {
                    Issue.record("\(revision.docID) came as \(revision.revision)")
                    continue
                }
                #expect(revision.history.isEmpty)
                let stored = try #require(try await database.document(revision.docID))
                #expect(stored.vector == vector, "\(revision.docID)")
            }
            // The 3.x client's documents carry versions of this node's source.
            let source = database.versionSource
            for revision in threeX {
                let row = try #require(rows4.first { $0.docID == revision.docID })
                guard case .vector(let vector) = row.revision else { continue }
                #expect(vector.current.source == source)
            }

            let puller3 = PullRecorder()
            try await ActivePeer.connect(port: gateway.port, configure: { await puller3.install(on: $0) }) { peer in
                try await peer.send(SubChangesRequest(batchSize: 200))
                try await eventually("every revision pulled") {
                    await puller3.has(revisions: documentCount, caughtUp: 1)
                }
            }
            let rows3 = await puller3.changeRows
            #expect(rows3.allSatisfy { $0.revision.revisionID != nil })
            for revision in await puller3.revisions {
                let stored = try #require(try await database.document(revision.docID))
                #expect(revision.revision == .tree(stored.revID), "\(revision.docID)")
            }
        }
    }

    @Test("a 4.x puller that lists the version it has gets the newer one as a delta against it, named by version")
    func deltaAgainstThePullersVersion() async throws {
        try await TestGateway.run { gateway in
            let database = try await gateway.database
            // Over `DeltaPolicy.minimumBodySize`, so that a delta is worth sending.
            let notes = String(repeating: "calibrated weekly; ", count: 20)
            let body = #"{"sensor":"t1","notes":"\#(notes)","unit":"celsius","site":"north shed"}"#
            let first = try await database.save("reading", body: Data(body.utf8), parentRevID: nil)
            let had = try #require(try await database.document("reading")?.vector?.current)
            let updated = body.replacingOccurrences(of: "north shed", with: "south shed")
            try await database.save("reading", body: Data(updated.utf8), parentRevID: first.revID)
            let current = try #require(try await database.document("reading")?.vector)

            let puller = PullRecorder()
            await puller.setKnownRevisions(["reading": [WireRevision(had)]])
            try await ActivePeer.connect(
                port: gateway.port, offering: Self.pullerOffer4, configure: { await puller.install(on: $0) }
            ) { peer in
                try await peer.send(SubChangesRequest(batchSize: 200, versioning: .versionVectors))
                try await eventually("the revision pulled") { await puller.has(revisions: 1, caughtUp: 1) }
            }
            let revision = try #require(await puller.revisions.first)
            #expect(revision.revision == .vector(current))
            #expect(revision.deltaSource == WireRevision(had))
            let applied = try JSONDelta.apply(
                delta: JSONValue(parsing: revision.body), to: JSONValue(parsing: Array(body.utf8)))
            #expect(applied == (try JSONValue(parsing: Array(updated.utf8))))
            #expect(revision.body.count < updated.utf8.count)
        }
    }

    @Test("versioning must match the subprotocol: rev-trees on CBMobile_4 is refused as LiteCore refuses it")
    func versioningMismatch() async throws {
        try await TestGateway.run { gateway in
            try await ActivePeer.connect(port: gateway.port, offering: Self.pullerOffer4) { peer in
                let refusal = try await peer.errorReply(for: SubChangesRequest(versioning: .revisionTrees))
                #expect(refusal?.domain == "LiteCore" && refusal?.code == 501)
                #expect(try await peer.errorReply(for: SubChangesRequest(versioning: .versionVectors)) == nil)
            }
        }
    }

    @Test("a malformed version in a proposal or a rev is a 400 naming it, and the connection stays usable")
    func malformedVersions() async throws {
        try await TestGateway.run { gateway in
            try await ActivePeer.connect(port: gateway.port, offering: Self.pullerOffer4) { peer in
                let badRow = try await Self.errorReply(
                    of: peer, [("Profile", "proposeChanges")], body: #"[["d","zz@@x","",3]]"#)
                #expect(badRow?.code == 400)
                #expect(badRow?.message.contains("zz@@x") == true)
                let badRev = try await Self.errorReply(
                    of: peer, [("Profile", "rev"), ("id", "d"), ("rev", "12@notbase64!")], body: #"{"a":1}"#)
                #expect(badRev?.code == 400)
                #expect(badRev?.message.contains("12@notbase64!") == true)
                let version = "18ebd07f63c50000@ddja2MCRTril1aX52skGJg"
                try await peer.send(
                    RevRequest(
                        docID: "d", revision: try WireRevision(received: version), noConflicts: true,
                        body: Array(#"{"a":1}"#.utf8)))
                let stored = try await gateway.database.document("d")
                #expect(stored?.vector?.current.description == version)
            }
        }
    }

    /// The error reply to a hand-built request, or `nil` when it succeeded.
    static func errorReply(
        of peer: ActivePeer, _ properties: [(key: String, value: String)], body: String
    ) async throws -> BLIPErrorReply? {
        let message = BLIPMessage(
            kind: .request, properties: BLIPProperties(properties), body: Array(body.utf8), isUrgent: false,
            isNoReply: false, isCompressed: false)
        do {
            _ = try await peer.connection.sendRequest(message)
            return nil
        } catch let error as BLIPErrorReply {
            return error
        }
    }
}

extension VersionVectorSessionTests {
    /// Every connection of `conflict`, the pulling ones included: their replies to the recorded passive's `changes`
    /// and `rev` land on this listener's own requests of the same numbers, which it must survive. B's resolved
    /// version (its own current version over A's) is accepted in the end, as LiteCore accepted it.
    @Test("conflict (4.0.3), every connection: B's resolution of the conflict is accepted over A's version")
    func conflictResolvedAndPushed() async throws {
        let connections = try RecordedClientConnection.load("conflict.jsonl", from: Self.fourthGeneration)
        try await TestGateway.run { gateway in
            _ = try await RecordedClientReplayTests.replayExchanges(
                connections, to: gateway, unchecked: ["setCheckpoint", "subChanges"])
            let database = try await gateway.database
            let stored = try #require(try await database.document("conflict-000000"))
            #expect(
                stored.vector?.description
                    == "18ebd0850a630000@HDL3DmjHQ6aGU6XSGrYP5g; 18ebd084db420001@W4IpzVcVScq75WMaxJ6WUA")
        }
    }
}

/// Every `cbl-4.0.3` transcript of a 4.x client with this listener in the recorded passive's place: the listener
/// starts with the recorded passive's own documents, every client frame is replayed in order, and both what the
/// listener answers and what it sends a pulling client must match the recording.
@Suite("Couchbase Lite 4.0.3's recorded sessions replayed to the listener, pulls included")
struct RecordedVersionVectorSessionTests {
    static let transcripts: [RecordedTranscript] = [
        RecordedTranscript(fileName: "push-oneshot.jsonl"),
        RecordedTranscript(fileName: "update-delete.jsonl"),
        RecordedTranscript(fileName: "bulk-500.jsonl"),
        RecordedTranscript(fileName: "pull-oneshot.jsonl"),
        RecordedTranscript(fileName: "pull-tombstone.jsonl"),
        RecordedTranscript(fileName: "blob.jsonl"),
        RecordedTranscript(fileName: "conflict.jsonl"),
        RecordedTranscript(fileName: "pushpull-continuous.jsonl", uncapturedWrites: ["late-000000"]),
        // The second connection resumes both collections from the checkpoints of the first.
        RecordedTranscript(
            fileName: "collections.jsonl",
            collections: [
                try! CollectionName(parsing: "store.inventory"), try! CollectionName(parsing: "store.orders"),
            ],
            resumed: [1]),
    ]

    @Test("the listener answers and sends as the recorded LiteCore passive did", arguments: transcripts)
    func replay(_ transcript: RecordedTranscript) async throws {
        try await TestGateway.run(collections: transcript.collections) { gateway in
            let replay = try await RecordedClientReplayTests.replay(
                transcript, from: VersionVectorSessionTests.fourthGeneration, to: gateway)
            if transcript.collections == [.default] {
                try await RecordedClientReplayTests.expectStored(replay.pushed, in: gateway)
            }
            print(
                "\(transcript): \(replay.seeded) documents of the passive's own, \(replay.pushed.count) pushed, since "
                    + replay.translatedSince.joined(separator: ", "))
        }
    }
}
