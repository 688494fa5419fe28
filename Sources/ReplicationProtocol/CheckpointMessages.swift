/// `getCheckpoint` (spec §3.2): asks for the checkpoint stored under `client`.
package struct GetCheckpointRequest: ReplicationRequest, Hashable {
    package static let profile = Profile.getCheckpoint

    /// The checkpoint ID (`cp-…`), opaque to the passive side.
    package var client: String
    package var collection: Int?

    package init(client: String, collection: Int? = nil) {
        self.client = client
        self.collection = collection
    }

    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        try properties.expectProfile(Self.profile)
        client = try properties.required("client", in: Self.profile)
        collection = try properties.collectionIndex(in: Self.profile)
    }

    package func encode() -> (properties: MessageProperties, body: [UInt8]) {
        var properties = Self.startProperties(collection: collection)
        properties.append("client", client)
        return (properties, [])
    }
}

/// The reply to `getCheckpoint`: the stored body, byte for byte, and its revision. "Not found" is
/// an `HTTP/404` error reply instead (`ErrorReply.isHTTPNotFound`).
package struct GetCheckpointReply: ReplicationMessage, Hashable {
    /// Opaque MVCC revision (`1-cc` from LiteCore, `0-1` from Sync Gateway).
    package var revision: String
    package var body: [UInt8]

    package init(revision: String, body: [UInt8]) {
        self.revision = revision
        self.body = body
    }

    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        revision = try properties.required("rev", in: nil)
        self.body = body
    }

    package func encode() -> (properties: MessageProperties, body: [UInt8]) {
        (["rev": revision], body)
    }

    package func checkpoint() throws(ProtocolError) -> Checkpoint {
        try Checkpoint(json: body)
    }
}

/// `setCheckpoint` (spec §3.3): compare-and-swap of the checkpoint stored under `client`.
package struct SetCheckpointRequest: ReplicationRequest, Hashable {
    package static let profile = Profile.setCheckpoint

    package var client: String
    /// The revision the sender last saw; `nil` when creating (LiteCore then writes an empty `rev`).
    package var revision: String?
    package var collection: Int?
    /// The checkpoint JSON, stored and returned verbatim.
    package var body: [UInt8]

    package init(client: String, revision: String?, body: [UInt8], collection: Int? = nil) {
        self.client = client
        self.revision = revision
        self.body = body
        self.collection = collection
    }

    /// Checks that the body is a JSON object, without altering the bytes kept.
    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        try properties.expectProfile(Self.profile)
        client = try properties.required("client", in: Self.profile)
        revision = properties["rev"]
        collection = try properties.collectionIndex(in: Self.profile)
        _ = try MessageBody.object(body, context: "setCheckpoint body")
        self.body = body
    }

    /// `rev` is always written, empty when creating, as LiteCore does.
    package func encode() -> (properties: MessageProperties, body: [UInt8]) {
        var properties = Self.startProperties(collection: collection)
        properties.append("client", client)
        properties.append("rev", revision ?? "")
        return (properties, body)
    }

    package func checkpoint() throws(ProtocolError) -> Checkpoint {
        try Checkpoint(json: body)
    }
}

/// The reply to a successful `setCheckpoint`: the new revision. A revision mismatch is an
/// `HTTP/409` error reply instead.
package struct SetCheckpointReply: ReplicationMessage, Hashable {
    package var revision: String

    package init(revision: String) {
        self.revision = revision
    }

    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        revision = try properties.required("rev", in: nil)
    }

    package func encode() -> (properties: MessageProperties, body: [UInt8]) {
        (["rev": revision], [])
    }
}
