import Foundation
import GRDB
import SyncIdentifiers
import VersionVectors

extension DocumentDatabase {
    private static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value NOT NULL) WITHOUT ROWID;
                    CREATE TABLE collections (
                        id INTEGER PRIMARY KEY,
                        scope TEXT NOT NULL,
                        name TEXT NOT NULL,
                        UNIQUE (scope, name));
                    -- One row per document: its current (winning) revision and latest sequence.
                    CREATE TABLE documents (
                        id INTEGER PRIMARY KEY,
                        collection_id INTEGER NOT NULL,
                        doc_id TEXT NOT NULL,
                        sequence INTEGER NOT NULL,
                        winning_rev_id TEXT NOT NULL,
                        deleted INTEGER NOT NULL,
                        body_size INTEGER NOT NULL);
                    CREATE UNIQUE INDEX documents_by_doc_id ON documents (collection_id, doc_id);
                    CREATE UNIQUE INDEX documents_by_sequence ON documents (collection_id, sequence);
                    -- Every revision kept in a document's tree; body is NULL once it was dropped.
                    -- A rowid table (not WITHOUT ROWID) keeps kilobyte bodies off overflow pages.
                    CREATE TABLE revisions (
                        doc_row INTEGER NOT NULL,
                        rev_id TEXT NOT NULL,
                        parent_rev_id TEXT,
                        deleted INTEGER NOT NULL,
                        stored_at REAL NOT NULL,
                        body BLOB);
                    CREATE UNIQUE INDEX revisions_by_doc ON revisions (doc_row, rev_id);
                    -- Blob digests referenced by revisions that still have a body (for blob GC).
                    CREATE TABLE revision_blobs (
                        doc_row INTEGER NOT NULL,
                        rev_id TEXT NOT NULL,
                        digest TEXT NOT NULL,
                        PRIMARY KEY (doc_row, rev_id, digest)) WITHOUT ROWID;
                    CREATE INDEX revision_blobs_by_digest ON revision_blobs (digest);
                    -- Non-replicated documents (checkpoints) with compare-and-swap generations.
                    CREATE TABLE local_documents (
                        collection_id INTEGER NOT NULL,
                        doc_id TEXT NOT NULL,
                        generation INTEGER NOT NULL,
                        body BLOB NOT NULL,
                        PRIMARY KEY (collection_id, doc_id));
                    """)
            try db.execute(
                sql: "INSERT INTO meta (key, value) VALUES ('uuid', ?), ('last_sequence', 0)",
                arguments: [UUID().uuidString])
            try db.execute(
                sql: "INSERT INTO collections (scope, name) VALUES (?, ?)",
                arguments: [CollectionName.defaultName, CollectionName.defaultName])
        }
        migrator.registerMigration("v2") { db in
            try db.execute(
                sql: """
                    -- The peers this database replicates with as the active side, by the identity their checkpoints
                    -- are keyed by.
                    CREATE TABLE remote_databases (
                        id INTEGER PRIMARY KEY,
                        identity TEXT NOT NULL UNIQUE);
                    -- Per remote database and document, the revision it is known to have because it was pulled from
                    -- there: the push leaves out a document whose current revision is still that one.
                    CREATE TABLE remote_revisions (
                        remote_id INTEGER NOT NULL,
                        doc_row INTEGER NOT NULL,
                        rev_id TEXT NOT NULL,
                        PRIMARY KEY (remote_id, doc_row)) WITHOUT ROWID;
                    CREATE INDEX remote_revisions_by_doc ON remote_revisions (doc_row);
                    """)
        }
        migrator.registerMigration("v3") { db in
            try db.execute(
                sql: """
                    -- CBMobile_4: each revision's hybrid logical vector as `proposeChanges` writes it; NULL for a
                    -- legacy revision: one stored before vectors, or grafted from a rev-tree history. A document keeps
                    -- its rev tree either way.
                    ALTER TABLE revisions ADD COLUMN vector TEXT;
                    -- The winning revision's current version, for change feeds; NULL while it is legacy.
                    ALTER TABLE documents ADD COLUMN version TEXT;
                    -- The hybrid logical clock's last timestamp, so that it never goes back across restarts.
                    INSERT INTO meta (key, value) VALUES ('clock', 0);
                    """)
        }
        return migrator
    }()

    static func migrate(_ writer: some DatabaseWriter) throws {
        try migrator.migrate(writer)
    }

    static func readUUID(_ db: GRDB.Database) throws -> UUID {
        guard let text = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'uuid'"),
            let uuid = UUID(uuidString: text)
        else {
            throw StoreError.corruptDatabase(
                path: db.description, reason: "missing or malformed database UUID")
        }
        return uuid
    }

    static func readLastSequence(_ db: GRDB.Database) throws -> Int64 {
        try Int64.fetchOne(db, cachedSQL: "SELECT value FROM meta WHERE key = 'last_sequence'") ?? 0
    }

    static func readClock(_ db: GRDB.Database) throws -> HybridLogicalClock {
        HybridLogicalClock(
            last: UInt64(try Int64.fetchOne(db, cachedSQL: "SELECT value FROM meta WHERE key = 'clock'") ?? 0))
    }

    static func writeClock(_ db: GRDB.Database, _ clock: HybridLogicalClock) throws {
        try db.cachedStatement(sql: "UPDATE meta SET value = ? WHERE key = 'clock'")
            .execute(arguments: [Int64(clamping: clock.last)])
    }

    static func writeLastSequence(_ db: GRDB.Database, _ sequence: Int64) throws {
        try db.cachedStatement(sql: "UPDATE meta SET value = ? WHERE key = 'last_sequence'")
            .execute(arguments: [sequence])
    }
}

extension DatabaseValueConvertible where Self: StatementColumnConvertible {
    /// Fetches one value through the connection's statement cache.
    static func fetchOne(
        _ db: GRDB.Database, cachedSQL sql: String, arguments: StatementArguments = []
    ) throws -> Self? {
        try fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }
}
