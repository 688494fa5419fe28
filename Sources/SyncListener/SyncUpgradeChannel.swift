import FlushCoalescing
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket
import WebSocketHeartbeat

/// The listener's server child channel: HTTP/1.1 with a WebSocket upgrade whose refusals carry their own status.
///
/// Hummingbird's WebSocket channel answers every refused upgrade with an empty 400, but Couchbase Lite acts on the
/// status of a refused upgrade: it asks for credentials after a 401 and retries after a 503. Here the listener's
/// verdict travels with the connection, so a refused upgrade is answered with exactly the refusal the listener
/// computed. Requests that are not upgrades go to Hummingbird's normal HTTP handling and the listener's router.
struct SyncUpgradeChannel: ServerChildChannel, HTTPChannelHandler {
    /// What the listener decided about an upgrade request.
    enum Verdict: Sendable {
        /// Upgrade with these extra response headers; the listener has reserved a connection slot for it.
        case accept(SyncListener.AcceptedSync, responseHeaders: HTTPFields)
        case refuse(SyncListener.Refusal)
    }

    /// Judges an upgrade request by its path and headers; `nil` when the path is not a replication endpoint,
    /// so that the HTTP router answers it.
    typealias Judge = @Sendable (_ path: String, _ headers: HTTPFields, _ channel: any Channel) async -> Verdict?
    /// Runs an accepted replication connection until it closes.
    typealias Serve =
        @Sendable (SyncListener.AcceptedSync, NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, Logger) async -> Void

    /// A request that NIO's upgrade handler consumed without upgrading it: every request with an `Upgrade`
    /// header that is not upgraded. It is not passed on to the HTTP handlers, so it is answered here.
    enum ConsumedRequest: Sendable {
        /// The listener refused the upgrade: answered with the refusal as computed.
        case refused(SyncListener.Refusal)
        /// No upgrade was judged (another path, another protocol, no `Sec-WebSocket-Key`): the router answers it.
        case unjudged(HTTPRequestHead)
    }

    enum Negotiated: Sendable {
        case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, SyncListener.AcceptedSync)
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, consumed: ConsumedRequest?)
    }

    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<Negotiated>
        let channel: any Channel
    }

    static let receiveBufferSizes = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 65_536)

    let responder: HTTPChannelHandler.Responder
    let maxFrameSize: Int
    /// Connections that send nothing for this long are closed, during the handshake as well as afterwards.
    let idleTimeout: Duration?
    /// Connections that have not finished their TLS handshake and sent a whole first request head by then are
    /// closed (`HandshakeDeadline`).
    let handshakeTimeout: Duration?
    /// Interval of the pings sent to replication clients; a client that has not answered one when the next is
    /// due is disconnected. `nil` sends none.
    let heartbeat: Duration?
    let judge: Judge
    let serve: Serve

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // A channel keeps its last receive buffer for the next read (NIO's pooled receive allocator), so every
            // idle client holds one for hours: 2 KiB at NIO's default first size. Reads start at 512 bytes here
            // and double as they fill, as with the default.
            try channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: Self.receiveBufferSizes)
            // Written by `shouldUpgrade` (on the event loop), read when the upgrade succeeds or fails.
            let verdict = NIOLoopBoundBox<Verdict?>(nil, eventLoop: channel.eventLoop)
            let headRecorder = NIOLoopBound(UpgradeRequestRecorder(), eventLoop: channel.eventLoop)
            let parseErrorResponder = NIOLoopBound(
                HTTPParseErrorResponder(logger: logger), eventLoop: channel.eventLoop)
            if let idleTimeout {
                try channel.pipeline.syncOperations.addHandler(
                    IdleConnectionCloser(timeout: TimeAmount(idleTimeout), logger: logger))
            }
            let upgrader = NIOTypedWebSocketServerUpgrader<Negotiated>(
                maxFrameSize: maxFrameSize,
                shouldUpgrade: { channel, head in
                    let promise = channel.eventLoop.makePromise(of: Verdict?.self)
                    promise.completeWithTask {
                        await judge(head.uri, HTTPFields(head.headers, splitCookie: false), channel)
                    }
                    return promise.futureResult.map { judged in
                        verdict.value = judged
                        guard case .accept(_, let responseHeaders) = judged else { return nil }
                        return HTTPHeaders(responseHeaders.map { ($0.name.rawName, $0.value) })
                    }
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        _ = channel.pipeline.syncOperations.removeHandler(headRecorder.value)
                        _ = channel.pipeline.syncOperations.removeHandler(parseErrorResponder.value)
                        guard case .accept(let accepted, _) = verdict.value else {
                            throw NIOWebSocketUpgradeError.unsupportedWebSocketTarget
                        }
                        let frameDecoder = try channel.pipeline.syncOperations.handler(
                            type: ByteToMessageHandler<WebSocketFrameDecoder>.self)
                        try channel.pipeline.syncOperations.addHandler(
                            RequestBehindUpgradeGuard(logger: logger), position: .before(frameDecoder))
                        try channel.pipeline.syncOperations.addHandler(
                            UnmaskedClientFrameGuard(logger: logger, violation: accepted.frameViolation),
                            position: .after(frameDecoder))
                        if let closer = try? channel.pipeline.syncOperations.handler(type: IdleConnectionCloser.self) {
                            closer.speaksWebSocket = true
                        }
                        if let heartbeat {
                            try channel.pipeline.syncOperations.addHandler(
                                WebSocketHeartbeatHandler(
                                    interval: TimeAmount(heartbeat), role: .server, logger: logger))
                        }
                        try channel.pipeline.syncOperations.addHandler(FlushCoalescingHandler())
                        let webSocket = try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(
                            wrappingChannelSynchronously: channel,
                            configuration: .init(isOutboundHalfClosureEnabled: true))
                        return .webSocket(webSocket, accepted)
                    }
                }
            )
            let upgradeConfiguration = NIOTypedHTTPServerUpgradeConfiguration<Negotiated>(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        _ = channel.pipeline.syncOperations.removeHandler(headRecorder.value)
                        try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try channel.pipeline.syncOperations.addHandler(HTTPConnectionStateHandler(logger: logger))
                        let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel,
                            configuration: .init(isOutboundHalfClosureEnabled: true))
                        if case .refuse(let refusal) = verdict.value {
                            return .http(http, consumed: .refused(refusal))
                        }
                        if let head = headRecorder.value.upgradeRequestHead {
                            return .http(http, consumed: .unjudged(head))
                        }
                        return .http(http, consumed: nil)
                    }
                }
            )
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration(upgradeConfiguration: upgradeConfiguration)
            // Hummingbird's HTTP handling reads requests one at a time and answers parse errors itself.
            configuration.enablePipelining = false
            configuration.enableErrorHandling = false
            let negotiated = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
                configuration: configuration)
            negotiated.whenFailure { error in
                parseErrorResponder.value.endFailedUpgrade(error, channel: channel)
            }
            let upgradeHandler = try channel.pipeline.syncOperations.handler(
                type: NIOTypedHTTPServerUpgradeHandler<Negotiated>.self)
            try channel.pipeline.syncOperations.addHandler(headRecorder.value, position: .before(upgradeHandler))
            try channel.pipeline.syncOperations.addHandler(
                parseErrorResponder.value, position: .before(headRecorder.value))
            if let handshakeTimeout {
                try channel.pipeline.syncOperations.addHandler(
                    HandshakeDeadline(timeout: TimeAmount(handshakeTimeout), logger: logger),
                    position: .after(parseErrorResponder.value))
            }
            // Closer to the socket than the encoder, so that it sees the encoded 101 head.
            let encoder = try channel.pipeline.syncOperations.handler(type: HTTPResponseEncoder.self)
            try channel.pipeline.syncOperations.addHandler(
                SwitchingProtocolsLayoutHandler(), position: .before(encoder))
            return Value(negotiated: negotiated, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        let negotiated: Negotiated
        do {
            negotiated = try await value.negotiated.get()
        } catch {
            // The client went away mid-handshake, or the pipeline could not be set up.
            logger.debug("HTTP upgrade negotiation failed", metadata: ["error": "\(error)"])
            return
        }
        switch negotiated {
        case .webSocket(let webSocket, let accepted):
            await serve(accepted, webSocket, logger)
        case .http(let http, consumed: nil):
            await handleHTTP(asyncChannel: http, logger: logger)
        case .http(let http, consumed: .refused(let refusal)):
            await writeRefusal(refusal, on: http, logger: logger)
        case .http(let http, consumed: .unjudged(let head)):
            await respond(to: head, on: http, logger: logger)
        }
    }

    /// Answers a refused upgrade with the listener's refusal, then closes the connection.
    ///
    /// NIO's upgrade handler consumes the request it tried to upgrade, so there is no request left for the HTTP
    /// router; the verdict computed for it is written instead (not recomputed: a failed password costs one
    /// scrypt derivation, not two). The client opened this connection to upgrade it, so it is not reused.
    private func writeRefusal(
        _ refusal: SyncListener.Refusal, on http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, logger: Logger
    ) async {
        let body = ByteBuffer(string: refusal.message)
        var headers = refusal.responseHeaders
        headers[.contentLength] = String(body.readableBytes)
        headers[.connection] = "close"
        do {
            try await http.executeThenClose { _, outbound in
                try await outbound.write(
                    contentsOf: [
                        .head(HTTPResponse(status: refusal.status, headerFields: headers)), .body(body), .end(nil),
                    ])
            }
        } catch {
            logger.debug("cannot answer a refused upgrade", metadata: ["error": "\(error)"])
        }
    }
}

extension SyncUpgradeChannel {
    /// Has the router answer a request that the upgrade handler consumed, then closes the connection.
    private func respond(
        to head: HTTPRequestHead, on http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, logger: Logger
    ) async {
        do {
            let request = Request(
                head: try HTTPRequest(head, secure: false, splitCookie: false), body: .init(buffer: ByteBuffer()))
            try await http.executeThenClose { _, outbound in
                try await responder(request, ResponseWriter(outbound: outbound), http.channel)
            }
        } catch {
            logger.debug("cannot answer a request that was not upgraded", metadata: ["error": "\(error)"])
            try? await http.channel.close()
        }
    }
}

/// Remembers the request head with an `Upgrade` header, which the upgrade handler behind it consumes.
///
/// It leaves the pipeline as soon as it has passed that head on: the upgrade handler acts on the first request
/// only, and once it removes the HTTP decoder, bytes that came behind the request (a client's first WebSocket
/// frames, in the same packet) are passed on raw, which a handler of HTTP parts must never see.
final class UpgradeRequestRecorder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart

    private(set) var upgradeRequestHead: HTTPRequestHead?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data), head.headers.contains(name: "upgrade") else {
            context.fireChannelRead(data)
            return
        }
        upgradeRequestHead = head
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
