import Foundation
import GRDB
import SyncIdentifiers

/// Collection name → row ID. Collections are never dropped, so entries never go stale.
final class CollectionIDCache: @unchecked Sendable {
    // Guards `ids`.
    private let lock = NSLock()
    private var ids: [CollectionName: Int64] = [:]

    subscript(name: CollectionName) -> Int64? {
        get { lock.withLock { ids[name] } }
        set { lock.withLock { ids[name] = newValue } }
    }
}

extension DocumentDatabase {
    /// Creates the collection if it does not exist yet (the default collection always exists).
    package func createCollection(_ collection: CollectionName) async throws {
        _ = try await write { db in try self.collectionID(collection, in: db, createIfMissing: true)
        }
    }

    /// Every collection of this database, sorted by scope then name.
    public func collections() async throws -> [CollectionName] {
        let rows = try await read { db in
            try Row.fetchAll(db, sql: "SELECT scope, name FROM collections ORDER BY scope, name")
                .map { (scope: $0["scope"] as String, name: $0["name"] as String) }
        }
        return try rows.map { row in try CollectionName(scope: row.scope, name: row.name) }
    }

    /// Whether the collection exists.
    package func hasCollection(_ collection: CollectionName) async throws -> Bool {
        try await read { db in
            try self.collectionID(collection, in: db, createIfMissing: false) != nil
        }
    }

    /// The row ID of a collection, creating it when asked to (only possible in a write transaction).
    func collectionID(_ collection: CollectionName, in db: GRDB.Database, createIfMissing: Bool)
        throws -> Int64?
    {
        if let id = collectionIDs[collection] { return id }
        if let id = try Int64.fetchOne(
            db, cachedSQL: "SELECT id FROM collections WHERE scope = ? AND name = ?",
            arguments: [collection.scope, collection.name])
        {
            collectionIDs[collection] = id
            return id
        }
        guard createIfMissing else { return nil }
        try db.execute(
            sql: "INSERT INTO collections (scope, name) VALUES (?, ?)",
            arguments: [collection.scope, collection.name])
        // Not cached here: if the surrounding transaction rolls back, the row never existed.
        return db.lastInsertedRowID
    }

    /// The row ID of an existing collection, or `StoreError.collectionNotFound`.
    func existingCollectionID(_ collection: CollectionName, in db: GRDB.Database) throws -> Int64 {
        guard let id = try collectionID(collection, in: db, createIfMissing: false) else {
            throw StoreError.collectionNotFound(collection.description)
        }
        return id
    }

    /// The row of `docID` in `collection`, which must exist; `nil` when the collection has no such document.
    func documentRow(_ docID: String, in collection: CollectionName, db: GRDB.Database) throws -> DocumentRow? {
        try DocumentRevisionStorage.documentRow(
            db, collectionID: existingCollectionID(collection, in: db), docID: docID)
    }
}
