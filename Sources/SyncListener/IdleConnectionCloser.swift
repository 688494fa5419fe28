import Logging
import NIOCore

/// Closes a connection on which nothing has arrived for `timeout`: no request bytes during the handshake, no
/// WebSocket frame afterwards (data or ping). Couchbase Lite pings every 300 s by default, so a live client is
/// never idle for longer than that; a stalled or vanished one stops holding a connection slot.
///
/// It sits right after TLS, so it sees every decrypted byte whatever the pipeline above it becomes.
final class IdleConnectionCloser: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let timeout: TimeAmount
    private let logger: Logger
    /// Read from the event loop's clock (`EventLoop.now`), so that tests can run it on a virtual one.
    private var lastReceived = NIODeadline.uptimeNanoseconds(0)
    private var check: Scheduled<Void>?
    /// Set once the connection was upgraded: an idle close then starts with a WebSocket close frame
    /// (1001, going away), so the client learns why instead of seeing the connection drop.
    var speaksWebSocket = false

    /// A server's close frame (unmasked): 1001 and a short reason.
    static let goingAwayFrame: [UInt8] = {
        let reason = Array("idle timeout".utf8)
        return [0x88, UInt8(2 + reason.count), 0x03, 0xE9] + reason
    }()

    init(timeout: TimeAmount, logger: Logger) {
        self.timeout = timeout
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        lastReceived = context.eventLoop.now
        scheduleCheck(context: context, at: lastReceived + timeout)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastReceived = context.eventLoop.now
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
        context.fireChannelInactive()
    }

    private func scheduleCheck(context: ChannelHandlerContext, at deadline: NIODeadline) {
        // Rescheduled from the last read rather than on every read, so a busy connection costs no timers.
        check = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.check = nil
            let idleUntil = self.lastReceived + self.timeout
            guard idleUntil <= context.eventLoop.now else {
                self.scheduleCheck(context: context, at: idleUntil)
                return
            }
            self.logger.info(
                "closing idle connection",
                metadata: [
                    "peer": .string(SyncListener.peerDescription(context.remoteAddress)),
                    "idle_timeout_ms": "\(self.timeout.nanoseconds / 1_000_000)",
                ])
            guard self.speaksWebSocket else {
                context.close(promise: nil)
                return
            }
            // Written below the WebSocket encoder, which only ever writes whole frames in one turn of
            // the event loop, so the close frame cannot land inside another frame.
            let frame = context.channel.allocator.buffer(bytes: Self.goingAwayFrame)
            let boundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(NIOAny(frame)).whenComplete { _ in
                boundContext.value.close(promise: nil)
            }
        }
    }
}
