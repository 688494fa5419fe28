/// A rev-tree revision ID as it travels on the wire: `<generation>-<digest>` (spec §4.1).
///
/// Validated the way LiteCore parses it: a decimal generation from 1 to 2³²−1 with no sign or leading
/// zero, then a non-empty, even-length, lowercase hex digest that fits LiteCore's 42-byte revID
/// buffer together with the generation's varint.
public struct WireRevisionID: Sendable, Hashable, CustomStringConvertible {
    public let generation: UInt32
    /// Lowercase hex digits.
    public let digest: String

    /// LiteCore stores a binary revID (varint generation + digest bytes) in a 42-byte buffer.
    static let binaryCapacity = 42

    public init(_ text: String) throws(ProtocolError) {
        guard let dash = text.utf8.firstIndex(of: UInt8(ascii: "-")) else {
            throw .invalidRevisionID(text, reason: "expected <generation>-<digest>")
        }
        let generationText = text[..<dash]
        let digestText = String(text[text.index(after: dash)...])
        guard !generationText.isEmpty, generationText.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw .invalidRevisionID(text, reason: "the generation is not a decimal number")
        }
        guard generationText.first != "0" else {
            throw .invalidRevisionID(text, reason: "the generation must be at least 1, without leading zeros")
        }
        guard let generation = UInt32(generationText) else {
            throw .invalidRevisionID(text, reason: "the generation exceeds 2^32-1")
        }
        try self.init(generation: generation, digest: digestText)
    }

    public init(generation: UInt32, digest: String) throws(ProtocolError) {
        func invalid(_ reason: String) -> ProtocolError {
            .invalidRevisionID("\(generation)-\(digest)", reason: reason)
        }
        guard generation >= 1 else {
            throw invalid("the generation must be at least 1")
        }
        guard !digest.isEmpty else {
            throw invalid("the digest is empty")
        }
        guard digest.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw invalid("the digest must be lowercase hexadecimal")
        }
        guard digest.utf8.count.isMultiple(of: 2) else {
            throw invalid("the digest has an odd number of hex digits")
        }
        let maximumDigestBytes = Self.binaryCapacity - Self.varintLength(generation)
        guard digest.utf8.count / 2 <= maximumDigestBytes else {
            throw invalid("the digest is longer than \(maximumDigestBytes) bytes")
        }
        self.generation = generation
        self.digest = digest
    }

    private init(validGeneration generation: UInt32, digest: String) {
        self.generation = generation
        self.digest = digest
    }

    public var description: String { "\(generation)-\(digest)" }

    /// LiteCore's stand-in for an ancestor missing from a pruned tree (spec §4.2):
    /// `<generation>-faded000` followed by 16 random hex digits.
    public static func fadedPlaceholder(
        generation: UInt32,
        using generator: inout some RandomNumberGenerator
    ) -> WireRevisionID {
        let random = UInt64.random(in: .min ... .max, using: &generator)
        let hex = String(random, radix: 16)
        let digest = "faded000" + String(repeating: "0", count: 16 - hex.count) + hex
        // Always valid: 12 bytes of lowercase hex fit beside any generation's varint.
        return WireRevisionID(validGeneration: max(generation, 1), digest: digest)
    }

    private static func varintLength(_ value: UInt32) -> Int {
        var length = 1
        var rest = value >> 7
        while rest != 0 {
            length += 1
            rest >>= 7
        }
        return length
    }
}
