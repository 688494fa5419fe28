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
}
