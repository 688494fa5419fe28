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

    /// LiteCore stores a binary revision ID (varint generation + digest bytes) in a 42-byte buffer.
    static let binaryCapacity = 42

    /// Parses `<generation>-<digest>`.
    public init(_ text: String) throws(InvalidRevisionID) {
        let utf8 = text.utf8
        guard let dash = utf8.firstIndex(of: UInt8(ascii: "-")) else {
            throw InvalidRevisionID(text: text, reason: .missingSeparator)
        }
        let generationText = utf8[..<dash]
        guard !generationText.isEmpty, generationText.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw InvalidRevisionID(text: text, reason: .generationNotDecimal)
        }
        guard generationText.first != UInt8(ascii: "0") else {
            throw InvalidRevisionID(text: text, reason: .generationStartsWithZero)
        }
        guard let generation = UInt32(Substring(generationText)) else {
            throw InvalidRevisionID(text: text, reason: .generationTooLarge)
        }
        // The generation's text is its description, so an error about the digest names the text as given.
        try self.init(generation: generation, digest: String(Substring(utf8[utf8.index(after: dash)...])))
    }

    /// Validates the parts of a revision ID by the rules `init(_:)` applies to its text, without going through the
    /// text: the replicator builds several IDs per revision.
    public init(generation: UInt32, digest: String) throws(InvalidRevisionID) {
        func invalid(_ reason: InvalidRevisionID.Reason) -> InvalidRevisionID {
            InvalidRevisionID(text: "\(generation)-\(digest)", reason: reason)
        }
        guard generation >= 1 else {
            throw invalid(.generationBelowOne)
        }
        guard !digest.isEmpty else {
            throw invalid(.emptyDigest)
        }
        guard digest.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw invalid(.digestNotLowercaseHex)
        }
        guard digest.utf8.count.isMultiple(of: 2) else {
            throw invalid(.oddDigestLength)
        }
        let maximumDigestBytes = Self.binaryCapacity - Self.varintLength(generation)
        guard digest.utf8.count / 2 <= maximumDigestBytes else {
            throw invalid(.digestTooLong(maximumBytes: maximumDigestBytes))
        }
        self.generation = generation
        self.digest = digest
    }

    /// A revision ID whose digest is `digestBytes` in lowercase hex, for digests made here rather than received: a
    /// minted revision's SHA-1, LiteCore's placeholders. Their length is fixed and fits beside any generation, so
    /// an ID this refuses is a programming error, not input to report.
    public init(generation: UInt32, digestBytes: some Sequence<UInt8>) {
        do {
            self = try RevisionID(generation: generation, digest: digestBytes.hexEncoded())
        } catch {
            preconditionFailure("a computed revision ID must be valid: \(error)")
        }
    }

    public var description: String { "\(generation)-\(digest)" }

    public static func < (lhs: RevisionID, rhs: RevisionID) -> Bool {
        lhs.generation != rhs.generation ? lhs.generation < rhs.generation : lhs.digest < rhs.digest
    }

    /// LiteCore writes the generation as a varint, 7 bits a byte.
    private static func varintLength(_ value: UInt32) -> Int {
        max(1, (UInt32.bitWidth - value.leadingZeroBitCount + 6) / 7)
    }
}
