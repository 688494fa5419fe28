import Logging
import NIOCore
import NIOWebSocket

/// Closes an upgraded connection with 1002 (protocol error) on the first WebSocket frame its client sent unmasked.
///
/// RFC 6455 §5.1: a server must close the connection on an unmasked frame from a client, since masking is what
/// keeps a client's bytes from being read as another protocol by intermediaries on the way. NIO's frame decoder
/// accepts either and only reports the masking key, and the WebSocket handler above it unmasks whatever arrives,
/// so this check sits right after the decoder. Couchbase Lite masks every frame it sends (spec §1.6).
///
/// Being right after the decoder, it also sees the decoder's refusals (a control frame over 125 bytes or
/// fragmented, a frame over the size limit) on their way to NIO's handler that closes with 1002 or 1009. Both kinds
/// are noted in `violation`, so that the session, which sees only a socket that ended without a close frame, counts
/// a protocol error rather than a network one.
final class UnmaskedClientFrameGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let logger: Logger
    private let violation: SyncListener.FrameViolation
    /// Set at the first unmasked frame; everything after it is dropped while the close goes out.
    private var isClosing = false

    init(logger: Logger, violation: SyncListener.FrameViolation) {
        self.logger = logger
        self.violation = violation
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? NIOWebSocketError {
            violation.record()
            logger.warning(
                "closing WebSocket connection: the client sent a frame the WebSocket decoder refused",
                metadata: [
                    "peer": .string(SyncListener.peerDescription(context.remoteAddress)),
                    "ws.error": "\(error)",
                ])
        }
        context.fireErrorCaught(error)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isClosing else { return }
        let frame = unwrapInboundIn(data)
        guard frame.maskKey == nil else {
            context.fireChannelRead(data)
            return
        }
        isClosing = true
        violation.record()
        logger.warning(
            "closing WebSocket connection: the client sent an unmasked frame (RFC 6455 §5.1)",
            metadata: [
                "peer": .string(SyncListener.peerDescription(context.remoteAddress)),
                "ws.opcode": "\(frame.opcode)", "ws.close_code": "1002",
            ])
        var reason = context.channel.allocator.buffer(capacity: 2 + Self.closeReason.utf8.count)
        reason.write(webSocketErrorCode: .protocolError)
        reason.writeString(Self.closeReason)
        // A server's frames are never masked. Written below the handler that serves the connection, in one turn
        // of the event loop, so it cannot land inside another frame.
        let close = WebSocketFrame(fin: true, opcode: .connectionClose, data: reason)
        let boundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(close)).whenComplete { _ in
            boundContext.value.close(promise: nil)
        }
    }

    static let closeReason = "unmasked client frame"
}
