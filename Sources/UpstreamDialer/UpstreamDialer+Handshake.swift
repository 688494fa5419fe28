import ConnectionFailure
import EdgeIdentity
import FlushCoalescing
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import WebSocketHeartbeat

extension UpstreamDialer {
    enum UpgradeOutcome: Sendable {
        case upgraded(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, subprotocol: String?)
        case refused(EventLoopFuture<RefusedUpgrade>)
    }

    /// What the handshake learned before it failed; the TLS callback and the timeout write, the dialer reads.
    final class HandshakeObservations: Sendable {
        let trustRejection = NIOLockedValueBox<TrustError?>(nil)
        let timedOut = NIOLockedValueBox(false)
    }

    func openChannel() async throws(UpstreamDialError) -> (
        any Channel, EventLoopFuture<UpgradeOutcome>, HandshakeObservations
    ) {
        let observations = HandshakeObservations()
        let tls: (ClientTLSConfiguration, NIOSSLContext)?
        if target.isSecure {
            do {
                let configuration =
                    try options.tls
                    ?? ServerTrustPolicy.systemRoots(checkHostname: true)
                    .clientTLSConfiguration()
                tls = (configuration, try NIOSSLContext(configuration: configuration.tlsConfiguration))
            } catch {
                throw .tlsHandshakeFailed(target: target.description, reason: "cannot set up TLS: \(error)")
            }
        } else {
            tls = nil
        }
        let bootstrap = ClientBootstrap(group: eventLoopGroup)
            .connectTimeout(TimeAmount(options.handshakeTimeout))
        do {
            let (channel, upgrade) = try await bootstrap.connect(host: target.host, port: target.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    (channel, try self.configurePipeline(of: channel, tls: tls, observations: observations))
                }
            }
            return (channel, upgrade, observations)
        } catch {
            throw .unreachable(target: target.description, reason: ConnectionFailure.describe(error))
        }
    }

    private func configurePipeline(
        of channel: any Channel,
        tls: (ClientTLSConfiguration, NIOSSLContext)?,
        observations: HandshakeObservations
    ) throws -> EventLoopFuture<UpgradeOutcome> {
        if let (configuration, context) = tls {
            let handler = try configuration.makeClientHandler(
                context: context, serverHostname: target.host, logger: logger,
                onRejection: { error in observations.trustRejection.withLockedValue { $0 = error } }
            )
            try channel.pipeline.syncOperations.addHandler(handler)
        }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: target.hostHeader)
        for header in options.headers {
            headers.add(name: header.name, value: header.value)
        }
        headers.add(name: "Sec-WebSocket-Protocol", value: options.subprotocols.joined(separator: ","))
        let requestHead = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.path, headers: headers)
        let upgrader = NIOTypedWebSocketClientUpgrader<UpgradeOutcome>(
            maxFrameSize: options.maxFrameSize,
            upgradePipelineHandler: { channel, response in
                channel.eventLoop.makeCompletedFuture {
                    if let heartbeat = options.heartbeat {
                        try channel.pipeline.syncOperations.addHandler(
                            WebSocketHeartbeatHandler(interval: TimeAmount(heartbeat), role: .client, logger: logger))
                    }
                    try channel.pipeline.syncOperations.addHandler(FlushCoalescingHandler())
                    return .upgraded(
                        try NIOAsyncChannel(wrappingChannelSynchronously: channel),
                        subprotocol: response.headers.first(name: "Sec-WebSocket-Protocol")
                    )
                }
            }
        )
        let upgradeConfiguration = NIOTypedHTTPClientUpgradeConfiguration<UpgradeOutcome>(
            upgradeRequestHead: requestHead,
            upgraders: [upgrader],
            notUpgradingCompletionHandler: { channel in
                // The refused response head is passed on once this future completes, so the collector must
                // be in place first.
                channel.eventLoop.makeCompletedFuture {
                    let promise = channel.eventLoop.makePromise(of: RefusedUpgrade.self)
                    try channel.pipeline.syncOperations.addHandler(RefusedUpgradeCollector(promise: promise))
                    return .refused(promise.futureResult)
                }
            }
        )
        var pipelineConfiguration = NIOUpgradableHTTPClientPipelineConfiguration(
            upgradeConfiguration: upgradeConfiguration)
        pipelineConfiguration.leftOverBytesStrategy = .forwardBytes
        let timeout = channel.eventLoop.scheduleTask(in: TimeAmount(options.handshakeTimeout)) {
            observations.timedOut.withLockedValue { $0 = true }
            channel.close(promise: nil)
        }
        let upgraded = try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
            configuration: pipelineConfiguration)
        // Closer to the socket than the upgrade handler, so that it sees the request after NIO's headers are in.
        let upgradeHandler = try channel.pipeline.syncOperations.handler(
            type: NIOTypedHTTPClientUpgradeHandler<UpgradeOutcome>.self)
        try channel.pipeline.syncOperations.addHandler(UpgradeRequestLayoutHandler(), position: .before(upgradeHandler))
        upgraded.whenComplete { _ in timeout.cancel() }
        return upgraded
    }

    func awaitUpgrade(
        _ upgrade: EventLoopFuture<UpgradeOutcome>,
        observations: HandshakeObservations
    ) async throws(UpstreamDialError) -> (NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, String) {
        let outcome: UpgradeOutcome
        do {
            outcome = try await upgrade.get()
        } catch {
            throw classifyHandshakeFailure(error, observations: observations)
        }
        switch outcome {
        case .upgraded(let channel, let chosen):
            let chosen = chosen?.trimmingCharacters(in: .whitespaces)
            guard let chosen, options.subprotocols.contains(chosen) else {
                try? await channel.channel.close()
                throw .subprotocolRejected(offered: options.subprotocols, chosen: chosen)
            }
            return (channel, chosen)
        case .refused(let response):
            do {
                let refusal = try await response.get()
                throw UpstreamDialError.upgradeRefused(
                    target: target.description, status: refusal.status, reason: refusal.reason,
                    wwwAuthenticate: refusal.wwwAuthenticate, body: refusal.body)
            } catch let error as UpstreamDialError {
                throw error
            } catch {
                throw classifyHandshakeFailure(error, observations: observations)
            }
        }
    }

    private func classifyHandshakeFailure(
        _ error: any Error, observations: HandshakeObservations
    ) -> UpstreamDialError {
        if let rejection = observations.trustRejection.withLockedValue({ $0 }) {
            return .serverCertificateRejected(rejection)
        }
        if observations.timedOut.withLockedValue({ $0 }) {
            return .handshakeIncomplete(
                target: target.description, reason: "no complete answer within \(options.handshakeTimeout)")
        }
        if let sslError = error as? NIOSSLError {
            if case .uncleanShutdown = sslError {
                return .handshakeIncomplete(target: target.description, reason: "the connection was cut")
            }
            return .tlsHandshakeFailed(target: target.description, reason: "\(sslError)")
        }
        if error is BoringSSLError {
            return .tlsHandshakeFailed(target: target.description, reason: "\(error)")
        }
        // NIO's upgrade handler fails this way when the connection goes before a response head arrives.
        if let channelError = error as? ChannelError,
            channelError == .inappropriateOperationForState || channelError == .eof
        {
            return .handshakeIncomplete(
                target: target.description, reason: "the upstream closed the connection without answering")
        }
        return .handshakeIncomplete(target: target.description, reason: ConnectionFailure.describe(error))
    }
}
