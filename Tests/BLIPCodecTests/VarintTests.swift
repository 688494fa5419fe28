import BLIPCodec
import Testing

@Suite("Varint")
struct VarintTests {
    static let examples: [(UInt64, [UInt8])] = [
        (0, [0x00]), (127, [0x7F]), (128, [0x80, 0x01]), (300, [0xAC, 0x02]), (65_536, [0x80, 0x80, 0x04]),
        (UInt64.max, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
    ]

    static let badInputs: [([UInt8], VarintFailure)] = [
        ([], .truncated),
        ([0x80], .truncated),
        ([0xFF, 0xFF], .truncated),
        ([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02], .overflow),
        ([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x81, 0x00], .overflow),
        ([0x80, 0x00], .overlong),
        ([0xAC, 0x82, 0x00], .overlong),
    ]

    @Test("spec §2.1 examples", arguments: examples)
    func encodesAndDecodes(value: UInt64, bytes: [UInt8]) throws {
        var encoded: [UInt8] = []
        Varint.append(value, to: &encoded)
        #expect(encoded == bytes)
        #expect(Varint.encodedLength(of: value) == bytes.count)
        var index = 0
        #expect(try Varint.read(from: bytes, at: &index) == value)
        #expect(index == bytes.count)
    }

    @Test("rejects truncated, overflowing and overlong input", arguments: badInputs)
    func rejectsBadInput(bytes: [UInt8], failure: VarintFailure) {
        var index = 0
        #expect(throws: failure) { try Varint.read(from: bytes, at: &index) }
        #expect(index == 0)
    }

    @Test("reads from a slice at its own indices")
    func readsFromSlice() throws {
        let bytes: [UInt8] = [0xFF, 0xAC, 0x02, 0x05]
        let slice = bytes[1...]
        var index = slice.startIndex
        #expect(try Varint.read(from: slice, at: &index) == 300)
        #expect(try Varint.read(from: slice, at: &index) == 5)
        #expect(index == slice.endIndex)
    }
}
