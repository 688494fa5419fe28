/// `getCheckpoint` (spec §3.2): asks for the checkpoint stored under `client`.
public struct GetCheckpointRequest: ReplicationRequest, Hashable {
    public static let profile = Profile.getCheckpoint

    /// The checkpoint ID (`cp-…`), opaque to the passive side.
    public var client: String
    public var collection: Int?

    public init(client: String, collection: Int? = nil) {
        self.client = client
        self.collection = collection
    }

    public init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        try properties.expectProfile(Self.profile)
        client = try properties.required("client", in: Self.profile)
        collection = try properties.collectionIndex(in: Self.profile)
    }

    public func encode() -> (properties: MessageProperties, body: [UInt8]) {
        var properties = Self.startProperties(collection: collection)
        properties.append("client", client)
        return (properties, [])
    }
}

/// The reply to `getCheckpoint`: the stored body, byte for byte, and its revision. "Not found" is
/// an `HTTP/404` error reply instead (`ErrorReply.isHTTPNotFound`).
public struct GetCheckpointReply: ReplicationMessage, Hashable {
    /// Opaque MVCC revision (`1-cc` from LiteCore, `0-1` from Sync Gateway).
    public var revision: String
    public var body: [UInt8]

    public init(revision: String, body: [UInt8]) {
        self.revision = revision
        self.body = body
    }

    public init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        revision = try properties.required("rev", in: nil)
        self.body = body
    }

    public func encode() -> (properties: MessageProperties, body: [UInt8]) {
        (["rev": revision], body)
    }

    public func checkpoint() throws(ProtocolError) -> Checkpoint {
        try Checkpoint(json: body)
    }
}

/// `setCheckpoint` (spec §3.3): compare-and-swap of the checkpoint stored under `client`.
public struct SetCheckpointRequest: ReplicationRequest, Hashable {
    public static let profile = Profile.setCheckpoint

    public var client: String
    /// The revision the sender last saw; `nil` when creating (LiteCore then writes an empty `rev`).
    public var revision: String?
    public var collection: Int?
    /// The checkpoint JSON, stored and returned verbatim.
    public var body: [UInt8]

    public init(client: String, revision: String?, body: [UInt8], collection: Int? = nil) {
        self.client = client
        self.revision = revision
        self.body = body
        self.collection = collection
    }

    /// Checks that the body is a JSON object, without altering the bytes kept.
    public init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        try properties.expectProfile(Self.profile)
        client = try properties.required("client", in: Self.profile)
        revision = properties["rev"]
        collection = try properties.collectionIndex(in: Self.profile)
        _ = try MessageBody.object(body, context: "setCheckpoint body")
        self.body = body
    }

    /// `rev` is always written, empty when creating, as LiteCore does.
    public func encode() -> (properties: MessageProperties, body: [UInt8]) {
        var properties = Self.startProperties(collection: collection)
        properties.append("client", client)
        properties.append("rev", revision ?? "")
        return (properties, body)
    }

    public func checkpoint() throws(ProtocolError) -> Checkpoint {
        try Checkpoint(json: body)
    }
}

/// The reply to a successful `setCheckpoint`: the new revision. A revision mismatch is an
/// `HTTP/409` error reply instead.
public struct SetCheckpointReply: ReplicationMessage, Hashable {
    public var revision: String

    public init(revision: String) {
        self.revision = revision
    }

    public init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        revision = try properties.required("rev", in: nil)
    }

    public func encode() -> (properties: MessageProperties, body: [UInt8]) {
        (["rev": revision], [])
    }
}
