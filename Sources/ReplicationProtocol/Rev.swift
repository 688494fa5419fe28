import SyncIdentifiers
import SyncJSON
import VersionVectors

/// `rev` (spec §3.7): one revision, sent by the pusher after a positive `changes` or
/// `proposeChanges` reply. The reply is empty once the revision is durably stored.
package struct RevRequest: ReplicationRequest, Hashable {
    package static let profile = Profile.rev

    package var docID: String
    /// A rev-tree ID with its ancestors in `history`, or a whole vector: on the wire its current version goes in
    /// `rev` and the rest (`mv…; pv…`, or `pv…`) in `history`, which is left out for a vector of one version.
    package var revision: WireRevision
    /// Rev-tree ancestors newest first, truncated at what the receiver has (spec §4.2); empty for a vector.
    package var history: RevisionHistory
    /// The sender's sequence for this change, opaque JSON; an active LiteCore puller requires it.
    package var sequence: JSONValue?
    package var deleted: Bool
    /// The receiver must refuse the revision if it would create a branch.
    package var noConflicts: Bool
    /// The base revision when `body` is a JSON delta (spec §6).
    package var deltaSource: WireRevision?
    /// The originally requested revision when the sender substituted a newer one (3.2+).
    package var replacedRevision: WireRevision?
    /// Legacy: the sender failed to produce the revision; the receiver records it as failed.
    package var errorCode: Int?
    package var collection: Int?
    /// The document (or delta) as compact JSON.
    package var body: [UInt8]

    package init(
        docID: String,
        revision: WireRevision,
        history: RevisionHistory = RevisionHistory(),
        sequence: JSONValue? = nil,
        deleted: Bool = false,
        noConflicts: Bool = false,
        deltaSource: WireRevision? = nil,
        replacedRevision: WireRevision? = nil,
        errorCode: Int? = nil,
        collection: Int? = nil,
        body: [UInt8]
    ) {
        self.docID = docID
        self.revision = revision
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

    /// Validates the properties, including that a rev-tree `history` descends from `rev` one generation at a
    /// time. The body is kept as bytes; see `bodyObject()`.
    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        try properties.expectProfile(Self.profile)
        docID = try properties.required("id", in: Self.profile)
        try DocumentID.validate(docID, key: "id", profile: Self.profile)
        let revisionText = try properties.required("rev", in: Self.profile)
        if Version.isVersionText(revisionText) {
            do throws(InvalidVersion) {
                revision = .vector(try HybridLogicalVector(revision: revisionText, history: properties["history"]))
            } catch {
                throw .invalidVersion(error.text, reason: error.reason.description)
            }
            history = RevisionHistory()
        } else {
            let revisionID = try RevisionID(received: revisionText)
            revision = .tree(revisionID)
            history = try RevisionHistory(parsing: properties["history"])
            try history.validate(below: revisionID)
        }
        sequence = try properties.json("sequence", in: Self.profile)
        deleted = properties.flag("deleted")
        noConflicts = properties.flag("noconflicts")
        deltaSource = try properties.revision("deltaSrc")
        replacedRevision = try properties.revision("replacedRev")
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
        switch revision {
        case .tree(let revisionID): properties.append("rev", revisionID.description)
        case .vector(let vector): properties.append("rev", vector.current.description)
        }
        properties.append("sequence", sequence?.jsonString)
        properties.append("noconflicts", noConflicts, style: .integer)
        properties.append("deleted", deleted, style: .integer)
        switch revision {
        case .tree: properties.append("history", history.isEmpty ? nil : history.description)
        case .vector(let vector): properties.append("history", vector.history)
        }
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
