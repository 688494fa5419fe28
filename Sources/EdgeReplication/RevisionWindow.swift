import BLIPCodec
import BLIPConnection
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

    /// Sends `items` a window at a time: what each window's revisions need from the store is read at once
    /// (`read` returns one element per item), each becomes a request (`prepare` returns `nil` for one with
    /// nothing to send), all of them go out together with `BLIPConnection.sendRequests`, and `finish` gets
    /// every request's outcome once all are answered. A sender that shares an allowance of body bytes among
    /// several windows at once waits for room in `waitingForRoom` before a window is read, and gets the bytes
    /// back in `answered` once its replies are in.
    nonisolated(nonsending) static func send<Item: Sendable, Read, Prepared>(
        _ items: [Item], bodySize: (Item) -> Int,
        over connection: BLIPConnection,
        waitingForRoom: (Int) async throws -> Void = { _ in },
        answered: (Int) async -> Void = { _ in },
        reading read: (ArraySlice<Item>) async throws -> [Read],
        preparing prepare: (Item, Read) async throws -> (Prepared, BLIPMessage)?,
        finishing finish: ([(Prepared, Result<BLIPMessage, BLIPErrorReply>)]) async throws -> Void
    ) async throws {
        for window in groups(items, bodySize: bodySize) {
            let bytes = window.reduce(0) { $0 + max(0, bodySize($1)) }
            try await waitingForRoom(bytes)
            var isAnswered = false
            do {
                let reads = try await read(window)
                var prepared: [Prepared] = []
                var requests: [BLIPMessage] = []
                prepared.reserveCapacity(window.count)
                requests.reserveCapacity(window.count)
                for (item, itemRead) in zip(window, reads) {
                    guard let (preparedItem, request) = try await prepare(item, itemRead) else { continue }
                    prepared.append(preparedItem)
                    requests.append(request)
                }
                let outcomes = try await connection.sendRequests(requests)
                isAnswered = true
                await answered(bytes)
                try await finish(Array(zip(prepared, outcomes)))
            } catch {
                if !isAnswered { await answered(bytes) }
                throw error
            }
        }
    }
}
