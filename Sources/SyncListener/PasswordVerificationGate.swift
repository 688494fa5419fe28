import Foundation

/// Caps the scrypt derivations that Basic credentials cost. Each one takes about 32 MiB with the standard
/// parameters, so a flood of password guesses verified all at once would exhaust an edge box's memory.
///
/// At most `Limit.concurrent` verifications run; up to `Limit.waiting` more wait their turn (a burst of
/// reconnecting clients after a restart is served, only more slowly); beyond that, `enter()` returns false and
/// the request is refused with 503, which Couchbase Lite retries with back-off.
public actor PasswordVerificationGate {
    public struct Limit: Sendable, Equatable {
        package var concurrent: Int
        package var waiting: Int

        package init(concurrent: Int, waiting: Int) {
            precondition(concurrent > 0 && waiting >= 0)
            self.concurrent = concurrent
            self.waiting = waiting
        }

        /// Two at once: 64 MiB of scrypt at most, and two cores busy, on the smallest supported box.
        public static let standard = Limit(concurrent: 2, waiting: 64)
    }

    package nonisolated let limit: Limit
    private var running = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []
    /// The most verifications that ever ran at once, which tests check against the limit.
    package private(set) var mostConcurrent = 0

    package init(_ limit: Limit) {
        self.limit = limit
    }

    /// Runs `verify` when a slot is free; nil, without running it, when too many already wait.
    ///
    /// A derivation blocks its thread for about 100 ms, so each runs on a thread of its own (at most
    /// `Limit.concurrent` exist), never on the concurrency pool, which has one thread per core: two derivations
    /// there would stall every other task of the node (replication, upgrade judgements, upstream certificate
    /// checks) for as long as a flood of guesses lasts. NIO's blocking pool is no better a place: it is as small,
    /// and shared with file I/O.
    package nonisolated func verify<Result: Sendable>(_ verify: @escaping @Sendable () -> Result) async -> Result? {
        guard await enter() else { return nil }
        let result = await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: verify()) }
        }
        await leave()
        return result
    }

    private func enter() async -> Bool {
        if running < limit.concurrent {
            running += 1
        } else {
            guard waiters.count < limit.waiting else { return false }
            // The leaving verification hands its slot over, so `running` stays as it is.
            await withCheckedContinuation { waiters.append($0) }
        }
        mostConcurrent = max(mostConcurrent, running)
        return true
    }

    private func leave() {
        if waiters.isEmpty {
            running -= 1
        } else {
            waiters.removeFirst().resume()
        }
    }
}
