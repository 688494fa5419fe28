import NIOCore

/// Turns the flushes that arrive while the event loop has other work queued into one.
///
/// An async channel writer hops to the event loop and flushes once per message it is given, and a BLIP
/// connection writes one WebSocket message per frame: thousands of small `rev`s and replies a second each
/// cost a `writev` and, over TLS, a record of their own. Here a flush is deferred to the end of the event
/// loop's queue of tasks, so the writes already queued behind it go out with it; a write with nothing
/// behind it is flushed as soon as the loop gets to it, so nothing waits for more traffic.
package final class FlushCoalescingHandler: ChannelOutboundHandler {
    package typealias OutboundIn = NIOAny
    package typealias OutboundOut = NIOAny

    private var isFlushScheduled = false

    package init() {}

    package func flush(context: ChannelHandlerContext) {
        guard !isFlushScheduled else { return }
        isFlushScheduled = true
        let scheduled = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            scheduled.value.handler.flushNow(context: scheduled.value.context)
        }
    }

    /// Whatever was written before a close goes out before it, as it would have without this handler.
    package func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        flushNow(context: context)
        context.close(mode: mode, promise: promise)
    }

    private func flushNow(context: ChannelHandlerContext) {
        guard isFlushScheduled else { return }
        isFlushScheduled = false
        context.flush()
    }
}

@available(*, unavailable)
extension FlushCoalescingHandler: Sendable {}
