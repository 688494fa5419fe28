import Foundation

/// The 128-bit ID of a database that writes versions (spec §4.6): a device's database, or this node's. On the wire
/// it is 22 characters of base64 without padding, as LiteCore and Sync Gateway write it.
public struct SourceID: Hashable, Sendable, CustomStringConvertible {
    /// The 16 bytes as two big-endian words, kept inline: a version then costs no allocation, and every received
    /// revision parses and writes several.
    private let high: UInt64
    private let low: UInt64

    static let byteCount = 16
    static let textLength = 22

    /// - Precondition: `bytes` holds 16 bytes.
    package init(bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount, "a source ID is 16 bytes")
        high = bytes[..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = bytes[8...].reduce(0) { $0 << 8 | UInt64($1) }
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
        self = try scanning(text, SourceID.init(textBytes:))
    }

    init(textBytes bytes: VersionTextBytes) throws(InvalidVersion.Reason) {
        guard bytes.count == Self.textLength else { throw .sourceLength(bytes.count) }
        // Character i holds bits 6i to 6i+5 of the 128, counted from the most significant; the last one holds
        // the final 2 bits and 4 zero bits.
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, character) in bytes.enumerated() {
            guard let sextet = Self.sextet(character).map(UInt64.init) else { throw .sourceNotBase64 }
            let position = 6 * index
            switch position {
            case ..<60: high |= sextet << UInt64(58 - position)
            case 60:
                high |= sextet >> 2
                low |= (sextet & 0x3) << 62
            case ..<126: low |= sextet << UInt64(122 - position)
            default:
                guard sextet & 0xF == 0 else { throw .sourceNotBase64 }
                low |= sextet >> 4
            }
        }
        self.high = high
        self.low = low
    }

    public var description: String {
        String(unsafeUninitializedCapacity: Self.textLength) { buffer in
            write(into: UnsafeMutableBufferPointer(rebasing: buffer[...]))
            return Self.textLength
        }
    }

    /// Writes the 22 characters of the text at the start of `buffer`, which has room for them.
    func write(into buffer: UnsafeMutableBufferPointer<UInt8>) {
        for index in 0..<Self.textLength {
            let position = 6 * index
            let sextet: UInt64 =
                switch position {
                case ..<60: high >> UInt64(58 - position) & 0x3F
                case 60: (high & 0xF) << 2 | low >> 62
                case ..<126: low >> UInt64(122 - position) & 0x3F
                default: (low & 0x3) << 4
                }
            buffer[index] = Self.alphabet[Int(sextet)]
        }
    }

    /// The standard base64 alphabet, which LiteCore and Sync Gateway write.
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

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
