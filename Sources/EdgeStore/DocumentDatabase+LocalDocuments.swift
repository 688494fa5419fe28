import Foundation
import GRDB
import SyncIdentifiers
import SyncJSON

/// A non-replicated document, such as a peer's checkpoint.
package struct LocalDocument: Sendable, Equatable {
    package let docID: String
    /// The compare-and-swap revision, `<n>-cc` like LiteCore's passive side (§3.3).
    package let revID: String
    /// The body exactly as it was stored.
    package let body: Data
}

extension DocumentDatabase {
    /// A local document, or `nil` if there is none with this ID.
    package func localDocument(_ docID: String, in collection: CollectionName = .default)
        async throws -> LocalDocument?
    {
        try DocumentID.validateLocal(docID)
        return try await read { db in
            guard
                let collectionID = try self.collectionID(
                    collection, in: db, createIfMissing: false),
                let row = try Self.localRow(db, collectionID: collectionID, docID: docID)
            else { return nil }
            return LocalDocument(
                docID: docID, revID: Self.localRevID(row.generation), body: row.body)
        }
    }

    /// Stores a local document if its current revision is `expectedRevID` (`nil` or empty: it must
    /// not exist), and returns the new revision. The body is stored verbatim, because `getCheckpoint`
    /// must return it byte for byte. A mismatch throws `StoreError.localRevisionMismatch`.
    @discardableResult
    package func putLocalDocument(
        _ docID: String, body: Data, expectedRevID: String?,
        in collection: CollectionName = .default
    ) async throws -> String {
        try DocumentID.validateLocal(docID)
        _ = try JSONBodyScan(storing: body).blobDigests
        let expected = expectedRevID.flatMap { $0.isEmpty ? nil : $0 }
        return try await write(wakesChangeFeeds: false) { db in
            let collectionID = try self.collectionID(collection, in: db, createIfMissing: true)!
            let current = try Self.localRow(db, collectionID: collectionID, docID: docID)
            let currentRevID = current.map { Self.localRevID($0.generation) }
            guard currentRevID == expected else {
                throw StoreError.localRevisionMismatch(
                    docID: docID, expected: expected, actual: currentRevID)
            }
            let generation = (current?.generation ?? 0) + 1
            // Every client saves its checkpoint here every few seconds: the statement stays compiled.
            try db.cachedStatement(
                sql: """
                    INSERT INTO local_documents (collection_id, doc_id, generation, body) VALUES (?, ?, ?, ?)
                    ON CONFLICT (collection_id, doc_id) DO UPDATE SET generation = excluded.generation, body = excluded.body
                    """
            ).execute(arguments: [collectionID, docID, generation, body])
            return Self.localRevID(generation)
        }
    }

    /// Deletes a local document. With `expectedRevID`, only if that is still its revision.
    package func deleteLocalDocument(
        _ docID: String, expectedRevID: String? = nil, in collection: CollectionName = .default
    ) async throws {
        try DocumentID.validateLocal(docID)
        try await write(wakesChangeFeeds: false) { db in
            guard
                let collectionID = try self.collectionID(
                    collection, in: db, createIfMissing: false),
                let current = try Self.localRow(db, collectionID: collectionID, docID: docID)
            else { throw StoreError.documentNotFound(docID: docID) }
            let currentRevID = Self.localRevID(current.generation)
            if let expectedRevID, expectedRevID != currentRevID {
                throw StoreError.localRevisionMismatch(
                    docID: docID, expected: expectedRevID, actual: currentRevID)
            }
            try db.execute(
                sql: "DELETE FROM local_documents WHERE collection_id = ? AND doc_id = ?",
                arguments: [collectionID, docID])
        }
    }

    private static func localRevID(_ generation: Int64) -> String { "\(generation)-cc" }

    private static func localRow(
        _ db: GRDB.Database, collectionID: Int64, docID: String
    ) throws -> (generation: Int64, body: Data)? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT generation, body FROM local_documents WHERE collection_id = ? AND doc_id = ?"),
                arguments: [collectionID, docID])
        else { return nil }
        return (row[0], row[1])
    }
}
