import GRDBSQLite

/// What SQLite holds in memory for every database of this process: page caches, prepared statements, schemas.
/// It is part of the heap in use, and it grows with the databases (each connection's page cache fills up to its
/// `cache_size` as more of the file is read) rather than with time, so telling it apart tells a filling cache
/// from a leak.
package enum SQLiteMemory {
    package static var bytesInUse: Int64 { sqlite3_memory_used() }
}
