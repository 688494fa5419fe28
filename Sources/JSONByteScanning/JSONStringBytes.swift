/// Word-at-a-time scanning of JSON string contents.
///
/// Most of a document's bytes are inside strings, and almost all of those need nothing but a look: no quote,
/// backslash, control character or UTF-8 sequence to check. Testing 8 of them per step, instead of one,
/// is what makes the body scanners cheap on long strings.
public enum JSONStringBytes {
    /// The offset of the first byte at or after `start` that ends or interrupts a run of plain string bytes:
    /// a quote, a backslash, a control character (below 0x20) or a non-ASCII byte. `bytes.count` if none.
    @inlinable
    public static func endOfPlainRun(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
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
