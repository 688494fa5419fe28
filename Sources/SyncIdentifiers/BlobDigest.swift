import Crypto
import Foundation

/// A blob's key (spec §7.1): `sha1-` and the standard, padded base64 of the SHA-1 of its content.
package struct BlobDigest: Hashable, Sendable, CustomStringConvertible {
    private static let prefix = "sha1-"

    /// The 20 bytes of the SHA-1. They alone make a digest's identity: a blob is one blob whichever text names it.
    package let sha1: [UInt8]

    /// The `sha1-…` text as parsed. The base64 character before the `=` carries two bits that decoding ignores,
    /// so four texts name each blob; a peer is sent back the one it wrote, and a computed digest has the canonical
    /// one.
    package let description: String

    /// Parses `sha1-` followed by 28 base64 characters of 20 bytes.
    package init(_ text: String) throws(InvalidBlobDigest) {
        guard text.hasPrefix(Self.prefix) else { throw InvalidBlobDigest(text: text) }
        let encoded = text.dropFirst(Self.prefix.count)
        guard encoded.utf8.count == 28, let bytes = Data(base64Encoded: String(encoded)),
            bytes.count == Insecure.SHA1.byteCount
        else {
            throw InvalidBlobDigest(text: text)
        }
        self.sha1 = Array(bytes)
        self.description = text
    }

    /// The digest of `content`.
    package init(of content: some DataProtocol) {
        self.init(sha1: Insecure.SHA1.hash(data: content))
    }

    /// The digest of content hashed elsewhere, such as a blob hashed as it streams in.
    package init(sha1: Insecure.SHA1Digest) {
        self.init(canonical: Array(sha1))
    }

    /// The digest whose SHA-1 is `sha1`, for digests kept in another form; nil unless it is 20 bytes.
    package init?(sha1: [UInt8]) {
        guard sha1.count == Insecure.SHA1.byteCount else { return nil }
        self.init(canonical: sha1)
    }

    private init(canonical sha1: [UInt8]) {
        self.sha1 = sha1
        self.description = Self.prefix + Data(sha1).base64EncodedString()
    }

    /// Whether `content` is the blob this digest names.
    package func matches(_ content: some DataProtocol) -> Bool {
        BlobDigest(of: content) == self
    }

    package static func == (lhs: BlobDigest, rhs: BlobDigest) -> Bool {
        lhs.sha1 == rhs.sha1
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(sha1)
    }
}
