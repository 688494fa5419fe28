import EdgeGatewayPairingKit
import EdgeIdentity
import EdgeReplication
import Logging
import PairingURI

extension ActiveReplicator {
    /// Finds a paired gateway before each connection as a device does, with EdgeGatewayPairingKit: its payload's
    /// addresses in order, the first whose certificate has the payload's digests; that certificate is pinned.
    ///
    /// - Parameter clientIdentity: presented when the paired gateway asks for a client certificate.
    package static func pairedEndpointResolver(
        _ payload: PairingPayload, clientIdentity: TLSIdentity? = nil, logger: Logger
    ) -> EndpointResolver {
        {
            let gateway = try await PairedGateway.resolve(payload)
            logger.debug(
                "paired gateway found",
                metadata: ["endpoint": "\(gateway.endpoint.absoluteString)", "node": "\(payload.nodeName)"])
            return Endpoint(
                remoteURL: gateway.endpoint.absoluteString,
                tls: try ServerTrustPolicy.pinned(certificateDER: gateway.certificateDER)
                    .clientTLSConfiguration(clientIdentity: clientIdentity))
        }
    }
}
