import BLIPCodec
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import HummingbirdWSClient
import NIOCore
import Testing
import UpstreamDialer

/// Couchbase Lite 3.2.4's own client frames, replayed byte for byte to the listener over a real WebSocket.
///
/// Each client frame of the recorded connection is sent as one binary WebSocket message, in wire order, once
/// the replies the recorded client had received before sending it have arrived from our listener. The frames
/// are valid as they stand: they are deflated with the client's own stream and carry the client's running CRC,
/// neither of which depends on the other side. Our replies are decoded with BLIPCodec; every one must be a
/// success, except where the recorded LiteCore peer answered with the same error (a missing checkpoint is a
/// 404), and the pushed revisions must end up in the store with the recorded revision IDs.
///
/// Replayed: `push-oneshot` (one connection) and `update-delete` (a first push, then, on a second connection,
/// an update and a deletion whose `setCheckpoint` names the `1-cc` checkpoint revision our first answer
/// created, as LiteCore's did).
///
/// Not replayable verbatim, because the recorded client frames answer requests of the recorded passive peer:
/// pull transcripts (`pull-oneshot`, `pull-tombstone`, the pulling connections of `blob`, `conflict`, `delta`,
/// `collections`, `pushpull-continuous`) reply to the peer's `changes` and `rev` messages by message number and
/// acknowledge its bytes with ACK frames, so they only make sense if our listener sent exactly the recorded
/// messages, with the recorded sequences and revision IDs of a LiteCore database. `auth-fail` needs a listener
/// with the recorded password. Those transcripts are covered at the codec level in BLIPCodecTests.
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

    /// Replays the connections one after the other; returns the `rev`s pushed, last one per document.
    static func replay(
        _ connections: [RecordedClientConnection], to gateway: TestGateway
    ) async throws -> [PushedRevision] {
        try await replayExchanges(connections, to: gateway).pushed
    }

    /// Replays the connections one after the other, each offering the subprotocols its client offered; returns
    /// the `rev`s pushed (last one per document) and every request with our listener's reply.
    /// Replies to `unchecked` profiles are returned but not required to succeed.
    static func replayExchanges(
        _ connections: [RecordedClientConnection], to gateway: TestGateway, unchecked: Set<String> = []
    ) async throws -> (pushed: [PushedRevision], exchanges: [RecordedExchange]) {
        var pushed: [String: PushedRevision] = [:]
        var exchanges: [RecordedExchange] = []
        for connection in connections {
            let dialer = try TestGateway.dialer(port: gateway.port, subprotocols: connection.subprotocols)
            let (revisions, answered) = try await withThrowingTaskGroup(
                of: ([PushedRevision], [RecordedExchange]).self
            ) { group in
                group.addTask {
                    let box = PushedRevisionsBox()
                    try await dialer.run { session in
                        await box.set(
                            try await replay(
                                connection, inbound: session.inbound, outbound: session.outbound, unchecked: unchecked))
                    }
                    return (await box.revisions, await box.exchanges)
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(30))
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
        _ connection: RecordedClientConnection, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter,
        unchecked: Set<String>
    ) async throws -> ([PushedRevision], [RecordedExchange]) {
        var client = try RecordedClientConnection.Decoding()
        var server = try RecordedClientConnection.Decoding()
        var iterator = inbound.makeAsyncIterator()
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
        var awaitingReply: Set<UInt64> = []
        for frame in connection.frames {
            try await awaitReplies(to: frame.repliesReceivedBefore)
            for request in try client.receive(frame.payload) where !request.isNoReply {
                server.assembler.expectReply(to: request.number)
                awaitingReply.insert(request.number)
            }
            try await outbound.write(.binary(ByteBuffer(bytes: frame.payload)))
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
            return RecordedExchange(request: request, reply: reply)
        }
        return (pushed, exchanges)
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
    }

    var conn: Int
    /// What the client offered in `Sec-WebSocket-Protocol`.
    var subprotocols: [String]
    /// The client's binary frames in wire order; close frames are left to the WebSocket layer.
    var frames: [Frame]
    /// Error codes of the recorded peer's error replies, by request number.
    var recordedErrorCodes: [UInt64: Int]

    static let fixtures = packageRoot.appendingPathComponent("Tests/BLIPCodecTests/Fixtures")

    /// The connections of a transcript of `set` that upgraded, in recorded order; only those numbered in `only`
    /// when it is given.
    static func load(
        _ fileName: String, from set: String = "cbl-3.2.4", only: Set<Int>? = nil
    ) throws -> [RecordedClientConnection] {
        let text = try String(
            contentsOf: fixtures.appendingPathComponent(set).appendingPathComponent(fileName), encoding: .utf8)
        var connections: [Int: RecordedClientConnection] = [:]
        var answered: [Int: Set<UInt64>] = [:]
        var offered: [Int: [String]] = [:]
        for line in text.split(separator: "\n").dropFirst() {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            if let conn = object["conn"] as? Int, let offer = Self.offeredSubprotocols(in: object) {
                offered[conn] = offer
            }
            guard object["kind"] as? String == "ws_frame", object["opcode"] as? Int == 2,
                let conn = object["conn"] as? Int, let hex = object["payload_hex"] as? String
            else { continue }
            let decoded = object["decoded_by_fixture_tool"] as? [String: Any] ?? [:]
            var connection =
                connections[conn]
                ?? RecordedClientConnection(
                    conn: conn, subprotocols: offered[conn] ?? ["BLIP_3+CBMobile_3", "BLIP_3+CBMobile_2"], frames: [],
                    recordedErrorCodes: [:])
            if object["direction"] as? String == "active->passive" {
                connection.frames.append(
                    Frame(payload: try bytes(hex: hex), repliesReceivedBefore: answered[conn] ?? []))
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

    /// The `Sec-WebSocket-Protocol` values of a recorded upgrade request, in the client's order.
    static func offeredSubprotocols(in object: [String: Any]) -> [String]? {
        guard object["kind"] as? String == "http_request", let text = object["text"] as? String else { return nil }
        let header = text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-protocol:") }
        return header.map { line in
            line.dropFirst("sec-websocket-protocol:".count).split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
        }
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
