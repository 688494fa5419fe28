import Foundation
import GRDB
import SyncIdentifiers
import SyncJSON

extension DocumentDatabase {
    /// Inserts revisions received from a peer, each with its history, in one transaction.
    ///
    /// For each revision: if it is already in the tree nothing happens; otherwise it and the part
    /// of its history this database lacks are grafted onto the newest known ancestor, or become a
    /// new branch if no ancestor is known (a conflict, unless the document is new or only has
    /// tombstones). Results are per document and in input order; a rejected revision does not
    /// affect the others.
    ///
    /// With a `resolver`, a revision that does not descend from the document's current revision
    /// is resolved against it in the same transaction (see `resolveConflict`), so no conflict is
    /// ever left open, not even by a crash in between.
    public func insertExistingRevisions(
        _ revisions: [ExistingRevision], in collection: CollectionName = .default,
        resolvingConflictsWith resolver: ConflictResolving? = nil
    ) async throws -> [ExistingRevisionResult] {
        try await insertPreparedRevisions(revisions.map(Self.prepare), in: collection, resolvingConflictsWith: resolver)
    }

    /// A revision validated, with the blobs its body refers to: named by its rev-tree ID and history, or by its
    /// version vector (CBMobile_4).
    enum PreparedInsert {
        case tree(ExistingRevision, blobDigests: Set<String>)
        case versioned(VersionedRevision, blobDigests: Set<String>)
    }

    /// A revision ready for the writer's transaction, or why it cannot be stored.
    typealias PreparedRevision = Result<PreparedInsert, StoreError>

    /// Validation and the JSON scan of the body: the part of an insert that needs no database, done before
    /// (and outside) the writer's transaction, where concurrent callers can each do their own.
    static func prepare(_ revision: ExistingRevision) -> PreparedRevision {
        do throws(StoreError) {
            try DocumentID.validate(revision.docID)
            try validateHistory(of: revision)
            return .success(
                .tree(revision, blobDigests: try blobDigests(of: revision.body, scanned: revision.bodyScan)))
        } catch {
            return .failure(error)
        }
    }

    /// The blob digests a body refers to: from the receiver's scan of it when it made one, which spares a second
    /// pass over the body.
    static func blobDigests(of body: Data, scanned scan: JSONBodyScan?) throws(StoreError) -> Set<String> {
        if let scan { return scan.blobDigests }
        return try JSONBodyScan(storing: body).blobDigests
    }

    /// - Parameter remote: the remote database the revisions were pulled from, which is then known to have each
    ///   one stored (see `revisionsKnownToRemote`); `nil` for revisions a client pushed here.
    func insertPreparedRevisions(
        _ prepared: [PreparedRevision], in collection: CollectionName,
        resolvingConflictsWith resolver: ConflictResolving?, receivedFrom remote: RemoteDatabaseID? = nil
    ) async throws -> [ExistingRevisionResult] {
        try await write { db in
            let collectionID = try self.collectionID(collection, in: db, createIfMissing: true)!
            var storage = DocumentRevisionStorage(
                db: db, configuration: self.configuration, versionSource: self.versionSource)
            var results: [ExistingRevisionResult] = []
            results.reserveCapacity(prepared.count)
            for item in prepared {
                switch item {
                case .failure(let error):
                    results.append(.failed(error))
                case .success(.versioned(let revision, let digests)):
                    let (result, stored) = try Self.insertVersioned(
                        revision, blobDigests: digests, collectionID: collectionID, resolver: resolver,
                        storage: &storage, in: db)
                    results.append(result)
                    if let remote, let stored {
                        try Self.recordRevision(
                            stored, ofDocument: revision.docID, collectionID: collectionID, onRemote: remote, in: db)
                    }
                case .success(.tree(let revision, let digests)):
                    let result = try Self.insert(
                        revision, blobDigests: digests, collectionID: collectionID,
                        resolver: resolver, storage: &storage)
                    results.append(result)
                    switch (result, remote) {
                    case (.inserted, let remote?), (.resolvedConflict, let remote?), (.alreadyPresent, let remote?):
                        // The remote has the revision it sent, whatever the resolver made current here: a
                        // resolution other than the remote's own revision is a new revision, which is pushed.
                        try Self.recordRevision(
                            revision.revID, ofDocument: revision.docID, collectionID: collectionID,
                            onRemote: remote, in: db)
                    case (.failed, _), (_, nil):
                        break
                    }
                }
            }
            try storage.finish()
            return results
        }
    }

    /// For each query, which revisions are missing and which local revisions could be their ancestors:
    /// up to `maxAncestors` revisions with a lower generation than the newest missing one, current
    /// revision first, restricted to revisions that still have a body when `ancestorsWithBodiesOnly`.
    package func revisionDiffs(
        _ queries: [RevisionQuery], in collection: CollectionName = .default,
        maxAncestors: Int = 10,
        ancestorsWithBodiesOnly: Bool = false
    ) async throws -> [Result<RevisionDiff, StoreError>] {
        try await read { db in
            let collectionID = try self.collectionID(collection, in: db, createIfMissing: false)
            return try queries.map { query throws -> Result<RevisionDiff, StoreError> in
                do throws(StoreError) {
                    try DocumentID.validate(query.docID)
                } catch {
                    return .failure(error)
                }
                guard let collectionID,
                    let row = try DocumentRevisionStorage.documentRow(
                        db, collectionID: collectionID, docID: query.docID)
                else {
                    return .success(
                        RevisionDiff(
                            docID: query.docID, missing: query.revIDs, possibleAncestors: []))
                }
                let tree = try DocumentRevisionStorage.tree(db, docRow: row.rowID)
                let missing = query.revIDs.filter { !tree.contains($0) }
                guard let newestMissing = missing.max() else {
                    return .success(
                        RevisionDiff(docID: query.docID, missing: [], possibleAncestors: []))
                }
                let candidates = tree.nodes.values
                    .filter {
                        $0.revID.generation < newestMissing.generation
                            && (!ancestorsWithBodiesOnly || $0.hasBody)
                    }
                    .sorted { lhs, rhs in
                        lhs.revID == row.winningRevID
                            || (rhs.revID != row.winningRevID && lhs.revID > rhs.revID)
                    }
                return .success(
                    RevisionDiff(
                        docID: query.docID, missing: missing,
                        possibleAncestors: candidates.prefix(maxAncestors).map(\.revID)))
            }
        }
    }

    /// Decides `proposeChanges` rows the way Couchbase Lite and Sync Gateway do for rev-trees:
    /// 304 if `revID` is already current; accepted if the document is new, if `parentRevID` is the
    /// current revision, or if no parent is given and the document is deleted; otherwise 409.
    package func checkProposedChanges(
        _ changes: [ProposedChange], in collection: CollectionName = .default
    ) async throws -> [ProposedChangeStatus] {
        try await read { db in
            let collectionID = try self.collectionID(collection, in: db, createIfMissing: false)
            return try changes.map { change in
                do throws(StoreError) {
                    try DocumentID.validate(change.docID)
                } catch {
                    return .invalid(error)
                }
                guard let collectionID,
                    let row = try DocumentRevisionStorage.documentRow(
                        db, collectionID: collectionID, docID: change.docID)
                else { return .accept }
                if row.winningRevID == change.revID { return .alreadyHave }
                if row.winningRevID == change.parentRevID { return .accept }
                if change.parentRevID == nil, row.deleted { return .accept }
                return .conflict(currentRevID: row.winningRevID)
            }
        }
    }

    private static func validateHistory(of revision: ExistingRevision) throws(StoreError) {
        for (index, ancestor) in revision.history.enumerated() {
            let expected = Int64(revision.revID.generation) - 1 - Int64(index)
            guard Int64(ancestor.generation) == expected else {
                throw .invalidRevisionHistory(
                    docID: revision.docID,
                    reason:
                        "history entry \(ancestor) of \(revision.revID) should have generation \(expected)"
                )
            }
        }
    }

    static func insert(
        _ revision: ExistingRevision, blobDigests: Set<String>, collectionID: Int64,
        resolver: ConflictResolving?, storage: inout DocumentRevisionStorage
    ) throws -> ExistingRevisionResult {
        let existing = try DocumentRevisionStorage.documentRow(
            storage.db, collectionID: collectionID, docID: revision.docID)
        let tree =
            try existing.map { try DocumentRevisionStorage.tree(storage.db, docRow: $0.rowID) }
            ?? RevisionTree()
        if tree.contains(revision.revID) { return .alreadyPresent }

        let chain = [revision.revID] + revision.history
        let graftIndex = chain.firstIndex(where: tree.contains) ?? chain.count
        let graftPoint = graftIndex < chain.count ? chain[graftIndex] : nil
        if revision.noConflicts, let existing, !tree.isEmpty {
            let extendsLeaf = graftPoint.map(tree.isLeaf) ?? false
            let revivesTombstones = graftPoint == nil && existing.deleted
            guard extendsLeaf || revivesTombstones else {
                return .failed(
                    .conflict(
                        docID: revision.docID, currentRevID: existing.winningRevID.description))
            }
        }

        var pending: [PendingRevision] = []
        pending.reserveCapacity(graftIndex)
        for index in 0..<graftIndex {
            let isNewRevision = index == 0
            let node = RevisionNode(
                revID: chain[index], parent: index + 1 < chain.count ? chain[index + 1] : nil,
                deleted: isNewRevision && revision.deleted, hasBody: isNewRevision,
                storedAt: storage.now)
            let versioning: PendingRevision.Versioning =
                if !isNewRevision { .legacy } else if let vector = revision.vector { .received(vector) } else {
                    .minted
                }
            pending.append(
                PendingRevision(
                    node: node, body: isNewRevision ? revision.body : nil,
                    blobDigests: isNewRevision ? blobDigests : [], versioning: versioning))
        }
        let sequence = try storage.store(
            docID: revision.docID, collectionID: collectionID, existing: existing, tree: tree,
            adding: pending)
        guard let resolver, let existing,
            !extendsCurrentRevision(existing, graftPoint: graftPoint, tree: tree)
        else {
            return .inserted(sequence: sequence)
        }
        let localBody =
            try DocumentRevisionStorage.body(
                storage.db, docRow: existing.rowID, revID: existing.winningRevID) ?? nil
        let conflict = RevisionConflict(
            docID: revision.docID,
            local: ConflictingRevision(
                revID: existing.winningRevID, deleted: existing.deleted,
                body: localBody ?? Data("{}".utf8)),
            remote: ConflictingRevision(
                revID: revision.revID, deleted: revision.deleted, body: revision.body))
        let resolved = DocumentRevisionStorage.ResolvedBody(resolver(conflict), of: conflict)
        let saved = try storage.resolveConflict(
            docID: revision.docID, collectionID: collectionID, winningParent: revision.revID,
            losingLeaf: existing.winningRevID, resolved: resolved)
        return .resolvedConflict(sequence: saved.sequence, resolvedRevID: saved.revID)
    }

    /// Whether a revision grafted at `graftPoint` continues the document's current revision, or
    /// starts a new history after it was deleted; anything else puts it in conflict with it.
    private static func extendsCurrentRevision(
        _ existing: DocumentRow, graftPoint: RevisionID?, tree: RevisionTree
    ) -> Bool {
        guard let graftPoint else { return existing.deleted }
        return graftPoint == existing.winningRevID
            || tree.ancestors(of: graftPoint).contains(existing.winningRevID)
    }
}
