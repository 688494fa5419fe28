import GRDB

extension DocumentDatabase {
    /// Proves the database can take a write right now, without writing anything: takes SQLite's write lock
    /// (which fails on a read-only file system, a full journal or a locked file) and releases it.
    package func probeWritable() async throws {
        do {
            try await pool.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                try db.execute(sql: "ROLLBACK")
            }
        } catch {
            throw StoreError(mapping: error, path: path)
        }
    }

    /// Checkpoints the WAL and closes every SQLite connection. Later calls on this database fail.
    public func close() throws {
        do {
            try pool.close()
        } catch {
            throw StoreError(mapping: error, path: path)
        }
    }
}
