import EdgeIdentity
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// A TLS echo server on 127.0.0.1 with an ephemeral port, for handshakes over real sockets.
struct TLSEchoServer {
    let channel: any Channel
    var port: Int { self.channel.localAddress!.port! }

    static func start(configuration: TLSConfiguration) async throws -> TLSEchoServer {
        let context = try NIOSSLContext(configuration: configuration)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.addHandler(EchoHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return TLSEchoServer(channel: channel)
    }

    func stop() async throws {
        try await self.channel.close()
    }

    /// Runs `body` with a started server, stopping it afterwards whatever happens.
    static func with<Result>(
        configuration: TLSConfiguration,
        _ body: (TLSEchoServer) async throws -> Result
    ) async throws -> Result {
        let server = try await Self.start(configuration: configuration)
        do {
            let result = try await body(server)
            try await server.stop()
            return result
        } catch {
            try? await server.stop()
            throw error
        }
    }
}

/// The outcome of one client connection: the echoed text, or why it failed.
struct EchoAttempt {
    let reply: Result<String, any Error>
    /// What the trust policy said, when it refused the server.
    let trustError: TrustError?

    var succeeded: Bool {
        if case .success = self.reply { return true }
        return false
    }
}

enum TLSEchoClient {
    /// Connects to `port` on 127.0.0.1, enforcing `clientTLS` for `serverHostname`, sends a message and waits
    /// for its echo, or for the connection to fail.
    static func exchange(
        port: Int,
        clientTLS: ClientTLSConfiguration,
        serverHostname: String?
    ) async throws -> EchoAttempt {
        let context = try NIOSSLContext(configuration: clientTLS.tlsConfiguration)
        let rejection = RejectionBox()
        let reply = try await Self.exchange(port: port) {
            try clientTLS.makeClientHandler(
                context: context,
                serverHostname: serverHostname,
                onRejection: { rejection.record($0) }
            )
        }
        return EchoAttempt(reply: reply, trustError: rejection.value)
    }

    /// Like `exchange(port:clientTLS:serverHostname:)` but with NIOSSL's own verification only.
    static func exchangeWithoutPolicyCallback(port: Int, context: NIOSSLContext) async throws -> Bool {
        let reply = try await Self.exchange(port: port) {
            try NIOSSLClientHandler(context: context, serverHostname: nil)
        }
        if case .success = reply { return true }
        return false
    }

    private static func exchange(
        port: Int,
        makeTLSHandler: @escaping @Sendable () throws -> NIOSSLClientHandler
    ) async throws -> Result<String, any Error> {
        let message = "ping"
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let replyPromise = eventLoop.makePromise(of: String.self)
        let channel = try await ClientBootstrap(group: eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(makeTLSHandler())
                    try channel.pipeline.syncOperations.addHandler(
                        ReplyCollector(expectedBytes: message.utf8.count, promise: replyPromise)
                    )
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        channel.writeAndFlush(ByteBuffer(string: message), promise: nil)
        let reply: Result<String, any Error>
        do {
            reply = .success(try await replyPromise.futureResult.get())
        } catch {
            reply = .failure(error)
        }
        try? await channel.close()
        return reply
    }
}

private final class EchoHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.writeAndFlush(data, promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// Completes the promise with the first `expectedBytes` bytes read, or fails it when the connection errors or
/// closes first.
private final class ReplyCollector: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let expectedBytes: Int
    private let promise: EventLoopPromise<String>
    private var received = ByteBuffer()
    private var completed = false

    init(expectedBytes: Int, promise: EventLoopPromise<String>) {
        self.expectedBytes = expectedBytes
        self.promise = promise
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = self.unwrapInboundIn(data)
        self.received.writeBuffer(&bytes)
        if self.received.readableBytes >= self.expectedBytes {
            self.complete(.success(String(buffer: self.received)))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.complete(.failure(error))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.complete(.failure(ConnectionClosedBeforeReply()))
    }

    private func complete(_ result: Result<String, any Error>) {
        guard !self.completed else { return }
        self.completed = true
        self.promise.completeWith(result)
    }
}

struct ConnectionClosedBeforeReply: Error {}

/// Holds the trust error reported by the verification callback, which runs on an event loop.
private final class RejectionBox: @unchecked Sendable {
    private let lock = NSLock()
    private var error: TrustError?

    func record(_ error: TrustError) {
        self.lock.withLock { self.error = error }
    }

    var value: TrustError? {
        self.lock.withLock { self.error }
    }
}
