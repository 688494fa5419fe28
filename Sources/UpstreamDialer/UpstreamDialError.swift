import EdgeIdentity

/// Why a connection to an upstream did not open, classified as Couchbase Lite classifies it (spec §1.4):
/// transient failures are retried with back-off, the others stop the replication until someone acts.
public enum UpstreamDialError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidURL(String, reason: String)
    /// No TCP connection: refused, unreachable, name not resolved, or timed out.
    case unreachable(target: String, reason: String)
    /// The server's certificate failed the trust policy; the reason names what was expected and presented.
    case serverCertificateRejected(TrustError)
    /// The TLS handshake failed for another reason, e.g. the server refused our client certificate or is
    /// not speaking TLS at all.
    case tlsHandshakeFailed(target: String, reason: String)
    /// The server answered the upgrade request with a status other than 101.
    case upgradeRefused(target: String, status: Int, reason: String, wwwAuthenticate: String?, body: String)
    /// The 101 response named no subprotocol, or one that was not offered (LiteCore's checks, spec §1.3).
    case subprotocolRejected(offered: [String], chosen: String?)
    /// The server did not finish the handshake in time, or closed the connection in the middle of it.
    case handshakeIncomplete(target: String, reason: String)

    /// HTTP statuses after which Couchbase Lite retries (spec §1.4); every other refusal is final.
    package static let transientHTTPStatuses: Set<Int> = [408, 429, 502, 503, 504]

    /// True when trying again later may succeed without anyone changing anything.
    package var isTransient: Bool {
        switch self {
        case .unreachable, .handshakeIncomplete: true
        case .upgradeRefused(_, let status, _, _, _): Self.transientHTTPStatuses.contains(status)
        case .invalidURL, .serverCertificateRejected, .tlsHandshakeFailed, .subprotocolRejected: false
        }
    }

    public var description: String {
        switch self {
        case .invalidURL(let url, let reason):
            "invalid upstream URL '\(url)': \(reason)"
        case .unreachable(let target, let reason):
            "cannot connect to \(target): \(reason)"
        case .serverCertificateRejected(let error):
            "refused the upstream's TLS certificate: \(error)"
        case .tlsHandshakeFailed(let target, let reason):
            "TLS handshake with \(target) failed: \(reason)"
        case .upgradeRefused(let target, let status, let reason, _, let body):
            "\(target) refused the WebSocket upgrade with HTTP \(status) \(reason)"
                + (body.isEmpty ? " (empty body)" : ": \(body)")
        case .subprotocolRejected(let offered, let chosen):
            if let chosen {
                "the upstream chose the subprotocol '\(chosen)', which was not offered (\(offered.joined(separator: ",")))"
            } else {
                "incompatible replication protocol: the upstream's 101 response has no Sec-WebSocket-Protocol header"
            }
        case .handshakeIncomplete(let target, let reason):
            "the WebSocket handshake with \(target) did not complete: \(reason)"
        }
    }
}
