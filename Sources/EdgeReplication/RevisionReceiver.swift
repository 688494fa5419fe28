import BLIPCodec
import BLIPConnection
import EdgeStore
import Foundation
import Logging
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON
import VersionVectors

/// The one path from a received `rev` to its stored row, for both receivers: the listener storing what a
/// client pushes and the active replicator storing what it pulls (spec §3.7, §3.9, §6). It expands a delta,
/// builds the body as stored, fetches the blobs the store lacks from the sender, and inserts the revision
/// through the keyspace's group-commit inserter. What each receiver counts and logs on top stays with it.
struct RevisionReceiver: Sendable {
    /// The stored outcome of one `rev`, for the caller's bookkeeping.
    struct Received: Sendable {
        var outcome: ExistingRevisionResult
        /// The body as stored, in bytes.
        var storedBytes: Int
        /// The bytes of blobs fetched from the sender for it.
        var fetchedBlobBytes: Int
    }

    let database: DocumentDatabase
    let collection: CollectionName
    /// The `collection` property of the `getAttachment`s this side sends; `nil` in legacy mode.
    let collectionIndex: Int?
    let inserter: RevisionInserter
    /// The peer the revisions come from, which also serves their blobs.
    let connection: BLIPConnection
    let counters: ReplicationCounters
    /// Whether bodies carrying reserved properties are refused (`DocumentBody.validatePushed`): a client's
    /// pushes must not carry them; an upstream's revisions have them stripped, as LiteCore does.
    let refusesReservedProperties: Bool
    /// Whether the configuration lets this peer send deltas at all.
    let acceptsDeltas: Bool
    let logger: Logger

    /// Stores `request`; `nil` when the sender reported that it could not produce the revision (its
    /// `error` property), which leaves nothing to store. Store failures that reject the revision itself come
    /// back as `.failed` so that the caller counts them; everything else throws the BLIP error to reply with.
    /// `turn` is the `rev`'s place in arrival order, which is the order the revisions are stored in.
    func receive(_ request: RevRequest, noConflicts: Bool, turn: BLIPArrivalTurn) async throws -> Received? {
        guard let queued = try await prepareForCommit(request, noConflicts: noConflicts) else { return nil }
        return try await withCheckedThrowingContinuation { continuation in
            commit(queued, turn: turn) { continuation.resume(with: $0) }
        }
    }

    /// Stores `request` as `receive(_:noConflicts:turn:)` does, but returns once the revision is queued for the
    /// group commit: `completion` gets what that would return or throw, on the task that commits the batch, so
    /// that no task waits for each revision. What fails before the revision is queued is thrown instead.
    func receive(
        _ request: RevRequest, noConflicts: Bool, turn: BLIPArrivalTurn,
        then completion: @escaping @Sendable (Result<Received?, any Error>) -> Void
    ) async throws {
        guard let queued = try await prepareForCommit(request, noConflicts: noConflicts) else {
            completion(.success(nil))
            return
        }
        commit(queued, turn: turn) { completion($0.map { $0 }) }
    }

    /// Queues `queued` for the group commit in its turn; `completion` gets its outcome, with store failures
    /// reported to the peer as `storeCall` reports them.
    private func commit(
        _ queued: Queued, turn: BLIPArrivalTurn,
        then completion: @escaping @Sendable (Result<Received, any Error>) -> Void
    ) {
        turn.perform { [inserter, counters] in
            inserter.enqueue(queued.prepared) { result in
                completion(
                    result.map { queued.received($0) }.mapError { peerFacingError($0, countingFailuresIn: counters) })
            }
        }
    }

    /// A revision ready to join the group commit, with the sizes its `Received` reports.
    private struct Queued: Sendable {
        let prepared: RevisionInserter.Prepared
        let storedBytes: Int
        let fetchedBlobBytes: Int

        func received(_ outcome: ExistingRevisionResult) -> Received {
            Received(outcome: outcome, storedBytes: storedBytes, fetchedBlobBytes: fetchedBlobBytes)
        }
    }

    /// Everything before the revision joins the queue: the delta expanded, the body as stored, the missing blobs
    /// fetched. `nil` when the sender reported that it could not produce the revision.
    private func prepareForCommit(_ request: RevRequest, noConflicts: Bool) async throws -> Queued? {
        if let errorCode = request.errorCode {
            logger.info(
                "the peer reported a failed revision", metadata: ["doc": "\(request.docID)", "error": "\(errorCode)"])
            return nil
        }
        if request.deltaSource != nil, !acceptsDeltas {
            throw ErrorReply.http(400, "Deltas are disabled for this peer").blipError
        }
        let expanded = try await expandingDelta(of: request)
        let stored: RevRequest.StoredBody
        do throws(ProtocolError) {
            stored = try expanded.storedBody(refusingReserved: refusesReservedProperties)
        } catch {
            throw error.reply.blipError
        }
        let fetchedBlobBytes = try await fetchMissingBlobs(stored.blobs, docID: request.docID)
        let prepared: RevisionInserter.Prepared
        switch request.revision {
        case .tree(let revisionID):
            prepared = inserter.prepare(
                request.existingRevision(stored, revisionID: revisionID, noConflicts: noConflicts))
        case .vector(let vector):
            // Decided by vector comparison in the writer's transaction, shared with the revisions around it; a
            // concurrent version is a conflict, as the pusher resolves conflicts before it pushes.
            prepared = inserter.prepare(
                VersionedRevision(
                    docID: request.docID, vector: vector, deleted: request.deleted, body: stored.data,
                    bodyScan: stored.scan))
        }
        // Queued in arrival order by the caller, as LiteCore stores them: the sequences given there are the order
        // in which `changes` later lists these documents.
        return Queued(prepared: prepared, storedBytes: stored.data.count, fetchedBlobBytes: fetchedBlobBytes)
    }

    /// The request with its whole JSON body: as it came, or with its delta (`deltaSrc`) applied to the stored
    /// body of the base revision (spec §6). `HTTP/422` when the base or its body is not here, which tells the
    /// sender to send the full body instead.
    private func expandingDelta(of request: RevRequest) async throws -> RevRequest {
        guard let deltaSource = request.deltaSource else { return request }
        guard let baseBody = await deltaBase(deltaSource, of: request.docID) else {
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

    /// The body of a live delta base: a rev-tree revision by its ID; a version when it is the document's current
    /// one, which is the base a CBMobile_4 pusher uses (the version it proposed its change over).
    private func deltaBase(_ source: WireRevision, of docID: String) async -> Data? {
        switch source {
        case .tree(let revisionID):
            guard let base = try? await database.revision(docID, revID: revisionID, in: collection), !base.deleted
            else { return nil }
            return base.body
        case .vector(let vector):
            guard let document = try? await database.document(docID, in: collection), !document.deleted,
                document.vector?.current == vector.current
            else { return nil }
            return document.body
        }
    }

    /// Fetches from the sender, with `getAttachment`, every blob of `references` that the store lacks (spec
    /// §3.9), before the revision that needs them is stored; the blob store checks each digest before keeping
    /// the bytes. Returns the bytes fetched.
    private func fetchMissingBlobs(_ references: [BlobReference], docID: String) async throws -> Int {
        var bytes = 0
        var fetched: Set<BlobDigest> = []
        for reference in references where fetched.insert(reference.digest).inserted {
            if database.blobs.contains(reference.digest) { continue }
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
                try database.blobs.write(Data(reply.body), expectedDigest: reference.digest)
            }
            bytes += reply.body.count
        }
        return bytes
    }
}
