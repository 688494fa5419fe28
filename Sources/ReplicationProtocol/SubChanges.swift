import SyncJSON

/// `subChanges` (spec §3.4): the active side asks the passive side to start feeding it `changes`.
/// Its reply is empty.
public struct SubChangesRequest: ReplicationRequest, Hashable {
    public static let profile = Profile.subChanges

    /// Which revision scheme the sender's database uses; LiteCore refuses a mismatch.
    public struct Versioning: RawRepresentable, Sendable, Hashable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let revisionTrees = Versioning(rawValue: "rev-trees")
        package static let versionVectors = Versioning(rawValue: "version-vectors")
    }

    /// The one filter Couchbase peers understand; its parameter is `channels`.
    package static let channelFilter = "sync_gateway/bychannel"
    /// LiteCore's default `batch`.
    public static let defaultBatchSize = 200

    /// The checkpoint's `remote` value, exactly as the peer sent it (a number or a JSON string).
    package var since: JSONValue?
    public var continuous: Bool
    /// The maximum number of rows per `changes` message.
    public var batchSize: Int?
    package var sendReplacementRevs: Bool
    package var versioning: Versioning?
    /// Skip tombstones in the backlog.
    package var activeOnly: Bool
    /// Announce access revocations and channel removals (CBMobile_3).
    package var revocations: Bool
    package var filter: String?
    /// The `channels` filter parameter, split at commas.
    package var channels: [String]?
    /// Restricts the feed to these documents (body `{"docIDs":[…]}`).
    package var docIDs: [String]?
    package var collection: Int?

    public init(
        since: JSONValue? = nil,
        continuous: Bool = false,
        batchSize: Int? = SubChangesRequest.defaultBatchSize,
        sendReplacementRevs: Bool = false,
        versioning: Versioning? = .revisionTrees,
        activeOnly: Bool = false,
        revocations: Bool = false,
        filter: String? = nil,
        channels: [String]? = nil,
        docIDs: [String]? = nil,
        collection: Int? = nil
    ) {
        self.since = since
        self.continuous = continuous
        self.batchSize = batchSize
        self.sendReplacementRevs = sendReplacementRevs
        self.versioning = versioning
        self.activeOnly = activeOnly
        self.revocations = revocations
        self.filter = filter
        self.channels = channels
        self.docIDs = docIDs
        self.collection = collection
    }

    public init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        try properties.expectProfile(Self.profile)
        since = try properties.json("since", in: Self.profile)
        continuous = properties.flag("continuous")
        batchSize = try properties.nonNegativeInteger("batch", in: Self.profile)
        sendReplacementRevs = properties.flag("sendReplacementRevs")
        versioning = properties["versioning"].map(Versioning.init(rawValue:))
        activeOnly = properties.flag("activeOnly")
        revocations = properties.flag("revocations")
        filter = properties["filter"]
        channels = properties["channels"].map { list in
            list.split(separator: ",").map { $0.trimmingSpaces }.filter { !$0.isEmpty }
        }
        collection = try properties.collectionIndex(in: Self.profile)
        docIDs = try Self.docIDs(in: body)
    }

    /// Properties in LiteCore's order: `since`, `continuous`, `batch`, `sendReplacementRevs`,
    /// `versioning`, `activeOnly`, `revocations`, then the filter.
    public func encode() -> (properties: MessageProperties, body: [UInt8]) {
        var properties = Self.startProperties(collection: collection)
        properties.append("since", since?.jsonString)
        properties.append("continuous", continuous, style: .literal)
        properties.append("batch", batchSize.map(String.init))
        properties.append("sendReplacementRevs", sendReplacementRevs, style: .integer)
        properties.append("versioning", versioning?.rawValue)
        properties.append("activeOnly", activeOnly, style: .literal)
        properties.append("revocations", revocations, style: .literal)
        properties.append("filter", filter)
        properties.append("channels", channels?.joined(separator: ","))
        let body: [UInt8] =
            docIDs.map { ids in
                JSONValue.object(["docIDs": .array(ids.map(JSONValue.string))]).serialized
            } ?? []
        return (properties, body)
    }

    private static func docIDs(in body: [UInt8]) throws(ProtocolError) -> [String]? {
        guard !body.isEmpty else { return nil }
        let context = "subChanges body"
        let object = try MessageBody.object(body, context: context)
        guard let value = object["docIDs"] else { return nil }
        guard let array = value.arrayValue else {
            throw .invalidBody(context: context, reason: "'docIDs' must be an array of strings")
        }
        var docIDs: [String] = []
        for element in array {
            guard let docID = element.stringValue else {
                throw .invalidBody(context: context, reason: "'docIDs' must contain only strings")
            }
            if let problem = DocumentID.problem(docID) {
                throw .invalidBody(context: context, reason: "'docIDs' entry \"\(docID)\": \(problem)")
            }
            docIDs.append(docID)
        }
        return docIDs
    }
}

/// `unsubChanges` (spec §3.11): stops the feed for a collection. No properties besides `collection`.
package struct UnsubChangesRequest: ReplicationRequest, Hashable {
    package static let profile = Profile.unsubChanges

    package var collection: Int?

    package init(collection: Int? = nil) {
        self.collection = collection
    }

    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        try properties.expectProfile(Self.profile)
        collection = try properties.collectionIndex(in: Self.profile)
    }

    package func encode() -> (properties: MessageProperties, body: [UInt8]) {
        (Self.startProperties(collection: collection), [])
    }
}
