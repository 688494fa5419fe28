import ConnectionFailure
import EdgeIdentity
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// Opens a TLS connection far enough to see the certificate chain a server presents, and completes the handshake
/// only when the caller accepts that chain: the one implementation behind trust on first use (`trust add
/// host:port`) and pairing.
///
/// No application data is ever sent: the connection is closed as soon as the outcome is known.
public enum CertificateProbe {
    /// The chain the server at `host:port` presents, leaf first, as DER.
    ///
    /// - Parameter accept: decides on the chain. When it returns `true`, the handshake is completed before this
    ///   returns, which proves the server holds the leaf's private key; when `false`, the handshake is aborted
    ///   at once.
    public static func presentedCertificateChain(
        host: String,
        port: Int,
        timeout: Duration = .seconds(10),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        accept: @escaping @Sendable ([[UInt8]]) -> Bool = { _ in false }
    ) async throws(CertificateProbeError) -> [[UInt8]] {
        let target = Self.endpoint(host: host, port: port)
        let eventLoop = eventLoopGroup.next()
        let chainSeen = eventLoop.makePromise(of: (chain: [[UInt8]], accepted: Bool).self)
        let handshakeDone = eventLoop.makePromise(of: Void.self)
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        // The callback below is the whole trust decision; BoringSSL's own hostname check must not add to it.
        configuration.certificateVerification = .noHostnameVerification
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw .tlsHandshakeFailed(target: target, reason: "cannot set up TLS: \(error)")
        }
        let sniHostname = ServerTrustPolicy.isIPAddress(host) ? nil : host
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: eventLoop)
                .connectTimeout(TimeAmount(timeout))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = try NIOSSLClientHandler(
                            context: context, serverHostname: sniHostname,
                            customVerificationCallback: { certificates, verdict in
                                let chain = certificates.compactMap { try? $0.toDERBytes() }
                                let accepted = !chain.isEmpty && accept(chain)
                                chainSeen.succeed((chain, accepted))
                                verdict.succeed(accepted ? .certificateVerified : .failed)
                            })
                        try channel.pipeline.syncOperations.addHandler(handler)
                        try channel.pipeline.syncOperations.addHandler(HandshakeOutcomeHandler(done: handshakeDone))
                        channel.closeFuture.whenComplete { _ in
                            chainSeen.fail(ChannelError.eof)
                            handshakeDone.fail(ChannelError.eof)
                        }
                        channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
                            chainSeen.fail(ChannelError.eof)
                            handshakeDone.fail(ProbeTimeout(timeout: timeout))
                        }
                    }
                }
                .connect(host: host, port: port).get()
        } catch {
            chainSeen.fail(error)
            handshakeDone.fail(error)
            throw .unreachable(target: target, reason: ConnectionFailure.describe(error))
        }
        defer { channel.close(promise: nil) }
        // Whichever comes first wins: the chain, the server hanging up, or the timeout; later outcomes are no-ops.
        guard let seen = try? await chainSeen.futureResult.get(), !seen.chain.isEmpty else {
            throw .tlsHandshakeFailed(
                target: target, reason: "the server presented no certificate (is it a TLS port?)")
        }
        guard seen.accepted else { return seen.chain }
        do {
            try await handshakeDone.futureResult.get()
        } catch {
            throw .tlsHandshakeFailed(target: target, reason: ConnectionFailure.describe(error))
        }
        return seen.chain
    }

    /// `host:port`, an IPv6 literal in brackets.
    static func endpoint(host: String, port: Int) -> String {
        "\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }
}

struct ProbeTimeout: Error, CustomStringConvertible {
    let timeout: Duration
    var description: String { "the TLS handshake did not finish within \(timeout)" }
}

/// Reports whether the TLS handshake completed, failed, or was cut short by the server closing.
private final class HandshakeOutcomeHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    let done: EventLoopPromise<Void>

    init(done: EventLoopPromise<Void>) {
        self.done = done
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            done.succeed(())
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        done.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        done.fail(ChannelError.eof)
        context.fireChannelInactive()
    }
}
