import SyncIdentifiers
import SyncJSON

/// `rev` (spec §3.7): one revision, sent by the pusher after a positive `changes` or
/// `proposeChanges` reply. The reply is empty once the revision is durably stored.
package struct RevRequest: ReplicationRequest, Hashable {
    package static let profile = Profile.rev

    package var docID: String
    package var revisionID: RevisionID
    /// Ancestors newest first, truncated at what the receiver has (spec §4.2).
    package var history: RevisionHistory
    /// The sender's sequence for this change, opaque JSON; an active LiteCore puller requires it.
    package var sequence: JSONValue?
    package var deleted: Bool
    /// The receiver must refuse the revision if it would create a branch.
    package var noConflicts: Bool
    /// The base revision when `body` is a JSON delta (spec §6).
    package var deltaSource: RevisionID?
    /// The originally requested revision when the sender substituted a newer one (3.2+).
    package var replacedRevision: RevisionID?
    /// Legacy: the sender failed to produce the revision; the receiver records it as failed.
    package var errorCode: Int?
    package var collection: Int?
    /// The document (or delta) as compact JSON.
    package var body: [UInt8]

    package init(
        docID: String,
        revisionID: RevisionID,
        history: RevisionHistory = RevisionHistory(),
        sequence: JSONValue? = nil,
        deleted: Bool = false,
        noConflicts: Bool = false,
        deltaSource: RevisionID? = nil,
        replacedRevision: RevisionID? = nil,
        errorCode: Int? = nil,
        collection: Int? = nil,
        body: [UInt8]
    ) {
        self.docID = docID
        self.revisionID = revisionID
        self.history = history
        self.sequence = sequence
        self.deleted = deleted
        self.noConflicts = noConflicts
        self.deltaSource = deltaSource
        self.replacedRevision = replacedRevision
        self.errorCode = errorCode
        self.collection = collection
        self.body = body
    }

    /// Validates the properties, including that `history` descends from `rev` one generation at a
    /// time. The body is kept as bytes; see `bodyObject()`.
    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        try properties.expectProfile(Self.profile)
        docID = try properties.required("id", in: Self.profile)
        try DocumentID.validate(docID, key: "id", profile: Self.profile)
        revisionID = try RevisionID(received: try properties.required("rev", in: Self.profile))
        history = try RevisionHistory(parsing: properties["history"])
        try history.validate(below: revisionID)
        sequence = try properties.json("sequence", in: Self.profile)
        deleted = properties.flag("deleted")
        noConflicts = properties.flag("noconflicts")
        deltaSource = try properties.revisionID("deltaSrc")
        replacedRevision = try properties.revisionID("replacedRev")
        if let error = properties["error"] {
            guard let code = Int(error) else {
                throw .invalidProperty("error", value: error, profile: Self.profile, expected: "a numeric status")
            }
            errorCode = code
        }
        collection = try properties.collectionIndex(in: Self.profile)
        self.body = body
    }

    /// Properties in LiteCore's order: `id`, `rev`, `sequence`, `noconflicts`, `deleted`, `history`,
    /// `deltaSrc`, then `replacedRev`.
    package func encode() -> (properties: MessageProperties, body: [UInt8]) {
        var properties = Self.startProperties(collection: collection)
        properties.append("id", docID)
        properties.append("rev", revisionID.description)
        properties.append("sequence", sequence?.jsonString)
        properties.append("noconflicts", noConflicts, style: .integer)
        properties.append("deleted", deleted, style: .integer)
        properties.append("history", history.isEmpty ? nil : history.description)
        properties.append("deltaSrc", deltaSource?.description)
        properties.append("replacedRev", replacedRevision?.description)
        properties.append("error", errorCode.map(String.init))
        return (properties, body)
    }

    /// The body parsed as a JSON object (a document, or a delta against `deltaSource`). An empty
    /// body reads as `{}`, the usual tombstone body.
    package func bodyObject() throws(ProtocolError) -> JSONObject {
        guard !body.isEmpty else { return JSONObject() }
        return try MessageBody.object(body, context: "rev body of '\(docID)'")
    }
}
