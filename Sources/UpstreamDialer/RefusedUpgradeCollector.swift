import Foundation
import NIOCore
import NIOHTTP1

/// A non-101 answer to the upgrade request.
struct RefusedUpgrade: Sendable {
    var status: Int
    var reason: String
    var wwwAuthenticate: String?
    /// The start of the response body, which often says why (Sync Gateway: "I only speak …").
    var body: String
}

/// Reads a refused upgrade response, so the dialer can tell a 401 from a 503, then closes the connection.
final class RefusedUpgradeCollector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    /// Enough of the body for a human-readable reason; the rest is dropped.
    static let bodyLimit = 1024

    private let promise: EventLoopPromise<RefusedUpgrade>
    private var refusal: RefusedUpgrade?
    private var completed = false

    init(promise: EventLoopPromise<RefusedUpgrade>) {
        self.promise = promise
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            refusal = RefusedUpgrade(
                status: Int(head.status.code), reason: head.status.reasonPhrase,
                wwwAuthenticate: head.headers.first(name: "WWW-Authenticate"), body: "")
        case .body(var buffer):
            guard var current = refusal, current.body.utf8.count < Self.bodyLimit else { return }
            let room = Self.bodyLimit - current.body.utf8.count
            current.body += buffer.readString(length: min(room, buffer.readableBytes)) ?? ""
            refusal = current
        case .end:
            finish(context: context, error: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(context: context, error: ChannelError.eof)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(context: context, error: error)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish(context: context, error: ChannelError.inappropriateOperationForState)
    }

    private func finish(context: ChannelHandlerContext, error: (any Error)?) {
        guard !completed else { return }
        completed = true
        if var refusal {
            refusal.body = refusal.body.trimmingCharacters(in: .whitespacesAndNewlines)
            promise.succeed(refusal)
        } else {
            promise.fail(error ?? ChannelError.eof)
        }
        context.close(promise: nil)
    }
}
