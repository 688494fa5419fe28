/// Bytes written as hexadecimal digits, two per byte: blob file names, revision ID digests, certificate
/// fingerprints and percent-encoding all use this form, so it is written and read in one place.
extension Sequence<UInt8> {
    /// Two digits per byte, zero-padded, with `separator` between bytes (`":"` for fingerprints as OpenSSL prints
    /// them).
    ///
    /// Inlinable, so that it is specialised for the caller's sequence: called across modules unspecialised, it
    /// walked a SHA-1 digest through generic witnesses at about 14,000 instructions for 20 bytes, a tenth of the
    /// cost of storing a CBMobile_4 revision (callgrind, `scripts/perf/instructions`).
    @inlinable
    package func hexEncoded(uppercase: Bool = false, separator: String = "") -> String {
        let letterBase = uppercase ? UInt8(ascii: "A") - 10 : UInt8(ascii: "a") - 10
        func digit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? UInt8(ascii: "0") + nibble : letterBase + nibble }
        let bytes = Array(self)
        let separatorBytes = Array(separator.utf8)
        let length = 2 * bytes.count + Swift.max(0, bytes.count - 1) * separatorBytes.count
        return String(unsafeUninitializedCapacity: length) { text in
            var index = 0
            for (position, byte) in bytes.enumerated() {
                if position > 0 {
                    for separatorByte in separatorBytes {
                        text[index] = separatorByte
                        index += 1
                    }
                }
                text[index] = digit(byte >> 4)
                text[index + 1] = digit(byte & 0x0F)
                index += 2
            }
            return index
        }
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
