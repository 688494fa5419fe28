import Foundation
import GRDB

/// One document of an import: it becomes the document's current revision, or deletes it.
public struct ImportedDocument: Sendable {
    public var docID: String
    /// The JSON object without `_id`, `_rev` and `_deleted`.
    public var body: Data
    public var deleted: Bool

    public init(docID: String, body: Data, deleted: Bool = false) {
        self.docID = docID
        self.body = body
        self.deleted = deleted
    }
}

/// What an import batch did.
public struct ImportOutcome: Sendable, Equatable {
    /// Revisions written (new documents, new current revisions and tombstones).
    public var written = 0
    /// Deletions of documents that did not exist or were already deleted: nothing to write.
    public var skippedDeletions = 0

    public init() {}
}

extension DocumentDatabase {
    /// Writes `documents` in one transaction, each as a new revision on top of its document's current one (or
    /// as the first revision of a new document): an import replaces what is there, as a local edit would, so
    /// the change replicates like any other. Any failure rolls back the whole batch.
    public func importDocuments(
        _ documents: [ImportedDocument], in collection: CollectionName = .default
    ) async throws -> ImportOutcome {
        var prepared: [(document: ImportedDocument, blobDigests: Set<String>, canonicalBody: Data)] = []
        prepared.reserveCapacity(documents.count)
        for document in documents {
            try DocumentID.validate(document.docID)
            let body = document.deleted ? Data("{}".utf8) : document.body
            prepared.append(
                (
                    ImportedDocument(docID: document.docID, body: body, deleted: document.deleted),
                    try JSONBodyScanner.blobDigests(in: body), try CanonicalJSON.encode(body)
                ))
        }
        let batch = prepared
        return try await write { db in
            let collectionID = try self.collectionID(collection, in: db, createIfMissing: true)!
            var storage = DocumentRevisionStorage(db: db, configuration: self.configuration)
            var outcome = ImportOutcome()
            for (document, blobDigests, canonicalBody) in batch {
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
    public func currentDocuments(
        in collection: CollectionName = .default, after sequence: Int64, limit: Int
    ) async throws -> (documents: [Document], lastSequence: Int64) {
        let changes = try await changes(in: collection, since: sequence, limit: limit)
        var documents: [Document] = []
        documents.reserveCapacity(changes.count)
        for change in changes {
            if let document = try await document(change.docID, in: collection) {
                documents.append(document)
            }
        }
        return (documents, changes.last?.sequence ?? sequence)
    }

    /// Wakes change feeds as a commit of this process does: for commits made by another process on the same
    /// file (`edge-gateway db import` beside a running gateway), which SQLite does not announce.
    public func wakeChangeObservers() {
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
    public func liveDocumentCount() async throws -> Int {
        try await read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM documents WHERE deleted = 0") ?? 0
        }
    }

    /// The SQLite file with its write-ahead log, and the blobs: what the database takes on disk.
    public func sizeOnDisk() -> Int64 {
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
