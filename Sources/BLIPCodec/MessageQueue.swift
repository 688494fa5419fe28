/// The outbox's run queue: an array consumed from the front without shifting on every removal.
struct MessageQueue {
    private var storage: [OutgoingMessage] = []
    private var head = 0
    /// Urgent messages in the queue, counted so the per-frame "is an urgent message waiting" check is O(1).
    private(set) var urgentCount = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }

    mutating func append(_ message: OutgoingMessage) {
        insert(message, at: count)
    }

    /// Inserts at `position` counted from the front of the queue.
    mutating func insert(_ message: OutgoingMessage, at position: Int) {
        if message.isUrgent { urgentCount += 1 }
        storage.insert(message, at: head + position)
    }

    mutating func popFirst() -> OutgoingMessage? {
        guard !isEmpty else { return nil }
        let message = storage[head]
        head += 1
        if head >= 64 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        if message.isUrgent { urgentCount -= 1 }
        return message
    }

    /// The position (from the front) of the last message matching `predicate`.
    func lastPosition(where predicate: (OutgoingMessage) -> Bool) -> Int? {
        storage[head...].lastIndex(where: predicate).map { $0 - head }
    }

    func firstPosition(where predicate: (OutgoingMessage) -> Bool) -> Int? {
        storage[head...].firstIndex(where: predicate).map { $0 - head }
    }

    mutating func update(at position: Int, _ body: (inout OutgoingMessage) -> Void) {
        body(&storage[head + position])
    }
}
