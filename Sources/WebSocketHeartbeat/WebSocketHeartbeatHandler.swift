import Logging
import NIOCore
import NIOWebSocket

/// Pings the peer of a WebSocket every `interval` and closes the connection when the previous ping is still
/// unanswered as the next one falls due, so that a peer that vanished without a FIN or RST (power cut, Wi-Fi
/// out of range, a cable pulled) is noticed within two intervals and its connection and session are freed.
///
/// It works on the event loop below the async channel, not through its writer: a connection to a dead peer
/// soon has a full send buffer, and a writer that waits for room would wait for the ping as well, forever.
/// Pongs pass on unchanged. A pong carrying the payload of the last ping (RFC 6455 §5.5.3) answers it, and so does
/// any other frame: a peer that is sending is reachable, even when its pong waits behind its data or behind a
/// busy moment of its own.
package final class WebSocketHeartbeatHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = WebSocketFrame
    package typealias InboundOut = WebSocketFrame
    package typealias OutboundIn = WebSocketFrame
    package typealias OutboundOut = WebSocketFrame

    /// Whose frames to mask: a client masks what it sends (RFC 6455 §5.3), a server does not.
    package enum Role: Sendable {
        case server
        case client
    }

    private let interval: TimeAmount
    private let role: Role
    private let logger: Logger
    private var timer: RepeatedTask?
    private var pingsSent: UInt64 = 0
    /// The payload of the ping not answered yet; `nil` once its pong arrived.
    private var unansweredPing: [UInt8]?

    package init(interval: TimeAmount, role: Role, logger: Logger) {
        self.interval = interval
        self.role = role
        self.logger = logger
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive {
            start(context: context)
        }
    }

    package func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if let expected = unansweredPing,
            frame.opcode != .pong || Array(frame.unmaskedData.readableBytesView) == expected
        {
            unansweredPing = nil
        }
        context.fireChannelRead(data)
    }

    private func start(context: ChannelHandlerContext) {
        guard timer == nil else { return }
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            bound.value.handler.beat(context: bound.value.context)
        }
    }

    private func stop() {
        timer?.cancel()
        timer = nil
    }

    private func beat(context: ChannelHandlerContext) {
        guard unansweredPing == nil else {
            logger.info(
                "closing WebSocket connection: the peer did not answer a ping within the heartbeat",
                metadata: [
                    "peer": "\(context.remoteAddress.map { "\($0)" } ?? "unknown")",
                    "heartbeat_ms": "\(interval.nanoseconds / 1_000_000)",
                ])
            stop()
            context.close(promise: nil)
            return
        }
        pingsSent &+= 1
        let payload = withUnsafeBytes(of: pingsSent.bigEndian, Array.init)
        unansweredPing = payload
        let frame = WebSocketFrame(
            fin: true, opcode: .ping, maskKey: role == .client ? .random() : nil,
            data: context.channel.allocator.buffer(bytes: payload))
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }
}
