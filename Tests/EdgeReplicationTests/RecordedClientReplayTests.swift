import BLIPCodec
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import HummingbirdWSClient
import NIOCore
import ReplicationProtocol
import SyncIdentifiers
import Testing
import UpstreamDialer

/// Couchbase Lite 3.2.4's own client frames, replayed byte for byte to the listener over a real WebSocket (the
/// 4.0.3 ones go through the same machinery in `RecordedVersionVectorSessionTests` and `CrossVersionReplayTests`).
///
/// Each client frame of the recorded connection is sent as one binary WebSocket message, in wire order, once
/// the replies the recorded client had received before sending it have arrived from our listener. A reply to one of
/// the passive's requests goes out under the number of our listener's request with the same content, the only
/// bytes changed (the CRC covers the payload, not the frame header). The frames
/// are valid as they stand: they are deflated with the client's own stream and carry the client's running CRC,
/// neither of which depends on the other side. Our replies are decoded with BLIPCodec; every one must be a
/// success, except where the recorded LiteCore peer answered with the same error (a missing checkpoint is a
/// 404), and the pushed revisions must end up in the store with the recorded revision IDs.
///
/// Replayed: `push-oneshot` and `update-delete` (whose second connection's `setCheckpoint` names the `1-cc`
/// checkpoint revision our first answer created, as LiteCore's did), `auth-fail` (the wrong password refused, the
/// right one pulling), and with their pulls `pull-oneshot`, `pull-tombstone`, `blob`, `conflict`, `delta`,
/// `bulk-500`, `collections` and the push of `blob-2mb`. For a pull, the listener starts with the documents the
/// recorded passive had of its own (`seedPassiveDocuments`), and each recorded reply of the client waits for the
/// listener's request with the same content as LiteCore's (`replayExchanges`).
///
/// Not replayed: `pushpull-continuous` and the pull of `blob-2mb` (see `transcripts324`).
@Suite("Couchbase Lite's recorded client frames replayed to the listener")
struct RecordedClientReplayTests {
    @Test("push-oneshot: three new documents with their recorded revision IDs")
    func pushOneShot() async throws {
        let connections = try RecordedClientConnection.load("push-oneshot.jsonl")
        try await TestGateway.run { gateway in
            let pushed = try await Self.replay(connections, to: gateway)
            #expect(pushed.map(\.docID).sorted() == ["doc-0", "doc-1", "doc-2"])
            #expect(pushed.contains { $0.docID == "doc-0" && $0.revID == "1-53ae3384db3684f9657c91c271e5592b8a146c8c" })
            try await Self.expectStored(pushed, in: gateway)
        }
    }

    @Test("auth-fail: the wrong password gets 401 with the Basic challenge, the right one a complete pull")
    func authenticationFailure() async throws {
        let connections = try RecordedClientConnection.load("auth-fail.jsonl")
        let credentials = try RecordedClientConnection.credentials(in: "auth-fail.jsonl", from: "cbl-3.2.4")
        #expect(connections.map(\.conn) == [1])
        #expect(credentials[0]?.user == "bob" && credentials[0]?.password == "wrong")
        let recorded = try #require(credentials[1])
        try await TestGateway.run(
            settings: TestGateway.settings(
                authentication: TestGateway.users(name: recorded.user, password: recorded.password))
        ) { gateway in
            // Connection 0 never upgraded: its credentials are dialed as they were sent.
            let refused = try TestGateway.dialer(port: gateway.port, credentials: credentials[0])
            await #expect {
                try await refused.run { _ in }
            } throws: { error in
                guard case .upgradeRefused(_, let status, _, let challenge, _) = error as? UpstreamDialError else {
                    return false
                }
                return status == 401 && challenge == #"Basic charset="UTF-8""#
            }
            let database = try await gateway.database
            let seeded = try await Self.seedPassiveDocuments(of: connections, into: database)
            #expect(seeded == 1)
            let (_, exchanges) = try await Self.replayExchanges(connections, to: gateway, credentials: credentials)
            #expect(exchanges.contains { $0.profile == "subChanges" })
        }
    }

    @Test("update-delete: a second session updates one document and deletes another")
    func updateAndDelete() async throws {
        let connections = try RecordedClientConnection.load("update-delete.jsonl")
        #expect(connections.count == 2)
        try await TestGateway.run { gateway in
            let pushed = try await Self.replay(connections, to: gateway)
            #expect(pushed.contains { $0.docID == "doc-1" && $0.deleted })
            #expect(pushed.contains { $0.docID == "doc-0" && $0.revID.hasPrefix("2-") })
            try await Self.expectStored(pushed, in: gateway)
        }
    }

    /// The 3.2.4 transcripts with their pulls: the listener starts with the recorded passive's own documents and
    /// must send what LiteCore sent (`replayExchanges`).
    /// In `blob-2mb` connection 1 the client pulls the 2 MB blob and acknowledges it with ACK frames counting the
    /// recorded passive's bytes: the listener frames the reply its own way, so those counts do not add up to its
    /// frames and it waits for acknowledgements that never come. `pushpull-continuous` is left out: there the
    /// recorded passive offered the client's two pushed documents back in one `changes` (its inserter had stored
    /// them in one transaction), and the listener offers them in one or two, as its commits fall; the client's one
    /// recorded reply cannot answer two.
    static let transcripts324: [RecordedTranscript] = [
        RecordedTranscript(fileName: "pull-oneshot.jsonl"),
        RecordedTranscript(fileName: "pull-tombstone.jsonl"),
        RecordedTranscript(fileName: "blob.jsonl"),
        RecordedTranscript(fileName: "blob-2mb.jsonl", connections: [0]),
        RecordedTranscript(fileName: "conflict.jsonl"),
        RecordedTranscript(fileName: "delta.jsonl"),
        RecordedTranscript(fileName: "bulk-500.jsonl"),
        // Connection 3 resumes both collections from the checkpoints of connection 2; connection 4 asks for a
        // collection the passive does not serve.
        RecordedTranscript(
            fileName: "collections.jsonl",
            collections: [
                try! CollectionName(parsing: "store.inventory"), try! CollectionName(parsing: "store.orders"),
            ],
            resumed: [3]),
    ]

    @Test(
        "3.2.4 sessions, pulls included: the listener answers and sends as the recorded LiteCore passive did",
        arguments: transcripts324)
    func replayWithPulls(_ transcript: RecordedTranscript) async throws {
        try await TestGateway.run(collections: transcript.collections) { gateway in
            let replay = try await Self.replay(transcript, from: "cbl-3.2.4", to: gateway)
            if transcript.collections == [.default] {
                try await Self.expectStored(replay.pushed, in: gateway)
            }
            print(
                "\(transcript) (3.2.4): \(replay.seeded) documents of the passive's own, \(replay.pushed.count) pushed, "
                    + "since " + replay.translatedSince.joined(separator: ", "))
        }
    }

    /// Replays the connections one after the other; returns the `rev`s pushed, last one per document.
    static func replay(
        _ connections: [RecordedClientConnection], to gateway: TestGateway
    ) async throws -> [PushedRevision] {
        try await replayExchanges(connections, to: gateway).pushed
    }

    /// Replays the connections one after the other, each offering the subprotocols its client offered; returns
    /// the `rev`s pushed (last one per document) and every request with our listener's reply.
    /// Replies to `unchecked` profiles are returned but not required to succeed. `beforeAwaiting` is called with
    /// each recorded passive request before the listener's like of it is awaited: there a test stands in for a
    /// writer the recording did not capture.
    /// Each recorded reply of a pulling client waits for our listener's request with the same content as the
    /// recorded passive's (profile, document, revision, history; a `changes` the same rows), so the listener must
    /// send what LiteCore sent.
    static func replayExchanges(
        _ connections: [RecordedClientConnection], to gateway: TestGateway, unchecked: Set<String> = [],
        credentials: [Int: (user: String, password: String)] = [:],
        beforeAwaiting: @escaping @Sendable (BLIPMessage) async throws -> Void = { _ in }
    ) async throws -> (pushed: [PushedRevision], exchanges: [RecordedExchange]) {
        var pushed: [String: PushedRevision] = [:]
        var exchanges: [RecordedExchange] = []
        for connection in connections {
            let dialer = try TestGateway.dialer(
                port: gateway.port, subprotocols: connection.subprotocols, credentials: credentials[connection.conn])
            let (revisions, answered) = try await withThrowingTaskGroup(
                of: ([PushedRevision], [RecordedExchange]).self
            ) { group in
                group.addTask {
                    let box = PushedRevisionsBox()
                    try await dialer.run { session in
                        await box.set(
                            try await replay(
                                connection, session: session, unchecked: unchecked, beforeAwaiting: beforeAwaiting))
                    }
                    return (await box.revisions, await box.exchanges)
                }
                group.addTask {
                    // Only a hang reaches this; a 2 MiB or 500-document replay in a debug build, sharing 2 cores with
                    // the rest of the suite, has taken more than 30 s.
                    try await Task.sleep(for: .seconds(120))
                    throw TimedOut(what: "the replay of connection \(connection.conn)")
                }
                defer { group.cancelAll() }
                return try await group.next()!
            }
            for revision in revisions {
                pushed[revision.docID] = revision
            }
            exchanges += answered
        }
        return (Array(pushed.values), exchanges)
    }

    private static func replay(
        _ connection: RecordedClientConnection, session: UpstreamDialer.Session, unchecked: Set<String>,
        beforeAwaiting: @Sendable (BLIPMessage) async throws -> Void
    ) async throws -> ([PushedRevision], [RecordedExchange]) {
        var client = try RecordedClientConnection.Decoding()
        var server = try RecordedClientConnection.Decoding()
        var iterator = session.inbound.makeAsyncIterator()
        /// Reads our listener's frames until it has answered `numbers`.
        func awaitReplies(to numbers: Set<UInt64>) async throws {
            while !numbers.isSubset(of: server.repliesByNumber.keys) {
                guard let frame = try await iterator.next() else {
                    throw TimedOut(what: "replies to \(numbers.sorted()); the listener closed the connection")
                }
                #expect(frame.opcode == .binary)
                try server.receive(Array(frame.data.readableBytesView))
            }
        }
        let recordedRequests = Dictionary(
            try connection.recordedPassiveRequests().map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
        /// Our requests already matched to a recorded one, by our number.
        var matched: Set<UInt64> = []
        /// Our number for each recorded request matched, so that every frame of a reply in several frames goes to it.
        var ourNumbers: [UInt64: UInt64] = [:]
        /// Reads our listener's frames until it has sent a request with the same content as the recorded passive's
        /// `recorded` (`summary(of:)`); returns its number.
        func awaitRequest(like recorded: BLIPMessage) async throws -> UInt64 {
            try await beforeAwaiting(recorded)
            let wanted = Self.summary(of: recorded)
            while true {
                if let ours = server.requests.first(where: {
                    !matched.contains($0.number) && Self.summary(of: $0) == wanted
                }) {
                    matched.insert(ours.number)
                    return ours.number
                }
                guard let frame = try await iterator.next() else {
                    throw TimedOut(
                        what: "the listener to send what LiteCore sent as #\(recorded.number), \(wanted); it sent "
                            + server.requests.map { "#\($0.number) \(Self.summary(of: $0))" }.joined(separator: "; "))
                }
                try server.receive(Array(frame.data.readableBytesView))
            }
        }
        var awaitingReply: Set<UInt64> = []
        for frame in connection.frames {
            try await awaitReplies(to: frame.repliesReceivedBefore)
            var payload = frame.payload
            if let number = frame.replyTo, let recorded = recordedRequests[number] {
                // A pulling client's reply answers the listener's request with the same content. Requests of two
                // collections' feeds may be numbered in another order than LiteCore's, so the reply frame is given
                // our request's number; its payload and checksum stay as recorded (the CRC covers the payload only).
                let ours: UInt64
                if let known = ourNumbers[number] {
                    ours = known
                } else {
                    ours = try await awaitRequest(like: recorded)
                    ourNumbers[number] = ours
                    client.assembler.expectReply(to: ours)
                }
                payload = try Self.renumbered(payload, to: ours)
            }
            for request in try client.receive(payload) where !request.isNoReply {
                server.assembler.expectReply(to: request.number)
                awaitingReply.insert(request.number)
            }
            try await session.outbound.write(.binary(ByteBuffer(bytes: payload)))
        }
        try await awaitReplies(to: awaitingReply)
        for number in awaitingReply.sorted() {
            let reply = server.repliesByNumber[number]!
            let profile = client.requests.first { $0.number == number }?.properties["Profile"] ?? "?"
            if unchecked.contains(profile) {
                continue
            } else if let recordedCode = connection.recordedErrorCodes[number] {
                #expect(reply.errorReply?.code == recordedCode, "\(profile) #\(number): \(reply)")
            } else {
                #expect(reply.kind == .reply, "\(profile) #\(number): \(String(describing: reply.errorReply))")
            }
        }
        let pushed = client.requests.filter { $0.properties["Profile"] == "rev" }.map { rev in
            PushedRevision(
                docID: rev.properties["id"] ?? "", revID: rev.properties["rev"] ?? "",
                deleted: rev.properties["deleted"].map { $0 != "0" && $0 != "false" } ?? false)
        }
        let exchanges = awaitingReply.sorted().compactMap { number -> RecordedExchange? in
            guard let request = client.requests.first(where: { $0.number == number }),
                let reply = server.repliesByNumber[number]
            else { return nil }
            return RecordedExchange(request: request, reply: reply, subprotocol: session.subprotocol)
        }
        return (pushed, exchanges)
    }

    /// A revision the recorded passive had of its own: one it sent that no recorded client pushed.
    struct PassiveSeed: Sendable {
        var sequence: Int
        var collection: CollectionName
        var revision: RevRequest
    }

    /// Stores the documents the recorded passive had of its own (`passiveSeeds(of:)`) in the order of its sequences,
    /// so that the listener's feed numbers and names them as LiteCore's did.
    static func seedPassiveDocuments(
        of connections: [RecordedClientConnection], into database: DocumentDatabase
    ) async throws -> Int {
        let seeds = try passiveSeeds(of: connections)
        for seed in seeds {
            try await store(seed, in: database)
        }
        return seeds.count
    }

    /// The revisions the recorded passive sent that no recorded client pushed, in the order of its sequences.
    static func passiveSeeds(of connections: [RecordedClientConnection]) throws -> [PassiveSeed] {
        var pushed: Set<String> = []
        var seeds: [PassiveSeed] = []
        var seen: Set<String> = []
        for connection in connections {
            let clientRequests = try connection.recordedClientRequests()
            for request in clientRequests where request.properties["Profile"] == "rev" {
                pushed.insert("\(request.properties["id"] ?? "") \(request.properties["rev"] ?? "")")
            }
            let collections = try RecordedClientConnection.collectionNames(in: clientRequests)
            for request in try connection.recordedPassiveRequests() where request.properties["Profile"] == "rev" {
                let key = "\(request.properties["id"] ?? "") \(request.properties["rev"] ?? "")"
                guard !pushed.contains(key), seen.insert(key).inserted else { continue }
                let rev = try RevRequest(properties: MessageProperties(request.properties.pairs), body: request.body)
                let collection = rev.collection.flatMap { collections.indices.contains($0) ? collections[$0] : nil }
                seeds.append(
                    PassiveSeed(
                        sequence: Int(request.properties["sequence"] ?? "") ?? 0, collection: collection ?? .default,
                        revision: rev))
            }
        }
        return seeds.sorted { $0.sequence < $1.sequence }
    }

    /// Stores one of the recorded passive's own revisions as it was named there.
    static func store(_ seed: PassiveSeed, in database: DocumentDatabase) async throws {
        let rev = seed.revision
        let results =
            switch rev.revision {
            case .vector(let vector):
                try await database.insertVersionedRevisions(
                    [VersionedRevision(docID: rev.docID, vector: vector, deleted: rev.deleted, body: Data(rev.body))],
                    in: seed.collection)
            case .tree(let revisionID):
                try await database.insertExistingRevisions(
                    [
                        ExistingRevision(
                            docID: rev.docID, revID: revisionID, history: rev.history.ancestors,
                            deleted: rev.deleted, body: Data(rev.body))
                    ], in: seed.collection)
            }
        guard case .inserted? = results.first else {
            Issue.record("\(rev.docID) was not seeded: \(results)")
            return
        }
    }

    /// A BLIP frame with its message number (the leading varint) replaced.
    static func renumbered(_ frame: [UInt8], to number: UInt64) throws -> [UInt8] {
        var index = frame.startIndex
        _ = try Varint.read(from: frame, at: &index)
        var result: [UInt8] = []
        Varint.append(number, to: &result)
        return result + frame[index...]
    }

    /// What must be the same in our listener's request and the recorded passive's: the profile, the document and
    /// revision it names, and for `changes` each row's document, revision and deletion.
    static func summary(of request: BLIPMessage) -> String {
        let properties = request.properties
        var summary = [properties["Profile"], properties["id"], properties["rev"], properties["history"]]
            .map { $0 ?? "-" }.joined(separator: " ")
        if properties["Profile"] == "changes",
            let changes = try? ChangesRequest(properties: MessageProperties(properties.pairs), body: request.body)
        {
            summary +=
                " " + changes.rows.map { "\($0.docID)@\($0.revision)/\($0.flags.rawValue)" }.joined(separator: ",")
        }
        return summary
    }

    /// Each pushed revision is its document's current one: by rev-tree ID, or by current version when it was
    /// pushed as a version vector.
    static func expectStored(_ pushed: [PushedRevision], in gateway: TestGateway) async throws {
        let database = try await gateway.database
        for revision in pushed {
            let stored = try await database.document(revision.docID)
            let current =
                revision.revID.contains("@") ? stored?.vector?.current.description : stored?.revID.description
            #expect(current == revision.revID, "\(revision.docID)")
            #expect(stored?.deleted == revision.deleted, "\(revision.docID)")
        }
    }
}

struct PushedRevision: Sendable, Equatable {
    var docID: String
    var revID: String
    var deleted: Bool
}

/// A replayed client request and our listener's reply to it.
struct RecordedExchange: Sendable {
    var request: BLIPMessage
    var reply: BLIPMessage
    /// The subprotocol the listener chose for the connection.
    var subprotocol: String

    var profile: String { request.properties["Profile"] ?? "" }
}

actor PushedRevisionsBox {
    private(set) var revisions: [PushedRevision] = []
    private(set) var exchanges: [RecordedExchange] = []

    func set(_ replayed: ([PushedRevision], [RecordedExchange])) {
        (revisions, exchanges) = replayed
    }
}

/// The client side of one recorded connection of a Couchbase Lite transcript
/// (Tests/BLIPCodecTests/Fixtures/cbl-3.2.4 and cbl-4.0.3, format in the 3.2.4 README).
struct RecordedClientConnection: Sendable {
    struct Frame: Sendable {
        /// The unmasked WebSocket payload: one BLIP frame.
        var payload: [UInt8]
        /// Numbers of the client's requests that the recorded peer had answered before the client sent this.
        var repliesReceivedBefore: Set<UInt64>
        /// For the client's reply to one of the recorded peer's requests (a pull's `changes` or `rev`): its number.
        var replyTo: UInt64?
    }

    var conn: Int
    /// What the client offered in `Sec-WebSocket-Protocol`.
    var subprotocols: [String]
    /// The client's binary frames in wire order; close frames are left to the WebSocket layer.
    var frames: [Frame]
    /// Error codes of the recorded peer's error replies, by request number.
    var recordedErrorCodes: [UInt64: Int]
    /// The recorded passive peer's binary frames in wire order.
    var passiveFrames: [[UInt8]] = []

    /// The requests the recorded passive peer sent on this connection (a pull's `changes` and `rev`s, a push's
    /// `getAttachment`s), decoded with both directions' streams.
    func recordedPassiveRequests() throws -> [BLIPMessage] {
        var client = try Decoding()
        var passive = try Decoding()
        for frame in frames {
            if let number = frame.replyTo { client.assembler.expectReply(to: number) }
            for request in try client.receive(frame.payload) where !request.isNoReply {
                passive.assembler.expectReply(to: request.number)
            }
        }
        var requests: [BLIPMessage] = []
        for payload in passiveFrames {
            requests += try passive.receive(payload)
        }
        return requests
    }

    /// The recorded passive peer's replies to the client's requests, by request number, decoded.
    func recordedPassiveReplies() throws -> [UInt64: BLIPMessage] {
        var passive = try Decoding()
        for request in try recordedClientRequests() where !request.isNoReply {
            passive.assembler.expectReply(to: request.number)
        }
        for payload in passiveFrames {
            try passive.receive(payload)
        }
        return passive.repliesByNumber
    }

    /// The recorded client's replies to the passive peer's requests (a pull's `changes` and `rev`s), by number.
    func recordedClientReplies() throws -> [UInt64: BLIPMessage] {
        var client = try Decoding()
        for frame in frames {
            if let number = frame.replyTo { client.assembler.expectReply(to: number) }
            try client.receive(frame.payload)
        }
        return client.repliesByNumber
    }

    /// The requests the recorded client sent, decoded.
    func recordedClientRequests() throws -> [BLIPMessage] {
        var client = try Decoding()
        var requests: [BLIPMessage] = []
        for frame in frames {
            if let number = frame.replyTo { client.assembler.expectReply(to: number) }
            requests += try client.receive(frame.payload)
        }
        return requests
    }

    static let fixtures = packageRoot.appendingPathComponent("Tests/BLIPCodecTests/Fixtures")

    /// The connections of a transcript of `set` that upgraded, in recorded order; only those numbered in `only`
    /// when it is given.
    static func load(
        _ fileName: String, from set: String = "cbl-3.2.4", only: Set<Int>? = nil
    ) throws -> [RecordedClientConnection] {
        let offered = try offers(in: fileName, from: set)
        var connections: [Int: RecordedClientConnection] = [:]
        var answered: [Int: Set<UInt64>] = [:]
        for object in try records(of: fileName, from: set) {
            guard object["kind"] as? String == "ws_frame", object["opcode"] as? Int == 2,
                let conn = object["conn"] as? Int, let hex = object["payload_hex"] as? String
            else { continue }
            let decoded = object["decoded_by_fixture_tool"] as? [String: Any] ?? [:]
            var connection =
                connections[conn]
                ?? RecordedClientConnection(
                    conn: conn, subprotocols: offered[conn] ?? ["BLIP_3+CBMobile_3", "BLIP_3+CBMobile_2"], frames: [],
                    recordedErrorCodes: [:])
            if object["direction"] as? String == "passive->active" {
                connection.passiveFrames.append(try bytes(hex: hex))
            }
            if object["direction"] as? String == "active->passive" {
                let type = decoded["type"] as? String
                connection.frames.append(
                    Frame(
                        payload: try bytes(hex: hex), repliesReceivedBefore: answered[conn] ?? [],
                        replyTo: type == "RPY" || type == "ERR" ? (decoded["msg_no"] as? Int).map(UInt64.init) : nil))
            } else if let type = decoded["type"] as? String, type == "RPY" || type == "ERR",
                let number = decoded["msg_no"] as? Int
            {
                answered[conn, default: []].insert(UInt64(number))
                let properties = decoded["properties"] as? [String: Any]
                if type == "ERR", let code = (properties?["Error-Code"] as? String).flatMap(Int.init) {
                    connection.recordedErrorCodes[UInt64(number)] = code
                }
            }
            connections[conn] = connection
        }
        return connections.keys.sorted().filter { only?.contains($0) ?? true }.compactMap { connections[$0] }
    }

    /// The records of a transcript after its header line, as JSON objects.
    static func records(of fileName: String, from set: String) throws -> [[String: Any]] {
        let text = try String(
            contentsOf: fixtures.appendingPathComponent(set).appendingPathComponent(fileName), encoding: .utf8)
        return try text.split(separator: "\n").dropFirst().map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
        }
    }

    /// What the client of each recorded connection offered in `Sec-WebSocket-Protocol`, in its order, by
    /// connection: also for a connection that was refused at the upgrade.
    static func offers(in fileName: String, from set: String) throws -> [Int: [String]] {
        try upgradeHeader("Sec-WebSocket-Protocol", in: fileName, from: set).mapValues {
            $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    /// The Basic credentials the client of each recorded connection sent, by connection.
    static func credentials(in fileName: String, from set: String) throws -> [Int: (user: String, password: String)] {
        try upgradeHeader("Authorization", in: fileName, from: set).compactMapValues { value in
            guard value.hasPrefix("Basic "), let decoded = Data(base64Encoded: String(value.dropFirst(6))),
                let pair = String(data: decoded, encoding: .utf8), let colon = pair.firstIndex(of: ":")
            else { return nil }
            return (String(pair[..<colon]), String(pair[pair.index(after: colon)...]))
        }
    }

    /// The value of one header of each recorded upgrade request, by connection.
    static func upgradeHeader(_ name: String, in fileName: String, from set: String) throws -> [Int: String] {
        let prefix = name.lowercased() + ":"
        var values: [Int: String] = [:]
        for object in try records(of: fileName, from: set) {
            guard object["kind"] as? String == "http_request", let conn = object["conn"] as? Int,
                let text = object["text"] as? String,
                let line = text.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix(prefix) })
            else { continue }
            values[conn] = line.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces)
        }
        return values
    }

    static func bytes(hex: String) throws -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(hex.utf8.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else {
                throw TimedOut(what: "valid hex in the fixture")
            }
            result.append(byte)
            index = next
        }
        return result
    }

    /// The same connection with every client frame re-encoded by this project's own encoder (its own deflate
    /// stream and running CRC, each frame compressed where the client's was), the properties of each single-frame
    /// request passed through `rewrite` first. A recorded frame cannot be edited in place: the CRC of every later
    /// frame covers it.
    func reencoded(rewriting rewrite: (inout BLIPProperties) throws -> Void) throws -> RecordedClientConnection {
        let decoder = BLIPFrameDecoder()
        let encoder = try BLIPFrameEncoder()
        var startedRequests: Set<UInt64> = []
        var copy = self
        copy.frames = try frames.map { frame in
            guard case .data(let data) = try decoder.decode(frame.payload) else { return frame }
            var chunk = data.payload
            if data.type == .request, startedRequests.insert(data.number).inserted,
                !data.flags.contains(.moreComing)
            {
                var index = chunk.startIndex
                let length = Int(try Varint.read(from: chunk, at: &index))
                var properties = try BLIPProperties(decoding: chunk[index..<index + length])
                try rewrite(&properties)
                let block = properties.encoded
                var rewritten: [UInt8] = []
                Varint.append(UInt64(block.count), to: &rewritten)
                chunk = rewritten + block + chunk[(index + length)...]
            }
            var reencoded = frame
            reencoded.payload = encoder.encodeFrame(
                number: data.number, type: data.type, flags: data.flags, chunk: chunk[...],
                compress: data.flags.contains(.compressed))
            return reencoded
        }
        return copy
    }

    /// One direction's BLIP state: a long-lived inflater and running CRC, and message reassembly.
    struct Decoding {
        let decoder: BLIPFrameDecoder
        var assembler = MessageAssembler()
        var requests: [BLIPMessage] = []
        var repliesByNumber: [UInt64: BLIPMessage] = [:]

        init() throws {
            decoder = BLIPFrameDecoder()
        }

        /// Decodes one frame; returns the requests it completed.
        @discardableResult
        mutating func receive(_ frame: [UInt8]) throws -> [BLIPMessage] {
            guard case .data(let data) = try decoder.decode(frame),
                let message = try assembler.receive(data).message
            else { return [] }
            switch message.kind {
            case .request:
                requests.append(message)
                return [message]
            case .reply, .error:
                repliesByNumber[message.number] = message
                return []
            }
        }
    }
}
