import SyncIdentifiers
import SyncJSON

/// `norev` (spec §3.8): sent instead of `rev` when a requested revision can't be delivered, so the
/// puller stops waiting for it and can advance its checkpoint past `sequence`.
package struct NoRevRequest: ReplicationRequest, Hashable {
    package static let profile = Profile.norev

    package var docID: String
    package var revision: WireRevision
    package var sequence: JSONValue?
    /// A numeric status: 404, 410 (obsolete), 500 …
    package var error: Int?
    package var reason: String?
    package var collection: Int?

    package init(
        docID: String,
        revision: WireRevision,
        sequence: JSONValue?,
        error: Int? = nil,
        reason: String? = nil,
        collection: Int? = nil
    ) {
        self.docID = docID
        self.revision = revision
        self.sequence = sequence
        self.error = error
        self.reason = reason
        self.collection = collection
    }

    /// Sync Gateway talking CBMobile_2 to another SG writes `seq` instead of `sequence`; both are read.
    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        try properties.expectProfile(Self.profile)
        docID = try properties.required("id", in: Self.profile)
        revision = try WireRevision(received: try properties.required("rev", in: Self.profile))
        if let sequence = try properties.json("sequence", in: Self.profile) {
            self.sequence = sequence
        } else {
            sequence = try properties.json("seq", in: Self.profile)
        }
        if let text = properties["error"] {
            guard let code = Int(text) else {
                throw .invalidProperty("error", value: text, profile: Self.profile, expected: "a numeric status")
            }
            error = code
        }
        reason = properties["reason"]
        collection = try properties.collectionIndex(in: Self.profile)
    }

    package func encode() -> (properties: MessageProperties, body: [UInt8]) {
        var properties = Self.startProperties(collection: collection)
        properties.append("id", docID)
        properties.append("rev", revision.description)
        properties.append("sequence", sequence?.jsonString)
        properties.append("error", error.map(String.init))
        properties.append("reason", reason)
        return (properties, [])
    }
}
