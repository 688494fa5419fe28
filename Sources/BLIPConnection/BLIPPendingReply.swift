import BLIPCodec
import Synchronization

/// The reply to one request, which its handler may give after it has returned (`setHandler(for:deferringReplies:)`).
///
/// A `rev` is answered only once its revision is durable, and a group commit makes hundreds of them durable at
/// once. Waiting for that in one task per request held about 11 KB of task memory per revision in flight (about
/// 1,000 of them while Couchbase Lite pushes), and woke each task only to send a reply. Instead, the commit hands
/// each outcome to its request's pending reply.
///
/// The first answer counts and later ones are ignored. One dropped without an answer sends the error a failed
/// handler would, so that the peer never waits for a reply that cannot come.
public final class BLIPPendingReply: Sendable {
    private let request: BLIPMessage
    private let connection: BLIPConnection
    private let isAnswered = Atomic(false)

    init(to request: BLIPMessage, on connection: BLIPConnection) {
        var head = request
        // Only the number, flags and profile are needed to answer; the body can go as soon as the handler is done.
        head.body = []
        self.request = head
        self.connection = connection
    }

    /// Sends `reply` (its number and kind are set to answer the request).
    public func send(_ reply: BLIPMessage) {
        answer(.success(reply))
    }

    /// Sends the error reply a handler throwing `error` would get.
    public func fail(_ error: any Error) {
        answer(.failure(error))
    }

    public func answer(_ outcome: Result<BLIPMessage, any Error>) {
        guard !isAnswered.exchange(true, ordering: .acquiringAndReleasing) else { return }
        connection.answer(request, with: outcome)
    }

    deinit {
        if !isAnswered.load(ordering: .acquiring) {
            connection.answer(request, with: .failure(BLIPPendingReplyDropped()))
        }
    }
}

/// What a pending reply dropped without an answer reports; answered as any handler failure is.
struct BLIPPendingReplyDropped: Error, CustomStringConvertible {
    var description: String { "the handler dropped its pending reply without answering" }
}
