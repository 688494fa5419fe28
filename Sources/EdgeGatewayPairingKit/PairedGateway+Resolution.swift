import EdgeIdentity
import NIOCore
import NIOPosix
import PairingURI

extension PairedGateway {
    /// Finds the gateway a scanned pairing payload describes, as the variant taking a parsed payload does.
    public static func resolve(
        scannedPayload text: String,
        timeout: Duration = .seconds(10),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws(PairingResolutionError) -> PairedGateway {
        let payload: PairingPayload
        do {
            payload = try PairingPayload(decoding: text)
        } catch {
            throw .malformedPayload(error)
        }
        return try await resolve(payload, timeout: timeout, eventLoopGroup: eventLoopGroup)
    }

    /// Tries the payload's addresses in order and returns the first whose TLS certificate has the payload's
    /// digests (SHA-256, and SHA-1 when the payload has one), once the handshake with it has completed.
    ///
    /// An address that cannot be reached or does not speak TLS moves on to the next; a certificate that does
    /// not match ends the search, as every address names the same gateway: pairing again is the remedy.
    ///
    /// - Parameter timeout: for each address, the TCP connection and the TLS handshake together.
    public static func resolve(
        _ payload: PairingPayload,
        timeout: Duration = .seconds(10),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws(PairingResolutionError) -> PairedGateway {
        let expected = Self.expectedFingerprints(of: payload)
        var failures: [PairingResolutionError.AddressFailure] = []
        for (index, address) in payload.addresses.enumerated() {
            guard let endpoint = payload.url(forAddressAt: index) else {
                let target = CertificateProbe.endpoint(host: address, port: payload.port)
                failures.append(.init(address: address, error: .unreachable(target: target, reason: "no wss:// URL")))
                continue
            }
            let chain: [[UInt8]]
            do {
                chain = try await CertificateProbe.presentedCertificateChain(
                    host: address, port: payload.port, timeout: timeout, eventLoopGroup: eventLoopGroup,
                    accept: { chain in Self.fingerprints(of: chain[0], like: expected) == expected })
            } catch {
                failures.append(.init(address: address, error: error))
                continue
            }
            let presented = Self.fingerprints(of: chain[0], like: expected)
            guard presented == expected else {
                throw .digestMismatch(
                    endpoint: CertificateProbe.endpoint(host: address, port: payload.port),
                    expected: expected, presented: presented)
            }
            return PairedGateway(
                payload: payload, addressIndex: index, endpoint: endpoint, certificateDER: chain[0])
        }
        throw .unreachable(failures)
    }

    /// The payload's digests as fingerprints, SHA-256 first.
    private static func expectedFingerprints(of payload: PairingPayload) -> [CertificateFingerprint] {
        var digests: [([UInt8], CertificateFingerprint.Algorithm)] = [(payload.certificateSHA256, .sha256)]
        if let sha1 = payload.certificateSHA1 {
            digests.append((sha1, .sha1))
        }
        // The payload checked the digests' lengths, so wrapping them cannot fail.
        return digests.compactMap { try? CertificateFingerprint(digestBytes: $0.0, algorithm: $0.1) }
    }

    /// The digests of `der` with the same algorithms, in the same order, as `like`.
    private static func fingerprints(of der: [UInt8], like expected: [CertificateFingerprint])
        -> [CertificateFingerprint]
    {
        expected.map { CertificateFingerprint(derBytes: der, algorithm: $0.algorithm) }
    }
}
