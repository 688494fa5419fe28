import Foundation
import GRDB
import VersionVectors

/// One database: a SQLite file in WAL mode holding collections of documents with revision trees,
/// local documents and blob references, plus its blob directory.
///
/// Safe to share between tasks: reads run concurrently on WAL snapshots, writes are serialized.
/// Every method throws `StoreError`.
public final class DocumentDatabase: Sendable {
    /// The database's name within its `DocumentStore`.
    public let name: String
    /// A random identifier created with the database and kept for its whole life; checkpoint IDs
    /// are derived from it.
    package let uuid: UUID
    /// The source of the versions written here (`StoreConfiguration.versionSource`).
    package let versionSource: SourceID
    /// Path of the SQLite file.
    public let path: String
    /// Content-addressed attachment storage of this database.
    package let blobs: BlobStore

    let configuration: StoreConfiguration
    let pool: DatabasePool
    let commits = CommitNotifier()
    /// Told how long each write transaction took, commit included (the gateway's metrics).
    package let commitDurations = CommitDurationObserver()
    let collectionIDs = CollectionIDCache()
    /// The changes queries of continuous feeds, shared per commit (`CommitScopedReads`).
    let sharedChangesReads = CommitScopedReads<SharedChangesRead, [Change]>(maximumReads: 64)
    /// Revisions read ahead by pull feeds, shared per commit; at most 2 MiB of bodies kept. A feed pulling a
    /// backlog alone asks for a different batch each time, and every batch it read stayed here until the next
    /// commit: with 16 MiB allowed, 14 MB of a 50,000-document pull's 37 MB heap peak were such batches, which
    /// no other feed would ask for. After a write, the batches every caught-up feed shares are far smaller.
    let sharedRevisionReads = CommitScopedReads<SharedRevisionsRead, [OutgoingRevision?]>(
        maximumReads: 64, maximumCost: 2 << 20)

    /// The page cache of each reader connection, in KiB.
    static let readerCacheKiB = 1024

    init(name: String, path: String, blobDirectory: URL, configuration: StoreConfiguration)
        throws(StoreError)
    {
        self.name = name
        self.path = path
        self.configuration = configuration
        var poolConfiguration = Configuration()
        // synchronous=FULL makes every commit fsync the WAL before it returns, so an acknowledged
        // write survives power loss, not only a process kill (NORMAL would be enough for the latter
        // but can lose the last commits on power failure). The replicator acknowledges `rev`
        // messages only after durable storage, and it inserts in batches, so the fsync per commit
        // is amortized over many documents.
        poolConfiguration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            // Each of the pool's five readers fills its own page cache up to SQLite's default 2,000 KiB and keeps
            // it: 12.9 MB of a 50,000-document pull's 23 MB heap peak. Their reads are lookups by key, which need
            // the B-trees' upper pages (under 1 MiB for that database) more than its leaves, which the kernel's
            // page cache holds anyway. The writer keeps the default for the pages its inserts rewrite.
            if db.configuration.readonly {
                try db.execute(sql: "PRAGMA cache_size = -\(Self.readerCacheKiB)")
            }
        }
        poolConfiguration.busyMode = .timeout(30)
        do {
            pool = try DatabasePool(path: path, configuration: poolConfiguration)
            try Self.migrate(pool)
            uuid = try pool.read { db in try Self.readUUID(db) }
            versionSource = configuration.versionSource ?? SourceID(uuid: uuid)
        } catch {
            throw StoreError(mapping: error, path: path)
        }
        blobs = try BlobStore(directory: blobDirectory)
    }

    /// Whether the last write to this database or its blobs was refused because the disk was full; the next
    /// write that succeeds clears it.
    package var isDiskFull: Bool { blobs.diskFullState.isFull }

    /// Runs SQLite's full `PRAGMA integrity_check`; returns its messages (`["ok"]` when healthy).
    package func integrityCheck() async throws -> [String] {
        try await read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }

    /// The highest sequence ever assigned in this database (sequences are never reused).
    package func lastSequence() async throws -> Int64 {
        try await read { db in try Self.readLastSequence(db) }
    }

    // MARK: - Transactions

    /// Runs `body` in a write transaction and, once it has committed, wakes the change feeds.
    ///
    /// - Parameter wakesChangeFeeds: false for a write that cannot add a change (a local document): every
    ///   connected puller's feed wakes and queries on each wake-up, and every client saves its checkpoint every few
    ///   seconds, so waking them for checkpoints would cost clients² queries.
    func write<T: Sendable>(
        wakesChangeFeeds: Bool = true, _ body: @escaping @Sendable (GRDB.Database) throws -> T
    ) async throws -> T {
        let result: T
        let start = ContinuousClock.now
        do {
            result = try await pool.write(body)
        } catch {
            throw blobs.diskFullState.record(StoreError(mapping: error, path: path))
        }
        commitDurations.record(ContinuousClock.now - start)
        blobs.diskFullState.recordSuccess()
        if wakesChangeFeeds { commits.didCommit() }
        return result
    }

    /// Runs `body` on a consistent read-only snapshot.
    func read<T: Sendable>(_ body: @escaping @Sendable (GRDB.Database) throws -> T) async throws
        -> T
    {
        do {
            return try await pool.read(body)
        } catch {
            throw StoreError(mapping: error, path: path)
        }
    }
}

extension StoreError {
    /// Classifies errors from GRDB/SQLite; store errors thrown inside transactions pass through.
    init(mapping error: any Error, path: String) {
        switch error {
        case let error as StoreError:
            self = error
        case is CancellationError:
            self = .cancelled
        case let error as DatabaseError:
            switch error.resultCode {
            case .SQLITE_CORRUPT, .SQLITE_NOTADB:
                self = .corruptDatabase(path: path, reason: error.message ?? "\(error.resultCode)")
            case .SQLITE_FULL:
                self = .diskFull(path: path)
            case .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_READONLY:
                self = .io(path: path, reason: error.message ?? "\(error.resultCode)")
            case .SQLITE_INTERRUPT:
                // GRDB interrupts the statement of a task cancelled while it runs (a cancelled task that had not
                // started one gets CancellationError); the store interrupts nothing itself.
                self = .cancelled
            default:
                self = .sqlite(
                    code: error.extendedResultCode.rawValue, message: error.message ?? "")
            }
        default:
            self = .io(path: path, reason: String(describing: error))
        }
    }
}
