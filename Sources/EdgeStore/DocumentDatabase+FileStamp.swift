import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sizes and modification times of a database's SQLite file and its write-ahead log: every commit, this process's
/// or another's, appends to the log, and a checkpoint writes the database file.
package struct DatabaseFileStamp: Equatable, Sendable {
    struct FileState: Equatable, Sendable {
        var size: Int64
        var modifiedSeconds: Int
        var modifiedNanoseconds: Int
    }

    var database: FileState?
    var writeAheadLog: FileState?
}

extension DocumentDatabase {
    /// The database's files as they are now, from two `stat` calls: a watcher that compares stamps learns that
    /// something may have committed without a read through the connection pool, whose every read wakes a
    /// dispatch worker (and a worker woken every few seconds is never retired).
    package func fileStamp() -> DatabaseFileStamp {
        DatabaseFileStamp(database: Self.fileState(path), writeAheadLog: Self.fileState(path + "-wal"))
    }

    private static func fileState(_ path: String) -> DatabaseFileStamp.FileState? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        #if canImport(Darwin)
            let modified = status.st_mtimespec
        #else
            let modified = status.st_mtim
        #endif
        return DatabaseFileStamp.FileState(
            size: Int64(status.st_size), modifiedSeconds: Int(modified.tv_sec),
            modifiedNanoseconds: Int(modified.tv_nsec))
    }
}
