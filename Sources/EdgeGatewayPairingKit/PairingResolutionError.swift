import EdgeIdentity
import PairingURI

/// Why a pairing payload did not lead to a trusted gateway. In every case no connection was trusted.
public enum PairingResolutionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One address of the payload and why it did not answer with TLS.
    public struct AddressFailure: Sendable, Equatable {
        public let address: String
        public let error: CertificateProbeError
    }

    /// The text is not a pairing payload this version reads: not one at all, a broken one, or one with keys
    /// this version does not define (made by a newer gateway: its constraints would be silently dropped).
    case malformedPayload(PairingPayloadError)
    /// No address answered with TLS; every address with its reason, in the payload's order.
    case unreachable([AddressFailure])
    /// The gateway at `endpoint` (`host:port`) presented a certificate whose digests are not the payload's: the
    /// fingerprints expected (from the payload) and presented, SHA-256 first.
    case digestMismatch(
        endpoint: String, expected: [CertificateFingerprint], presented: [CertificateFingerprint])

    /// True when trying again later may succeed without pairing again: the gateway may come back on the network.
    public var isTransient: Bool {
        switch self {
        case .unreachable: true
        case .malformedPayload, .digestMismatch: false
        }
    }

    public var description: String {
        switch self {
        case .malformedPayload(let error):
            return "not a usable pairing payload: \(error)"
        case .unreachable(let failures):
            let list = failures.map { "\($0.error.target): \($0.error.reason)" }.joined(separator: "; ")
            return "the paired gateway is unreachable at every address of its pairing payload: \(list)"
        case .digestMismatch(let endpoint, let expected, let presented):
            return "the gateway at \(endpoint) presented a certificate that is not the paired one: expected "
                + expected.map(\.description).joined(separator: ", ") + ", presented "
                + presented.map(\.description).joined(separator: ", ")
                + ". This is a possible interception or a rotated certificate: pair again by scanning the "
                + "gateway's current pairing code."
        }
    }
}
