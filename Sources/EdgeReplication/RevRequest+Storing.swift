import EdgeStore
import Foundation
import ReplicationProtocol

extension RevRequest {
    /// The received body as it is stored, with the blobs it refers to. A plain body (`DocumentBody.isPlain`)
    /// is stored as the bytes it came in, after one scan and without a JSON tree. Any other is parsed:
    /// `_attachments` stand-ins are folded back into blob dicts and other top-level `_` properties dropped, as
    /// LiteCore does, and it is serialised again only if that changed something. `refusingReserved` refuses the
    /// properties a pushed body must not carry (`DocumentBody.validatePushed`).
    func storedBody(refusingReserved: Bool) throws(ProtocolError) -> (data: Data, blobs: [BlobReference]) {
        if DocumentBody.isPlain(body) {
            return (Data(body), [])
        }
        let object = try bodyObject()
        if refusingReserved {
            try DocumentBody.validatePushed(object)
        }
        guard body.isEmpty || DocumentBody.hasSpecialProperties(object) else {
            return (Data(body), try BlobReference.references(in: object))
        }
        let stored = DocumentBody.strippingSpecialProperties(try BlobReference.strippingStandIns(from: object))
        return (stored.jsonData, try BlobReference.references(in: stored))
    }

    /// This revision as the store inserts it, with `body` (from `storedBody`). Both receivers of `rev`s, the
    /// listener and the puller, call this.
    func existingRevision(body: Data, noConflicts: Bool) -> ExistingRevision {
        ExistingRevision(
            docID: docID, revID: revisionID, history: history.ancestors, deleted: deleted, body: body,
            noConflicts: noConflicts)
    }
}
