import Logging
import NIOCore
import NIOHTTP1

/// Closes a connection whose client has not delivered its TLS handshake and a whole first request head within
/// `timeout` of being accepted, however steadily it trickles bytes (which keeps the idle timeout at bay): a
/// slowloris client cannot hold descriptors and memory for long.
///
/// The clock stops at the first complete request head, that is when the client's part of the handshake is done.
/// What the listener does next (judging the upgrade, waiting its turn at the `PasswordVerificationGate`, opening
/// the database) is the server's own time and must never cut a legitimate client off: a deadline that ran until
/// the upgrade was negotiated closed connections unanswered whenever the node itself was slow.
///
/// It sits right behind the HTTP decoder and leaves the pipeline at that first head; bytes behind the head (a
/// client's first WebSocket frames) are then passed on raw, and it must not see them.
final class HandshakeDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart

    private let timeout: TimeAmount
    private let logger: Logger
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount, logger: Logger) {
        self.timeout = timeout
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let timeout = timeout
        let logger = logger
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            logger.info(
                "closing connection that did not complete its handshake in time",
                metadata: [
                    "peer": .string(SyncListener.peerDescription(channel.remoteAddress)),
                    "handshake_timeout_ms": "\(timeout.nanoseconds / 1_000_000)",
                ])
            channel.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        deadline?.cancel()
        deadline = nil
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
