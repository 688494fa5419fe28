import Logging
import NIOCore
import NIOHTTP1

/// Answers a request the HTTP decoder could not parse before the connection closes: `431` when its head is
/// over the decoder's limits (80 KiB of header fields), `400` for anything else malformed.
///
/// The listener's pipeline turns NIO's own error handler off (Hummingbird answers the errors it sees itself),
/// but parse errors happen below Hummingbird, where the client would otherwise only see the connection drop
/// and could not tell a refused request from a network fault.
final class HTTPParseErrorResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let logger: Logger
    /// A response already under way cannot be followed by another one; the connection is then only closed.
    private var responseUnderway = false

    init(logger: Logger) {
        self.logger = logger
    }

    static func status(for error: HTTPParserError) -> HTTPResponseStatus {
        if case .headerOverflow = error { .requestHeaderFieldsTooLarge } else { .badRequest }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        let status = Self.status(for: parserError)
        logger.info(
            "refused malformed HTTP request",
            metadata: [
                "peer": "\(context.remoteAddress.map { "\($0)" } ?? "unknown")",
                "status": "\(status.code)", "error": "\(parserError)",
            ])
        // The decoder cannot go on after an error, so the connection closes once the answer is out.
        let boundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        if !responseUnderway {
            let head = HTTPResponseHead(
                version: .http1_1, status: status, headers: ["Connection": "close", "Content-Length": "0"])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                boundContext.value.close(promise: nil)
            }
            responseUnderway = true
        } else {
            context.close(promise: nil)
        }
        context.fireErrorCaught(error)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.code >= 200: responseUnderway = true
        case .end: responseUnderway = false
        case .head, .body: break
        }
        context.write(data, promise: promise)
    }
}
