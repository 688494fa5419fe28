import Foundation

/// Wakes whoever waits for "something was committed" without polling.
///
/// A waiter first reads `generation`, then looks at the database, and only then waits for a
/// generation newer than the one it read: a commit that lands between its look and its wait
/// has already bumped the generation, so no wake-up can be lost.
///
/// A waiter is a suspended task (`waitForCommit`) or a callback (`onCommit`): a caught-up continuous pull feed
/// waits as a callback, so that a quiet connection holds no suspended task for the hours between two writes.
final class CommitNotifier: @unchecked Sendable {
    private enum Waiter {
        case task(CheckedContinuation<Void, Never>)
        case callback(@Sendable () -> Void)

        func wake() {
            switch self {
            case .task(let continuation): continuation.resume()
            case .callback(let callback): callback()
            }
        }
    }

    // Guards every stored property below.
    private let lock = NSLock()
    private var currentGeneration: UInt64 = 0
    private var nextWaiterID: UInt64 = 0
    private var waiters: [UInt64: Waiter] = [:]

    var generation: UInt64 {
        lock.withLock { currentGeneration }
    }

    /// Waiters not yet woken (for tests).
    var waiting: Int {
        lock.withLock { waiters.count }
    }

    /// Called after every committed write transaction.
    func didCommit() {
        let woken = lock.withLock {
            currentGeneration += 1
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        for waiter in woken { waiter.wake() }
    }

    /// Calls `wake` once, when the generation exceeds `observed`: at once on the calling thread if it already
    /// does, otherwise on the thread that commits. Returns the waiter's ID for `cancelWaiter(_:)`, or `nil` when
    /// `wake` has already run.
    func onCommit(after observed: UInt64, _ wake: @escaping @Sendable () -> Void) -> UInt64? {
        let waiterID: UInt64? = lock.withLock {
            guard currentGeneration <= observed else { return nil }
            nextWaiterID += 1
            waiters[nextWaiterID] = .callback(wake)
            return nextWaiterID
        }
        if waiterID == nil { wake() }
        return waiterID
    }

    /// Forgets a callback that has not run; it never will.
    func cancelWaiter(_ waiterID: UInt64) {
        _ = lock.withLock { waiters.removeValue(forKey: waiterID) }
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
                    waiters[waiterID] = .task(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = lock.withLock { waiters.removeValue(forKey: waiterID) }
            waiter?.wake()
        }
    }
}
