import SyncIdentifiers
import SyncJSON

/// `getCollections` (spec §3.1): the first message of a collection-aware connection. Entry *i*
/// pairs `checkpointIDs[i]` with `collections[i]`, and *i* becomes that collection's `collection`
/// index for the rest of the connection.
package struct GetCollectionsRequest: ReplicationRequest, Hashable {
    package static let profile = Profile.getCollections

    package var checkpointIDs: [String]
    /// Nil for a well-formed name that breaks Couchbase's naming rules: no peer can serve such a collection, so it
    /// is answered `null` like any other unknown one (as Sync Gateway does) rather than failing the whole request.
    /// Encoding writes a nil as `null`: the name is not kept, and this side never asks for such a collection.
    package var collections: [CollectionName?]
    /// The sender's database UUID, which Couchbase Lite 4 sends on every connection (WIRE-NOTES §2), 3.x never.
    package var uuid: String?

    package init(checkpointIDs: [String], collections: [CollectionName], uuid: String? = nil) {
        self.checkpointIDs = checkpointIDs
        self.collections = collections
        self.uuid = uuid
    }

    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        try properties.expectProfile(Self.profile)
        let context = "getCollections body"
        let object = try MessageBody.object(body, context: context)
        let checkpointIDs = try Self.strings(object["checkpoint_ids"], key: "checkpoint_ids", context: context)
        let names = try Self.strings(object["collections"], key: "collections", context: context)
        guard !names.isEmpty else {
            throw .invalidBody(context: context, reason: "'collections' is empty")
        }
        guard checkpointIDs.count == names.count else {
            throw .invalidBody(
                context: context,
                reason: "'checkpoint_ids' has \(checkpointIDs.count) entries but 'collections' has \(names.count)"
            )
        }
        var collections: [CollectionName?] = []
        for name in names {
            let collection: CollectionName?
            do throws(InvalidCollectionName) {
                collection = try CollectionName(parsing: name)
            } catch {
                switch error.reason {
                case .tooManyParts:
                    throw .invalidCollectionName(error.text, reason: "expected 'collection' or 'scope.collection'")
                case .emptyPart:
                    throw .invalidCollectionName(error.text, reason: error.reason.description)
                case .tooLong, .reservedFirstCharacter, .defaultCollectionOutsideDefaultScope, .disallowedCharacter:
                    collection = nil
                }
            }
            if let collection, collections.contains(collection) {
                throw .invalidBody(context: context, reason: "collection '\(collection.wireName)' is listed twice")
            }
            collections.append(collection)
        }
        self.checkpointIDs = checkpointIDs
        self.collections = collections
        uuid = properties["uuid"]
    }

    package func encode() -> (properties: MessageProperties, body: [UInt8]) {
        let body: JSONValue = [
            "checkpoint_ids": .array(checkpointIDs.map(JSONValue.string)),
            "collections": .array(collections.map { $0.map { .string($0.wireName) } ?? .null }),
        ]
        var properties = Self.startProperties(collection: nil)
        properties.append("uuid", uuid)
        return (properties, body.serialized)
    }

    private static func strings(_ value: JSONValue?, key: String, context: String) throws(ProtocolError) -> [String] {
        guard let array = value?.arrayValue else {
            throw .invalidBody(context: context, reason: "'\(key)' must be an array of strings")
        }
        var strings: [String] = []
        for element in array {
            guard let string = element.stringValue, !string.isEmpty else {
                throw .invalidBody(context: context, reason: "'\(key)' must contain only non-empty strings")
            }
            strings.append(string)
        }
        return strings
    }
}

/// The reply to `getCollections`: one entry per requested collection, in request order.
package struct GetCollectionsReply: ReplicationMessage, Hashable {
    package enum Entry: Sendable, Hashable {
        /// `null`: the peer does not serve this collection.
        case missing
        /// `{}`: the collection exists but has no checkpoint under the requested ID.
        case noCheckpoint
        /// The stored checkpoint body and its MVCC revision.
        case checkpoint(revision: String, body: JSONObject)
    }

    /// LiteCore reads the checkpoint revision from `rev`; Sync Gateway writes it as `_rev` (spec §3.1).
    static let revisionKey = "rev"
    static let legacyRevisionKey = "_rev"

    package var entries: [Entry]

    package init(entries: [Entry]) {
        self.entries = entries
    }

    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        let context = "getCollections reply"
        let value = try MessageBody.json(body, context: context)
        guard let array = value.arrayValue else {
            throw .invalidBody(context: context, reason: "expected a JSON array, got \(value.typeName)")
        }
        var entries: [Entry] = []
        for (index, element) in array.enumerated() {
            switch element {
            case .null:
                entries.append(.missing)
            case .object(var object):
                let revision = object[Self.revisionKey] ?? object[Self.legacyRevisionKey]
                object[Self.revisionKey] = nil
                object[Self.legacyRevisionKey] = nil
                if let revision {
                    guard let text = revision.stringValue, !text.isEmpty else {
                        throw .invalidRow(
                            context: context, index: index, reason: "the checkpoint revision is not a string")
                    }
                    entries.append(.checkpoint(revision: text, body: object))
                } else if object.isEmpty {
                    entries.append(.noCheckpoint)
                } else {
                    throw .invalidRow(context: context, index: index, reason: "a stored checkpoint has no 'rev'")
                }
            default:
                throw .invalidRow(
                    context: context, index: index, reason: "expected null or an object, got \(element.typeName)")
            }
        }
        self.entries = entries
    }

    /// Checkpoints are written as LiteCore does: the body's members plus `rev`, keys sorted
    /// (observed in the CBL 3.2.4 `collections` transcript: `{"local":2,"remote":2,"rev":"3-cc","time":…}`).
    package func encode() -> (properties: MessageProperties, body: [UInt8]) {
        let array: [JSONValue] = entries.map { entry in
            switch entry {
            case .missing:
                return .null
            case .noCheckpoint:
                return .object(JSONObject())
            case .checkpoint(let revision, let body):
                var members = Array(body)
                members.append((key: Self.revisionKey, value: .string(revision)))
                var sorted = JSONObject()
                for member in members.sorted(by: { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }) {
                    sorted[member.key] = member.value
                }
                return .object(sorted)
            }
        }
        return (MessageProperties(), JSONValue.array(array).serialized)
    }
}

extension GetCollectionsReply.Entry {
    /// A checkpoint entry from the raw body stored by `setCheckpoint`.
    package static func checkpoint(revision: String, storedBody: [UInt8]) throws(ProtocolError) -> Self {
        .checkpoint(revision: revision, body: try MessageBody.object(storedBody, context: "stored checkpoint"))
    }
}
