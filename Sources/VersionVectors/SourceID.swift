import Foundation

/// The 128-bit ID of a database that writes versions (spec §4.6): a device's database, or this node's. On the wire
/// it is 22 characters of base64 without padding, as LiteCore and Sync Gateway write it.
public struct SourceID: Hashable, Sendable, CustomStringConvertible {
    package let bytes: [UInt8]

    static let byteCount = 16
    static let textLength = 22

    /// - Precondition: `bytes` holds 16 bytes.
    package init(bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount, "a source ID is 16 bytes")
        self.bytes = bytes
    }

    /// The source ID of a database known by a UUID: its 16 bytes. Couchbase Lite 4 does the same: the `uuid` a
    /// 4.0.3 client sends in `getCollections` (`75d8dad8-c091-…`) is the source of all its versions
    /// (`…@ddja2MCRTril1aX52skGJg`) in the captures. This node's source is its node ID's, derived once and never
    /// changed.
    package init(uuid: UUID) {
        self.init(bytes: withUnsafeBytes(of: uuid.uuid) { Array($0) })
    }

    /// Parses 22 base64 characters (standard or URL-safe alphabet) whose last two bits are zero: the one text of
    /// 16 bytes, so that a source has one spelling.
    package init(_ text: Substring) throws(InvalidVersion.Reason) {
        let utf8 = Array(text.utf8)
        guard utf8.count == Self.textLength else { throw .sourceLength(utf8.count) }
        var bits: UInt32 = 0
        var bitCount = 0
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.byteCount)
        for character in utf8 {
            guard let value = Self.sextet(character) else { throw .sourceNotBase64 }
            bits = bits << 6 | UInt32(value)
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                bytes.append(UInt8(truncatingIfNeeded: bits >> UInt32(bitCount)))
                bits &= (1 << UInt32(bitCount)) - 1
            }
        }
        guard bits == 0 else { throw .sourceNotBase64 }
        self.init(bytes: bytes)
    }

    public var description: String {
        String(Data(bytes).base64EncodedString().dropLast(2))
    }

    private static func sextet(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"), UInt8(ascii: "-"): 62
        case UInt8(ascii: "/"), UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
