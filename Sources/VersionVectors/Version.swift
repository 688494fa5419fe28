/// One version of a document (spec §4.6, WIRE-NOTES §4): `<hex timestamp>@<source ID>`, the hybrid-logical-clock
/// time (nanoseconds since 1970, the low 16 bits a counter) at which `source` wrote it.
public struct Version: Hashable, Sendable, CustomStringConvertible {
    package let timestamp: UInt64
    public let source: SourceID

    public init(timestamp: UInt64, source: SourceID) {
        self.timestamp = timestamp
        self.source = source
    }

    /// Parses `<1 to 16 hex digits>@<22 base64 characters>`. Hex digits of either case are accepted; they are
    /// written lowercase.
    public init(_ text: Substring) throws(InvalidVersion) {
        do throws(InvalidVersion.Reason) {
            self = try scanning(text, Version.init(textBytes:))
        } catch {
            throw InvalidVersion(text: String(text), reason: error)
        }
    }

    public init(_ text: String) throws(InvalidVersion) {
        try self.init(Substring(text))
    }

    init(textBytes bytes: VersionTextBytes) throws(InvalidVersion.Reason) {
        guard let at = bytes.firstIndex(of: UInt8(ascii: "@")) else { throw .missingSeparator }
        let hex = bytes[..<at]
        guard !hex.isEmpty else { throw .timestampNotHex }
        var timestamp: UInt64 = 0
        for byte in hex {
            guard let nibble = byte.hexValue else { throw .timestampNotHex }
            timestamp = timestamp << 4 | UInt64(nibble)
        }
        guard hex.count <= 16 else { throw .timestampTooLong }
        guard timestamp > 0 else { throw .timestampZero }
        self.init(timestamp: timestamp, source: try SourceID(textBytes: bytes[(at + 1)...]))
    }

    public var description: String {
        String(unsafeUninitializedCapacity: textLength) { buffer in
            write(into: buffer)
            return textLength
        }
    }

    /// The length of the text: the timestamp's hex digits, `@` and the source.
    var textLength: Int { timestampDigits + 1 + SourceID.textLength }

    private var timestampDigits: Int { max(1, (64 - timestamp.leadingZeroBitCount + 3) / 4) }

    /// Writes the text at the start of `buffer`, which has room for `textLength` bytes. A received revision's
    /// versions are written again and again, so without intermediate strings.
    func write(into buffer: UnsafeMutableBufferPointer<UInt8>) {
        let digits = timestampDigits
        for index in 0..<digits {
            let nibble = Int(timestamp >> UInt64(4 * (digits - 1 - index)) & 0xF)
            buffer[index] = Self.hexDigits[nibble]
        }
        buffer[digits] = UInt8(ascii: "@")
        source.write(into: UnsafeMutableBufferPointer(rebasing: buffer[(digits + 1)...]))
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Whether `text` names versions rather than a rev-tree ID: only versions hold an `@`. Looked for byte by byte:
    /// Foundation's `contains(_:)` is a locale-aware search, which cost about 10,000 instructions for every
    /// `proposeChanges` row and every `rev` (callgrind, `scripts/perf/instructions`). Not generic: a generic
    /// version is not specialised across modules, and iterates through the standard library's generic code. Over
    /// the text's storage where it has one: through `String.UTF8View` each byte costs about 25 instructions.
    package static func isVersionText(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { $0.contains(UInt8(ascii: "@")) }
            ?? text.utf8.contains(UInt8(ascii: "@"))
    }

    package static func isVersionText(_ text: Substring) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { $0.contains(UInt8(ascii: "@")) }
            ?? text.utf8.contains(UInt8(ascii: "@"))
    }
}

extension UInt8 {
    /// The value of a hex digit of either case.
    fileprivate var hexValue: UInt8? {
        switch self {
        case 0x30...0x39: self - 0x30
        case 0x61...0x66: self - 0x61 + 10
        case 0x41...0x46: self - 0x41 + 10
        default: nil
        }
    }
}
