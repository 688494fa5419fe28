import HexEncoding
import SyncIdentifiers

extension BlobDigest {
    /// Base64 contains `/`, so blob files are named by the hex form of the digest.
    var fileName: String {
        sha1.hexEncoded() + ".blob"
    }

    /// Only the name this store writes for a digest maps back to it, so two files can never claim the same blob.
    init?(fileName: String) {
        guard fileName.hasSuffix(".blob"), let bytes = [UInt8](hexEncoded: fileName.dropLast(5)), bytes.count == 20
        else { return nil }
        self.init(sha1: bytes)
        guard self.fileName == fileName else { return nil }
    }
}
