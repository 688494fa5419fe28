/// Byte-level checks of JSON string contents, shared by the protocol's parser and scanners and the store's.
///
/// Most of a document's bytes are inside strings, and almost all of those need nothing but a look: no quote,
/// backslash, control character or UTF-8 sequence to check. Testing 8 of them per step, instead of one,
/// is what makes the body scanners cheap on long strings.
package enum JSONStringBytes {
    /// The offset of the first byte at or after `start` that ends or interrupts a run of plain string bytes:
    /// a quote, a backslash, a control character (below 0x20) or a non-ASCII byte. `bytes.count` if none.
    @inlinable
    package static func endOfPlainRun(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        var index = start
        while index + 8 <= bytes.count {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            if containsNonPlainByte(word) { break }
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 {
                return index
            }
            index += 1
        }
        return index
    }

    /// The value of the four hex digits at `offset` (those of a `\u` escape), or `nil` if there are not four.
    @inlinable
    package static func hexQuad(in bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32? {
        guard offset + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for byte in bytes[offset..<(offset + 4)] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// The length of the UTF-8 sequence at `offset` that encodes one scalar above U+007F, or `nil` if it is not
    /// well formed: truncated, a bad continuation byte, an overlong form, a surrogate or past U+10FFFF.
    @inlinable
    package static func multibyteScalarLength(in bytes: UnsafeRawBufferPointer, at offset: Int) -> Int? {
        let lead = bytes[offset]
        let length: Int
        let minimum: UInt32
        var scalar: UInt32
        switch lead {
        case 0xC2...0xDF: (length, minimum, scalar) = (2, 0x80, UInt32(lead & 0x1F))
        case 0xE0...0xEF: (length, minimum, scalar) = (3, 0x800, UInt32(lead & 0x0F))
        case 0xF0...0xF4: (length, minimum, scalar) = (4, 0x10000, UInt32(lead & 0x07))
        default: return nil
        }
        guard offset + length <= bytes.count else { return nil }
        for continuation in bytes[(offset + 1)..<(offset + length)] {
            guard continuation & 0xC0 == 0x80 else { return nil }
            scalar = scalar << 6 | UInt32(continuation & 0x3F)
        }
        guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else { return nil }
        return length
    }

    /// Whether any of the 8 bytes of `word` is a quote, a backslash, below 0x20 or above 0x7F. The zero-byte
    /// and less-than tests are the classic SWAR ones: exact as to whether some byte matches, though not which.
    @inlinable
    static func containsNonPlainByte(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let quotes = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslashes = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let hasQuote = (quotes &- ones) & ~quotes
        let hasBackslash = (backslashes &- ones) & ~backslashes
        let hasControl = (word &- ones &* 0x20) & ~word
        return (hasQuote | hasBackslash | hasControl | word) & highBits != 0
    }
}
