import SyncIdentifiers
import Synchronization

/// Group commit for revisions that arrive one at a time from concurrent `rev` handlers.
///
/// Each caller gets its own result once its revision is durable. Revisions that arrive while a
/// transaction is being written wait and then go into the next transaction together, so the
/// commit and its fsync are paid once per batch rather than once per revision, and a lone
/// revision is never held back. (LiteCore's inserter batches too, but by waiting up to 20 ms for
/// 100 revisions: `kInsertionDelay` and `kInsertionBatchSize` in ReplicatorTuning.hh.)
///
/// A lock, not an actor, guards the queue, so that joining it is synchronous: a caller that keeps its revisions in
/// arrival order queues each one in its turn without a hop (`BLIPArrivalTurn`).
package final class RevisionInserter: Sendable {
    /// What a queued revision's caller is told once its transaction has committed or failed.
    package typealias Completion = @Sendable (Result<ExistingRevisionResult, any Error>) -> Void

    private struct Waiting {
        let revision: DocumentDatabase.PreparedRevision
        let completion: Completion
    }

    private struct Queue {
        var waiting: [Waiting] = []
        var isWriting = false
        /// When the last transaction committed, to tell a stream of revisions from a lone one.
        var lastCommit: ContinuousClock.Instant?
    }

    private let database: DocumentDatabase
    private let collection: CollectionName
    private let resolver: ConflictResolving?
    private let remote: RemoteDatabaseID?
    private let maxBatchSize: Int
    private let queue = Mutex(Queue())

    /// While revisions stream in (the last commit was less than `streamingGap` ago), a batch smaller than
    /// `gatherBelow` waits `gatherDelay` for the revisions right behind it: a transaction costs about 7 ms
    /// however small it is (a trace of 100,000 pushed revisions found 4 in 10 transactions holding 50 or
    /// fewer). A lone revision after a pause is written at once. LiteCore waits too, up to 20 ms.
    static let gatherBelow = 100
    static let gatherDelay = Duration.milliseconds(3)
    static let streamingGap = Duration.milliseconds(20)

    /// - Parameters:
    ///   - resolver: as for `insertExistingRevisions`; every revision of this inserter shares it.
    ///   - remote: the remote database a puller's revisions come from, recorded as having each one it sent so
    ///     that the push to it leaves them out; `nil` for revisions that clients push here.
    package init(
        database: DocumentDatabase, collection: CollectionName = .default, resolver: ConflictResolving? = nil,
        receivedFrom remote: RemoteDatabaseID? = nil, maxBatchSize: Int = 500
    ) {
        precondition(maxBatchSize >= 1, "a batch holds at least one revision")
        self.database = database
        self.collection = collection
        self.resolver = resolver
        self.remote = remote
        self.maxBatchSize = maxBatchSize
    }

    /// A revision validated and with its body scanned, ready to join the queue.
    package struct Prepared: Sendable {
        fileprivate let revision: DocumentDatabase.PreparedRevision
    }

    /// Inserts `revision` as `insertExistingRevisions` would, possibly in the same transaction as
    /// other callers' revisions; returns once that transaction has committed.
    package func insert(_ revision: ExistingRevision) async throws -> ExistingRevisionResult {
        try await insert(prepare(revision))
    }

    /// Validates `revision` and scans its body, the work that concurrent callers do in parallel rather than
    /// inside the serial write.
    package func prepare(_ revision: ExistingRevision) -> Prepared {
        Prepared(revision: DocumentDatabase.prepare(revision))
    }

    package func prepare(_ revision: VersionedRevision) -> Prepared {
        Prepared(revision: DocumentDatabase.prepare(revision))
    }

    /// Queues a prepared revision and returns once the transaction holding it has committed.
    package func insert(_ prepared: Prepared) async throws -> ExistingRevisionResult {
        try await withCheckedThrowingContinuation { continuation in
            enqueue(prepared) { continuation.resume(with: $0) }
        }
    }

    /// Queues a prepared revision at once, without suspending; `completion` gets its result, on the task writing
    /// the batch, once the transaction holding it has committed. It must be quick: the revisions after it in the
    /// batch wait for it. Revisions are written in the order they are queued.
    package func enqueue(_ prepared: Prepared, then completion: @escaping Completion) {
        let startsWriter = queue.withLock { queue in
            queue.waiting.append(Waiting(revision: prepared.revision, completion: completion))
            guard !queue.isWriting else { return false }
            queue.isWriting = true
            return true
        }
        if startsWriter {
            Task { await self.writeWaitingRevisions() }
        }
    }

    private func writeWaitingRevisions() async {
        while true {
            let gathers = queue.withLock { queue -> Bool? in
                guard !queue.waiting.isEmpty else {
                    queue.isWriting = false
                    return nil
                }
                guard queue.waiting.count < Self.gatherBelow, let lastCommit = queue.lastCommit else { return false }
                return ContinuousClock.now - lastCommit < Self.streamingGap
            }
            guard let gathers else { return }
            if gathers {
                try? await Task.sleep(for: Self.gatherDelay)
            }
            let batch = queue.withLock { queue in
                let batch = Array(queue.waiting.prefix(maxBatchSize))
                queue.waiting.removeFirst(batch.count)
                return batch
            }
            do {
                try await write(batch)
            } catch  where batch.count > 1 {
                // A failed transaction says nothing about which revision caused it: retry them one
                // by one, so that one bad revision cannot fail the others of its batch.
                for item in batch {
                    do {
                        try await write([item])
                    } catch {
                        item.completion(.failure(error))
                    }
                }
            } catch {
                batch[0].completion(.failure(error))
            }
            queue.withLock { $0.lastCommit = .now }
        }
    }

    private func write(_ batch: [Waiting]) async throws {
        let results = try await database.insertPreparedRevisions(
            batch.map(\.revision), in: collection, resolvingConflictsWith: resolver, receivedFrom: remote)
        for (item, result) in zip(batch, results) {
            item.completion(.success(result))
        }
    }
}
