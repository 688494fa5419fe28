import BLIPCodec
import BLIPConnection
import Foundation
import ReplicationProtocol
import SyncJSON

/// The peer-side checkpoint as LiteCore's `Checkpointer` keeps it: read once with `getCheckpoint` (`HTTP/404`
/// for a first pull), then replaced with `setCheckpoint` carrying the revision the last reply gave (empty when
/// creating) and the body `{"time":…,"remote":…}` (`pull-oneshot.jsonl`: `rev: ""`,
/// `{"time":1795314762,"remote":3}`, answered with `rev: 1-cc`).
struct CheckpointExchange: Sendable {
    let connection: BLIPConnection
    let client: String
    private var revision: String?
    private(set) var savedSequence: JSONValue?
    private(set) var sentBodies: [String] = []

    init(connection: BLIPConnection, client: String) {
        self.connection = connection
        self.client = client
    }

    /// The `remote` of the saved checkpoint, the `since` to resume from; `nil` when there is none.
    mutating func fetch() async throws -> JSONValue? {
        let (properties, body) = GetCheckpointRequest(client: client).encode()
        let reply: BLIPMessage
        do {
            reply = try await connection.sendRequest(
                BLIPMessage(kind: .request, properties: BLIPProperties(properties.pairs), body: body))
        } catch let error as BLIPErrorReply where error.domain == "HTTP" && error.code == 404 {
            return nil
        } catch let error as BLIPErrorReply {
            throw LiteCoreShapedPullerError.peerRefused(request: "getCheckpoint", error)
        }
        let decoded = try GetCheckpointReply(properties: MessageProperties(reply.properties.pairs), body: reply.body)
        revision = decoded.revision
        savedSequence = try decoded.checkpoint().remote
        return savedSequence
    }

    /// Saves `sequence` as `remote` unless it is what was saved last.
    mutating func save(_ sequence: JSONValue?) async throws {
        guard let sequence, sequence != savedSequence else { return }
        let checkpoint = Checkpoint(time: Int(Date().timeIntervalSince1970), remote: sequence)
        let (properties, body) = SetCheckpointRequest(client: client, revision: revision, body: checkpoint.json)
            .encode()
        let reply: BLIPMessage
        do {
            reply = try await connection.sendRequest(
                BLIPMessage(kind: .request, properties: BLIPProperties(properties.pairs), body: body))
        } catch let error as BLIPErrorReply {
            throw LiteCoreShapedPullerError.peerRefused(request: "setCheckpoint", error)
        }
        revision = try SetCheckpointReply(properties: MessageProperties(reply.properties.pairs), body: reply.body)
            .revision
        savedSequence = sequence
        sentBodies.append(String(decoding: body, as: UTF8.self))
    }
}
