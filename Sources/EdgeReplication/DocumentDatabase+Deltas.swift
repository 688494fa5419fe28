import BLIPCodec
import EdgeStore
import ReplicationProtocol
import SyncIdentifiers

extension DocumentDatabase {
    /// A received `rev` with its whole JSON body: as it came, or with its delta (`deltaSrc`) applied
    /// to the stored body of the base revision (spec §6). `HTTP/422` when the base or its body is not
    /// here, which tells the sender to send the full body instead.
    func expandingDelta(of request: RevRequest, in collection: CollectionName) async throws -> RevRequest {
        guard let deltaSource = request.deltaSource else { return request }
        let base = try? await revision(request.docID, revID: deltaSource, in: collection)
        guard let baseBody = base?.body, base?.deleted == false else {
            throw ErrorReply.http(422, "the delta base \(deltaSource) of \(request.docID) is not available").blipError
        }
        var expanded = request
        do throws(ProtocolError) {
            expanded.body = try JSONDelta.apply(delta: request.body, to: Array(baseBody))
        } catch {
            throw error.reply.blipError
        }
        expanded.deltaSource = nil
        return expanded
    }
}
