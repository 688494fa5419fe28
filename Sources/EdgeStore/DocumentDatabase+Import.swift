import Foundation
import GRDB
import SyncIdentifiers
import SyncJSON

/// One document of an import: it becomes the document's current revision, or deletes it.
package struct ImportedDocument: Sendable {
    package var docID: String
    /// The JSON object without `_id`, `_rev`, `_revisions` and `_deleted`.
    package var body: Data
    package var deleted: Bool
    /// The revision to store under its own ID and its known ancestors, newest first (an export's `_rev` and
    /// `_revisions`); empty for a line without `_rev`, which becomes a new revision minted here.
    package var revisions: [RevisionID]

    package init(docID: String, body: Data, deleted: Bool = false, revisions: [RevisionID] = []) {
        self.docID = docID
        self.body = body
        self.deleted = deleted
        self.revisions = revisions
    }
}

/// What an import batch did.
package struct ImportOutcome: Sendable, Equatable {
    /// Revisions written (new documents, new current revisions and tombstones).
    package var written = 0
    /// Revisions with their own ID that the document already had (an earlier import of the same file, or a
    /// revision it has since been edited on top of): nothing to write.
    package var alreadyPresent = 0
    /// Deletions of documents that did not exist or were already deleted: nothing to write.
    package var skippedDeletions = 0

    /// Lines the batch read, whatever became of them.
    package var documents: Int { written + alreadyPresent + skippedDeletions }

    package init() {}
}

/// A document's current revision as an export writes it: with the history `_revisions` lists.
package struct ExportedDocument: Sendable, Equatable {
    package let document: Document
    /// The ancestors of the current revision, newest first, as far back as the revision tree keeps them.
    package let ancestors: [RevisionID]
}

extension DocumentDatabase {
    /// Writes `documents` in one transaction; an import replaces what is there, and the change replicates like
    /// any other. Any failure rolls back the whole batch.
    ///
    /// A document without `revisions` becomes a new revision on top of its document's current one (or the
    /// first revision of a new document), as a local edit would. One with `revisions` is stored under its own
    /// ID with that history, as a replicator stores a pulled revision, so an export imported elsewhere keeps
    /// its revision IDs; where it does not descend from the document's current revision, it wins the conflict
    /// and the local branch is removed, as a pull resolved in favour of the remote does.
    package func importDocuments(
        _ documents: [ImportedDocument], in collection: CollectionName = .default
    ) async throws -> ImportOutcome {
        var prepared: [(document: ImportedDocument, blobDigests: Set<String>, canonicalBody: Data)] = []
        prepared.reserveCapacity(documents.count)
        for document in documents {
            try DocumentID.validate(document.docID)
            let body = document.deleted ? Data("{}".utf8) : document.body
            var checked = document
            checked.body = body
            if let revID = document.revisions.first {
                let existing = ExistingRevision(
                    docID: document.docID, revID: revID, history: Array(document.revisions.dropFirst()),
                    deleted: document.deleted, body: body)
                if case .failure(let error) = Self.prepare(existing) { throw error }
            }
            prepared.append((checked, try JSONBodyScan(storing: body).blobDigests, try CanonicalJSON.encode(body)))
        }
        let batch = prepared
        return try await write { db in
            let collectionID = try self.collectionID(collection, in: db, createIfMissing: true)!
            var storage = DocumentRevisionStorage(
                db: db, configuration: self.configuration, versionSource: self.versionSource)
            var outcome = ImportOutcome()
            for (document, blobDigests, canonicalBody) in batch {
                if let revID = document.revisions.first {
                    let revision = ExistingRevision(
                        docID: document.docID, revID: revID, history: Array(document.revisions.dropFirst()),
                        deleted: document.deleted, body: document.body)
                    switch try Self.insert(
                        revision, blobDigests: blobDigests, collectionID: collectionID,
                        resolver: { _ in .remote }, storage: &storage)
                    {
                    case .inserted, .resolvedConflict: outcome.written += 1
                    case .alreadyPresent: outcome.alreadyPresent += 1
                    case .failed(let error): throw error
                    }
                    continue
                }
                let existing = try DocumentRevisionStorage.documentRow(
                    db, collectionID: collectionID, docID: document.docID)
                let isLive = existing.map { !$0.deleted } ?? false
                if document.deleted && !isLive {
                    outcome.skippedDeletions += 1
                    continue
                }
                let tree =
                    try existing.map { try DocumentRevisionStorage.tree(db, docRow: $0.rowID) } ?? RevisionTree()
                _ = try Self.storeNewRevision(
                    document.docID, body: document.body, blobDigests: blobDigests, canonicalBody: canonicalBody,
                    parent: existing?.winningRevID, deleted: document.deleted, collectionID: collectionID,
                    existing: existing, tree: tree, storage: &storage)
                outcome.written += 1
            }
            try storage.finish()
            return outcome
        }
    }

    /// Current revisions of a collection changed after `sequence`, oldest change first, at most `limit`,
    /// tombstones included, and the last sequence looked at: what an export writes, a batch at a time so that a
    /// long export holds no snapshot open. A document changed during the export can appear twice; the later
    /// line is its newer revision.
    package func currentDocuments(
        in collection: CollectionName = .default, after sequence: Int64, limit: Int
    ) async throws -> (documents: [ExportedDocument], lastSequence: Int64) {
        let changes = try await changes(in: collection, since: sequence, limit: limit)
        let documents = try await read { db in
            let collectionID = try self.existingCollectionID(collection, in: db)
            return try changes.compactMap { change -> ExportedDocument? in
                guard
                    let row = try DocumentRevisionStorage.documentRow(
                        db, collectionID: collectionID, docID: change.docID)
                else { return nil }
                let body = try DocumentRevisionStorage.body(db, docRow: row.rowID, revID: row.winningRevID)
                let tree = try DocumentRevisionStorage.tree(db, docRow: row.rowID)
                return ExportedDocument(
                    document: Document(
                        docID: change.docID, revID: row.winningRevID, deleted: row.deleted, sequence: row.sequence,
                        body: (body ?? nil) ?? Data("{}".utf8),
                        vector: try DocumentRevisionStorage.vector(db, docRow: row.rowID, revID: row.winningRevID)),
                    ancestors: tree.history(of: row.winningRevID, stoppingAt: [], maxCount: .max))
            }
        }
        return (documents, changes.last?.sequence ?? sequence)
    }

    /// Wakes change feeds as a commit of this process does: for commits made by another process on the same
    /// file (`edge-gateway db import` beside a running gateway), which SQLite does not announce.
    package func wakeChangeObservers() {
        commits.didCommit()
    }

    /// Documents of a collection, tombstones included: how many lines an export writes.
    public func documentCount(in collection: CollectionName = .default) async throws -> Int {
        try await read { db in
            guard let collectionID = try self.collectionID(collection, in: db, createIfMissing: false) else {
                throw StoreError.collectionNotFound(collection.description)
            }
            return try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM documents WHERE collection_id = ?", arguments: [collectionID]) ?? 0
        }
    }

    /// Current (non-deleted) documents of every collection.
    package func liveDocumentCount() async throws -> Int {
        try await read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM documents WHERE deleted = 0") ?? 0
        }
    }

    /// The SQLite file with its write-ahead log, and the blobs: what the database takes on disk.
    package func sizeOnDisk() -> Int64 {
        let files = FileManager.default
        var total: Int64 = 0
        for file in [path, path + "-wal", path + "-shm"] {
            total += (try? files.attributesOfItem(atPath: file)[.size] as? Int64) ?? 0
        }
        if let enumerator = files.enumerator(at: blobs.directory, includingPropertiesForKeys: [.fileSizeKey]) {
            for case let url as URL in enumerator {
                total += Int64((try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0)
            }
        }
        return total
    }
}
