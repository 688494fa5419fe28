import Logging
import NIOCore
import NIOHTTP1

/// Closes an upgraded connection whose client sent another HTTP request behind its upgrade request, instead of
/// letting the request reach the WebSocket frame decoder.
///
/// Until the 101 a client may send nothing but its upgrade request (RFC 6455 §4.1). When NIO's HTTP decoder has
/// decoded a request behind it anyway, NIO's upgrade handler hands that request's parts on once the upgrade is
/// done, to the frame decoder, which takes only bytes and stops the process on anything else: the HTTP fuzz test
/// found inputs that did this. `NIOAny` has no public way to ask what it holds, so the parts are recognised by
/// reflecting its storage, whose case for anything but bytes is `other`; a test pins that layout.
///
/// Reflection costs a few allocations per read, and such parts can only come while NIO's upgrade handler replays
/// what it buffered: it announces the finished upgrade, replays, ends the replay with a read-complete and leaves
/// the pipeline (with nothing buffered it leaves without one, and then nothing can follow). So the guard leaves at
/// the first read-complete after the announcement, and the connection's frames no longer pass through it.
final class RequestBehindUpgradeGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let logger: Logger
    private var upgradeAnnounced = false

    init(logger: Logger) {
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard Self.holdsHTTPRequestPart(data) else {
            context.fireChannelRead(data)
            return
        }
        logger.debug(
            "closing an upgraded connection: its client sent an HTTP request behind the upgrade request",
            metadata: ["peer": .string(SyncListener.peerDescription(context.remoteAddress))])
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is HTTPServerUpgradeEvents { upgradeAnnounced = true }
        context.fireUserInboundEventTriggered(event)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.fireChannelReadComplete()
        if upgradeAnnounced {
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    static func holdsHTTPRequestPart(_ data: NIOAny) -> Bool {
        for storage in Mirror(reflecting: data).children {
            for held in Mirror(reflecting: storage.value).children where held.label == "other" {
                return held.value is HTTPServerRequestPart
            }
        }
        return false
    }
}
