import Crypto
import Foundation

/// A blob's key: `sha1-` + standard padded base64 of the SHA-1 of its content (§7.1).
public struct BlobDigest: Hashable, Sendable, CustomStringConvertible {
    /// The 20 bytes of the SHA-1.
    public let sha1: [UInt8]

    /// Parses `sha1-<28 base64 characters>`.
    public init(_ string: String) throws(StoreError) {
        guard string.hasPrefix("sha1-") else { throw .invalidBlobDigest(string) }
        let encoded = string.dropFirst(5)
        guard encoded.utf8.count == 28, let bytes = Data(base64Encoded: String(encoded)), bytes.count == 20 else {
            throw .invalidBlobDigest(string)
        }
        self.sha1 = Array(bytes)
    }

    init(sha1: Insecure.SHA1Digest) {
        self.sha1 = Array(sha1)
    }

    /// The digest of `content`.
    public init(of content: Data) {
        self.init(sha1: Insecure.SHA1.hash(data: content))
    }

    public var description: String { "sha1-" + Data(sha1).base64EncodedString() }

    /// Base64 contains `/`, so blob files are named by the hex form of the digest.
    var fileName: String {
        sha1.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined() + ".blob"
    }

    init?(fileName: String) {
        guard fileName.hasSuffix(".blob") else { return nil }
        let hex = Array(fileName.dropLast(5).utf8)
        guard hex.count == 40 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        for index in stride(from: 0, to: 40, by: 2) {
            guard let byte = UInt8(String(decoding: hex[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        self.sha1 = bytes
    }
}
