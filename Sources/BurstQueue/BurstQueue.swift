import Synchronization

/// Items posted from any task and handed over in bursts.
///
/// The first post after a `takeAll()` starts a burst, and its poster starts the one task that takes the items.
/// Completions that finish together then cost one hop onto an actor, not one each: a group commit answers
/// hundreds of `rev`s at once.
package final class BurstQueue<Item: Sendable>: Sendable {
    private let items = Mutex<[Item]>([])

    package init() {}

    /// Queues `item`. True when it starts a burst: the caller then starts a task that calls `takeAll()`.
    package func post(_ item: Item) -> Bool {
        items.withLock { items in
            items.append(item)
            return items.count == 1
        }
    }

    /// The items posted since the last call, oldest first; the next post starts a new burst.
    package func takeAll() -> [Item] {
        items.withLock { items in
            defer { items.removeAll(keepingCapacity: true) }
            return items
        }
    }
}
