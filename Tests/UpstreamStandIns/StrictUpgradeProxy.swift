import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// The front door of a LiteCore-based passive peer (Couchbase Edge Server, the Couchbase Lite EE
/// `URLEndpointListener`), in front of a real listener that does the replicating.
///
/// LiteCore's REST server takes a request as a WebSocket upgrade only when its `Connection` value is exactly
/// `Upgrade` (`rq->header("Connection") == "Upgrade"_sl` in `REST/Server.cc`); anything else is served as a plain
/// GET of `/<db>/_blipsync`, which it answers with 405 Method Not Allowed. This proxy applies that rule, and also
/// requires `Upgrade: websocket` byte for byte, then relays the connection unchanged to the listener behind it.
/// It records every request head it reads, so tests can compare them with Couchbase Lite's.
package final class StrictUpgradeProxy: Sendable {
    /// How the proxy meets clients and reaches the listener behind it.
    package struct Options: Sendable {
        /// Terminates TLS from clients with this context; plain TCP when `nil`.
        package var frontTLS: NIOSSLContext?
        /// Reaches the listener over TLS, trusting whatever certificate it presents: the proxy stands in for the
        /// server the client trusts, the listener is only its storage engine.
        package var backendTLS: Bool

        package init(frontTLS: NIOSSLContext? = nil, backendTLS: Bool = false) {
            self.frontTLS = frontTLS
            self.backendTLS = backendTLS
        }
    }

    /// The 405 body, as LiteCore's REST server writes an error.
    package static let refusalBody = #"{"error":"Method Not Allowed","status":405}"#

    private let recordedHeads = NIOLockedValueBox<[String]>([])
    private let refusalCount = NIOLockedValueBox(0)

    /// Every request head read so far (request line and headers, without the final blank line), in arrival order.
    package var requestHeads: [String] { recordedHeads.withLockedValue { $0 } }
    /// How many requests were refused with 405.
    package var refusals: Int { refusalCount.withLockedValue { $0 } }

    private init() {}

    /// Runs `body` while the proxy listens on a free loopback port and relays to `127.0.0.1:backendPort`.
    package static func run<Result: Sendable>(
        backendPort: Int, options: Options = Options(),
        _ body: (_ port: Int, _ proxy: StrictUpgradeProxy) async throws -> Result
    ) async throws -> Result {
        let proxy = StrictUpgradeProxy()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    if let frontTLS = options.frontTLS {
                        try child.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: frontTLS))
                    }
                    try child.pipeline.syncOperations.addHandler(
                        StrictFrontHandler(proxy: proxy, backendPort: backendPort, backendTLS: options.backendTLS))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let result: Result
        do {
            guard let port = channel.localAddress?.port else { throw ProxyError.notBound }
            result = try await body(port, proxy)
        } catch {
            try? await channel.close()
            throw error
        }
        try await channel.close()
        return result
    }

    package enum ProxyError: Error {
        case notBound
    }

    /// LiteCore's rule, as a pure function of a request head: `nil` when it upgrades, else why it does not.
    package static func refusalReason(requestHead: String) -> String? {
        let lines = requestHead.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard let requestLine = lines.first, requestLine.hasPrefix("GET ") else { return "not a GET" }
        func values(_ name: String) -> [Substring] {
            lines.dropFirst().compactMap { line in
                guard let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == name.lowercased() else {
                    return nil
                }
                var value = line[line.index(after: colon)...]
                while value.first == " " || value.first == "\t" { value = value.dropFirst() }
                while value.last == " " || value.last == "\t" { value = value.dropLast() }
                return value
            }
        }
        guard values("Connection") == ["Upgrade"] else {
            return "Connection is \(values("Connection")), not exactly \"Upgrade\""
        }
        guard values("Upgrade") == ["websocket"] else {
            return "Upgrade is \(values("Upgrade")), not exactly \"websocket\""
        }
        return nil
    }

    fileprivate func record(_ head: String) {
        recordedHeads.withLockedValue { $0.append(head) }
    }

    fileprivate func countRefusal() {
        refusalCount.withLockedValue { $0 += 1 }
    }
}

/// Reads the request head, refuses it or connects to the listener, then hands the connection to a relay.
private final class StrictFrontHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private static let maxHeadSize = 16 * 1024

    private let proxy: StrictUpgradeProxy
    private let backendPort: Int
    private let backendTLS: Bool
    private var pending = ByteBuffer()
    private var judged = false

    init(proxy: StrictUpgradeProxy, backendPort: Int, backendTLS: Bool) {
        self.proxy = proxy
        self.backendPort = backendPort
        self.backendTLS = backendTLS
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        pending.writeBuffer(&bytes)
        guard !judged else { return }
        let text = String(buffer: pending)
        guard let headEnd = text.range(of: "\r\n\r\n") else {
            if pending.readableBytes > Self.maxHeadSize { context.close(promise: nil) }
            return
        }
        judged = true
        let head = String(text[..<headEnd.lowerBound])
        proxy.record(head)
        if StrictUpgradeProxy.refusalReason(requestHead: head) != nil {
            proxy.countRefusal()
            let body = StrictUpgradeProxy.refusalBody
            let response =
                "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: response))).whenComplete { _ in
                context.close(promise: nil)
            }
            return
        }
        connectBackend(context: context)
    }

    private func connectBackend(context: ChannelHandlerContext) {
        let frontRelay = RelayHandler()
        let backendRelay = RelayHandler()
        let backendTLS = backendTLS
        let connected = ClientBootstrap(group: context.eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if backendTLS {
                        var configuration = TLSConfiguration.makeClientConfiguration()
                        configuration.certificateVerification = .none
                        let tls = try NIOSSLContext(configuration: configuration)
                        try channel.pipeline.syncOperations.addHandler(
                            try NIOSSLClientHandler(context: tls, serverHostname: nil))
                    }
                    try channel.pipeline.syncOperations.addHandler(backendRelay)
                }
            }
            .connect(host: "127.0.0.1", port: backendPort)
        let loopBound = NIOLoopBound((self, context, frontRelay, backendRelay), eventLoop: context.eventLoop)
        connected.whenComplete { result in
            let (handler, context, frontRelay, backendRelay) = loopBound.value
            switch result {
            case .failure:
                context.close(promise: nil)
            case .success(let backend):
                frontRelay.pair(with: backendRelay)
                do {
                    try context.pipeline.syncOperations.addHandler(frontRelay, position: .after(handler))
                } catch {
                    backend.close(promise: nil)
                    context.close(promise: nil)
                    return
                }
                backend.writeAndFlush(handler.pending, promise: nil)
                handler.pending.clear()
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            }
        }
    }
}

/// One end of a byte relay between two channels on the same event loop.
private final class RelayHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var partner: RelayHandler?
    private var context: ChannelHandlerContext?

    func pair(with other: RelayHandler) {
        partner = other
        other.partner = self
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner?.context?.write(data, promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        partner?.context?.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner?.context?.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
