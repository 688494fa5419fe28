import BLIPCodec
import BLIPConnection
import EdgeGatewayTestSupport
import Hummingbird
import HummingbirdWSClient
import HummingbirdWebSocket
import Logging
import NIOCore
import Synchronization

/// The server side's connections, in the order they were accepted.
actor ServerConnections {
    private var connections: [BLIPConnection] = []

    func add(_ connection: BLIPConnection) {
        connections.append(connection)
    }

    /// The `index`th accepted connection, waiting for it to arrive.
    func connection(at index: Int) async throws -> BLIPConnection {
        try await eventually { await self.connections.count > index }
        return connections[index]
    }
}

struct TimedOut: Error {}

/// Polls `condition` every 5 ms for up to 20 s.
func eventually(_ condition: @Sendable () async -> Bool) async throws {
    for _ in 0..<4_000 {
        if await condition() { return }
        try await Task.sleep(for: .milliseconds(5))
    }
    throw TimedOut()
}

/// A Hummingbird server on 127.0.0.1 (port 0) whose `/blip` route speaks BLIP, and clients for it.
struct LoopbackHarness {
    static let subprotocol = "BLIP_3+CBMobile_3"
    static let webSocketMaxFrameSize = 1 << 20

    let port: Int
    let serverConnections: ServerConnections

    static var logger: Logger {
        var logger = Logger(label: "blip-test")
        logger.logLevel = .critical
        return logger
    }

    /// Runs `body` while the server runs; `configureServer` sets up each accepted connection.
    static func withServer(
        configuration: BLIPConnection.Configuration = .init(),
        configureServer: @escaping @Sendable (BLIPConnection) async -> Void,
        _ body: @Sendable (LoopbackHarness) async throws -> Void
    ) async throws {
        let connections = ServerConnections()
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.ws("/blip") { _, _ in
            .upgrade([.secWebSocketProtocol: subprotocol])
        } onUpgrade: { inbound, outbound, _ in
            let connection = try BLIPConnection(
                subprotocol: subprotocol, configuration: configuration, logger: logger)
            await configureServer(connection)
            await connections.add(connection)
            try await connection.run(inbound: inbound, outbound: outbound)
        }
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: Router(),
            server: .http1WebSocketUpgrade(
                webSocketRouter: router,
                configuration: .init(ws: .init(maxFrameSize: webSocketMaxFrameSize, autoPing: .disabled))
            ),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portSink.yield(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        try await whileRunning(app, logger: logger) {
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw TimedOut() }
            try await body(LoopbackHarness(port: port, serverConnections: connections))
        }
    }

    var url: String { "ws://127.0.0.1:\(port)/blip" }

    var clientConfiguration: WebSocketClientConfiguration {
        WebSocketClientConfiguration(
            maxFrameSize: Self.webSocketMaxFrameSize,
            additionalHeaders: [.secWebSocketProtocol: Self.subprotocol]
        )
    }

    /// Connects a BLIP client, runs `body` with it, then closes it normally.
    func withClient(
        configuration: BLIPConnection.Configuration = .init(),
        configure: @escaping @Sendable (BLIPConnection) async -> Void = { _ in },
        _ body: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws {
        try await WebSocketClient.connect(
            url: url, configuration: clientConfiguration, logger: Self.logger
        ) {
            inbound, outbound, _ in
            let connection = try BLIPConnection(
                subprotocol: Self.subprotocol, configuration: configuration, logger: Self.logger)
            await configure(connection)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await connection.run(inbound: inbound, outbound: outbound) }
                do {
                    try await body(connection)
                } catch {
                    await connection.close()
                    throw error
                }
                await connection.close()
                try await group.waitForAll()
            }
        }
    }

    /// Connects a raw WebSocket client that bypasses BLIP; returns the server's close frame.
    func withRawClient(
        _ body:
            @escaping @Sendable (WebSocketInboundStream, WebSocketOutboundWriter) async throws -> Void
    ) async throws -> WebSocketCloseFrame? {
        try await WebSocketClient.connect(
            url: url, configuration: clientConfiguration, logger: Self.logger
        ) {
            inbound, outbound, _ in
            try await body(inbound, outbound)
        }
    }
}

/// A value shared between test tasks.
final class SharedValue<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) {
        storage = Mutex(value)
    }

    var value: Value { storage.withLock { $0 } }

    func update(_ body: (inout Value) -> Void) {
        storage.withLock { body(&$0) }
    }
}
