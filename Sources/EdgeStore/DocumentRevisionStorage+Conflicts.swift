import Foundation
import GRDB
import SyncIdentifiers
import SyncJSON

extension DocumentRevisionStorage {
    /// The body of the revision a resolution adds on top of the winning parent.
    struct ResolvedBody {
        var body: Data
        var deleted: Bool

        init(body: Data, deleted: Bool) {
            self.body = body
            self.deleted = deleted
        }

        /// What a resolver's verdict on `conflict` adds on top of the remote revision; nil when the remote wins as
        /// it is.
        init?(_ resolution: ConflictResolution, of conflict: RevisionConflict) {
            switch resolution {
            case .remote: return nil
            case .local: (body, deleted) = (conflict.local.body, conflict.local.deleted)
            case .merged(let merged): (body, deleted) = (merged, false)
            }
        }
    }

    /// Resolves two conflicting leaves the way LiteCore's `resolveConflict` does with its default
    /// `pruneLosingBranch`: the losing leaf's branch is removed up to where it forks, and a resolved
    /// body, if any, becomes a child of the winning leaf. Returns the resolved revision (the winning
    /// leaf itself without a body) and the document's new sequence.
    ///
    /// LiteCore can instead close the losing branch with a tombstone, but it marks that tombstone
    /// "closed" so it never competes for current revision. This store has no such mark: a tombstone
    /// on the losing branch could outrank a deleted winner and be pushed as a conflict, so the
    /// branch is removed.
    mutating func resolveConflict(
        docID: String, collectionID: Int64, winningParent: RevisionID, losingLeaf: RevisionID,
        resolved: ResolvedBody?
    ) throws -> SavedRevision {
        guard let existing = try Self.documentRow(db, collectionID: collectionID, docID: docID) else {
            throw StoreError.documentNotFound(docID: docID)
        }
        var tree = try Self.tree(db, docRow: existing.rowID)
        for revID in [winningParent, losingLeaf] where !tree.contains(revID) {
            throw StoreError.revisionNotFound(docID: docID, revID: revID.description)
        }
        guard winningParent != losingLeaf else {
            throw StoreError.invalidConflictResolution(
                docID: docID, reason: "the winning and the losing revision are both \(winningParent)")
        }
        for revID in [winningParent, losingLeaf] where !tree.isLeaf(revID) {
            throw StoreError.invalidConflictResolution(
                docID: docID, reason: "revision \(revID) is not a leaf, so it is not in conflict")
        }

        var adding: [PendingRevision] = []
        var resolvedRevID = winningParent
        if let resolved {
            let pending = try pendingRevision(resolved, on: winningParent, docID: docID)
            resolvedRevID = pending.node.revID
            adding.append(pending)
        }

        let deleteRevision = try db.cachedStatement(
            sql: "DELETE FROM revisions WHERE doc_row = ? AND rev_id = ?")
        for revID in tree.removeBranch(endingAt: losingLeaf) {
            try deleteRevision.execute(arguments: [existing.rowID, revID.description])
            try deleteBlobReferences(docRow: existing.rowID, revID: revID)
        }
        let sequence = try store(
            docID: docID, collectionID: collectionID, existing: existing, tree: tree, adding: adding)
        return SavedRevision(revID: resolvedRevID, sequence: sequence)
    }

    /// Saves a resolved body as a new version of this node on top of `parent`, the document's current revision: how
    /// a pulled CBMobile_4 conflict that the local side won ends (`DocumentDatabase.insertVersioned`).
    mutating func saveResolution(
        _ resolved: ResolvedBody, docID: String, collectionID: Int64, on parent: RevisionID
    ) throws -> SavedRevision {
        guard let existing = try Self.documentRow(db, collectionID: collectionID, docID: docID) else {
            throw StoreError.documentNotFound(docID: docID)
        }
        let pending = try pendingRevision(resolved, on: parent, docID: docID)
        let sequence = try store(
            docID: docID, collectionID: collectionID, existing: existing,
            tree: try Self.tree(db, docRow: existing.rowID),
            adding: [pending])
        return SavedRevision(revID: pending.node.revID, sequence: sequence)
    }

    /// A resolution's body as a revision minted here, a child of `parent`.
    private func pendingRevision(_ resolved: ResolvedBody, on parent: RevisionID, docID: String) throws
        -> PendingRevision
    {
        guard parent.generation < UInt32.max else {
            throw StoreError.invalidRevisionHistory(docID: docID, reason: "generation limit reached")
        }
        let revID = RevisionID.minted(
            parent: parent, deleted: resolved.deleted, canonicalBody: try CanonicalJSON.encode(resolved.body))
        let node = RevisionNode(revID: revID, parent: parent, deleted: resolved.deleted, hasBody: true, storedAt: now)
        return PendingRevision(
            node: node, body: resolved.body, blobDigests: try JSONBodyScan(storing: resolved.body).blobDigests,
            versioning: .minted)
    }
}
