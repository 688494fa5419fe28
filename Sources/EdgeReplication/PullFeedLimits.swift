/// What one pull feed may have outstanding at once (spec §3.5, §2.9), shared by its batches.
///
/// - `changes` batches sent and not yet answered: LiteCore's pusher keeps up to 5 (`kMaxChangeListsInFlight`). A
///   batch frees its place as soon as its reply arrives, so that the next batch is already with the puller while
///   this one's revisions go out: a LiteCore puller answers a `changes` only once it has few enough revisions
///   outstanding, and would otherwise wait for the next one.
/// - Revision body bytes read for sending and not yet answered: `RevisionWindow.maxBytesAwaitingReply` in all
///   (LiteCore's `kMaxRevBytesAwaitingReply`), so that a puller that answers `changes` at once but stores slowly
///   cannot make the feed read ahead without bound.
/// - Bodies read ahead for batches whose reply is outstanding (`prefetchBytes`), so that a batch's revisions can
///   go out as soon as its reply says which ones to send.
actor PullFeedLimits {
    static let prefetchBytes = RevisionWindow.maxBytesAwaitingReply / 2

    private let maxUnansweredBatches: Int
    private var unansweredBatches = 0
    private var batchWaiters: [CheckedContinuation<Void, any Error>] = []
    private var bytesAwaitingReply = 0
    private var byteWaiters: [(bytes: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    private var prefetchedBytes = 0

    init(maxUnansweredBatches: Int) {
        self.maxUnansweredBatches = maxUnansweredBatches
    }

    /// Waits for a place for one more unanswered batch.
    func sendingBatch() async throws {
        if unansweredBatches < maxUnansweredBatches {
            unansweredBatches += 1
            return
        }
        try await withCheckedThrowingContinuation { batchWaiters.append($0) }
    }

    /// A batch was answered (or failed): its place goes to the next.
    func batchAnswered() {
        if batchWaiters.isEmpty {
            unansweredBatches -= 1
        } else {
            batchWaiters.removeFirst().resume()
        }
    }

    /// Waits until `bytes` more revision bytes may await replies; a window larger than the whole allowance
    /// goes alone.
    func reading(_ bytes: Int) async throws {
        if byteWaiters.isEmpty, fits(bytes) {
            bytesAwaitingReply += bytes
            return
        }
        try await withCheckedThrowingContinuation { byteWaiters.append((bytes, $0)) }
    }

    /// `bytes` taken by `reading` were answered.
    func answered(_ bytes: Int) {
        bytesAwaitingReply -= bytes
        while let next = byteWaiters.first, fits(next.bytes) {
            byteWaiters.removeFirst()
            bytesAwaitingReply += next.bytes
            next.continuation.resume()
        }
    }

    /// Whether `bytes` may be read ahead now; `prefetched(_:)` gives them back.
    func mayPrefetch(_ bytes: Int) -> Bool {
        guard prefetchedBytes + bytes <= Self.prefetchBytes else { return false }
        prefetchedBytes += bytes
        return true
    }

    func prefetched(_ bytes: Int) {
        prefetchedBytes -= bytes
    }

    /// The feed ended: nothing waits any more.
    func cancel() {
        for waiter in batchWaiters { waiter.resume(throwing: CancellationError()) }
        batchWaiters.removeAll()
        for waiter in byteWaiters { waiter.continuation.resume(throwing: CancellationError()) }
        byteWaiters.removeAll()
    }

    private func fits(_ bytes: Int) -> Bool {
        bytesAwaitingReply == 0 || bytesAwaitingReply + bytes <= RevisionWindow.maxBytesAwaitingReply
    }
}
