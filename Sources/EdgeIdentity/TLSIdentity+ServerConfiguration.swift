import NIOSSL
import X509

extension TLSIdentity {
    /// Whether a listener asks its clients for certificates.
    package enum ClientAuthentication: Hashable, Sendable {
        /// Clients present no certificate; they authenticate in HTTP (Basic, session) if at all.
        case none
        /// Every client must present a certificate chaining to one of `trustedRoots`; others fail the handshake.
        case required(trustedRoots: [Certificate])
    }

    /// A NIOSSL server configuration presenting this identity.
    package func serverTLSConfiguration(
        clientAuthentication: ClientAuthentication = .none
    ) throws(IdentityError) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: self.certificateChain.map { .certificate($0) },
            privateKey: .privateKey(self.privateKey)
        )
        // Couchbase Lite (mbedTLS) negotiates TLS 1.2 and 1.3; nothing older is worth offering.
        configuration.minimumTLSVersion = .tlsv12
        switch clientAuthentication {
        case .none:
            configuration.certificateVerification = .none
        case .required(let trustedRoots):
            var roots: [NIOSSLCertificate] = []
            for root in trustedRoots {
                do {
                    roots.append(try NIOSSLCertificate(bytes: root.serializeAsPEM().derBytes, format: .der))
                } catch {
                    throw .certificateCorrupt(
                        path: "trusted client root '\(root.subject)'",
                        reason: "\(error)"
                    )
                }
            }
            configuration.trustRoots = .certificates(roots)
            // Clients connect from arbitrary addresses, so there is no name to check their certificates against.
            configuration.certificateVerification = .noHostnameVerification
        }
        return configuration
    }
}
