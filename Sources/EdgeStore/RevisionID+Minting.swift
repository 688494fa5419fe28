import Crypto
import Foundation
import SyncIdentifiers

extension RevisionID {
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
        return RevisionID(generation: (parent?.generation ?? 0) + 1, digestBytes: Array(hasher.finalize()))
    }
}
