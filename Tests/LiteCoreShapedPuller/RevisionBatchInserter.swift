import EdgeStore
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON

/// LiteCore's `Inserter`: received revisions are inserted in batches, one transaction each, when
/// `insertionBatchSize` of them are waiting or `insertionDelay` after the first of a batch arrived, one batch at a
/// time; a revision's `rev` is answered only after its batch is committed.
///
/// LiteCore counts a revision as no longer active once it is written, just before the commit; the store here
/// writes and commits in one call, so it is counted at the commit, at most one commit's time later.
actor RevisionBatchInserter {
    typealias Outcome = Result<ExistingRevisionResult, any Error>

    private let database: DocumentDatabase
    private let collection: CollectionName
    private let tuning: LiteCorePullerTuning
    private let committed: @Sendable ([JSONValue?]) async -> Void
    private var waiting:
        [(revision: ExistingRevision, sequence: JSONValue?, continuation: CheckedContinuation<Outcome, Never>)] = []
    private var delayTimer: Task<Void, Never>?
    private var isInserting = false
    private var isFlushRequested = false

    /// `committed` gets the remote sequences of each committed batch, before their callers resume.
    init(
        database: DocumentDatabase, collection: CollectionName, tuning: LiteCorePullerTuning,
        committed: @escaping @Sendable ([JSONValue?]) async -> Void
    ) {
        self.database = database
        self.collection = collection
        self.tuning = tuning
        self.committed = committed
    }

    /// Returns once `revision`'s batch is committed.
    func insert(_ revision: ExistingRevision, sequence: JSONValue?) async -> Outcome {
        await withCheckedContinuation { continuation in
            waiting.append((revision, sequence, continuation))
            if waiting.count >= tuning.insertionBatchSize {
                flushSoon()
            } else if waiting.count == 1 {
                startDelay()
            }
        }
    }

    private func startDelay() {
        let delay = tuning.insertionDelay
        delayTimer = Task {
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            self.flushSoon()
        }
    }

    private func flushSoon() {
        delayTimer?.cancel()
        delayTimer = nil
        guard !isInserting else {
            isFlushRequested = true
            return
        }
        isInserting = true
        Task { await self.insertWaiting() }
    }

    private func insertWaiting() async {
        repeat {
            isFlushRequested = false
            let batch = waiting
            waiting.removeAll(keepingCapacity: true)
            guard !batch.isEmpty else { break }
            let outcomes: [Outcome]
            do {
                outcomes = try await database.insertExistingRevisions(batch.map(\.revision), in: collection)
                    .map { .success($0) }
            } catch {
                outcomes = batch.map { _ in .failure(error) }
            }
            await committed(batch.map(\.sequence))
            for (entry, outcome) in zip(batch, outcomes) {
                entry.continuation.resume(returning: outcome)
            }
        } while isFlushRequested
        isInserting = false
        // Revisions that came in while this batch was written wait for their own delay, as a new batch.
        if !waiting.isEmpty, delayTimer == nil {
            if waiting.count >= tuning.insertionBatchSize {
                flushSoon()
            } else {
                startDelay()
            }
        }
    }
}
