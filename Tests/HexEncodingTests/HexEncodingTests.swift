import HexEncoding
import Testing

@Suite("Hex encoding")
struct HexEncodingTests {
    @Test("Bytes are written two zero-padded digits each, in the case and with the separator asked for")
    func encoding() {
        let bytes: [UInt8] = [0x00, 0x0A, 0xAB, 0xFF, 0x10]
        #expect(bytes.hexEncoded() == "000aabff10")
        #expect(bytes.hexEncoded(uppercase: true) == "000AABFF10")
        #expect(bytes.hexEncoded(uppercase: true, separator: ":") == "00:0A:AB:FF:10")
        #expect([UInt8]().hexEncoded(separator: ":") == "")
        #expect([UInt8](repeating: 7, count: 1).hexEncoded(separator: ":") == "07")
    }

    @Test("Every byte value survives a round trip in either case")
    func roundTrip() {
        let all = (0...255).map(UInt8.init)
        #expect([UInt8](hexEncoded: all.hexEncoded()) == all)
        #expect([UInt8](hexEncoded: all.hexEncoded(uppercase: true)) == all)
        #expect([UInt8](hexEncoded: "aBcD") == [0xAB, 0xCD])
        #expect([UInt8](hexEncoded: "") == [])
    }

    @Test(
        "Anything but pairs of hex digits is refused",
        arguments: ["a", "abc", "+f", "-1", "0x", "g0", "ab:cd", " ab", "ab\n", "é0"])
    func refusals(text: String) {
        #expect([UInt8](hexEncoded: text) == nil)
    }

    @Test("Single digits have their values in either case, other bytes none")
    func digits() {
        #expect(HexDigits.value(of: UInt8(ascii: "0")) == 0)
        #expect(HexDigits.value(of: UInt8(ascii: "9")) == 9)
        #expect(HexDigits.value(of: UInt8(ascii: "a")) == 10)
        #expect(HexDigits.value(of: UInt8(ascii: "F")) == 15)
        #expect(HexDigits.value(of: UInt8(ascii: "g")) == nil)
        #expect(HexDigits.value(of: UInt8(ascii: "+")) == nil)
    }
}
