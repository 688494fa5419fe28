import EdgeIdentity
import Testing

@Suite struct CertificateFingerprintTests {
    // "abc" has well-known digests (FIPS 180), so the formatting can be checked against fixed values.
    let abc = Array("abc".utf8)

    @Test func sha256IsFormattedWithColonsAndWithout() {
        let fingerprint = CertificateFingerprint(derBytes: abc, algorithm: .sha256)
        #expect(fingerprint.hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            fingerprint.colonHex
                == "BA:78:16:BF:8F:01:CF:EA:41:41:40:DE:5D:AE:22:23:B0:03:61:A3:96:17:7A:9C:B4:10:FF:61:F2:00:15:AD"
        )
        #expect(fingerprint.bytes.count == 32)
        #expect(fingerprint.description == "SHA-256 \(fingerprint.colonHex)")
    }

    @Test func sha1IsComputedToo() {
        let fingerprint = CertificateFingerprint(derBytes: abc, algorithm: .sha1)
        #expect(fingerprint.hex == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(fingerprint.colonHex.hasPrefix("A9:99:3E:36:47:06"))
    }

    @Test(arguments: [
        "BA:78:16:BF:8F:01:CF:EA:41:41:40:DE:5D:AE:22:23:B0:03:61:A3:96:17:7A:9C:B4:10:FF:61:F2:00:15:AD",
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "BA 78 16 BF 8F 01 CF EA 41 41 40 DE 5D AE 22 23 B0 03 61 A3 96 17 7A 9C B4 10 FF 61 F2 00 15 AD",
    ])
    func parsesHexWithOrWithoutSeparators(text: String) throws {
        let parsed = try CertificateFingerprint(hexString: text)
        #expect(parsed == CertificateFingerprint(derBytes: abc, algorithm: .sha256))
    }

    @Test func rejectsWrongLengthAndNonHex() {
        let short = "BA:78:16"
        #expect(
            throws: TrustError.invalidFingerprint(
                short,
                reason: "expected 64 hex digits for SHA-256, found 6"
            )
        ) {
            try CertificateFingerprint(hexString: short)
        }
        let notHex = String(repeating: "zz", count: 32)
        #expect(throws: TrustError.invalidFingerprint(notHex, reason: "'z' is not a hex digit")) {
            try CertificateFingerprint(hexString: notHex)
        }
        // Swift's UInt8("+f", radix: 16) is 15; a sign is no hex digit in a fingerprint.
        let signed = "+f" + String(repeating: "ab", count: 31)
        #expect(throws: TrustError.invalidFingerprint(signed, reason: "'+' is not a hex digit")) {
            try CertificateFingerprint(hexString: signed)
        }
    }
}
