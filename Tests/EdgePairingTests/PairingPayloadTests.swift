import EdgePairing
import Foundation
import Testing

@Suite("Pairing payload")
struct PairingPayloadTests {
    static let sha256 = [UInt8](0..<32)
    static let sha1 = [UInt8](200..<220)
    static let nodeID = UUID(uuidString: "6F1C2A4E-8D1B-4A3C-9E57-0B2D4C6E8F10")!

    static func sample(
        addresses: [String] = ["192.168.1.10", "fd00::1"], nodeName: String = "edge-01"
    )
        throws -> PairingPayload
    {
        try PairingPayload(
            addresses: addresses,
            port: 4984,
            database: "inventory",
            certificateSHA256: sha256,
            certificateSHA1: sha1,
            nodeName: nodeName,
            nodeID: nodeID
        )
    }

    @Test("encodes to the documented grammar, keys in a fixed order")
    func encodesDocumentedForm() throws {
        #expect(
            try Self.sample().uriString
                == "edgegw://pair?v=1&a=192.168.1.10,fd00::1&p=4984&db=inventory"
                + "&s256=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8&s1=yMnKy8zNzs_Q0dLT1NXW19jZ2ts&n=edge-01"
                + "&id=6f1c2a4e-8d1b-4a3c-9e57-0b2d4c6e8f10"
        )
    }

    @Test("round trips, including names that need percent-encoding")
    func roundTrip() throws {
        for name in ["edge-01", "Halle 3 / Süd", "a&b=c,d%e", "🚚"] {
            let payload = try Self.sample(nodeName: name)
            #expect(try PairingPayload(decoding: payload.uriString) == payload)
        }
        let withoutSHA1 = try PairingPayload(
            addresses: ["gateway.local"], port: 1, database: "db$(x)/y", certificateSHA256: Self.sha256,
            certificateSHA1: nil, nodeName: "n", nodeID: UUID())
        #expect(!withoutSHA1.uriString.contains("s1="))
        #expect(try PairingPayload(decoding: withoutSHA1.uriString) == withoutSHA1)
    }

    @Test("accepts parameters in any order")
    func parameterOrder() throws {
        let text =
            "edgegw://pair?id=6f1c2a4e-8d1b-4a3c-9e57-0b2d4c6e8f10&n=x"
            + "&s256=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8&db=d&p=80&a=10.0.0.1&v=1"
        let payload = try PairingPayload(decoding: text)
        #expect(payload.nodeID == Self.nodeID)
        #expect(payload.addresses == ["10.0.0.1"])
        #expect(payload.port == 80)
        #expect(payload.certificateSHA1 == nil)
        #expect(payload.certificateSHA256 == Self.sha256)
    }

    @Test("builds wss URLs, IPv6 in brackets")
    func urls() throws {
        let payload = try Self.sample(addresses: ["192.168.1.10", "fd00::1", "gw.example"])
        #expect(payload.url(forAddressAt: 0)?.absoluteString == "wss://192.168.1.10:4984/inventory")
        #expect(payload.url(forAddressAt: 1)?.absoluteString == "wss://[fd00::1]:4984/inventory")
        #expect(payload.url(forAddressAt: 2)?.absoluteString == "wss://gw.example:4984/inventory")
        #expect(payload.url(forAddressAt: 3) == nil)
    }

    @Test("colon hex of the SHA-256 digest")
    func colonHex() throws {
        #expect(try Self.sample().sha256ColonHex.hasPrefix("00:01:02:03:04:05:06:07:08:09:0A:0B"))
    }

    static let valid = try! sample().uriString

    static let decodingErrors: [(String, PairingPayloadError)] = [
        ("https://pair?v=1", .notAPairingPayload("https://pair?v=1")),
        (valid.replacingOccurrences(of: "v=1", with: "v=2"), .unsupportedVersion("2")),
        (valid.replacingOccurrences(of: "v=1&", with: ""), .missingParameter("v")),
        (
            valid.replacingOccurrences(of: "&s256=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", with: ""),
            .missingParameter("s256")
        ),
        (valid + "&p=1", .duplicateParameter("p")),
        (valid.replacingOccurrences(of: "&id=6f1c2a4e-8d1b-4a3c-9e57-0b2d4c6e8f10", with: ""), .missingParameter("id")),
        (valid + "&id=6f1c2a4e-8d1b-4a3c-9e57-0b2d4c6e8f10", .duplicateParameter("id")),
        (valid.replacingOccurrences(of: "id=6f1c2a4e", with: "id="), .invalidNodeID("-8d1b-4a3c-9e57-0b2d4c6e8f10")),
        (
            valid.replacingOccurrences(of: "id=6f1c2a4e", with: "id=6F1C2A4E"),
            .invalidNodeID("6F1C2A4E-8d1b-4a3c-9e57-0b2d4c6e8f10")
        ),
        (
            valid.replacingOccurrences(of: "-0b2d4c6e8f10", with: "-0b2d4c6e8f1x"),
            .invalidNodeID("6f1c2a4e-8d1b-4a3c-9e57-0b2d4c6e8f1x")
        ),
        (
            valid.replacingOccurrences(of: "&id=6f1c2a4e-8d1b-4a3c-9e57-0b2d4c6e8f10", with: "&id="),
            .emptyValue(key: "id")
        ),
        (valid + "&tls=1", .unknownParameter("tls")),
        (valid + "&junk", .malformedParameter("junk")),
        (valid + "&=1", .malformedParameter("=1")),
        (valid.replacingOccurrences(of: "db=inventory", with: "db="), .emptyValue(key: "db")),
        (
            valid.replacingOccurrences(of: "n=edge-01", with: "n=edge%2"),
            .invalidPercentEncoding(key: "n", value: "edge%2")
        ),
        (
            valid.replacingOccurrences(of: "n=edge-01", with: "n=%FF"),
            .invalidPercentEncoding(key: "n", value: "%FF")
        ),
        (
            valid.replacingOccurrences(of: "n=edge-01", with: "n=a b"),
            .invalidPercentEncoding(key: "n", value: "a b")
        ),
        (
            valid.replacingOccurrences(
                of: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", with: "AAEC+wQF"),
            .invalidBase64(key: "s256", value: "AAEC+wQF")
        ),
        (
            valid.replacingOccurrences(
                of: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", with: "AAECAw=="),
            .invalidBase64(key: "s256", value: "AAECAw==")
        ),
        // Non-zero trailing bits: "Hh9" would alias "Hh8".
        (
            valid.replacingOccurrences(of: "GxwdHh8", with: "GxwdHh9"),
            .invalidBase64(key: "s256", value: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh9")
        ),
        (
            valid.replacingOccurrences(of: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", with: "AAECAw"),
            .wrongDigestLength(key: "s256", expected: 32, found: 4)
        ),
        (
            valid.replacingOccurrences(of: "s1=yMnKy8zNzs_Q0dLT1NXW19jZ2ts", with: "s1=AAECAw"),
            .wrongDigestLength(key: "s1", expected: 20, found: 4)
        ),
        (valid.replacingOccurrences(of: "p=4984", with: "p=0"), .invalidPort("0")),
        (valid.replacingOccurrences(of: "p=4984", with: "p=65536"), .invalidPort("65536")),
        (valid.replacingOccurrences(of: "p=4984", with: "p=+80"), .invalidPort("+80")),
        (
            valid.replacingOccurrences(of: "p=4984", with: "p=99999999999999999999"),
            .invalidPort("99999999999999999999")
        ),
        (
            valid.replacingOccurrences(of: "fd00::1", with: "fe80::1%25eth0"),
            .invalidAddress("fe80::1%eth0")
        ),
        (valid.replacingOccurrences(of: ",fd00::1", with: ","), .invalidAddress("")),
        (
            valid.replacingOccurrences(of: "192.168.1.10", with: "999.1.1.1"),
            .invalidAddress("999.1.1.1")
        ),
    ]

    @Test("rejects every malformed payload with its specific error", arguments: decodingErrors)
    func decodingError(text: String, expected: PairingPayloadError) {
        #expect(throws: expected) { try PairingPayload(decoding: text) }
    }

    @Test("errors explain themselves")
    func errorDescriptions() {
        #expect("\(PairingPayloadError.missingParameter("s256"))".contains("'s256'"))
        #expect("\(PairingPayloadError.unsupportedVersion("2"))".contains("reads version 1"))
        #expect("\(PairingPayloadError.invalidPort("0"))".contains("1 to 65535"))
    }

    @Test("refuses to build a payload that would not decode")
    func constructionChecks() {
        #expect(throws: PairingPayloadError.noAddress) { try Self.sample(addresses: []) }
        #expect(throws: PairingPayloadError.invalidAddress("fe80::1%eth0")) {
            try Self.sample(addresses: ["fe80::1%eth0"])
        }
        #expect(throws: PairingPayloadError.emptyValue(key: "n")) { try Self.sample(nodeName: "") }
    }
}
