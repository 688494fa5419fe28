import Logging
import NIOCore
import NIOHTTP1

/// Answers a request the HTTP decoder could not parse before the connection closes: `431` when its head is
/// over the decoder's limits (80 KiB of header fields), `400` for anything else malformed.
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
        if !answered {
            let head = HTTPResponseHead(
                version: .http1_1, status: status, headers: ["Connection": "close", "Content-Length": "0"])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                boundContext.value.close(promise: nil)
            }
            answered = true
        } else {
            context.close(promise: nil)
        }
        context.fireErrorCaught(error)
    }
}
