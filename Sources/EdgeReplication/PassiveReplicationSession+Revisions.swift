import BLIPCodec
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON

// Sending one pulled revision (spec §3.7, §3.8, §6, §7.2).
extension PassiveReplicationSession {
    /// A `rev` as sent, with what is needed to send it again in full should a delta be refused.
    struct SentRevision: Sendable {
        var change: Change
        var request: RevRequest
        var storedBody: Data
        /// The generation of its rev-tree ID, which `_attachments` stand-ins carry.
        var generation: UInt32
    }

    /// The `rev` for `revision`, as read for `change` (or the document's current revision in its place,
    /// announced with `replacedRev`), as a delta against `deltaBase` (a revision the puller has, read with the
    /// window) when it can take one; `nil` after sending a `norev` when the revision is gone. Nonisolated, so
    /// that the body and delta work does not queue on this actor.
    nonisolated func revisionRequest(
        _ change: Change, _ revision: OutgoingRevision?, deltaBase: OutgoingRevision?,
        capabilities: ReceiverCapabilities, keyspace: Keyspace
    ) async throws -> (SentRevision, BLIPMessage)? {
        let sequence = JSONValue.integer(Int(change.sequence))
        guard let revision else {
            // Purged or compacted away since it was offered: let the puller move past it.
            try await sendNoRevision(change, sequence: sequence, keyspace: keyspace)
            return nil
        }
        var body = try Self.outgoingBody(
            revision.body, generation: revision.revID.generation, capabilities: capabilities)
        var deltaSource: WireRevision?
        if configuration.deltaSync, capabilities.deltas, let deltaBase,
            let delta = try delta(to: body, from: deltaBase, capabilities: capabilities)
        {
            body = delta
            // A CBMobile_4 puller named the base by its current version, and gets it back so.
            deltaSource =
                if usesVersionVectors, let vector = deltaBase.vector { WireRevision(vector.current) } else {
                    .tree(deltaBase.revID)
                }
        }
        // On CBMobile_4 a revision with a vector goes as its whole vector, which holds its history.
        let sentRevision: WireRevision
        let history: RevisionHistory
        if usesVersionVectors, let vector = revision.vector {
            (sentRevision, history) = (.vector(vector), RevisionHistory())
        } else {
            (sentRevision, history) = (.tree(revision.revID), RevisionHistory(revision.history))
        }
        let request = RevRequest(
            docID: change.docID, revision: sentRevision, history: history,
            sequence: sequence, deleted: revision.deleted, deltaSource: deltaSource,
            replacedRevision: revision.revID == change.revID ? nil : wireRevision(of: change),
            collection: keyspace.index, body: body)
        let sent = SentRevision(
            change: change, request: request, storedBody: revision.body, generation: revision.revID.generation)
        return (sent, .request(request))
    }

    /// Handles the puller's answer to one `rev`: a refused delta is sent again as the whole body; any
    /// other refusal is logged, as the puller decides what it stores.
    nonisolated func finishRevision(
        _ sent: SentRevision, _ outcome: Result<BLIPMessage, BLIPErrorReply>, capabilities: ReceiverCapabilities
    ) async throws {
        guard case .failure(var refusal) = outcome else {
            counters.countPulled(bytes: sent.storedBody.count)
            return
        }
        let reply = ErrorReply(domain: ErrorDomain(rawValue: refusal.domain), code: refusal.code)
        if sent.request.deltaSource != nil, reply.asksForFullRevision {
            var request = sent.request
            request.deltaSource = nil
            request.body = try Self.outgoingBody(
                sent.storedBody, generation: sent.generation, capabilities: capabilities)
            do {
                _ = try await connection.sendRequest(.request(request))
                counters.countPulled(bytes: sent.storedBody.count)
                return
            } catch let error as BLIPErrorReply {
                refusal = error
            }
        }
        logger.info("peer refused a pulled revision", metadata: ["doc": "\(sent.change.docID)", "error": "\(refusal)"])
        if refusal.code == 409 { counters.countConflict() } else { counters.countRejectedPull() }
    }

    private nonisolated func sendNoRevision(_ change: Change, sequence: JSONValue, keyspace: Keyspace) async throws {
        let norev = NoRevRequest(
            docID: change.docID, revision: wireRevision(of: change), sequence: sequence, error: 404,
            reason: "revision is no longer available", collection: keyspace.index)
        try await connection.sendNoReply(.request(norev, isNoReply: true))
    }

    /// The body as the puller gets it: with `_attachments` stand-ins unless it said `blobs: true`. A plain body
    /// has no blob to stand in for, so it goes as stored.
    static func outgoingBody(_ stored: Data, generation: UInt32, capabilities: ReceiverCapabilities) throws -> [UInt8] {
        let bytes = Array(stored)
        guard !capabilities.blobs, !DocumentBody.isPlain(bytes) else { return bytes }
        guard case .object(let object) = try JSONValue(parsing: bytes) else { return bytes }
        return JSONValue.object(BlobReference.addingStandIns(to: object, revisionGeneration: generation)).serialized
    }

    /// A JSON delta from the base the puller has to `body`, when `DeltaPolicy` says it is worth it.
    private nonisolated func delta(
        to body: [UInt8], from base: OutgoingRevision, capabilities: ReceiverCapabilities
    ) throws -> [UInt8]? {
        let old = try JSONValue(
            parsing: try Self.outgoingBody(base.body, generation: base.revID.generation, capabilities: capabilities))
        let delta = JSONDelta.makeDelta(from: old, to: try JSONValue(parsing: body)).serialized
        let worthIt = DeltaPolicy.shouldSendDelta(
            deltaSize: delta.count, bodySize: body.count, baseIsTombstone: base.deleted,
            receiverAcceptsDeltas: capabilities.deltas)
        return worthIt ? delta : nil
    }
}
