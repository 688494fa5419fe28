import EdgeStore

extension StoreService {
    /// How soon documents that another process commits (`edge-gateway db import`, `docs put`) reach continuous
    /// replications.
    static let otherProcessesCheckInterval = Duration.seconds(1)

    /// SQLite tells no one of another process's commits, so the change feeds that wait for this process's
    /// commits would miss them until the gateway's next own write. A higher last sequence than seen before wakes
    /// them; a wake-up for the gateway's own commit costs a feed one empty read. One indexed row read a second
    /// per database.
    func watchOtherProcessesCommits() async {
        var seen: [Int64?] = []
        for database in databases {
            seen.append(try? await database.lastSequence())
        }
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.otherProcessesCheckInterval)
            for (index, database) in databases.enumerated() {
                guard let sequence = try? await database.lastSequence() else { continue }
                if let previous = seen[index], sequence > previous {
                    database.wakeChangeObservers()
                }
                seen[index] = sequence
            }
        }
    }
}
