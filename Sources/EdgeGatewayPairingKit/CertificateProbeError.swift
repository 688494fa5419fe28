/// Why a server's certificate could not be seen.
public enum CertificateProbeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No TCP connection: refused, unreachable, name not resolved, or timed out.
    case unreachable(target: String, reason: String)
    /// Connected, but no TLS handshake got as far as a certificate (not a TLS port), or an accepted certificate's
    /// handshake did not complete.
    case tlsHandshakeFailed(target: String, reason: String)

    public var target: String {
        switch self {
        case .unreachable(let target, _), .tlsHandshakeFailed(let target, _): target
        }
    }

    /// The failure without the endpoint, for lists that name the endpoint already.
    public var reason: String {
        switch self {
        case .unreachable(_, let reason): reason
        case .tlsHandshakeFailed(_, let reason): "TLS handshake failed: \(reason)"
        }
    }

    public var description: String {
        switch self {
        case .unreachable(let target, let reason): "cannot connect to \(target): \(reason)"
        case .tlsHandshakeFailed(let target, let reason): "TLS handshake with \(target) failed: \(reason)"
        }
    }
}
