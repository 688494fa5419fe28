import EdgeIdentity
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
@_spi(WSInternal) import WSCore

/// Opens the client side of a replication WebSocket to an upstream, as Couchbase Lite's replicator does
/// (spec §1.2–§1.6): the HTTP upgrade with our subprotocol offer and credentials, TLS under a
/// ``ServerTrustPolicy`` (CA, self-signed-only or pinned), a check of the subprotocol the server chose, and
/// WebSocket pings as the heartbeat.
///
/// Hummingbird's WebSocket client hides the upgrade response and takes only a plain TLS configuration, so it
/// can neither verify the echoed subprotocol, nor report why a handshake was refused (which decides whether
/// Couchbase Lite retries), nor enforce a pin. This dialer builds the same NIO pipeline itself and reuses
/// WSCore's frame handling for the open socket.
public struct UpstreamDialer: Sendable {
    public struct Options: Sendable {
        /// `Sec-WebSocket-Protocol` entries, most preferred first.
        package var subprotocols: [String]
        /// Extra request headers, e.g. `Authorization` and `Cookie`, sent on the upgrade request.
        package var headers: [(name: String, value: String)]
        /// Required for `wss://`: how the server's certificate is trusted, and our client certificate if any.
        package var tls: ClientTLSConfiguration?
        /// Interval of WebSocket pings; a peer that has not answered a ping when the next one is due is taken as
        /// gone, so a dead peer is noticed within two heartbeats. `nil` sends no pings.
        package var heartbeat: Duration?
        /// Limit for the TCP connection, the TLS handshake and the HTTP upgrade together.
        package var handshakeTimeout: Duration
        /// The largest incoming WebSocket frame. LiteCore refuses more than 1 MiB (spec §1.6).
        package var maxFrameSize: Int

        public init(
            subprotocols: [String],
            headers: [(name: String, value: String)] = [],
            tls: ClientTLSConfiguration? = nil,
            heartbeat: Duration? = nil,
            handshakeTimeout: Duration = .seconds(30),
            maxFrameSize: Int = 1 << 20
        ) {
            self.subprotocols = subprotocols
            self.headers = headers
            self.tls = tls
            self.heartbeat = heartbeat
            self.handshakeTimeout = handshakeTimeout
            self.maxFrameSize = maxFrameSize
        }
    }

    /// What the open socket's handler is given.
    public struct Session: Sendable {
        /// The subprotocol the server chose, one of those offered.
        public let subprotocol: String
        public let inbound: WebSocketInboundStream
        public let outbound: WebSocketOutboundWriter
    }

    public let target: UpstreamTarget
    public let options: Options
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger

    public init(
        target: UpstreamTarget,
        options: Options,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) {
        self.target = target
        self.options = options
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    /// Connects, upgrades, runs `body` on the open WebSocket and closes it when `body` returns.
    ///
    /// Failures before the socket opens are thrown as ``UpstreamDialError``; what `body` throws is rethrown.
    /// - Returns: the close frame the server sent, if any.
    @discardableResult
    public func run(_ body: @escaping @Sendable (Session) async throws -> Void) async throws
        -> WebSocketCloseFrame?
    {
        let (channel, upgrade, observations) = try await openChannel()
        let webSocketChannel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>
        let subprotocol: String
        do {
            (webSocketChannel, subprotocol) = try await awaitUpgrade(upgrade, observations: observations)
        } catch {
            try? await channel.close()
            throw error
        }
        logger.debug("WebSocket open", metadata: ["upstream": "\(target)", "subprotocol": "\(subprotocol)"])
        return try await WebSocketHandler.handle(
            type: .client,
            configuration: .init(
                extensions: [],
                // The heartbeat is WebSocketHeartbeatHandler's, below this writer: see there why.
                autoPing: .disabled,
                validateUTF8: false,
                maxFrameSize: options.maxFrameSize
            ),
            asyncChannel: webSocketChannel,
            context: DialContext(logger: logger),
            handler: { inbound, outbound, _ in
                try await body(Session(subprotocol: subprotocol, inbound: inbound, outbound: outbound))
            }
        )
    }
}

struct DialContext: WebSocketContext {
    let logger: Logger
}
