import ReplicationProtocol
import SyncJSON

/// What the puller counted, with the peaks its limits must bound; tests assert on them.
public struct PullerCounters: Sendable, Hashable {
    /// Revisions requested in `changes` replies that have not been started yet (LiteCore's
    /// `_numRevsBeingRequested`).
    package var revsBeingRequested = 0
    /// `rev`s started and not yet inserted.
    package var activeIncomingRevs = 0
    /// `rev`s started and not yet answered.
    package var unfinishedIncomingRevs = 0

    /// The highest `revsBeingRequested` at the moment a `changes` message was handled: at most
    /// `maxRevsBeingRequested`, or the deferral rule was broken.
    package var peakRevsBeingRequestedWhenHandlingChanges = 0
    package var peakRevsBeingRequested = 0
    package var peakActiveIncomingRevs = 0
    package var peakUnfinishedIncomingRevs = 0

    /// `changes` messages handled, the empty caught-up ones included.
    package var changesHandled = 0
    /// `changes` messages that had to wait for revisions to arrive before being handled.
    package var changesDeferred = 0
    /// The most `changes` messages waiting unanswered at once.
    package var peakChangesWaiting = 0
    /// `rev`s that had to wait for an earlier one to finish before being started.
    package var revsDeferred = 0
    /// Revisions requested in all `changes` replies.
    package var revsRequested = 0
    public var revsReceived = 0
    package var norevsReceived = 0
    /// `rev`s and `norev`s for which no request was outstanding.
    package var unexpectedRevs = 0
    package var insertionBatches = 0
    package var largestInsertionBatch = 0
    /// Batches inserted with fewer than `insertionBatchSize` revisions: the insertion delay ran out first,
    /// so the peer did not keep enough revisions coming.
    public var partialInsertionBatches = 0
    /// How long the puller had nothing to do but wait for the peer: no `rev` being processed, inserted or
    /// waiting, no `changes` being handled (a deferred one waits for the peer's `rev`s), and not finished.
    public var waitingForPeer = Duration.zero
}

/// LiteCore's pull-side flow control (`RevFinder` and `Puller`), applied to the peer's requests in the order of
/// their request numbers: BLIP hands each request to its own task, while LiteCore's actors take them in order.
///
/// - A `changes` message is handled only when no other is being handled and at most
///   `maxRevsBeingRequested` requested revisions have not been started; otherwise it waits, unanswered.
/// - A `rev` is started only while fewer than `maxActiveIncomingRevs` are active and fewer than
///   `maxIncomingRevs` unfinished; otherwise it waits. Starting it counts it as received, which may let
///   waiting `changes` go.
actor PullFlowControl {
    enum Arrival {
        case changes
        case rev
        case norev(sequence: JSONValue?)
    }

    private let tuning: LiteCorePullerTuning
    private(set) var counters = PullerCounters()
    private var sequences = RemoteSequenceTracker()
    private var nextRequestNumber: UInt64 = 1
    private var earlyArrivals: [UInt64: (arrival: Arrival, continuation: CheckedContinuation<Bool, Never>)] = [:]
    private var waitingChanges = FIFO<(number: UInt64, continuation: CheckedContinuation<Bool, Never>)>()
    private var waitingRevs = FIFO<CheckedContinuation<Bool, Never>>()
    private var isHandlingChanges = false
    private var lastDeferredChanges: UInt64 = 0
    private var hasAnnouncedDeltas = false
    private var isCaughtUp = false
    /// Set once the connection ended: nothing waits any more, and whatever still arrives is refused.
    private(set) var isClosed = false
    private var doneWaiters: [CheckedContinuation<Void, Never>] = []
    private var waitingForPeerSince: ContinuousClock.Instant? = .now

    init(tuning: LiteCorePullerTuning) {
        self.tuning = tuning
    }

    /// The remote sequence up to which every offered revision is stored or was not needed.
    var checkpointSequence: JSONValue? { sequences.checkpoint }

    /// Returns when the `changes` request `number` may be handled, true; false once closed. Call
    /// `finishChanges` after handling it.
    func enterChanges(_ number: UInt64) async -> Bool {
        await enter(number, .changes)
    }

    /// Whether this is the first `changes` reply, the one that announces `deltas` (RevFinder's
    /// `_announcedDeltaSupport`).
    func takeFirstReply() -> Bool {
        defer { hasAnnouncedDeltas = true }
        return !hasAnnouncedDeltas
    }

    /// The handled `changes` offered `rows` (each with whether it was requested), or was the empty caught-up
    /// marker.
    func finishChanges(offered rows: [(sequence: JSONValue, requested: Bool)], caughtUp: Bool) {
        let requested = rows.reduce(0) { $0 + ($1.requested ? 1 : 0) }
        sequences.offer(rows)
        counters.changesHandled += 1
        counters.revsRequested += requested
        counters.revsBeingRequested += requested
        counters.peakRevsBeingRequested = max(counters.peakRevsBeingRequested, counters.revsBeingRequested)
        isCaughtUp = isCaughtUp || caughtUp
        isHandlingChanges = false
        drain()
    }

    /// Returns when the `rev` request `number` is started, true; false once closed.
    func enterRev(_ number: UInt64) async -> Bool {
        await enter(number, .rev)
    }

    /// Returns once the `norev` request `number` has been counted, true; false once closed.
    func enterNoRev(_ number: UInt64, sequence: JSONValue?) async -> Bool {
        await enter(number, .norev(sequence: sequence))
    }

    /// Started revisions with these sequences were inserted and are about to be answered.
    func finishRevs(_ finished: [JSONValue?]) {
        counters.activeIncomingRevs -= finished.count
        counters.unfinishedIncomingRevs -= finished.count
        counters.insertionBatches += 1
        counters.largestInsertionBatch = max(counters.largestInsertionBatch, finished.count)
        if finished.count < tuning.insertionBatchSize {
            counters.partialInsertionBatches += 1
        }
        for sequence in finished {
            sequences.complete(sequence)
        }
        drain()
    }

    /// A started `rev` failed before reaching the inserter; like LiteCore, its sequence counts as done.
    func abandonRev(sequence: JSONValue?) {
        counters.activeIncomingRevs -= 1
        counters.unfinishedIncomingRevs -= 1
        sequences.complete(sequence)
        drain()
    }

    /// Whether the peer said it is caught up and nothing requested is outstanding or waiting.
    var isDone: Bool {
        isCaughtUp && counters.revsBeingRequested <= 0 && counters.unfinishedIncomingRevs == 0
            && waitingRevs.isEmpty && waitingChanges.isEmpty && !isHandlingChanges && earlyArrivals.isEmpty
    }

    /// Returns once `isDone`, or once closed.
    func waitUntilDone() async {
        if isDone || isClosed { return }
        await withCheckedContinuation { doneWaiters.append($0) }
    }

    /// The connection ended: releases every waiting request and `waitUntilDone`.
    func close() {
        isClosed = true
        for (_, entry) in earlyArrivals { entry.continuation.resume(returning: false) }
        earlyArrivals.removeAll()
        while let changes = waitingChanges.popFirst() { changes.continuation.resume(returning: false) }
        while let rev = waitingRevs.popFirst() { rev.resume(returning: false) }
        resumeDoneWaiters()
    }

    /// BLIP cancels the handlers of a connection that ended, and they may be waiting here.
    private func enter(_ number: UInt64, _ arrival: Arrival) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                arrive(number, arrival, continuation)
            }
        } onCancel: {
            Task { await self.close() }
        }
    }

    private func arrive(_ number: UInt64, _ arrival: Arrival, _ continuation: CheckedContinuation<Bool, Never>) {
        guard !isClosed else {
            continuation.resume(returning: false)
            return
        }
        earlyArrivals[number] = (arrival, continuation)
        while let next = earlyArrivals.removeValue(forKey: nextRequestNumber) {
            let arrivedNumber = nextRequestNumber
            nextRequestNumber += 1
            switch next.arrival {
            case .changes:
                waitingChanges.append((arrivedNumber, next.continuation))
                counters.peakChangesWaiting = max(counters.peakChangesWaiting, waitingChanges.count)
            case .rev:
                if !waitingRevs.isEmpty || !hasRoomForRev {
                    counters.revsDeferred += 1
                }
                waitingRevs.append(next.continuation)
            case .norev(let sequence):
                counters.norevsReceived += 1
                countReceived()
                sequences.complete(sequence)
                next.continuation.resume(returning: true)
            }
            drain()
        }
    }

    private var hasRoomForRev: Bool {
        counters.activeIncomingRevs < tuning.maxActiveIncomingRevs
            && counters.unfinishedIncomingRevs < tuning.maxIncomingRevs
    }

    private func countReceived() {
        if counters.revsBeingRequested > 0 {
            counters.revsBeingRequested -= 1
        } else {
            counters.unexpectedRevs += 1
        }
    }

    private func drain() {
        while hasRoomForRev, let rev = waitingRevs.popFirst() {
            counters.revsReceived += 1
            countReceived()
            counters.activeIncomingRevs += 1
            counters.unfinishedIncomingRevs += 1
            counters.peakActiveIncomingRevs = max(counters.peakActiveIncomingRevs, counters.activeIncomingRevs)
            counters.peakUnfinishedIncomingRevs = max(
                counters.peakUnfinishedIncomingRevs, counters.unfinishedIncomingRevs)
            rev.resume(returning: true)
        }
        if !isHandlingChanges, let next = waitingChanges.first {
            if counters.revsBeingRequested <= tuning.maxRevsBeingRequested {
                _ = waitingChanges.popFirst()
                isHandlingChanges = true
                counters.peakRevsBeingRequestedWhenHandlingChanges = max(
                    counters.peakRevsBeingRequestedWhenHandlingChanges, counters.revsBeingRequested)
                next.continuation.resume(returning: true)
            } else if lastDeferredChanges != next.number {
                lastDeferredChanges = next.number
                counters.changesDeferred += 1
            }
        }
        // A `changes` still waiting here after the loop above is deferred: it waits for the peer's `rev`s.
        let isWaitingForPeer =
            counters.unfinishedIncomingRevs == 0 && waitingRevs.isEmpty && !isHandlingChanges && !isDone
        if isWaitingForPeer, waitingForPeerSince == nil {
            waitingForPeerSince = .now
        } else if !isWaitingForPeer, let since = waitingForPeerSince {
            counters.waitingForPeer += ContinuousClock.now - since
            waitingForPeerSince = nil
        }
        if isDone {
            resumeDoneWaiters()
        }
    }

    private func resumeDoneWaiters() {
        let waiters = doneWaiters
        doneWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }
}

/// LiteCore's `RemoteSequenceSet`: the offered sequences in order, and which of them are still awaited; the
/// checkpoint is the last sequence before the first one awaited.
struct RemoteSequenceTracker {
    private var offered = FIFO<(key: String, sequence: JSONValue)>()
    private var awaited: Set<String> = []
    private(set) var checkpoint: JSONValue?

    mutating func offer(_ rows: [(sequence: JSONValue, requested: Bool)]) {
        for row in rows {
            let key = row.sequence.jsonString
            offered.append((key, row.sequence))
            if row.requested { awaited.insert(key) }
        }
        advance()
    }

    mutating func complete(_ sequence: JSONValue?) {
        guard let sequence else { return }
        awaited.remove(sequence.jsonString)
        advance()
    }

    private mutating func advance() {
        while let first = offered.first, !awaited.contains(first.key) {
            checkpoint = first.sequence
            _ = offered.popFirst()
        }
    }
}

/// A queue that pops from the front in constant time.
struct FIFO<Element> {
    private var elements: [Element] = []
    private var head = 0

    var isEmpty: Bool { head == elements.count }
    var count: Int { elements.count - head }
    var first: Element? { isEmpty ? nil : elements[head] }

    mutating func append(_ element: Element) {
        elements.append(element)
    }

    mutating func popFirst() -> Element? {
        guard !isEmpty else { return nil }
        let element = elements[head]
        head += 1
        if head >= 1_024, head * 2 >= elements.count {
            elements.removeFirst(head)
            head = 0
        }
        return element
    }
}
