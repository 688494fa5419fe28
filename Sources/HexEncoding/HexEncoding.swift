/// Bytes written as hexadecimal digits, two per byte: blob file names, revision ID digests, certificate
/// fingerprints and percent-encoding all use this form, so it is written and read in one place.
extension Sequence<UInt8> {
    /// Two digits per byte, zero-padded, with `separator` between bytes (`":"` for fingerprints as OpenSSL prints
    /// them).
    package func hexEncoded(uppercase: Bool = false, separator: String = "") -> String {
        let digits = uppercase ? HexDigits.uppercase : HexDigits.lowercase
        let separatorBytes = Array(separator.utf8)
        var text: [UInt8] = []
        text.reserveCapacity(underestimatedCount * (2 + separatorBytes.count))
        for byte in self {
            if !text.isEmpty { text.append(contentsOf: separatorBytes) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

extension [UInt8] {
    /// Reads two hex digits per byte, in either case. Anything else is refused (`nil`): an odd count, a separator,
    /// or a sign, which Swift's `UInt8(_:radix:)` would accept (`"+f"` is 15 to it).
    public init?(hexEncoded text: some StringProtocol) {
        let utf8 = Array(text.utf8)
        guard utf8.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        for index in stride(from: 0, to: utf8.count, by: 2) {
            guard let high = HexDigits.value(of: utf8[index]), let low = HexDigits.value(of: utf8[index + 1]) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        self = bytes
    }
}

/// Single hex digits, for formats that embed them among other text (percent-encoding).
package enum HexDigits {
    static let lowercase = Array("0123456789abcdef".utf8)
    static let uppercase = Array("0123456789ABCDEF".utf8)

    /// The value of one ASCII hex digit, either case; `nil` for any other byte.
    package static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
