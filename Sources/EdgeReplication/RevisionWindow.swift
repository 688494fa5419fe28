import EdgeStore

/// How many bytes of revision bodies a sender keeps sent but unacknowledged. LiteCore's pusher
/// allows 2 MB (`kMaxRevBytesAwaitingReply` in ReplicatorTuning.hh): a whole batch of small
/// documents goes out at once, while a batch of large ones cannot pile up in memory.
enum RevisionWindow {
    static let maxBytesAwaitingReply = 2 * 1024 * 1024

    /// Splits `items` into consecutive groups of at most `maxBytesAwaitingReply` body bytes; an
    /// item larger than that is a group of its own.
    static func groups<Item>(_ items: [Item], bodySize: (Item) -> Int) -> [ArraySlice<Item>] {
        var groups: [ArraySlice<Item>] = []
        var start = items.startIndex
        var bytes = 0
        for index in items.indices {
            let size = max(0, bodySize(items[index]))
            if index > start, bytes + size > maxBytesAwaitingReply {
                groups.append(items[start..<index])
                start = index
                bytes = 0
            }
            bytes += size
        }
        if start < items.endIndex {
            groups.append(items[start...])
        }
        return groups
    }

    /// Sends `items` a window at a time: each window's revisions are read at once (one snapshot),
    /// then all of its `rev`s are in flight together; returns once every one was answered.
    nonisolated(nonsending) static func send<Item: Sendable>(
        _ items: [Item], bodySize: (Item) -> Int,
        reading read: (ArraySlice<Item>) async throws -> [OutgoingRevision?],
        sending send: @escaping @Sendable (Item, OutgoingRevision?) async throws -> Void
    ) async throws {
        for window in groups(items, bodySize: bodySize) {
            let revisions = try await read(window)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (item, revision) in zip(window, revisions) {
                    group.addTask { try await send(item, revision) }
                }
                try await group.waitForAll()
            }
        }
    }
}
