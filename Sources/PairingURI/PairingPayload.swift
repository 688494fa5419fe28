import Foundation
import HexEncoding
import NetworkInterfaces

/// What a Couchbase Lite app needs to replicate with this gateway and to trust its certificate, as one URI
/// short enough for a small QR code.
///
/// Grammar (version 1), also documented with examples in `docs/pairing.md`:
///
/// ```
/// payload    = "edgegw://pair?" param *( "&" param )
/// param      = key "=" value          ; each key at most once, in any order; unknown keys are rejected
/// v          = "1"                    ; required: the grammar version
/// a          = address *( "," address ) ; required: IPv4/IPv6 literals or DNS names, most preferred first
/// p          = 1*5DIGIT               ; required: TCP port 1-65535
/// db         = pct-value              ; required: database name; the URL path is "/" db
/// s256       = 43base64url            ; required: SHA-256 of the leaf certificate's DER, unpadded base64url
/// s1         = 27base64url            ; optional: SHA-1 of the same DER, for platforms that only expose SHA-1
/// n          = pct-value              ; required: the node name, for display on the device
/// id         = uuid                   ; required: the node ID, lowercase canonical UUID (8-4-4-4-12 hex digits)
/// pct-value  = *( unreserved / ":" / pct-encoded )  ; RFC 3986; UTF-8 before percent-encoding
/// ```
///
/// The transport is always `wss://`: a pairing payload exists to pin a certificate, so a listener without TLS
/// has nothing to pair with. New keys or semantics bump `v`, which is why unknown keys are an error rather than
/// ignored: a device must not silently drop a constraint it does not understand.
public struct PairingPayload: Sendable, Equatable {
    /// The grammar version this type reads and writes.
    public static let version = 1
    package static let scheme = "edgegw"
    public static let host = "pair"

    /// Where the listener can be reached, most preferred first.
    public let addresses: [String]
    public let port: Int
    public let database: String
    /// SHA-256 of the leaf certificate's DER encoding: what the device pins.
    public let certificateSHA256: [UInt8]
    /// SHA-1 of the same DER encoding, when included.
    public let certificateSHA1: [UInt8]?
    public let nodeName: String
    /// The node's permanent ID, which stays the same across renames, address changes and certificate rotations.
    package let nodeID: UUID

    /// Builds a payload, checking every field as strictly as decoding does, so any payload this type holds
    /// encodes to a string that decodes back to it.
    public init(
        addresses: [String],
        port: Int,
        database: String,
        certificateSHA256: [UInt8],
        certificateSHA1: [UInt8]?,
        nodeName: String,
        nodeID: UUID
    ) throws(PairingPayloadError) {
        guard !addresses.isEmpty else { throw .noAddress }
        for address in addresses where !Self.isValidAddress(address) {
            throw .invalidAddress(address)
        }
        guard (1...65535).contains(port) else { throw .invalidPort(String(port)) }
        guard !database.isEmpty else { throw .emptyValue(key: "db") }
        guard !nodeName.isEmpty else { throw .emptyValue(key: "n") }
        guard certificateSHA256.count == 32 else {
            throw .wrongDigestLength(key: "s256", expected: 32, found: certificateSHA256.count)
        }
        if let certificateSHA1, certificateSHA1.count != 20 {
            throw .wrongDigestLength(key: "s1", expected: 20, found: certificateSHA1.count)
        }
        self.addresses = addresses
        self.port = port
        self.database = database
        self.certificateSHA256 = certificateSHA256
        self.certificateSHA1 = certificateSHA1
        self.nodeName = nodeName
        self.nodeID = nodeID
    }

    /// The payload as its URI string; keys in a fixed order, so the same payload always gives the same QR code.
    package var uriString: String {
        var parameters = [
            ("v", String(Self.version)),
            ("a", self.addresses.map(Self.percentEncoded).joined(separator: ",")),
            ("p", String(self.port)),
            ("db", Self.percentEncoded(self.database)),
            ("s256", Base64URL.encode(self.certificateSHA256)),
        ]
        if let certificateSHA1 {
            parameters.append(("s1", Base64URL.encode(certificateSHA1)))
        }
        parameters.append(("n", Self.percentEncoded(self.nodeName)))
        parameters.append(("id", self.nodeID.uuidString.lowercased()))
        let query = parameters.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        return "\(Self.scheme)://\(Self.host)?\(query)"
    }

    /// The replication endpoint at `addresses[index]`: `wss://address:port/db`, an IPv6 literal in brackets.
    public func url(forAddressAt index: Int) -> URL? {
        guard self.addresses.indices.contains(index) else { return nil }
        let address = self.addresses[index]
        let host = address.contains(":") ? "[\(address)]" : address
        return URL(string: "wss://\(host):\(self.port)/\(Self.percentEncoded(self.database))")
    }

    /// The SHA-256 digest as uppercase colon-separated hex, as `openssl x509 -fingerprint -sha256` prints it.
    package var sha256ColonHex: String {
        self.certificateSHA256.hexEncoded(uppercase: true, separator: ":")
    }

    /// RFC 3986 unreserved characters, plus ":" so IPv6 literals stay readable and short.
    static let literalCharacters: Set<UInt8> = Set(
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:".utf8)
    )

    static func percentEncoded(_ value: String) -> String {
        var encoded = ""
        for byte in value.utf8 {
            if Self.literalCharacters.contains(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + [byte].hexEncoded(uppercase: true)
            }
        }
        return encoded
    }

    /// An IPv4 or IPv6 literal (without zone: a zone names an interface of the gateway, not of the device), or a
    /// DNS name.
    static func isValidAddress(_ address: String) -> Bool {
        if IPAddressLiteral(address) != nil { return true }
        let labels = address.split(separator: ".", omittingEmptySubsequences: false)
        return address.utf8.count <= 253
            && labels.allSatisfy { label in
                (1...63).contains(label.utf8.count)
                    && label.first != "-" && label.last != "-"
                    && label.utf8.allSatisfy { byte in
                        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
                            || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D
                    }
            }
            && !(labels.last.map { $0.allSatisfy(\.isNumber) } ?? true)
    }
}

extension PairingPayload: CustomStringConvertible {
    public var description: String { self.uriString }
}
