import SyncJSON
import Testing

@Suite("Word-at-a-time scanning of JSON string bytes")
struct JSONStringBytesTests {
    /// The answer, one byte at a time.
    private func expectedEnd(_ bytes: [UInt8], from start: Int) -> Int {
        bytes[start...].firstIndex { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20 || $0 >= 0x80 }
            ?? bytes.count
    }

    private func end(_ bytes: [UInt8], from start: Int) -> Int {
        bytes.withUnsafeBytes { JSONStringBytes.endOfPlainRun(in: $0, from: start) }
    }

    @Test("every byte value, at every position of a word and past it, is classified as the byte loop does")
    func everyByteAtEveryPosition() {
        for value in 0...255 {
            for position in 0..<20 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 24)
                bytes[position] = UInt8(value)
                for start in [0, 1, 7, 8, 9] where start <= bytes.count {
                    #expect(end(bytes, from: start) == expectedEnd(bytes, from: start), "byte \(value) at \(position)")
                }
            }
        }
    }

    @Test(
        "neighbouring bytes do not hide or fake a match",
        arguments: [UInt8(0x21), 0x23, 0x1F, 0x20, 0x5B, 0x5D, 0x7F, 0x80])
    func neighbours(value: UInt8) {
        // Bytes one off a special value, in every arrangement with a special one after them.
        for special in [UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x00, 0x1F, 0xC3] {
            for position in 0..<16 {
                var bytes = [UInt8](repeating: value, count: 16)
                bytes[position] = special
                #expect(end(bytes, from: 0) == expectedEnd(bytes, from: 0))
            }
        }
    }

    @Test("an empty tail and a buffer without any special byte end at the buffer's end")
    func noSpecialByte() {
        let bytes = Array("plain text without anything to check".utf8)
        #expect(end(bytes, from: 0) == bytes.count)
        #expect(end(bytes, from: bytes.count) == bytes.count)
    }

    @Test("hex quads: four digits of either case, nothing shorter or other")
    func hexQuads() {
        func quad(_ text: String) -> UInt32? {
            Array(text.utf8).withUnsafeBytes { JSONStringBytes.hexQuad(in: $0, at: 0) }
        }
        #expect(quad("00e9") == 0xE9)
        #expect(quad("D83Dxx") == 0xD83D)
        #expect(quad("aBcD") == 0xABCD)
        #expect(quad("12g4") == nil)
        #expect(quad("123") == nil)
    }

    @Test("multibyte scalars are accepted exactly as the standard library's UTF-8 validation accepts them")
    func multibyteScalars() {
        // Every lead byte with continuations that probe the edges of each range.
        let continuations: [UInt8] = [0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0]
        for lead in UInt8(0x80)...0xFF {
            for second in continuations {
                for third in continuations {
                    for fourth in continuations {
                        let bytes = [lead, second, third, fourth]
                        let length = bytes.withUnsafeBytes { JSONStringBytes.multibyteScalarLength(in: $0, at: 0) }
                        let expected = (2...4).first { String(validating: bytes[0..<$0], as: UTF8.self) != nil }
                        #expect(length == expected, "\(bytes)")
                    }
                }
            }
        }
        let truncated: [UInt8] = [0xE2, 0x82]
        #expect(truncated.withUnsafeBytes { JSONStringBytes.multibyteScalarLength(in: $0, at: 0) } == nil)
    }
}
