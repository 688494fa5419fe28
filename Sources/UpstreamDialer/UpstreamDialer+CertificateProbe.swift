import EdgeIdentity
import NIOCore
import NIOPosix
import NIOSSL

extension UpstreamDialer {
    /// The certificate chain a TLS server at `host:port` presents, leaf first, as DER; for trust on first use.
    ///
    /// The handshake is aborted as soon as the chain is seen, so nothing is sent to a server that is not yet trusted.
    public static func presentedCertificateChain(
        host: String, port: Int, timeout: Duration = .seconds(10),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws(UpstreamDialError) -> [[UInt8]] {
        let target = "\(host.contains(":") ? "[\(host)]" : host):\(port)"
        let chainSeen = eventLoopGroup.next().makePromise(of: [[UInt8]].self)
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw .tlsHandshakeFailed(target: target, reason: "cannot set up TLS: \(error)")
        }
        let sniHostname = ServerTrustPolicy.isIPAddress(host) ? nil : host
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: eventLoopGroup)
                .connectTimeout(TimeAmount(timeout))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = try NIOSSLClientHandler(
                            context: context, serverHostname: sniHostname,
                            customVerificationCallback: { certificates, verdict in
                                chainSeen.succeed(certificates.compactMap { try? $0.toDERBytes() })
                                verdict.succeed(.failed)
                            })
                        try channel.pipeline.syncOperations.addHandler(handler)
                        channel.closeFuture.whenComplete { _ in chainSeen.fail(ChannelError.eof) }
                        channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) { chainSeen.fail(ChannelError.eof) }
                    }
                }
                .connect(host: host, port: port).get()
        } catch {
            chainSeen.fail(error)
            throw .unreachable(target: target, reason: describe(error))
        }
        // Whichever comes first wins: the chain, the server hanging up, or the timeout; later outcomes are no-ops.
        let chain = try? await chainSeen.futureResult.get()
        try? await channel.close()
        guard let chain, !chain.isEmpty else {
            throw .tlsHandshakeFailed(target: target, reason: "the server presented no certificate (is it a TLS port?)")
        }
        return chain
    }
}
