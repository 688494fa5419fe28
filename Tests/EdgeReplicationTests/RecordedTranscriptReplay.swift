import BLIPCodec
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import Testing

/// A recorded transcript and what its replay needs beyond its client frames.
struct RecordedTranscript: Sendable, CustomStringConvertible {
    var fileName: String
    /// The connections replayed; nil for all.
    var connections: Set<Int>? = nil
    /// The collections the listener serves.
    var collections: [CollectionName] = [.default]
    /// Documents a client the recording did not capture wrote to the passive mid-session: each is stored when the
    /// replay reaches the passive's `changes` that offered it.
    var uncapturedWrites: Set<String> = []
    /// Connections that resume from checkpoints holding the recorded passive's sequences. LiteCore numbers each
    /// collection in a series of its own, where this store numbers a database's collections in one (as Sync
    /// Gateway does), and a client of this listener saves this listener's sequences. So these connections are
    /// replayed as such a client would have sent them: each `since` names the place in our series of the change
    /// the recorded passive numbered so, the frames re-encoded (`RecordedClientConnection.reencoded`).
    var resumed: Set<Int> = []

    var description: String { fileName }
}

/// What the replay of a transcript did.
struct TranscriptReplay: Sendable {
    /// Documents the recorded passive had of its own, stored in the listener (uncaptured writes included).
    var seeded: Int
    /// The `rev`s pushed, the last one per document.
    var pushed: [PushedRevision]
    /// Each `since` of a resumed connection: "collection: recorded → ours".
    var translatedSince: [String]
}

extension RecordedClientReplayTests {
    /// Replays a transcript to the listener: the recorded passive's own documents are stored first (the
    /// uncaptured writes when the replay reaches them), then each connection is replayed in order
    /// (`replayExchanges`), the resumed ones translated.
    static func replay(_ transcript: RecordedTranscript, from set: String, to gateway: TestGateway) async throws
        -> TranscriptReplay
    {
        let connections = try RecordedClientConnection.load(
            transcript.fileName, from: set, only: transcript.connections)
        let database = try await gateway.database
        let seeds = try passiveSeeds(of: connections)
        let uncaptured = UncapturedWrites(seeds.filter { transcript.uncapturedWrites.contains($0.revision.docID) })
        for seed in seeds where !transcript.uncapturedWrites.contains(seed.revision.docID) {
            try await store(seed, in: database)
        }
        var pushed: [String: PushedRevision] = [:]
        var translated: [String] = []
        for (position, connection) in connections.enumerated() {
            var replayed = connection
            if transcript.resumed.contains(connection.conn) {
                let sequences = try await ourSequences(of: connections[..<position], in: database)
                let names = try connection.collectionNames()
                replayed = try connection.reencoded { properties in
                    guard properties["Profile"] == "subChanges", let since = properties["since"].flatMap(Int.init)
                    else { return }
                    let collection = try collectionName(properties["collection"], in: names)
                    let ours = try #require(sequences[collection]?[since], "\(collection) since \(since)")
                    properties["since"] = String(ours)
                    translated.append("\(collection): \(since) → \(ours)")
                }
            }
            let (revisions, _) = try await replayExchanges([replayed], to: gateway) { recorded in
                guard recorded.properties["Profile"] == "changes" else { return }
                let changes = try ChangesRequest(
                    properties: MessageProperties(recorded.properties.pairs), body: recorded.body)
                for row in changes.rows {
                    if let seed = await uncaptured.take(row.docID) {
                        try await store(seed, in: database)
                    }
                }
            }
            for revision in revisions {
                pushed[revision.docID] = revision
            }
        }
        #expect(await uncaptured.isEmpty, "every uncaptured write was offered")
        #expect(
            transcript.resumed.isEmpty || !translated.isEmpty, "a resumed connection of \(transcript) sent no since")
        return TranscriptReplay(seeded: seeds.count, pushed: Array(pushed.values), translatedSince: translated)
    }

    /// For each collection, the recorded passive's sequence of each change it sent on `connections` → our sequence
    /// of that document.
    private static func ourSequences(
        of connections: ArraySlice<RecordedClientConnection>, in database: DocumentDatabase
    ) async throws -> [CollectionName: [Int: Int]] {
        var sequences: [CollectionName: [Int: Int]] = [:]
        for connection in connections {
            let names = try connection.collectionNames()
            for request in try connection.recordedPassiveRequests() where request.properties["Profile"] == "changes" {
                let changes = try ChangesRequest(
                    properties: MessageProperties(request.properties.pairs), body: request.body)
                let collection = try collectionName(changes.collection.map(String.init), in: names)
                for row in changes.rows {
                    guard let recorded = row.sequence.intValue,
                        let ours = try await database.document(row.docID, in: collection)
                    else { continue }
                    sequences[collection, default: [:]][recorded] = Int(ours.sequence)
                }
            }
        }
        return sequences
    }

    /// The collection a request's `collection` index names on a connection; the default one in legacy mode.
    private static func collectionName(_ index: String?, in names: [CollectionName?]) throws -> CollectionName {
        guard let index else { return .default }
        let position = try #require(Int(index))
        return try #require(names.indices.contains(position) ? names[position] : nil, "collection \(index)")
    }
}

extension RecordedClientConnection {
    /// The collections the client named in its `getCollections`, in its order (nil for a name that is not one);
    /// none in legacy mode.
    func collectionNames() throws -> [CollectionName?] {
        try Self.collectionNames(in: recordedClientRequests())
    }

    /// The collections named in the `getCollections` among a connection's decoded client requests.
    static func collectionNames(in requests: [BLIPMessage]) throws -> [CollectionName?] {
        guard let request = requests.first(where: { $0.properties["Profile"] == "getCollections" })
        else { return [] }
        return try GetCollectionsRequest(properties: MessageProperties(request.properties.pairs), body: request.body)
            .collections
    }
}

/// The writes of an uncaptured client, each taken once when the replay reaches it.
private actor UncapturedWrites {
    private var byDocID: [String: RecordedClientReplayTests.PassiveSeed]

    init(_ seeds: [RecordedClientReplayTests.PassiveSeed]) {
        byDocID = Dictionary(seeds.map { ($0.revision.docID, $0) }, uniquingKeysWith: { _, last in last })
    }

    var isEmpty: Bool { byDocID.isEmpty }

    func take(_ docID: String) -> RecordedClientReplayTests.PassiveSeed? {
        byDocID.removeValue(forKey: docID)
    }
}
