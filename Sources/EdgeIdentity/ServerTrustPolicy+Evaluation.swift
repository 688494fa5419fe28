import X509

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension ServerTrustPolicy {
    /// Decides whether to trust the chain a server presented, leaf first.
    ///
    /// This is the whole trust decision; the TLS layer only calls it (see ``ClientTLSConfiguration``), so it can
    /// be tested without sockets. It is `async` because building a chain to the system roots may load them.
    ///
    /// - Parameters:
    ///   - serverHostname: the host name or IP address dialled; needed when the policy checks hostnames.
    package func evaluate(
        presentedChain: [Certificate],
        serverHostname: String?
    ) async -> Result<Void, TrustError> {
        guard let leaf = presentedChain.first else {
            return .failure(.noCertificatePresented)
        }
        switch self {
        case .pinned(let expected):
            let presented = CertificateFingerprint(derBytes: Self.derBytes(of: leaf), algorithm: .sha256)
            guard presented.bytes == expected else {
                return .failure(
                    .pinMismatch(
                        expected: CertificateFingerprint(algorithm: .sha256, bytes: expected).colonHex,
                        presented: presented.colonHex
                    )
                )
            }
            return .success(())
        case .selfSignedOnly:
            guard leaf.subject == leaf.issuer else {
                return .failure(
                    .notSelfSigned(subject: leaf.subject.description, issuer: leaf.issuer.description)
                )
            }
            guard leaf.publicKey.isValidSignature(leaf.signature, for: leaf) else {
                return .failure(.selfSignatureInvalid(subject: leaf.subject.description))
            }
            return .success(())
        case .systemRoots(let checkHostname):
            return await Self.evaluateChain(
                presentedChain,
                roots: CertificateStore.systemTrustRoots,
                serverHostname: checkHostname ? .some(serverHostname) : .none
            )
        case .ca(let roots, let checkHostname):
            return await Self.evaluateChain(
                presentedChain,
                roots: CertificateStore(roots),
                serverHostname: checkHostname ? .some(serverHostname) : .none
            )
        }
    }

    /// Validates the chain per RFC 5280, then, if `serverHostname` is given, the leaf's names per RFC 6125.
    ///
    /// The two steps run separately so a wrong hostname is reported as such rather than as an untrusted chain.
    /// - Parameter serverHostname: `nil` to skip the hostname check; `.some(nil)` when the check is wanted but
    ///   no hostname is known, which fails.
    private static func evaluateChain(
        _ presentedChain: [Certificate],
        roots: CertificateStore,
        serverHostname: String??
    ) async -> Result<Void, TrustError> {
        let leaf = presentedChain[0]
        let intermediates = CertificateStore(presentedChain.dropFirst())
        var chainVerifier = Verifier(rootCertificates: roots) {
            RFC5280Policy()
        }
        if case .couldNotValidate(let failures) = await chainVerifier.validate(
            leaf: leaf,
            intermediates: intermediates
        ) {
            return .failure(
                .untrustedChain(
                    subject: leaf.subject.description,
                    issuer: leaf.issuer.description,
                    reasons: failures.map(\.policyFailureReason.description)
                )
            )
        }
        guard case .some(let wantedHostname) = serverHostname else {
            return .success(())
        }
        guard let hostname = wantedHostname, !hostname.isEmpty else {
            return .failure(.serverHostnameRequired)
        }
        let isIPAddress = Self.isIPAddress(hostname)
        var identityVerifier = Verifier(rootCertificates: roots) {
            RFC5280Policy()
            ServerIdentityPolicy(
                serverHostname: isIPAddress ? nil : hostname,
                serverIP: isIPAddress ? hostname : nil
            )
        }
        if case .couldNotValidate = await identityVerifier.validate(
            leaf: leaf,
            intermediates: intermediates
        ) {
            return .failure(.hostnameMismatch(expected: hostname, certificateNames: Self.names(in: leaf)))
        }
        return .success(())
    }

    /// The names a certificate is valid for, for error messages: its DNS and IP subject alternative names, or
    /// its common name when it has none (which modern clients, including this one, ignore).
    private static func names(in certificate: Certificate) -> [String] {
        let alternativeNames = (try? certificate.extensions.subjectAlternativeNames) ?? nil
        let names: [String] = (alternativeNames.map { Array($0) } ?? []).compactMap { name in
            switch name {
            case .dnsName(let dnsName): return dnsName
            case .ipAddress(let address): return Self.formatIPAddress(Array(address.bytes))
            default: return nil
            }
        }
        if names.isEmpty {
            return certificate.subject.description.isEmpty ? [] : ["subject \(certificate.subject)"]
        }
        return names
    }

    /// True for IPv4 and IPv6 literals, which SNI must not carry.
    public static func isIPAddress(_ host: String) -> Bool {
        var ipv4 = in_addr()
        var ipv6 = in6_addr()
        return inet_pton(AF_INET, host, &ipv4) == 1 || inet_pton(AF_INET6, host, &ipv6) == 1
    }

    private static func formatIPAddress(_ bytes: [UInt8]) -> String {
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let formatted = bytes.withUnsafeBytes { address in
            inet_ntop(family, address.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard formatted != nil else {
            return bytes.map(String.init).joined(separator: ".")
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// swift-certificates keeps the bytes it parsed and re-serializes exactly them, so this is the DER the peer
    /// sent. Serializing a parsed certificate cannot fail in practice; the empty fallback could only mismatch a
    /// pin, never match one.
    private static func derBytes(of certificate: Certificate) -> [UInt8] {
        (try? certificate.serializeAsPEM().derBytes) ?? []
    }
}
