import BLIPCodec

/// Who waits for the reply to one outgoing request.
enum ReplyWaiter {
    case request(CheckedContinuation<BLIPMessage, any Error>)
    case batch(ReplyBatch, index: Int)

    func receive(_ outcome: Result<BLIPMessage, BLIPErrorReply>) {
        switch self {
        case .request(let continuation):
            continuation.resume(with: outcome.mapError { $0 as any Error })
        case .batch(let batch, let index):
            batch.record(outcome, at: index)
        }
    }

    func fail(_ error: any Error) {
        switch self {
        case .request(let continuation):
            continuation.resume(throwing: error)
        case .batch(let batch, _):
            batch.fail(error)
        }
    }
}

/// The replies to requests sent together by `sendRequests`, kept until the last one arrives, so that the
/// sender is resumed once per batch instead of once per request. Only the connection actor touches it.
final class ReplyBatch {
    typealias Outcome = Result<BLIPMessage, BLIPErrorReply>

    private var outcomes: [Outcome?]
    private var remaining: Int
    private var failure: (any Error)?
    private var continuation: CheckedContinuation<[Outcome], any Error>?

    init(count: Int) {
        outcomes = Array(repeating: nil, count: count)
        remaining = count
    }

    func record(_ outcome: Outcome, at index: Int) {
        outcomes[index] = outcome
        remaining -= 1
        resumeIfDone()
    }

    /// The connection failed or the sender was cancelled: the whole batch fails, once.
    func fail(_ error: any Error) {
        guard failure == nil else { return }
        failure = error
        resumeIfDone()
    }

    func wait(_ continuation: CheckedContinuation<[Outcome], any Error>) {
        self.continuation = continuation
        resumeIfDone()
    }

    private func resumeIfDone() {
        guard let continuation else { return }
        if let failure {
            self.continuation = nil
            continuation.resume(throwing: failure)
        } else if remaining == 0 {
            self.continuation = nil
            continuation.resume(returning: outcomes.map { $0! })
        }
    }
}

extension BLIPConnection {
    /// Sends `requests` in order and waits until every one is answered; returns each reply or error reply,
    /// in the order of `requests`. Throws only when the connection ends or the caller is cancelled.
    ///
    /// One caller and one wake-up for the whole batch, where `sendRequest` per request would cost a task
    /// and a resumption each: a window of a thousand small `rev`s is the common case.
    package func sendRequests(_ requests: [BLIPMessage]) async throws -> [Result<BLIPMessage, BLIPErrorReply>] {
        guard !requests.isEmpty else { return [] }
        let batch = ReplyBatch(count: requests.count)
        var numbers: [UInt64] = []
        numbers.reserveCapacity(requests.count)
        do {
            for (index, request) in requests.enumerated() {
                let number = try await enqueueRequest(request)
                pendingReplies[number] = .batch(batch, index: index)
                numbers.append(number)
            }
        } catch {
            for number in numbers {
                pendingReplies.removeValue(forKey: number)
            }
            throw error
        }
        let sentNumbers = numbers
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if Task.isCancelled {
                    batch.fail(CancellationError())
                }
                batch.wait(continuation)
            }
        } onCancel: {
            Task { await self.abandonReplies(to: sentNumbers) }
        }
    }

    private func abandonReplies(to numbers: [UInt64]) {
        for number in numbers {
            pendingReplies.removeValue(forKey: number)?.fail(CancellationError())
        }
    }
}
