import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON

extension RevRequest {
    /// A received body as the store keeps it.
    struct StoredBody {
        var data: Data
        /// The blobs it refers to, to fetch before it is stored.
        var blobs: [BlobReference]
        /// The scan of `data`, when it is the body as received; the store then does not scan it again.
        var scan: JSONBodyScan?
    }

    /// The received body as it is stored, with the blobs it refers to. It is scanned once, and the store reuses
    /// the scan whenever the bytes stored are the bytes received. A plain body (`JSONBodyScan.isPlain`) is stored
    /// as it came, without a JSON tree. Any other is parsed: `_attachments` stand-ins are folded back into blob dicts and other top-level `_`
    /// properties dropped, as LiteCore does, and it is serialised again only if that changed something.
    /// `refusingReserved` refuses the properties a pushed body must not carry (`DocumentBody.validatePushed`).
    func storedBody(refusingReserved: Bool) throws(ProtocolError) -> StoredBody {
        let scan = try? JSONBodyScan(scanning: body)
        if let scan, scan.isPlain {
            return StoredBody(data: Data(body), blobs: [], scan: scan)
        }
        let object = try bodyObject()
        if refusingReserved {
            try DocumentBody.validatePushed(object)
        }
        guard body.isEmpty || DocumentBody.hasSpecialProperties(object) else {
            // Kept as received (a body with blobs, say), so the scan describes the stored bytes too.
            return StoredBody(data: Data(body), blobs: try BlobReference.references(in: object), scan: scan)
        }
        let stored = DocumentBody.strippingSpecialProperties(try BlobReference.strippingStandIns(from: object))
        return StoredBody(data: stored.jsonData, blobs: try BlobReference.references(in: stored))
    }

    /// This rev-tree revision (`revisionID`, this request's) as the store inserts it, with its stored body. Both
    /// receivers of `rev`s, the listener and the puller, call this (through `RevisionReceiver`).
    func existingRevision(_ stored: StoredBody, revisionID: RevisionID, noConflicts: Bool) -> ExistingRevision {
        ExistingRevision(
            docID: docID, revID: revisionID, history: history.ancestors, deleted: deleted, body: stored.data,
            noConflicts: noConflicts, bodyScan: stored.scan)
    }
}
