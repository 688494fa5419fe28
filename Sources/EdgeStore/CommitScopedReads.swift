import Synchronization

/// Reads that many tasks repeat after the same commit, done once for all of them.
///
/// When a document is written, every continuous pull feed wakes, asks for the changes after the sequence it
/// had reached (the same one for every feed that was caught up), and reads the same revisions ahead of its
/// `changes` reply. With a thousand connected devices that was a thousand identical queries per write, each
/// a hop to GRDB's reader pool and back. Here the first task to ask starts the read, later ones with the same
/// key await it, and the results are dropped at the next commit.
///
/// A result is shared only among tasks that observed the same commit generation before asking, and the read
/// starts after one of them observed it, so every caller gets a snapshot at least as new as the generation it
/// observed: no caller can miss a commit it has been told of.
final class CommitScopedReads<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var reads: [Key: (read: Task<Value, any Error>, cost: Int)] = [:]
        var retainedCost = 0
    }

    private let state = Mutex(State())
    private let maximumReads: Int
    private let maximumCost: Int

    /// - Parameters:
    ///   - maximumReads: how many distinct reads one generation keeps; beyond, callers read on their own (feeds
    ///     catching up from scattered sequences share nothing anyway).
    ///   - maximumCost: how much the kept results may add up to, in the caller's unit (bytes of bodies), so
    ///     that a burst of large documents is not held until the next commit.
    init(maximumReads: Int, maximumCost: Int = .max) {
        self.maximumReads = maximumReads
        self.maximumCost = maximumCost
    }

    /// The result of `read` for `key`, shared with every caller that observed `generation` and asked for the
    /// same key; a caller whose generation is already outdated reads on its own. A failed read is not kept.
    func value(
        of key: Key, observedGeneration generation: UInt64, cost: Int = 0,
        read: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let shared: Task<Value, any Error>? = state.withLock { state in
            if generation > state.generation {
                state = State(generation: generation)
            }
            guard generation == state.generation else { return nil }
            if let running = state.reads[key] { return running.read }
            guard state.reads.count < maximumReads, cost <= maximumCost - state.retainedCost else { return nil }
            let started = Task { try await read() }
            state.reads[key] = (started, cost)
            state.retainedCost += cost
            return started
        }
        guard let shared else { return try await read() }
        do {
            return try await shared.value
        } catch {
            state.withLock { state in
                if let kept = state.reads[key], kept.read == shared {
                    state.reads[key] = nil
                    state.retainedCost -= kept.cost
                }
            }
            throw error
        }
    }

    /// How many reads the current generation keeps (for tests).
    var keptReads: Int { state.withLock { $0.reads.count } }
}
