import Crypto
import Foundation

/// A blob's content digest: `sha1-` + standard, padded base64 of the SHA-1 of its bytes (spec §7.1).
public struct BlobDigest: Sendable, Hashable, CustomStringConvertible {
    public static let prefix = "sha1-"

    public let rawValue: String

    /// Accepts only `sha1-` followed by base64 of exactly 20 bytes.
    public init(_ text: String) throws(ProtocolError) {
        guard text.hasPrefix(Self.prefix),
            let hash = Data(base64Encoded: String(text.dropFirst(Self.prefix.count))),
            hash.count == Insecure.SHA1.byteCount
        else {
            throw .invalidDigest(text)
        }
        rawValue = text
    }

    /// The digest of `content`.
    public init(of content: some DataProtocol) {
        rawValue = Self.prefix + Data(Insecure.SHA1.hash(data: content)).base64EncodedString()
    }

    public func matches(_ content: some DataProtocol) -> Bool {
        BlobDigest(of: content) == self
    }

    public var description: String { rawValue }
}
