import SyncIdentifiers
import SyncJSON

/// A replication request or reply that decodes from, and encodes to, BLIP properties and a body.
package protocol ReplicationMessage: Sendable {
    /// Decodes a received message; bad input throws a `ProtocolError` that names the problem and
    /// carries the `ERR` reply to send.
    init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError)

    /// Properties in the order LiteCore writes them (requests start with `Profile`) and the body.
    func encode() -> (properties: MessageProperties, body: [UInt8])
}

/// A replication request: a message with a `Profile`.
package protocol ReplicationRequest: ReplicationMessage {
    static var profile: Profile { get }
}

extension ReplicationRequest {
    /// Starts a request's properties: `Profile`, then `collection` when collection-aware, the order
    /// LiteCore uses.
    static func startProperties(collection: Int?) -> MessageProperties {
        var properties: MessageProperties = [MessageProperties.profileKey: profile.rawValue]
        properties.append(CollectionIndex.propertyKey, collection.map(String.init))
        return properties
    }
}

enum MessageBody {
    /// Parses a JSON body; `context` names it in errors.
    static func json(_ body: [UInt8], context: String) throws(ProtocolError) -> JSONValue {
        do {
            return try JSONValue(parsing: body)
        } catch {
            throw .invalidJSON(context: context, reason: error.description)
        }
    }

    /// Parses a body that must be a JSON object.
    static func object(_ body: [UInt8], context: String) throws(ProtocolError) -> JSONObject {
        let value = try json(body, context: context)
        guard let object = value.objectValue else {
            throw .invalidBody(context: context, reason: "expected a JSON object, got \(value.typeName)")
        }
        return object
    }

    /// Parses a list body (`changes`, `proposeChanges` and their replies). An empty body or `null`
    /// is an empty list: Sync Gateway sends `null` for "caught up" (spec §3.5).
    static func list(_ body: [UInt8], context: String) throws(ProtocolError) -> [JSONValue] {
        guard !body.isEmpty else { return [] }
        let value = try json(body, context: context)
        switch value {
        case .null: return []
        case .array(let array): return array
        default: throw .invalidBody(context: context, reason: "expected a JSON array, got \(value.typeName)")
        }
    }
}

/// Document IDs are 1–255 bytes of UTF-8 (spec §4.5).
enum DocumentID {
    static let maximumLength = 255

    static func problem(_ docID: String) -> String? {
        if docID.isEmpty { return "the document ID is empty" }
        if docID.utf8.count > maximumLength { return "the document ID is longer than \(maximumLength) bytes" }
        return nil
    }

    static func validate(_ docID: String, key: String, profile: Profile) throws(ProtocolError) {
        if let problem = problem(docID) {
            throw .invalidProperty(key, value: docID, profile: profile, expected: "a document ID (\(problem))")
        }
    }
}

extension MessageProperties {
    /// A rev-tree revision ID property, or `nil` when absent.
    func revision(_ key: String) throws(ProtocolError) -> WireRevision? {
        guard let text = self[key] else { return nil }
        return try WireRevision(received: text)
    }
}
