import Crypto
import HexEncoding

/// A digest of a certificate's DER encoding, as shown to operators and used for pinning.
public struct CertificateFingerprint: Hashable, Sendable {
    public enum Algorithm: String, Hashable, Sendable {
        case sha1 = "SHA-1"
        case sha256 = "SHA-256"

        var digestLength: Int {
            switch self {
            case .sha1: 20
            case .sha256: 32
            }
        }
    }

    public let algorithm: Algorithm
    /// The raw digest bytes.
    public let bytes: [UInt8]

    /// Computes the fingerprint of a DER-encoded certificate.
    public init(derBytes: [UInt8], algorithm: Algorithm) {
        self.algorithm = algorithm
        switch algorithm {
        case .sha1:
            self.bytes = Array(Insecure.SHA1.hash(data: derBytes))
        case .sha256:
            self.bytes = Array(SHA256.hash(data: derBytes))
        }
    }

    /// Wraps a digest computed elsewhere, e.g. carried by a pairing payload.
    public init(digestBytes: [UInt8], algorithm: Algorithm) throws(TrustError) {
        guard digestBytes.count == algorithm.digestLength else {
            throw .invalidFingerprint(
                digestBytes.hexEncoded(uppercase: true, separator: ":"),
                reason: "expected \(algorithm.digestLength) bytes for \(algorithm.rawValue), found \(digestBytes.count)"
            )
        }
        self.init(algorithm: algorithm, bytes: digestBytes)
    }

    init(algorithm: Algorithm, bytes: [UInt8]) {
        self.algorithm = algorithm
        self.bytes = bytes
    }

    /// Parses a fingerprint written as hex, with or without colons (`AB:CD:…`, `abcd…`), in either case.
    /// Spaces are tolerated too, because fingerprints are often copied from tools that group bytes with them.
    public init(hexString: String, algorithm: Algorithm = .sha256) throws(TrustError) {
        let digits = hexString.filter { $0 != ":" && $0 != " " }
        guard digits.count == algorithm.digestLength * 2 else {
            throw TrustError.invalidFingerprint(
                hexString,
                reason: "expected \(algorithm.digestLength * 2) hex digits for \(algorithm.rawValue), "
                    + "found \(digits.count)"
            )
        }
        guard let bytes = [UInt8](hexEncoded: digits) else {
            let offending = digits.first { $0.asciiValue.flatMap(HexDigits.value(of:)) == nil }
            throw TrustError.invalidFingerprint(
                hexString, reason: "'\(offending.map(String.init) ?? digits)' is not a hex digit")
        }
        self.algorithm = algorithm
        self.bytes = bytes
    }

    /// Uppercase hex bytes separated by colons, as printed by `openssl x509 -fingerprint`: `AB:CD:…`.
    package var colonHex: String {
        self.bytes.hexEncoded(uppercase: true, separator: ":")
    }

    /// Lowercase hex without separators: `abcd…`.
    package var hex: String {
        self.bytes.hexEncoded()
    }
}

extension CertificateFingerprint: CustomStringConvertible {
    public var description: String {
        "\(self.algorithm.rawValue) \(self.colonHex)"
    }
}
