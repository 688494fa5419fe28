import Synchronization

/// What replication moved and refused, counted where it happens and read live by status reports and metrics.
///
/// For the passive side (a listener's sessions), `pushed` are revisions the peer sent and this side stored and
/// `pulled` revisions this side sent and the peer acknowledged. For an upstream it is this side's view: `pushed`
/// were sent upstream and accepted, `pulled` came from the upstream and were stored.
///
/// Every count also goes to `aggregate` (a connection's to its database's, a database's to its listener's), so
/// totals miss nothing a connection counts as it closes. Relaxed atomics: a handful per revision, no lock.
public final class ReplicationCounters: Sendable {
    private let pushed = Atomic<Int>(0)
    private let pulled = Atomic<Int>(0)
    private let pushedBytes = Atomic<Int>(0)
    private let pulledBytes = Atomic<Int>(0)
    private let rejectedPushes = Atomic<Int>(0)
    private let rejectedPulls = Atomic<Int>(0)
    private let conflictCount = Atomic<Int>(0)
    private let missingRevisionCount = Atomic<Int>(0)
    private let proposedRevisionCount = Atomic<Int>(0)
    /// Failures counted by kind where they happen; rare, so a lock is cheap.
    private let failures = Mutex<[ReplicationErrorKind: Int]>([:])
    private let aggregate: ReplicationCounters?

    package init(aggregatingInto aggregate: ReplicationCounters? = nil) {
        self.aggregate = aggregate
    }

    package var documentsPushed: Int { pushed.load(ordering: .relaxed) }
    package var documentsPulled: Int { pulled.load(ordering: .relaxed) }
    /// Bytes pushed: JSON bodies of the revisions and the blobs (attachments) they needed.
    package var bytesPushed: Int { pushedBytes.load(ordering: .relaxed) }
    /// Bytes pulled: JSON bodies of the revisions and the blobs (attachments) they needed.
    package var bytesPulled: Int { pulledBytes.load(ordering: .relaxed) }
    /// Pushed revisions refused by the receiving side for a reason other than a conflict.
    package var pushesRejected: Int { rejectedPushes.load(ordering: .relaxed) }
    /// Pulled revisions refused by the receiving side for a reason other than a conflict.
    package var pullsRejected: Int { rejectedPulls.load(ordering: .relaxed) }
    /// Revisions refused because they conflicted with the receiver's current revision.
    package var conflicts: Int { conflictCount.load(ordering: .relaxed) }
    /// Revisions offered but then reported unavailable by their sender (`norev`, or a `rev` carrying an error).
    package var missingRevisions: Int { missingRevisionCount.load(ordering: .relaxed) }

    /// Revisions the pushing side offered (rows of `proposeChanges`, or of `changes` from a pusher), whether the
    /// receiver then wanted them or not, as Sync Gateway's `propose_change_count`. Counted where the offers arrive
    /// for a listener, where they leave for an upstream.
    package var revisionsProposed: Int { proposedRevisionCount.load(ordering: .relaxed) }

    /// Failures of one kind since start. Conflicts, missing and rejected revisions are the counts above.
    package func errors(of kind: ReplicationErrorKind) -> Int {
        let counted = failures.withLock { $0[kind] ?? 0 }
        return switch kind {
        case .conflict: counted + conflicts
        case .missingRevision: counted + missingRevisions
        case .rejectedRevision: counted + pushesRejected + pullsRejected
        default: counted
        }
    }

    package func countError(_ kind: ReplicationErrorKind) {
        failures.withLock { $0[kind, default: 0] += 1 }
        aggregate?.countError(kind)
    }

    /// Blob bytes that went the push way (to the listener's side from its peer, from an upstream's side to it).
    func countPushedBlob(bytes: Int) {
        pushedBytes.add(bytes, ordering: .relaxed)
        aggregate?.countPushedBlob(bytes: bytes)
    }

    func countPulledBlob(bytes: Int) {
        pulledBytes.add(bytes, ordering: .relaxed)
        aggregate?.countPulledBlob(bytes: bytes)
    }

    func countPushed(bytes: Int = 0) {
        pushed.add(1, ordering: .relaxed)
        pushedBytes.add(bytes, ordering: .relaxed)
        aggregate?.countPushed(bytes: bytes)
    }

    func countPulled(bytes: Int = 0) {
        pulled.add(1, ordering: .relaxed)
        pulledBytes.add(bytes, ordering: .relaxed)
        aggregate?.countPulled(bytes: bytes)
    }

    /// Several pulls at once, for the paths that already batch their bookkeeping.
    func countPulled(documents: Int, bytes: Int) {
        pulled.add(documents, ordering: .relaxed)
        pulledBytes.add(bytes, ordering: .relaxed)
        aggregate?.countPulled(documents: documents, bytes: bytes)
    }

    func countPushed(documents: Int, bytes: Int) {
        pushed.add(documents, ordering: .relaxed)
        pushedBytes.add(bytes, ordering: .relaxed)
        aggregate?.countPushed(documents: documents, bytes: bytes)
    }

    func countRejectedPush() {
        rejectedPushes.add(1, ordering: .relaxed)
        aggregate?.countRejectedPush()
    }

    func countRejectedPull() {
        rejectedPulls.add(1, ordering: .relaxed)
        aggregate?.countRejectedPull()
    }

    func countConflict() {
        conflictCount.add(1, ordering: .relaxed)
        aggregate?.countConflict()
    }

    func countProposed(revisions: Int) {
        proposedRevisionCount.add(revisions, ordering: .relaxed)
        aggregate?.countProposed(revisions: revisions)
    }

    func countMissingRevision() {
        missingRevisionCount.add(1, ordering: .relaxed)
        aggregate?.countMissingRevision()
    }
}
