import EdgeIdentity
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// Completes a TLS handshake with `127.0.0.1:port` under `policy`, using EdgeIdentity's own
/// verification callback, which `WebSocketClient` cannot take.
package func pinnedHandshake(port: Int, policy: ServerTrustPolicy) async throws {
    let clientConfiguration = try policy.clientTLSConfiguration()
    let context = try NIOSSLContext(configuration: clientConfiguration.tlsConfiguration)
    let group = MultiThreadedEventLoopGroup.singleton
    let done = group.next().makePromise(of: Void.self)
    let channel = try await ClientBootstrap(group: group)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                let sync = channel.pipeline.syncOperations
                try sync.addHandler(
                    clientConfiguration.makeClientHandler(context: context, serverHostname: "127.0.0.1"))
                try sync.addHandler(HandshakeObserver(done: done))
            }
        }
        .connect(host: "127.0.0.1", port: port).get()
    defer { channel.close(promise: nil) }
    try await done.futureResult.get()
}

/// Reports the end of the TLS handshake: success, or the error that ended it.
private final class HandshakeObserver: ChannelInboundHandler, Sendable {
    package typealias InboundIn = ByteBuffer
    package let done: EventLoopPromise<Void>

    package init(done: EventLoopPromise<Void>) {
        self.done = done
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
            done.succeed()
        }
        context.fireUserInboundEventTriggered(event)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        done.fail(error)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        done.fail(ChannelError.ioOnClosedChannel)
    }
}
