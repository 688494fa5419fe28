import Crypto
import Foundation

/// A rev-tree revision ID, `<generation>-<digest>` (§4.1 of the protocol notes).
///
/// Revision IDs order by generation, then by digest string; this is the order Couchbase uses to
/// pick a winner among conflicting leaves of equal liveness.
public struct RevisionID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// LiteCore stores a digest of at most 37 bytes (a 42-byte buffer minus the generation varint).
    static let maxDigestBytes = 37

    /// The edit count: 1 for a document's first revision, parent + 1 afterwards.
    public let generation: UInt32
    /// The lowercase hex digest.
    public let digest: String

    /// Parses and validates a revision ID string.
    public init(_ string: String) throws(StoreError) {
        let utf8 = string.utf8
        guard let dash = utf8.firstIndex(of: UInt8(ascii: "-")) else {
            throw .invalidRevisionID(string)
        }
        let generationBytes = utf8[utf8.startIndex..<dash]
        let digestBytes = utf8[utf8.index(after: dash)...]
        guard !generationBytes.isEmpty, generationBytes.count <= 10,
            generationBytes.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let generation = UInt32(Substring(generationBytes)), generation >= 1
        else { throw .invalidRevisionID(string) }
        guard Self.isValidDigest(digestBytes) else { throw .invalidRevisionID(string) }
        self.generation = generation
        self.digest = String(Substring(digestBytes))
    }

    /// Validates the parts of a revision ID the way `init(_:)` validates its text, without going through
    /// the text: the replicator converts every revision ID it sends or receives.
    public init(generation: UInt32, digest: String) throws(StoreError) {
        guard generation >= 1, Self.isValidDigest(digest.utf8[...]) else {
            throw .invalidRevisionID("\(generation)-\(digest)")
        }
        self.generation = generation
        self.digest = digest
    }

    private init(validGeneration generation: UInt32, digest: String) {
        self.generation = generation
        self.digest = digest
    }

    private static func isValidDigest(_ bytes: Substring.UTF8View) -> Bool {
        !bytes.isEmpty && bytes.count % 2 == 0 && bytes.count <= 2 * maxDigestBytes && bytes.allSatisfy(isLowercaseHex)
    }

    public var description: String { "\(generation)-\(digest)" }

    public static func < (lhs: RevisionID, rhs: RevisionID) -> Bool {
        lhs.generation != rhs.generation ? lhs.generation < rhs.generation : lhs.digest < rhs.digest
    }

    /// Mints the ID of a new local revision the way Couchbase Lite does, except that the body is
    /// hashed as canonical JSON (sorted keys, compact) instead of Fleece: SHA-1 over the parent ID's
    /// length as one byte, the parent ID's ASCII, one byte for the deleted flag, then the body.
    /// Peers never recompute digests, so only uniqueness matters for interoperability; being
    /// deterministic makes identical concurrent edits on two peers converge to the same ID.
    static func minted(parent: RevisionID?, deleted: Bool, canonicalBody: Data) -> RevisionID {
        var hasher = Insecure.SHA1()
        let parentBytes = Array((parent?.description ?? "").utf8)
        hasher.update(data: [UInt8(truncatingIfNeeded: parentBytes.count)])
        hasher.update(data: parentBytes)
        hasher.update(data: [deleted ? 1 : 0])
        hasher.update(data: canonicalBody)
        let digest = hasher.finalize().map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
        return RevisionID(validGeneration: (parent?.generation ?? 0) + 1, digest: digest)
    }

    private static func isLowercaseHex(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
    }
}
