import BLIPCodec
import BLIPConnection
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers

extension DocumentDatabase {
    /// Fetches from the peer, with `getAttachment`, every blob of `references` that the store lacks (spec
    /// §3.9), before the revision that needs them is stored; the blob store checks each digest before keeping
    /// the bytes. Both receivers of `rev`s, the listener and the puller, call this. Returns the bytes fetched.
    func fetchMissingBlobs(
        _ references: [BlobReference], docID: String, collectionIndex: Int?, from connection: BLIPConnection,
        countingFailuresIn counters: ReplicationCounters
    ) async throws -> Int {
        var bytes = 0
        var fetched: Set<BlobDigest> = []
        for reference in references where fetched.insert(reference.digest).inserted {
            if blobs.contains(reference.digest) { continue }
            let request = GetAttachmentRequest(
                digest: reference.digest, docID: docID, compress: reference.prefersCompression,
                collection: collectionIndex)
            let reply: BLIPMessage
            do {
                reply = try await connection.sendRequest(.request(request))
            } catch let error as BLIPErrorReply {
                counters.countError(.peerRefused)
                throw ErrorReply.http(502, "getAttachment \(reference.digest) failed: \(error)").blipError
            }
            _ = try await storeCall(countingFailuresIn: counters) {
                try blobs.write(Data(reply.body), expectedDigest: reference.digest)
            }
            bytes += reply.body.count
        }
        return bytes
    }
}
