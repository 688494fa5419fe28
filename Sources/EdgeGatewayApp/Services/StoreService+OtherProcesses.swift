import EdgeStore
import NIOCore
import NIOPosix
import Synchronization

extension StoreService {
    /// How soon documents that another process commits (`edge-gateway db import`, `docs put`) reach continuous
    /// replications.
    static let otherProcessesCheckInterval = TimeAmount.seconds(1)

    /// SQLite tells no one of another process's commits, so the change feeds that wait for this process's
    /// commits would miss them until the gateway's next own write. The watcher wakes them when a database's last
    /// sequence has risen.
    ///
    /// Its look every second runs on a NIO event loop and reads through the connection pool only when the
    /// database's files changed. A read, or a task that sleeps and wakes, goes through libdispatch, which retires
    /// a parked worker only after 5 s without work but wakes the parked workers in turn: a wake-up every second
    /// kept every worker that a burst of connections had started alive for good (RELIABILITY.md, "Soak").
    ///
    /// Returns the scheduled looks, to be cancelled before the databases close.
    func watchOtherProcessesCommits() async -> RepeatedTask {
        let watcher = await OtherProcessCommitWatcher(databases: databases)
        let interval = Self.otherProcessesCheckInterval
        return MultiThreadedEventLoopGroup.singleton.any().scheduleRepeatedTask(
            initialDelay: interval, delay: interval
        ) { _ in
            watcher.look()
        }
    }
}

/// The databases' file stamps and last sequences as last seen; see `watchOtherProcessesCommits()`.
final class OtherProcessCommitWatcher: Sendable {
    private struct Seen {
        var stamp: DatabaseFileStamp
        var lastSequence: Int64?
    }

    private struct State {
        var seen: [Seen]
        /// A read of changed databases is under way; looks in the meantime change nothing.
        var reading = false
    }

    private let databases: [DocumentDatabase]
    private let state: Mutex<State>

    init(databases: [DocumentDatabase]) async {
        self.databases = databases
        var seen: [Seen] = []
        for database in databases {
            // The stamp first: a commit between the two is seen again at the next look, not missed.
            let stamp = database.fileStamp()
            seen.append(Seen(stamp: stamp, lastSequence: try? await database.lastSequence()))
        }
        state = Mutex(State(seen: seen))
    }

    /// Two `stat` calls per database; a read only of those whose files changed.
    func look() {
        let stamps = databases.map { $0.fileStamp() }
        let changed: [(index: Int, stamp: DatabaseFileStamp)] = state.withLock { state in
            guard !state.reading else { return [] }
            let changed = stamps.enumerated().filter { $0.element != state.seen[$0.offset].stamp }
            state.reading = !changed.isEmpty
            return changed.map { ($0.offset, $0.element) }
        }
        guard !changed.isEmpty else { return }
        Task { await self.read(changed) }
    }

    private func read(_ changed: [(index: Int, stamp: DatabaseFileStamp)]) async {
        for (index, stamp) in changed {
            let database = databases[index]
            // A failed read keeps the old stamp, so the next look tries again.
            guard let sequence = try? await database.lastSequence() else { continue }
            let risen = state.withLock { state in
                defer { state.seen[index] = Seen(stamp: stamp, lastSequence: sequence) }
                return state.seen[index].lastSequence.map { sequence > $0 } ?? false
            }
            if risen { database.wakeChangeObservers() }
        }
        state.withLock { $0.reading = false }
    }
}
