import EdgeStore
import Synchronization

/// One collection's pull feed on one connection, as `subChanges` started it, and the tasks that run it.
///
/// A reader task reads the changes and offers them in batches, each batch a task of its own until its revisions
/// are answered. Once a continuous feed has caught up, its reader ends and the feed holds no task at all: the
/// next commit (`ChangeFeed.AsyncIterator.onCommit`) starts a new reader where the last one stopped. A shop's
/// handhelds sit caught up for hours between two price updates, and a suspended task for each of them was a
/// few KiB of every idle connection.
final class PullFeed: Sendable {
    private struct State {
        var isCancelled = false
        var reader: Task<Void, Never>?
        var wake: CommitWake?
        var offers: [Int: Task<Void, Never>] = [:]
        var offersStarted = 0
    }

    private let state = Mutex(State())
    let limits: PullFeedLimits
    let receiver = PullReceiverState()

    init(maxUnansweredBatches: Int) {
        limits = PullFeedLimits(maxUnansweredBatches: maxUnansweredBatches)
    }

    /// Starts a reader running `read`, unless the feed has been cancelled.
    func startReader(_ read: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            guard !state.isCancelled else { return }
            state.reader = Task { await read() }
        }
    }

    /// The reader has finished for good (a one-shot feed has sent its caught-up marker).
    func readerEnded() {
        state.withLock { $0.reader = nil }
    }

    /// The reader has caught up and ends: `resume` runs in a new reader once something is committed after what
    /// `iterator` last looked at (at once if that has already happened).
    func readerCaughtUp(
        _ iterator: ChangeFeed.AsyncIterator, resume: @escaping @Sendable (ChangeFeed.AsyncIterator) async -> Void
    ) {
        state.withLock { $0.reader = nil }
        let wake = iterator.onCommit { [self] in
            state.withLock { state in
                state.wake = nil
                guard !state.isCancelled else { return }
                state.reader = Task { await resume(iterator) }
            }
        }
        guard let wake else { return }
        let cancelled = state.withLock { state in
            if !state.isCancelled { state.wake = wake }
            return state.isCancelled
        }
        if cancelled { wake.cancel() }
    }

    /// Runs `offer` as a task of its own, which the feed cancels with everything else; returns whether it did
    /// (not once the feed is cancelled).
    func startOffer(_ offer: @escaping @Sendable () async -> Void) -> Bool {
        state.withLock { state in
            guard !state.isCancelled else { return false }
            state.offersStarted += 1
            let id = state.offersStarted
            // Created under the lock, so the task's own removal at its end cannot come before its insertion.
            state.offers[id] = Task { [self] in
                await offer()
                _ = self.state.withLock { $0.offers.removeValue(forKey: id) }
            }
            return true
        }
    }

    /// Ends the feed: its reader, its offers and its wait for a commit; nothing waits on its limits any more.
    func cancel() {
        let (reader, offers, wake) = state.withLock { state in
            state.isCancelled = true
            defer {
                state.reader = nil
                state.offers.removeAll()
                state.wake = nil
            }
            return (state.reader, Array(state.offers.values), state.wake)
        }
        reader?.cancel()
        for offer in offers { offer.cancel() }
        wake?.cancel()
        limits.cancel()
    }

    /// Tasks the feed holds: its reader and its offers in flight (for tests).
    var runningTasks: Int {
        state.withLock { ($0.reader == nil ? 0 : 1) + $0.offers.count }
    }
}
