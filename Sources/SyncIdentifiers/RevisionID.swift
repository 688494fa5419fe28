import HexEncoding

/// A rev-tree revision ID, `<generation>-<digest>` (spec §4.1), as the store keeps it and peers send it.
///
/// Validated the way LiteCore parses it: a decimal generation from 1 to 2³²−1 with no sign or leading zero, then a
/// non-empty, even-length, lowercase hex digest that fits LiteCore's 42-byte binary revision ID together with the
/// generation's varint. An ID a peer could send is one the store can keep, and the reverse.
///
/// Revision IDs order by generation, then by digest string: the order Couchbase uses to pick a winner among
/// conflicting leaves of equal liveness.
public struct RevisionID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The edit count: 1 for a document's first revision, parent + 1 afterwards.
    public let generation: UInt32
    /// Lowercase hex digits.
    package let digest: String

    typealias Reason = InvalidRevisionID.Reason

    /// LiteCore stores a binary revision ID (varint generation + digest bytes) in a 42-byte buffer.
    static let binaryCapacity = 42

    /// Parses `<generation>-<digest>`.
    ///
    /// Byte by byte over the text's storage: the store and the protocol parse several IDs for every revision, and
    /// through `String.UTF8View` each byte cost about 30 instructions (callgrind, `scripts/perf/instructions`).
    public init(_ text: String) throws(InvalidRevisionID) {
        // A native string hands over its own storage; only a bridged one is copied.
        var contiguous = text
        do throws(Reason) {
            self = try contiguous.withUTF8 { bytes in Result { () throws(Reason) in try Self.parse(bytes) } }.get()
        } catch {
            throw InvalidRevisionID(text: text, reason: error)
        }
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(Reason) -> RevisionID {
        guard let dash = bytes.firstIndex(of: UInt8(ascii: "-")) else { throw .missingSeparator }
        guard dash > 0 else { throw .generationNotDecimal }
        var generation: UInt64 = 0
        for byte in bytes[..<dash] {
            guard (0x30...0x39).contains(byte) else { throw .generationNotDecimal }
            // Past 2³²−1 the value stops growing, so that a long run of digits cannot overflow.
            generation = min(generation * 10 + UInt64(byte - 0x30), UInt64(UInt32.max) + 1)
        }
        guard bytes[0] != UInt8(ascii: "0") else { throw .generationStartsWithZero }
        guard generation <= UInt32.max else { throw .generationTooLarge }
        let digest = UnsafeBufferPointer(rebasing: bytes[(dash + 1)...])
        try validate(generation: UInt32(generation), digest: digest)
        return RevisionID(validGeneration: UInt32(generation), digest: String(decoding: digest, as: UTF8.self))
    }

    private init(validGeneration generation: UInt32, digest: String) {
        self.generation = generation
        self.digest = digest
    }

    /// Validates the parts of a revision ID by the rules `init(_:)` applies to its text, without going through the
    /// text: the replicator builds several IDs per revision.
    public init(generation: UInt32, digest: String) throws(InvalidRevisionID) {
        var digest = digest
        do throws(Reason) {
            try digest.withUTF8 { bytes in
                Result { () throws(Reason) in try Self.validate(generation: generation, digest: bytes) }
            }.get()
        } catch {
            throw InvalidRevisionID(text: "\(generation)-\(digest)", reason: error)
        }
        self.init(validGeneration: generation, digest: digest)
    }

    private static func validate(generation: UInt32, digest: UnsafeBufferPointer<UInt8>) throws(Reason) {
        guard generation >= 1 else { throw .generationBelowOne }
        guard !digest.isEmpty else { throw .emptyDigest }
        guard digest.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw .digestNotLowercaseHex
        }
        guard digest.count.isMultiple(of: 2) else { throw .oddDigestLength }
        let maximumDigestBytes = binaryCapacity - varintLength(generation)
        guard digest.count / 2 <= maximumDigestBytes else { throw .digestTooLong(maximumBytes: maximumDigestBytes) }
    }

    /// A revision ID whose digest is `digestBytes` in lowercase hex, for digests made here rather than received: a
    /// minted revision's SHA-1, LiteCore's placeholders. Their length is fixed and fits beside any generation, so
    /// an ID this refuses is a programming error, not input to report.
    public init(generation: UInt32, digestBytes: [UInt8]) {
        do {
            self = try RevisionID(generation: generation, digest: digestBytes.hexEncoded())
        } catch {
            preconditionFailure("a computed revision ID must be valid: \(error)")
        }
    }

    /// Written in one buffer rather than interpolated, which cost about 840 instructions an ID: the store and the
    /// protocol write several for every revision.
    public var description: String {
        var digest = digest
        return digest.withUTF8 { digestBytes in
            var generationDigits = 1
            var remainder = generation / 10
            while remainder > 0 {
                generationDigits += 1
                remainder /= 10
            }
            return String(unsafeUninitializedCapacity: generationDigits + 1 + digestBytes.count) { text in
                var value = generation
                for index in stride(from: generationDigits - 1, through: 0, by: -1) {
                    text[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                text[generationDigits] = UInt8(ascii: "-")
                _ = UnsafeMutableBufferPointer(rebasing: text[(generationDigits + 1)...]).initialize(from: digestBytes)
                return generationDigits + 1 + digestBytes.count
            }
        }
    }

    public static func < (lhs: RevisionID, rhs: RevisionID) -> Bool {
        lhs.generation != rhs.generation ? lhs.generation < rhs.generation : lhs.digest < rhs.digest
    }

    /// LiteCore writes the generation as a varint, 7 bits a byte.
    private static func varintLength(_ value: UInt32) -> Int {
        max(1, (UInt32.bitWidth - value.leadingZeroBitCount + 6) / 7)
    }
}
