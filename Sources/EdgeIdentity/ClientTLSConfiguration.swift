import Logging
import NIOSSL
import X509

/// Everything an outgoing TLS connection needs to enforce a ``ServerTrustPolicy``.
///
/// NIOSSL verifies with BoringSSL unless a custom verification callback is installed on the client handler.
/// The callback made here replaces that verification, for every policy, with
/// ``ServerTrustPolicy/evaluate(presentedChain:serverHostname:)``, so one implementation decides
/// and its typed ``TrustError`` can be reported.
///
/// ``tlsConfiguration`` alone, without the callback, stays safe: for `.systemRoots` and `.ca` BoringSSL enforces
/// the same roots and hostname rule; for `.pinned` and `.selfSignedOnly` it trusts no root, so every handshake
/// fails rather than silently accepting any certificate.
public struct ClientTLSConfiguration: Sendable {
    package let policy: ServerTrustPolicy
    /// The configuration for `NIOSSLContext`, including the client certificate if one was given.
    package let tlsConfiguration: TLSConfiguration

    init(policy: ServerTrustPolicy, clientIdentity: TLSIdentity?) throws(TrustError) {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        switch policy {
        case .systemRoots(let checkHostname):
            configuration.trustRoots = .default
            configuration.certificateVerification =
                checkHostname ? .fullVerification : .noHostnameVerification
        case .ca(let roots, let checkHostname):
            var nioRoots: [NIOSSLCertificate] = []
            for (index, root) in roots.enumerated() {
                do {
                    nioRoots.append(
                        try NIOSSLCertificate(bytes: root.serializeAsPEM().derBytes, format: .der)
                    )
                } catch {
                    throw .unparseableCertificate(index: index, reason: "trusted root: \(error)")
                }
            }
            configuration.trustRoots = .certificates(nioRoots)
            configuration.certificateVerification =
                checkHostname ? .fullVerification : .noHostnameVerification
        case .selfSignedOnly, .pinned:
            configuration.trustRoots = .certificates([])
            // NIOSSL's own post-handshake hostname check must stay off: these policies decide without names.
            configuration.certificateVerification = .noHostnameVerification
        }
        if let clientIdentity {
            configuration.certificateChain = clientIdentity.certificateChain.map { .certificate($0) }
            configuration.privateKey = .privateKey(clientIdentity.privateKey)
        }
        self.policy = policy
        self.tlsConfiguration = configuration
    }

    /// A verification callback for `NIOSSLClientHandler(context:serverHostname:customVerificationCallback:)`.
    ///
    /// - Parameters:
    ///   - serverHostname: the host dialled, for policies that check hostnames.
    ///   - onRejection: told why a chain was refused; NIOSSL itself only reports a generic handshake failure.
    package func makeVerificationCallback(
        serverHostname: String?,
        logger: Logger? = nil,
        onRejection: @escaping @Sendable (TrustError) -> Void = { _ in }
    ) -> NIOSSLCustomVerificationCallback {
        let policy = self.policy
        return { presentedCertificates, promise in
            let chain: [Certificate]
            do throws(TrustError) {
                chain = try Self.parse(presentedCertificates)
            } catch {
                logger?.warning("Refused the server's TLS certificate", metadata: ["error": "\(error)"])
                onRejection(error)
                promise.succeed(.failed)
                return
            }
            promise.completeWithTask {
                switch await policy.evaluate(presentedChain: chain, serverHostname: serverHostname) {
                case .success:
                    return .certificateVerified
                case .failure(let error):
                    logger?.warning("Refused the server's TLS certificate", metadata: ["error": "\(error)"])
                    onRejection(error)
                    return .failed
                }
            }
        }
    }

    /// A client handler enforcing the policy, for a connection to `serverHostname`.
    ///
    /// The hostname is sent as SNI unless it is an IP address literal, which SNI does not allow.
    package func makeClientHandler(
        context: NIOSSLContext,
        serverHostname: String?,
        logger: Logger? = nil,
        onRejection: @escaping @Sendable (TrustError) -> Void = { _ in }
    ) throws -> NIOSSLClientHandler {
        let sniHostname = serverHostname.flatMap { ServerTrustPolicy.isIPAddress($0) ? nil : $0 }
        return try NIOSSLClientHandler(
            context: context,
            serverHostname: sniHostname,
            customVerificationCallback: self.makeVerificationCallback(
                serverHostname: serverHostname,
                logger: logger,
                onRejection: onRejection
            )
        )
    }

    private static func parse(_ certificates: [NIOSSLCertificate]) throws(TrustError) -> [Certificate] {
        var parsed: [Certificate] = []
        for (index, certificate) in certificates.enumerated() {
            do {
                parsed.append(try Certificate(derEncoded: certificate.toDERBytes()))
            } catch {
                throw .unparseableCertificate(index: index, reason: String(describing: error))
            }
        }
        return parsed
    }
}

extension ServerTrustPolicy {
    /// The client-side TLS configuration and verification enforcing this policy.
    ///
    /// - Parameter clientIdentity: presented when the server asks for a client certificate.
    package func clientTLSConfiguration(clientIdentity: TLSIdentity? = nil) throws(TrustError)
        -> ClientTLSConfiguration
    {
        try ClientTLSConfiguration(policy: self, clientIdentity: clientIdentity)
    }
}
