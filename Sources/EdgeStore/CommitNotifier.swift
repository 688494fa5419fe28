import Foundation

/// Wakes tasks waiting for "something was committed" without polling.
///
/// A waiter first reads `generation`, then looks at the database, and only then waits for a
/// generation newer than the one it read: a commit that lands between its look and its wait
/// has already bumped the generation, so no wake-up can be lost.
final class CommitNotifier: @unchecked Sendable {
    // Guards every stored property below.
    private let lock = NSLock()
    private var currentGeneration: UInt64 = 0
    private var nextWaiterID: UInt64 = 0
    private var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]

    var generation: UInt64 {
        lock.withLock { currentGeneration }
    }

    /// Called after every committed write transaction.
    func didCommit() {
        let woken = lock.withLock {
            currentGeneration += 1
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns once the generation exceeds `observed`, or as soon as the calling task is cancelled.
    func waitForCommit(after observed: UInt64) async {
        let waiterID = lock.withLock {
            nextWaiterID += 1
            return nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = lock.withLock {
                    if currentGeneration > observed || Task.isCancelled { return true }
                    waiters[waiterID] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let continuation = lock.withLock { waiters.removeValue(forKey: waiterID) }
            continuation?.resume()
        }
    }
}
