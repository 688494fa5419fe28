import Synchronization

/// What one pull feed may have outstanding at once (spec §3.5, §2.9), shared by its batches.
///
/// - `changes` batches sent and not yet answered: LiteCore's pusher keeps up to 5 (`kMaxChangeListsInFlight`). A
///   batch frees its place as soon as its reply arrives, so that the next batch is already with the puller while
///   this one's revisions go out: a LiteCore puller answers a `changes` only once it has few enough revisions
///   outstanding, and would otherwise wait for the next one.
/// - Revision body bytes read for sending and not yet answered: `RevisionWindow.maxBytesAwaitingReply` in all
///   (LiteCore's `kMaxRevBytesAwaitingReply`), so that a puller that answers `changes` at once but stores slowly
///   cannot make the feed read ahead without bound.
/// - Bodies read ahead for batches whose reply is outstanding (`prefetchBytes`), so that a batch's revisions can
///   go out as soon as its reply says which ones to send.
///
/// A lock, not an actor: every delivery of a fan-out passes here several times, and each call is a few integer
/// updates, which an actor would wrap in two executor switches.
final class PullFeedLimits: Sendable {
    static let prefetchBytes = RevisionWindow.maxBytesAwaitingReply / 2

    private struct State {
        var unansweredBatches = 0
        var batchWaiters: [CheckedContinuation<Void, any Error>] = []
        var bytesAwaitingReply = 0
        var byteWaiters: [(bytes: Int, continuation: CheckedContinuation<Void, any Error>)] = []
        var prefetchedBytes = 0
        /// Set by `cancel()`: a wait that starts later fails at once instead of waiting for good.
        var isCancelled = false

        mutating func takeBatchPlace(limit: Int) -> Bool {
            guard unansweredBatches < limit else { return false }
            unansweredBatches += 1
            return true
        }

        mutating func takeBytes(_ bytes: Int) -> Bool {
            guard byteWaiters.isEmpty, fits(bytes) else { return false }
            bytesAwaitingReply += bytes
            return true
        }

        func fits(_ bytes: Int) -> Bool {
            bytesAwaitingReply == 0 || bytesAwaitingReply + bytes <= RevisionWindow.maxBytesAwaitingReply
        }
    }

    private let maxUnansweredBatches: Int
    private let state = Mutex(State())

    init(maxUnansweredBatches: Int) {
        self.maxUnansweredBatches = maxUnansweredBatches
    }

    /// Waits for a place for one more unanswered batch.
    func sendingBatch() async throws {
        let limit = maxUnansweredBatches
        try await admit {
            $0.takeBatchPlace(limit: limit)
        } orQueue: {
            $0.batchWaiters.append($1)
        }
    }

    /// A batch was answered (or failed): its place goes to the next.
    func batchAnswered() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard !state.batchWaiters.isEmpty else {
                state.unansweredBatches -= 1
                return nil
            }
            return state.batchWaiters.removeFirst()
        }
        next?.resume()
    }

    /// Waits until `bytes` more revision bytes may await replies; a window larger than the whole allowance
    /// goes alone.
    func reading(_ bytes: Int) async throws {
        try await admit {
            $0.takeBytes(bytes)
        } orQueue: {
            $0.byteWaiters.append((bytes, $1))
        }
    }

    /// Returns once `take` succeeds: at once when it can, else when a waiter `queue` parked is resumed. A wait that
    /// starts after `cancel()` fails at once.
    private func admit(
        _ take: (inout State) -> Bool,
        orQueue queue: (inout State, CheckedContinuation<Void, any Error>) -> Void
    ) async throws {
        if state.withLock({ take(&$0) }) { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome: Result<Void, any Error>? = state.withLock { state in
                if state.isCancelled { return .failure(CancellationError()) }
                if take(&state) { return .success(()) }
                queue(&state, continuation)
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// `bytes` taken by `reading` were answered.
    func answered(_ bytes: Int) {
        let admitted = state.withLock { state in
            state.bytesAwaitingReply -= bytes
            var admitted: [CheckedContinuation<Void, any Error>] = []
            while let next = state.byteWaiters.first, state.fits(next.bytes) {
                state.byteWaiters.removeFirst()
                state.bytesAwaitingReply += next.bytes
                admitted.append(next.continuation)
            }
            return admitted
        }
        for continuation in admitted { continuation.resume() }
    }

    /// Whether `bytes` may be read ahead now; `prefetched(_:)` gives them back.
    func mayPrefetch(_ bytes: Int) -> Bool {
        state.withLock { state in
            guard state.prefetchedBytes + bytes <= Self.prefetchBytes else { return false }
            state.prefetchedBytes += bytes
            return true
        }
    }

    func prefetched(_ bytes: Int) {
        state.withLock { $0.prefetchedBytes -= bytes }
    }

    /// The feed ended: nothing waits any more, and nothing will.
    func cancel() {
        let waiters = state.withLock { state in
            state.isCancelled = true
            let waiters = state.batchWaiters + state.byteWaiters.map(\.continuation)
            state.batchWaiters.removeAll()
            state.byteWaiters.removeAll()
            return waiters
        }
        for waiter in waiters { waiter.resume(throwing: CancellationError()) }
    }
}
