import BLIPCodec
import BLIPConnection
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import Synchronization
import Testing
import VersionVectors

@testable import EdgeReplication

/// The passive side of real Couchbase Lite 4.0.3 sessions (LiteCore 4.0.3's passive replicator on a version-vector
/// database) replayed against the active replicator over CBMobile_4: it answers with the recorded replies and sends
/// the recorded requests, and what the replicator sends must be what Couchbase Lite 4.0.3 sent, message for
/// message. Values that differ from run to run by nature (checkpoint IDs, the database `uuid`, times) are compared by
/// shape; rows, revisions, bodies and property order byte for byte.
@Suite("Recorded LiteCore 4.0.3 passive sessions replayed against the active replicator")
struct RecordedPassiveReplayTests {
    /// A request the replicator sent, as the scripted passive received it.
    struct Received: Sendable {
        var properties: [(key: String, value: String)]
        var body: [UInt8]
        var profile: String { properties.first { $0.key == "Profile" }?.value ?? "" }
        var keys: [String] { properties.map(\.key) }
    }

    /// The recorded session's client requests (by profile, in order) and passive replies; the passive's own requests
    /// and the client's replies to them.
    struct Session {
        var clientRequests: [BLIPMessage]
        var passiveReplies: [UInt64: BLIPMessage]
        var passiveRequests: [BLIPMessage]
        var clientReplies: [UInt64: BLIPMessage]

        init(_ fileName: String, connection number: Int = 0) throws {
            let connection = try #require(
                try RecordedClientConnection.load(fileName, from: "cbl-4.0.3", only: [number]).first)
            clientRequests = try connection.recordedClientRequests()
            passiveReplies = try connection.recordedPassiveReplies()
            passiveRequests = try connection.recordedPassiveRequests()
            clientReplies = try connection.recordedClientReplies()
        }

        /// The recorded passive's reply to the `index`-th client request of `profile`.
        func reply(to profile: String, index: Int) throws -> BLIPMessage {
            let request = try #require(clientRequests.filter { $0.profile == profile }.dropFirst(index).first)
            return try #require(passiveReplies[request.number])
        }
    }

    /// Runs a scripted CBMobile_4 passive that records every request and answers each with the recorded passive's
    /// reply to the client's request of the same profile and rank; `afterSubChanges` then plays the passive's own
    /// requests.
    static func replay(
        _ session: Session, into local: LocalDatabase, direction: ActiveReplicator.Direction,
        afterSubChanges: @escaping @Sendable (BLIPConnection) async throws -> Void = { _ in }
    ) async throws -> [Received] {
        let received = Mutex<[Received]>([])
        let sessionReplies = try Dictionary(
            grouping: session.clientRequests.filter { !$0.isNoReply }, by: { $0.profile ?? "" }
        ).mapValues { requests in try requests.map { try #require(session.passiveReplies[$0.number]) } }
        try await ScriptedUpstream.run(
            subprotocol: ReplicationSubprotocol.cbMobile4.rawValue,
            configure: { connection in
                for profile in [
                    "getCollections", "subChanges", "proposeChanges", "rev", "getAttachment", "setCheckpoint",
                ] {
                    await connection.setHandler(for: profile) { request in
                        let rank = received.withLock { list in
                            list.append(Received(properties: request.properties.pairs, body: request.body))
                            return list.filter { $0.profile == profile }.count - 1
                        }
                        if profile == "subChanges" {
                            Task { try await afterSubChanges(connection) }
                        }
                        guard let recorded = sessionReplies[profile], rank < recorded.count else {
                            throw ErrorReply.http(500, "the recorded session has no reply to \(profile) #\(rank)")
                                .blipError
                        }
                        let reply = recorded[rank]
                        return request.reply(properties: reply.properties, body: reply.body)
                    }
                }
            }
        ) { port in
            let replicator = ActiveReplicator(
                database: local.database,
                configuration: .init(
                    remoteURL: "ws://127.0.0.1:\(port)/db", remoteUUID: "litecore-4.0.3", direction: direction,
                    // One save at the end, as in the recordings, however slowly a loaded machine runs the session.
                    checkpointInterval: .seconds(3_600), subprotocols: ReplicationSubprotocol.versionVectorOffer),
                logger: testLogger)
            try await replicator.run()
            #expect(await replicator.status().lastError == nil)
        }
        return received.withLock { $0 }
    }

    /// Properties as `key=value` strings, in order, for comparing and printing.
    static func pairs(_ properties: [(key: String, value: String)]) -> [String] {
        properties.map { "\($0.key)=\($0.value)" }
    }

    /// The rows of a `proposeChanges` body, each item as its JSON text.
    static func rows(_ body: [UInt8]) throws -> [[String]] {
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [[Any]])
        return rows.map { row in row.map { ($0 as? String).map { "\"\($0)\"" } ?? "\($0)" } }
    }

    /// How many of each profile.
    static func counts(_ profiles: [String]) -> [String: Int] {
        profiles.reduce(into: [:]) { $0[$1, default: 0] += 1 }
    }

    /// The keys of a JSON object body, sorted.
    static func objectKeys(_ body: [UInt8]) throws -> [String] {
        try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]).keys.sorted()
    }

    /// The first connection of each transcript whose client pushes into an empty passive database.
    @Test(
        "a first push sends getCollections, proposeChanges, revs and setCheckpoint as Couchbase Lite 4.0.3 sent them",
        arguments: ["push-oneshot.jsonl", "update-delete.jsonl", "pull-tombstone.jsonl", "bulk-500.jsonl"])
    func firstPush(_ fileName: String) async throws {
        let session = try Session(fileName)
        let recordedRevs = session.clientRequests.filter { $0.profile == "rev" }
        try await LocalDatabase.run(speaking: ReplicationSubprotocol.versionVectorOffer) { local in
            // The client's documents with their recorded versions, written in its order, so the sequences match too.
            for request in recordedRevs {
                let rev = try request.decode(RevRequest.self)
                guard case .vector(let vector) = rev.revision else {
                    Issue.record("\(rev.docID) has no version")
                    continue
                }
                let results = try await local.database.insertVersionedRevisions([
                    VersionedRevision(docID: rev.docID, vector: vector, deleted: rev.deleted, body: Data(rev.body))
                ])
                #expect(results.allSatisfy { if case .inserted = $0 { true } else { false } })
            }
            let sent = try await Self.replay(session, into: local, direction: .push)
            let recorded = session.clientRequests.filter { !$0.isNoReply }
            // The same requests; proposals and revisions go out several at a time, so only the first and the last
            // have a fixed place.
            #expect(Self.counts(sent.map(\.profile)) == Self.counts(recorded.map { $0.profile ?? "" }))
            #expect(sent.first?.profile == "getCollections" && sent.last?.profile == "setCheckpoint")

            let getCollections = try #require(sent.first)
            #expect(getCollections.keys == ["Profile", "uuid"])
            #expect(getCollections.properties.last?.value == local.database.uuid.uuidString.lowercased())
            #expect(try Self.objectKeys(getCollections.body) == ["checkpoint_ids", "collections"])

            // Properties byte for byte; rows the same but for the size estimate (4th item), which LiteCore takes from
            // the Fleece-encoded body and this side from the JSON one: both only budget and show progress with it.
            // Batches are proposed several at a time, as LiteCore does, and handled here as they come: compared by
            // their rows, in row order.
            let proposals = try sent.filter { $0.profile == "proposeChanges" }.sorted {
                try Self.rows($0.body).first?.first ?? "" < Self.rows($1.body).first?.first ?? ""
            }
            let recordedProposals = recorded.filter { $0.profile == "proposeChanges" }
            #expect(proposals.count == recordedProposals.count)
            let bodySizes = Dictionary(
                try recordedRevs.map { try $0.decode(RevRequest.self) }.map { ($0.docID, $0.body.count) },
                uniquingKeysWith: { _, last in last })
            for (proposed, recordedProposal) in zip(proposals, recordedProposals) {
                #expect(Self.pairs(proposed.properties) == Self.pairs(recordedProposal.properties.pairs))
                let rows = try Self.rows(proposed.body)
                let recordedRows = try Self.rows(recordedProposal.body)
                #expect(
                    rows.map { Array($0.prefix(3)) } == recordedRows.map { Array($0.prefix(3)) },
                    "ours \(rows.count) rows from \(rows.first ?? []), recorded \(recordedRows.count) from \(recordedRows.first ?? [])"
                )
                for row in rows where row.count == 4 {
                    #expect(row[3] == "\(bodySizes[String(row[0].dropFirst().dropLast())] ?? -1)", "\(row)")
                }
            }

            // Each `rev` as Couchbase Lite sent it, whatever order the revisions of a window went out in.
            let revs = Dictionary(
                sent.filter { $0.profile == "rev" }.map { rev in
                    (rev.properties.first { $0.key == "id" }?.value ?? "", rev)
                }, uniquingKeysWith: { first, _ in first })
            #expect(revs.count == recordedRevs.count)
            for theirs in recordedRevs {
                let ours = try #require(revs[theirs.properties["id"] ?? ""])
                #expect(Self.pairs(ours.properties) == Self.pairs(theirs.properties.pairs))
                #expect(ours.body == theirs.body)
            }

            let checkpoint = try #require(sent.last)
            let recordedCheckpoint = try #require(recorded.last)
            #expect(checkpoint.keys == recordedCheckpoint.properties.pairs.map(\.key))
            #expect(try Self.objectKeys(checkpoint.body) == (try Self.objectKeys(recordedCheckpoint.body)))
        }
    }

    /// Connections whose client pulls into a database that lacks the passive's documents.
    @Test(
        "a pull answers LiteCore's changes as Couchbase Lite 4.0.3 did, and stores its versions",
        arguments: [("pull-oneshot.jsonl", 0), ("blob.jsonl", 1), ("conflict.jsonl", 1)])
    func pull(_ fileName: String, connection: Int) async throws {
        let session = try Session(fileName, connection: connection)
        let ourReplies = Mutex<[BLIPMessage]>([])
        try await LocalDatabase.run(speaking: ReplicationSubprotocol.versionVectorOffer) { local in
            let sent = try await Self.replay(session, into: local, direction: .pull) { connection in
                // LiteCore's own requests, as recorded, in its order.
                for request in session.passiveRequests {
                    let outgoing = BLIPMessage.request(
                        profile: request.profile ?? "", properties: request.properties, body: request.body,
                        isUrgent: request.isUrgent, isNoReply: request.isNoReply)
                    if request.isNoReply {
                        try await connection.sendNoReply(outgoing)
                    } else if request.profile == "changes" {
                        let reply = try await connection.sendRequest(outgoing)
                        ourReplies.withLock { $0.append(reply) }
                    } else {
                        Task { _ = try await connection.sendRequest(outgoing) }
                    }
                }
            }
            #expect(sent.map(\.profile) == session.clientRequests.filter { !$0.isNoReply }.map { $0.profile ?? "" })
            let subChanges = try #require(sent.first { $0.profile == "subChanges" })
            #expect(subChanges.properties.first { $0.key == "versioning" }?.value == "version-vectors")
            #expect(subChanges.properties.first { $0.key == "collection" }?.value == "0")

            // Our reply to each `changes` is the one Couchbase Lite 4.0.3 sent: the same rows and properties.
            let recordedChangesReplies = try session.passiveRequests.filter { $0.profile == "changes" && !$0.isNoReply }
                .map { try #require(session.clientReplies[$0.number]) }
            let replies = ourReplies.withLock { $0 }
            #expect(replies.count == recordedChangesReplies.count)
            for (ours, theirs) in zip(replies, recordedChangesReplies) {
                #expect(Self.pairs(ours.properties.pairs) == Self.pairs(theirs.properties.pairs))
                #expect(String(decoding: ours.body, as: UTF8.self) == String(decoding: theirs.body, as: UTF8.self))
            }

            // Every recorded revision is stored with its version and body.
            for request in session.passiveRequests where request.profile == "rev" {
                let rev = try request.decode(RevRequest.self)
                let document = try #require(try await local.database.document(rev.docID))
                #expect(WireRevision.vector(try #require(document.vector)) == rev.revision)
                #expect(document.body == Data(rev.body))
            }
        }
    }
}
