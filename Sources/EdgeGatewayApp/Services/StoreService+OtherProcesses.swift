import EdgeStore

extension StoreService {
    /// How soon documents that another process commits (`edge-gateway db import`, `docs put`) reach continuous
    /// replications.
    static let otherProcessesCheckInterval = Duration.seconds(1)

    /// SQLite tells no one of another process's commits, so the change feeds that wait for this process's
    /// commits would miss them until the gateway's next own write. A higher last sequence than seen before wakes
    /// them; a wake-up for the gateway's own commit costs a feed one empty read.
    ///
    /// The last sequence is read only when the database's files changed since the last look (two `stat` calls a
    /// second per database). A read goes through GRDB's dispatch queues, and libdispatch retires a parked worker
    /// only after 5 s without work while waking them in turn: a read every second kept every worker that a burst
    /// of connections had started alive for good (RELIABILITY.md, "Soak").
    func watchOtherProcessesCommits() async {
        var seen: [Int64?] = []
        var stamps: [DatabaseFileStamp] = []
        for database in databases {
            stamps.append(database.fileStamp())
            seen.append(try? await database.lastSequence())
        }
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.otherProcessesCheckInterval)
            for (index, database) in databases.enumerated() {
                let stamp = database.fileStamp()
                guard stamp != stamps[index] else { continue }
                guard let sequence = try? await database.lastSequence() else { continue }
                stamps[index] = stamp
                if let previous = seen[index], sequence > previous {
                    database.wakeChangeObservers()
                }
                seen[index] = sequence
            }
        }
    }
}
