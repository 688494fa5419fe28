import Synchronization

/// Documents moved by passive replication, as the peer sees them: `pushed` are revisions the peer sent and this
/// side stored, `pulled` revisions this side sent and the peer acknowledged.
///
/// One instance per connection, read live by status reports while the session runs. Counts also go to
/// `aggregate`, so that a listener's totals miss nothing a connection counts as it closes.
public final class ReplicationCounters: Sendable {
    private let pushed = Atomic<Int>(0)
    private let pulled = Atomic<Int>(0)
    private let aggregate: ReplicationCounters?

    public init(aggregatingInto aggregate: ReplicationCounters? = nil) {
        self.aggregate = aggregate
    }

    public var documentsPushed: Int { pushed.load(ordering: .relaxed) }
    public var documentsPulled: Int { pulled.load(ordering: .relaxed) }

    func countPushed() {
        pushed.add(1, ordering: .relaxed)
        aggregate?.countPushed()
    }

    func countPulled() {
        pulled.add(1, ordering: .relaxed)
        aggregate?.countPulled()
    }
}
