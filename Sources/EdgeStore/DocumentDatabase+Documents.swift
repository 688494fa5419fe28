import Foundation
import GRDB
import SyncIdentifiers
import SyncJSON

extension DocumentDatabase {
    /// The current revision of a document, tombstone included; `nil` if the document does not exist.
    public func document(_ docID: String, in collection: CollectionName = .default) async throws
        -> Document?
    {
        try DocumentID.validate(docID)
        return try await read { db in
            guard let row = try self.documentRow(docID, in: collection, db: db) else {
                return nil
            }
            let body = try DocumentRevisionStorage.body(
                db, docRow: row.rowID, revID: row.winningRevID)
            return Document(
                docID: docID, revID: row.winningRevID, deleted: row.deleted, sequence: row.sequence,
                body: (body ?? nil) ?? Data("{}".utf8),
                vector: try DocumentRevisionStorage.vector(db, docRow: row.rowID, revID: row.winningRevID))
        }
    }

    /// One specific revision; `nil` if the document or the revision is unknown.
    public func revision(
        _ docID: String, revID: RevisionID, in collection: CollectionName = .default
    ) async throws -> Revision? {
        try DocumentID.validate(docID)
        return try await read { db in
            guard let row = try self.documentRow(docID, in: collection, db: db) else {
                return nil
            }
            let tree = try DocumentRevisionStorage.tree(db, docRow: row.rowID)
            guard let node = tree[revID] else { return nil }
            let body =
                node.hasBody
                ? try DocumentRevisionStorage.body(db, docRow: row.rowID, revID: revID) ?? nil : nil
            return Revision(docID: docID, revID: revID, deleted: node.deleted, body: body)
        }
    }

    /// The leaves of a document's revision tree, winner first; empty if the document does not exist.
    package func leafRevisions(_ docID: String, in collection: CollectionName = .default)
        async throws -> [LeafRevision]
    {
        try DocumentID.validate(docID)
        return try await read { db in
            guard let row = try self.documentRow(docID, in: collection, db: db) else {
                return []
            }
            return try DocumentRevisionStorage.tree(db, docRow: row.rowID).leaves.map {
                LeafRevision(revID: $0.revID, deleted: $0.deleted)
            }
        }
    }

    /// The ancestors of a revision, newest first, without the revision itself — the `history` of a
    /// `rev` message. Stops after the first ancestor found in `knownRevIDs` (included) or after
    /// `maxCount` entries.
    package func revisionHistory(
        _ docID: String, revID: RevisionID, in collection: CollectionName = .default,
        stoppingAt knownRevIDs: Set<RevisionID> = [], maxCount: Int = .max
    ) async throws -> [RevisionID] {
        try DocumentID.validate(docID)
        return try await read { db in
            guard let row = try self.documentRow(docID, in: collection, db: db) else {
                throw StoreError.documentNotFound(docID: docID)
            }
            let tree = try DocumentRevisionStorage.tree(db, docRow: row.rowID)
            guard tree.contains(revID) else {
                throw StoreError.revisionNotFound(docID: docID, revID: revID.description)
            }
            return tree.history(of: revID, stoppingAt: knownRevIDs, maxCount: maxCount)
        }
    }

    /// Saves a new revision on top of `parentRevID`, which must be a current leaf. Without a parent,
    /// the document must not exist or be deleted (a new revision then follows the tombstone);
    /// otherwise the save is a `StoreError.conflict`.
    @discardableResult
    package func save(
        _ docID: String, body: Data, parentRevID: RevisionID?,
        in collection: CollectionName = .default
    ) async throws -> SavedRevision {
        try await saveNewRevision(
            docID, body: body, parentRevID: parentRevID, deleted: false, in: collection)
    }

    /// Deletes a document by adding a tombstone (body `{}`) on top of `parentRevID`, a current leaf.
    @discardableResult
    package func delete(
        _ docID: String, parentRevID: RevisionID, in collection: CollectionName = .default
    ) async throws -> SavedRevision {
        try await saveNewRevision(
            docID, body: Data("{}".utf8), parentRevID: parentRevID, deleted: true, in: collection)
    }

    /// Removes a document and all its revisions without leaving a tombstone. Its sequences are
    /// never reused.
    package func purge(_ docID: String, in collection: CollectionName = .default) async throws {
        try DocumentID.validate(docID)
        try await write { db in
            guard let row = try self.documentRow(docID, in: collection, db: db) else {
                throw StoreError.documentNotFound(docID: docID)
            }
            try DocumentRevisionStorage(db: db, configuration: self.configuration, versionSource: self.versionSource)
                .purge(
                    docRow: row.rowID)
        }
    }

    /// Saves each of `writes` as a new local revision, all in one transaction (one commit, one fsync).
    /// Each write succeeds or fails on its own, as `save` or `delete` would (a conflict fails only its
    /// document); the results are in the order of `writes`.
    package func saveBatch(_ writes: [NewRevision], in collection: CollectionName = .default) async throws
        -> [Result<SavedRevision, StoreError>]
    {
        let prepared = writes.map { write in
            Result(catching: { () throws(StoreError) -> CheckedNewRevision in
                try CheckedNewRevision(write)
            })
        }
        return try await self.write { db in
            let collectionID = try self.collectionID(collection, in: db, createIfMissing: true)!
            var storage = DocumentRevisionStorage(
                db: db, configuration: self.configuration, versionSource: self.versionSource)
            var results: [Result<SavedRevision, StoreError>] = []
            results.reserveCapacity(prepared.count)
            for revision in prepared {
                do {
                    results.append(
                        .success(
                            try Self.insertNewRevision(
                                try revision.get(), db: db, collectionID: collectionID, storage: &storage)))
                } catch let error as StoreError where error.failsOnlyItsDocument {
                    results.append(.failure(error))
                }
            }
            try storage.finish()
            return results
        }
    }

    private func saveNewRevision(
        _ docID: String, body: Data, parentRevID: RevisionID?, deleted: Bool,
        in collection: CollectionName
    ) async throws -> SavedRevision {
        let revision = try CheckedNewRevision(
            NewRevision(docID: docID, body: body, parentRevID: parentRevID, deleted: deleted))
        return try await write { db in
            let collectionID = try self.collectionID(collection, in: db, createIfMissing: true)!
            var storage = DocumentRevisionStorage(
                db: db, configuration: self.configuration, versionSource: self.versionSource)
            let saved = try Self.insertNewRevision(
                revision, db: db, collectionID: collectionID, storage: &storage)
            try storage.finish()
            return saved
        }
    }

    /// A new revision checked and canonicalized outside the write transaction.
    private struct CheckedNewRevision: Sendable {
        var docID: String
        var body: Data
        var parentRevID: RevisionID?
        var deleted: Bool
        var blobDigests: Set<String>
        var canonicalBody: Data

        init(_ write: NewRevision) throws(StoreError) {
            try DocumentID.validate(write.docID)
            docID = write.docID
            body = write.body
            parentRevID = write.parentRevID
            deleted = write.deleted
            blobDigests = try JSONBodyScan(storing: write.body).blobDigests
            canonicalBody = try CanonicalJSON.encode(write.body)
        }
    }

    private static func insertNewRevision(
        _ revision: CheckedNewRevision, db: GRDB.Database, collectionID: Int64,
        storage: inout DocumentRevisionStorage
    ) throws -> SavedRevision {
        let existing = try DocumentRevisionStorage.documentRow(
            db, collectionID: collectionID, docID: revision.docID)
        let tree =
            try existing.map { try DocumentRevisionStorage.tree(db, docRow: $0.rowID) }
            ?? RevisionTree()
        let parent = try Self.parentForNewRevision(
            revision.docID, requested: revision.parentRevID, existing: existing, tree: tree)
        return try Self.storeNewRevision(
            revision.docID, body: revision.body, blobDigests: revision.blobDigests,
            canonicalBody: revision.canonicalBody, parent: parent, deleted: revision.deleted,
            collectionID: collectionID, existing: existing, tree: tree, storage: &storage)
    }

    /// Adds a minted revision on top of `parent` inside the caller's write transaction; the caller finishes
    /// `storage`.
    static func storeNewRevision(
        _ docID: String, body: Data, blobDigests: Set<String>, canonicalBody: Data, parent: RevisionID?,
        deleted: Bool, collectionID: Int64, existing: DocumentRow?, tree: RevisionTree,
        storage: inout DocumentRevisionStorage
    ) throws -> SavedRevision {
        if deleted, let parent, tree[parent]?.deleted == true {
            throw StoreError.documentNotFound(docID: docID)
        }
        guard (parent?.generation ?? 0) < UInt32.max else {
            throw StoreError.invalidRevisionHistory(
                docID: docID, reason: "generation limit reached")
        }
        let revID = RevisionID.minted(
            parent: parent, deleted: deleted, canonicalBody: canonicalBody)
        let node = RevisionNode(
            revID: revID, parent: parent, deleted: deleted, hasBody: true, storedAt: storage.now
        )
        let sequence = try storage.store(
            docID: docID, collectionID: collectionID, existing: existing, tree: tree,
            adding: [PendingRevision(node: node, body: body, blobDigests: blobDigests, versioning: .minted)])
        return SavedRevision(revID: revID, sequence: sequence)
    }

    private static func parentForNewRevision(
        _ docID: String, requested: RevisionID?, existing: DocumentRow?, tree: RevisionTree
    ) throws -> RevisionID? {
        if let requested {
            guard tree.isLeaf(requested) else {
                throw StoreError.conflict(
                    docID: docID, currentRevID: existing?.winningRevID.description)
            }
            return requested
        }
        guard let existing else { return nil }
        guard existing.deleted else {
            throw StoreError.conflict(docID: docID, currentRevID: existing.winningRevID.description)
        }
        return existing.winningRevID
    }
}
