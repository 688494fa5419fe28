import Synchronization
import Testing

@testable import EdgeReplication

@Suite("What one pull feed may have outstanding")
struct PullFeedLimitsTests {
    @Test("a batch beyond the limit waits for an answer; one beyond the byte allowance waits for its bytes")
    func waitsForRoom() async throws {
        let limits = PullFeedLimits(maxUnansweredBatches: 2)
        try await limits.sendingBatch()
        try await limits.sendingBatch()
        let third = Task { try await limits.sendingBatch() }
        try await Task.sleep(for: .milliseconds(20))
        limits.batchAnswered()
        try await third.value

        let window = RevisionWindow.maxBytesAwaitingReply
        try await limits.reading(window - 10)
        let admitted = Mutex(false)
        let next = Task {
            try await limits.reading(20)
            admitted.withLock { $0 = true }
        }
        try await Task.sleep(for: .milliseconds(20))
        #expect(!admitted.withLock { $0 }, "20 bytes over the allowance went out before any were answered")
        limits.answered(window - 10)
        try await next.value
        // A window larger than the whole allowance goes alone.
        limits.answered(20)
        try await limits.reading(window * 3)
    }

    @Test("cancelling the feed fails the waits in progress and every later one")
    func cancelEndsWaits() async throws {
        let limits = PullFeedLimits(maxUnansweredBatches: 1)
        try await limits.sendingBatch()
        let waiting = Task { try await limits.sendingBatch() }
        try await Task.sleep(for: .milliseconds(20))
        limits.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        await #expect(throws: CancellationError.self) { try await limits.sendingBatch() }
        try await limits.reading(RevisionWindow.maxBytesAwaitingReply)
        await #expect(throws: CancellationError.self) { try await limits.reading(1) }
    }

    @Test("read-ahead stops at its share of the window and resumes as it is given back")
    func prefetchAllowance() {
        let limits = PullFeedLimits(maxUnansweredBatches: 5)
        #expect(limits.mayPrefetch(PullFeedLimits.prefetchBytes))
        #expect(!limits.mayPrefetch(1))
        limits.prefetched(PullFeedLimits.prefetchBytes)
        #expect(limits.mayPrefetch(1))
    }
}
