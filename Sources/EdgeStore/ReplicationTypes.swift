import Foundation
import SyncIdentifiers
import SyncJSON
import VersionVectors

/// A revision received from a peer, with its history, as a replicator inserts it.
public struct ExistingRevision: Sendable {
    public var docID: String
    public var revID: RevisionID
    /// Ancestors newest first, excluding `revID`; generations must descend by one.
    public var history: [RevisionID]
    public var deleted: Bool
    /// The JSON body (`{}` for a plain tombstone).
    public var body: Data
    /// Refuse the revision (`StoreError.conflict`) if it would create a branch (`noconflicts`).
    package var noConflicts: Bool
    /// The scan of exactly `body`, when the receiver already made one: the store then takes its blob digests
    /// instead of scanning the body a second time.
    package var bodyScan: JSONBodyScan?
    /// The vector a CBMobile_4 peer sent with it; nil when it came from a rev-tree peer, and a version of this
    /// node is minted for it instead.
    package var vector: HybridLogicalVector?

    public init(
        docID: String, revID: RevisionID, history: [RevisionID], deleted: Bool = false, body: Data,
        noConflicts: Bool = false, bodyScan: JSONBodyScan? = nil
    ) {
        self.docID = docID
        self.revID = revID
        self.history = history
        self.deleted = deleted
        self.body = body
        self.noConflicts = noConflicts
        self.bodyScan = bodyScan
    }
}

/// The per-document outcome of inserting an existing revision.
public enum ExistingRevisionResult: Sendable, Equatable {
    /// Stored; the document's change got this sequence.
    case inserted(sequence: Int64)
    /// Stored; it conflicted with the current revision, and the resolver's outcome was saved as
    /// `resolvedRevID` (the pulled revision itself, or a new one on top of it) at this sequence.
    case resolvedConflict(sequence: Int64, resolvedRevID: RevisionID)
    /// The revision was already in the tree; nothing changed.
    case alreadyPresent
    /// Rejected; other revisions of the batch are unaffected.
    case failed(StoreError)
}

/// "Which of these revisions of a document do you lack?" — a row of a `changes` message.
package struct RevisionQuery: Sendable {
    package var docID: String
    package var revIDs: [RevisionID]

    package init(docID: String, revIDs: [RevisionID]) {
        self.docID = docID
        self.revIDs = revIDs
    }
}

/// The answer to a `RevisionQuery`.
package struct RevisionDiff: Sendable, Equatable {
    package let docID: String
    /// The queried revisions this database does not have.
    package let missing: [RevisionID]
    /// Local revisions that may be ancestors of the missing ones (current revision first), to be
    /// returned in the `changes` reply so the sender can stop its history and pick a delta base.
    package let possibleAncestors: [RevisionID]
}

/// A `proposeChanges` row: a revision the peer wants to push, and the revision it believes is
/// current here (`nil` if it knows none).
package struct ProposedChange: Sendable {
    package var docID: String
    package var revID: RevisionID
    package var parentRevID: RevisionID?

    package init(docID: String, revID: RevisionID, parentRevID: RevisionID?) {
        self.docID = docID
        self.revID = revID
        self.parentRevID = parentRevID
    }
}

/// The verdict on a `ProposedChange` (§3.6).
package enum ProposedChangeStatus: Sendable, Equatable {
    /// Send it (status 0).
    case accept
    /// This database's current revision is already `revID` (status 304).
    case alreadyHave
    /// It would conflict with the current revision (status 409).
    case conflict(currentRevID: RevisionID)
    /// The row itself is unacceptable (for instance an invalid document ID).
    case invalid(StoreError)

    /// The status number used on the wire.
    package var statusCode: Int {
        switch self {
        case .accept: return 0
        case .alreadyHave: return 304
        case .conflict: return 409
        case .invalid(.invalidDocumentID): return 400
        case .invalid: return 500
        }
    }
}

/// A pulled revision that conflicts with a document's current revision, as a conflict resolver
/// sees it.
public struct RevisionConflict: Sendable {
    package let docID: String
    /// The document's current revision when the pulled one arrived.
    package let local: ConflictingRevision
    /// The revision pulled from the peer.
    package let remote: ConflictingRevision

    package init(docID: String, local: ConflictingRevision, remote: ConflictingRevision) {
        self.docID = docID
        self.local = local
        self.remote = remote
    }
}

/// One side of a `RevisionConflict`.
package struct ConflictingRevision: Sendable, Equatable {
    package let revID: RevisionID
    package let deleted: Bool
    /// The JSON body (`{}` for a plain tombstone).
    package let body: Data
    /// Its version vector, when both sides have one: Couchbase Lite 4 decides by the current versions' times.
    package let vector: HybridLogicalVector?

    package init(revID: RevisionID, deleted: Bool, body: Data, vector: HybridLogicalVector? = nil) {
        self.revID = revID
        self.deleted = deleted
        self.body = body
        self.vector = vector
    }
}

/// A resolver's verdict. Whatever it is, the remote revision's branch stays and the local branch is
/// removed, so that the document's history matches the peer's and the outcome can be pushed on top
/// of the peer's revision.
public enum ConflictResolution: Sendable, Equatable {
    /// The remote revision becomes current as it is.
    case remote
    /// The local revision's body (or deletion) becomes a new revision on top of the remote one.
    case local
    /// This JSON object becomes a new revision on top of the remote one.
    case merged(body: Data)
}

/// Decides a conflict inside the store's write transaction, so it must be quick and must not block.
public typealias ConflictResolving = @Sendable (RevisionConflict) -> ConflictResolution
