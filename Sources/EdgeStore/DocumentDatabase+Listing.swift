import Foundation
import GRDB
import SyncIdentifiers

/// A document's row in a listing by ID: its winning revision without the body.
public struct DocumentListing: Sendable, Equatable {
    package let docID: String
    package let revID: RevisionID
    package let deleted: Bool
    package let sequence: Int64
}

/// Which documents a listing by ID returns.
public struct DocumentRange: Sendable {
    /// First ID included (last when descending); `nil` starts at the beginning.
    package var start: String?
    /// Last ID included (first when descending); `nil` runs to the end.
    package var end: String?
    package var descending: Bool
    package var skip: Int
    package var limit: Int
    package var includeDeleted: Bool

    package init(
        start: String? = nil, end: String? = nil, descending: Bool = false, skip: Int = 0, limit: Int = .max,
        includeDeleted: Bool = false
    ) {
        self.start = start
        self.end = end
        self.descending = descending
        self.skip = skip
        self.limit = limit
        self.includeDeleted = includeDeleted
    }
}

extension DocumentDatabase {
    /// Live (not deleted) documents of a collection and the highest sequence among all of its documents.
    package func collectionCounts(in collection: CollectionName = .default) async throws
        -> (documents: Int, lastSequence: Int64)
    {
        try await read { db in
            let collectionID = try self.existingCollectionID(collection, in: db)
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT (SELECT COUNT(*) FROM documents WHERE collection_id = ?1 AND deleted = 0),
                           (SELECT COALESCE(MAX(sequence), 0) FROM documents WHERE collection_id = ?1)
                    """,
                arguments: [collectionID])
            let documents: Int = row?[0] ?? 0
            let lastSequence: Int64 = row?[1] ?? 0
            return (documents, lastSequence)
        }
    }

    /// Documents ordered by ID (byte order, as SQLite compares text), within `range`.
    public func documents(in collection: CollectionName = .default, range: DocumentRange) async throws
        -> [DocumentListing]
    {
        try await read { db in
            let collectionID = try self.existingCollectionID(collection, in: db)
            var sql = "SELECT doc_id, winning_rev_id, deleted, sequence FROM documents WHERE collection_id = ?"
            var arguments: StatementArguments = [collectionID]
            if !range.includeDeleted { sql += " AND deleted = 0" }
            if let start = range.start {
                sql += range.descending ? " AND doc_id <= ?" : " AND doc_id >= ?"
                arguments += [start]
            }
            if let end = range.end {
                sql += range.descending ? " AND doc_id >= ?" : " AND doc_id <= ?"
                arguments += [end]
            }
            sql += range.descending ? " ORDER BY doc_id DESC" : " ORDER BY doc_id"
            sql += " LIMIT ? OFFSET ?"
            arguments += [Int64(clamping: range.limit), Int64(clamping: range.skip)]
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                DocumentListing(
                    docID: row[0], revID: try RevisionID(stored: row[1], in: "documents"), deleted: row[2],
                    sequence: row[3])
            }
        }
    }
}
