/// Why a peer's certificate was not trusted, or why a trust policy could not be built.
public enum TrustError: Error, Equatable, Sendable {
    /// The peer presented no certificate.
    case noCertificatePresented
    /// A presented certificate could not be parsed.
    case unparseableCertificate(index: Int, reason: String)
    /// The leaf's SHA-256 fingerprint is not the pinned one. Both are colon-separated uppercase hex.
    case pinMismatch(expected: String, presented: String)
    /// The policy accepts only self-signed certificates and the leaf is issued by someone else.
    case notSelfSigned(subject: String, issuer: String)
    /// The leaf names itself as issuer but its signature does not verify with its own key.
    case selfSignatureInvalid(subject: String)
    /// No valid chain from the leaf to a trusted root.
    case untrustedChain(subject: String, issuer: String, reasons: [String])
    /// The chain is trusted but the leaf is not valid for the host we connected to.
    case hostnameMismatch(expected: String, certificateNames: [String])
    /// The policy checks hostnames but no hostname was given for the connection.
    case serverHostnameRequired
    /// A fingerprint string given for pinning is malformed.
    case invalidFingerprint(String, reason: String)
    /// A certificate file given for pinning or as a trust root could not be used.
    case certificateFileUnusable(path: String, reason: String)
}

extension TrustError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .noCertificatePresented:
            return "The peer presented no TLS certificate."
        case .unparseableCertificate(let index, let reason):
            return "Certificate #\(index) presented by the peer cannot be parsed: \(reason)."
        case .pinMismatch(let expected, let presented):
            return
                "The server's certificate does not match the pinned one: expected SHA-256 \(expected), "
                + "presented SHA-256 \(presented). If the server's identity was rotated on purpose, pin the new "
                + "fingerprint; otherwise this may be an impostor."
        case .notSelfSigned(let subject, let issuer):
            return "The server's certificate '\(subject)' is issued by '\(issuer)', but only self-signed "
                + "certificates are accepted. Use a CA-based trust policy for CA-signed servers."
        case .selfSignatureInvalid(let subject):
            return
                "The server's certificate '\(subject)' claims to be self-signed but its signature does not "
                + "verify with its own key."
        case .untrustedChain(let subject, let issuer, let reasons):
            let details = reasons.isEmpty ? "no chain to a trusted root" : reasons.joined(separator: "; ")
            return
                "The server's certificate '\(subject)' (issued by '\(issuer)') is not trusted: \(details). "
                + "Add the issuing CA to the trusted roots, or pin the certificate."
        case .hostnameMismatch(let expected, let certificateNames):
            let names = certificateNames.isEmpty ? "none" : certificateNames.joined(separator: ", ")
            return
                "The server's certificate is not valid for '\(expected)' (names in the certificate: \(names)). "
                + "Connect using one of those names, or disable the hostname check only if you pin the certificate."
        case .serverHostnameRequired:
            return
                "This trust policy checks the server's hostname, but no hostname was given for the connection."
        case .invalidFingerprint(let text, let reason):
            return
                "'\(text)' is not a valid certificate fingerprint: \(reason). Use the SHA-256 fingerprint as "
                + "hex, with or without colons, e.g. from `openssl x509 -noout -fingerprint -sha256 -in cert.pem`."
        case .certificateFileUnusable(let path, let reason):
            return "Cannot use the certificate file '\(path)': \(reason)."
        }
    }
}
