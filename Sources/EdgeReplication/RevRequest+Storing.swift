import EdgeStore
import Foundation
import ReplicationProtocol

extension RevRequest {
    /// The received body (`object`, parsed from this revision's whole body) as it is stored: `_attachments`
    /// stand-ins folded back into blob dicts and other top-level `_` properties dropped, as LiteCore does; with
    /// the bytes to store. Those are the received bytes when nothing needed rewriting, which spares a plain
    /// document being serialised again.
    func storedBody(_ object: JSONObject) throws(ProtocolError) -> (object: JSONObject, data: Data) {
        guard body.isEmpty || DocumentBody.hasSpecialProperties(object) else { return (object, Data(body)) }
        let stored = DocumentBody.strippingSpecialProperties(try BlobReference.strippingStandIns(from: object))
        return (stored, stored.jsonData)
    }

    /// This revision as the store inserts it, with `body` (from `storedBody`); IDs the store refuses become
    /// the `HTTP` error reply for the peer. Both receivers of `rev`s, the listener and the puller, call this.
    func existingRevision(body: Data, noConflicts: Bool) throws -> ExistingRevision {
        do throws(StoreError) {
            return ExistingRevision(
                docID: docID, revID: try RevisionID(revisionID),
                history: try history.ancestors.map { ancestor throws(StoreError) in try RevisionID(ancestor) },
                deleted: deleted, body: body, noConflicts: noConflicts)
        } catch {
            throw error.errorReply.blipError
        }
    }
}
