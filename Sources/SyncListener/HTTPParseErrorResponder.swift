import Logging
import NIOCore
import NIOHTTP1

/// Answers a request the HTTP decoder could not parse before the connection closes: `431` when its head is
/// over the decoder's limits (80 KiB of header fields), `400` for anything else malformed, and `400` for a
/// WebSocket upgrade request with a body, which NIO's upgrade handler gives up on.
///
/// The listener's pipeline turns NIO's own error handler off (Hummingbird answers the errors it sees itself),
/// but parse errors happen below Hummingbird, where the client would otherwise only see the connection drop
/// and could not tell a refused request from a network fault.
final class HTTPParseErrorResponder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let logger: Logger
    /// Pipelining is off, so a parse error never interrupts a response: requests are read one at a time and the
    /// decoder fails before the next one is handed on. (Whatever is written after an upgrade, raw WebSocket bytes
    /// included, must pass untouched, so this handler does not look at writes.)
    private var answered = false
    /// Set once the answer is on its way: what the client still sends is read and dropped until it stops, or until
    /// `lingerTime`, and only then is the connection closed (see `answer`).
    private var lingering = false

    /// How long a refused connection is drained before it is closed regardless, as nginx's `lingering_time` bounds
    /// its lingering close.
    static let lingerTime: TimeAmount = .seconds(5)
    /// Set while this handler is in the pipeline: a failed upgrade is learnt from the upgrade's future, not from
    /// an event of this handler.
    private var context: ChannelHandlerContext?

    init(logger: Logger) {
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Ends a connection whose upgrade negotiation failed. NIO's upgrade handler fails it, without answering or
    /// closing, when body parts follow an upgrade request whose verdict is still being reached; the connection
    /// then held its socket, and the connection slot of an accepted upgrade, until the idle timeout (the HTTP
    /// fuzz run found it). Runs on the event loop as the future fails, so before the upgrade could still go
    /// ahead once the verdict and the request's end arrive.
    func endFailedUpgrade(_ error: any Error, channel: any Channel) {
        guard let context, case .invalidHTTPOrdering? = error as? HTTPServerUpgradeErrors else {
            channel.close(promise: nil)
            return
        }
        logger.info(
            "refused an upgrade request with a body",
            metadata: ["peer": .string(SyncListener.peerDescription(context.remoteAddress)), "status": "400"])
        answer(context: context, status: .badRequest, message: "A WebSocket upgrade request must not have a body.")
    }

    static func status(for error: HTTPParserError) -> HTTPResponseStatus {
        if case .headerOverflow = error { .requestHeaderFieldsTooLarge } else { .badRequest }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !lingering else { return }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if lingering {
            // The decoder, failed for good, reports every later read as an error: that is the draining.
            return
        }
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        let status = Self.status(for: parserError)
        logger.info(
            "refused malformed HTTP request",
            metadata: [
                "peer": .string(SyncListener.peerDescription(context.remoteAddress)),
                "status": "\(status.code)", "error": "\(parserError)",
            ])
        // The decoder cannot go on after an error, so the connection closes once the answer is out; the error goes no
        // further, since this handler answers it and closes the connection itself.
        answer(context: context, status: status, message: nil)
    }

    /// Writes the answer, once per connection, and closes the connection after it, lingeringly: the sending side
    /// is shut (the client reads the answer, then the end of the stream) while what the client still sends is read
    /// and dropped, until it closes its side or `lingerTime` passes. Closing with unread bytes in the socket would
    /// send a reset, and a client that writes its whole request before reading (Python's `http.client` does) would
    /// see that reset instead of the answer.
    private func answer(context: ChannelHandlerContext, status: HTTPResponseStatus, message: String?) {
        guard !answered else {
            context.close(promise: nil)
            return
        }
        answered = true
        let body = message.map { ByteBuffer(string: $0 + "\n") }
        var headers: HTTPHeaders = ["Connection": "close", "Content-Length": "\(body?.readableBytes ?? 0)"]
        if body != nil { headers.add(name: "Content-Type", value: "text/plain; charset=utf-8") }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        if let body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        lingering = true
        let boundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { result in
            let context = boundContext.value
            guard case .success = result else {
                context.close(promise: nil)
                return
            }
            let halfClosed = context.eventLoop.makePromise(of: Void.self)
            context.close(mode: .output, promise: halfClosed)
            halfClosed.futureResult.whenFailure { _ in boundContext.value.close(promise: nil) }
            context.eventLoop.scheduleTask(in: Self.lingerTime) { boundContext.value.close(promise: nil) }
        }
    }
}
