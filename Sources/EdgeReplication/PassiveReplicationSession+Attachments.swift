import BLIPCodec
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers

// Blobs requested by a puller (spec §3.9, §3.10).
extension PassiveReplicationSession {
    /// `getAttachment`: the blob's raw bytes, compressed when asked. Any stored blob is served: unlike
    /// Sync Gateway this peer has no per-user document access to protect, and every client of a
    /// database may pull every document of it.
    func getAttachment(_ request: BLIPMessage) async throws -> BLIPMessage {
        let decoded = try request.decode(GetAttachmentRequest.self)
        _ = try keyspace(for: decoded.collection)
        let content = try storedBlob(decoded.digest)
        counters.countPulledBlob(bytes: content.count)
        return request.reply(body: Array(content), isCompressed: decoded.compress)
    }

    /// `proveAttachment`: proves this side has the blob; `HTTP/404` when it does not, which makes the
    /// asker fall back to `getAttachment`.
    func proveAttachment(_ request: BLIPMessage) async throws -> BLIPMessage {
        let decoded = try request.decode(ProveAttachmentRequest.self)
        _ = try keyspace(for: decoded.collection)
        let content = try storedBlob(decoded.digest)
        return request.reply(with: decoded.proof(for: content))
    }

    private func storedBlob(_ digest: BlobDigest) throws(BLIPErrorReply) -> Data {
        do {
            return try database.blobs.read(digest)
        } catch StoreError.blobNotFound {
            throw ErrorReply.http(404, "no blob \(digest)").blipError
        } catch let error as StoreError {
            throw error.errorReply.blipError
        } catch {
            throw ErrorReply.http(500, "reading blob \(digest) failed: \(error)").blipError
        }
    }
}
