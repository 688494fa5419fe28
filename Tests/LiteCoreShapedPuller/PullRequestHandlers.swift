import BLIPCodec
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncJSON

/// The puller's answers to the peer's `changes`, `rev` and `norev`, under `PullFlowControl`.
struct PullRequestHandlers: Sendable {
    let database: DocumentDatabase
    let flow: PullFlowControl
    let inserter: RevisionBatchInserter
    let tuning: LiteCorePullerTuning

    /// LiteCore's `RevFinder::findRevs`: asks for every offered revision the database lacks, with the
    /// ancestors it has (up to 10, with bodies, current first) or `[]`; the reply is compressed and announces
    /// `maxHistory`, `blobs`, and `deltas` the first time.
    func changes(_ request: BLIPMessage) async throws -> BLIPMessage {
        guard await flow.enterChanges(request.number) else { throw CancellationError() }
        var offered: [(sequence: JSONValue, requested: Bool)] = []
        do {
            let decoded = try ChangesRequest(
                properties: MessageProperties(request.properties.pairs), body: request.body)
            if decoded.isCaughtUp {
                await flow.finishChanges(offered: [], caughtUp: true)
                return request.reply()
            }
            var entries = [ChangesReply.Entry](repeating: .skip, count: decoded.rows.count)
            var queries: [RevisionQuery] = []
            var queryRows: [Int] = []
            for (index, row) in decoded.rows.enumerated() where row.flags.offersRevision {
                queries.append(
                    RevisionQuery(docID: row.docID, revIDs: [try row.revision.requiringRevisionID(in: "CBMobile_3")]))
                queryRows.append(index)
            }
            let diffs = try await database.revisionDiffs(queries, in: .default, ancestorsWithBodiesOnly: true)
            var requested = [Bool](repeating: false, count: decoded.rows.count)
            for (index, diff) in zip(queryRows, diffs) {
                guard case .success(let diff) = diff, !diff.missing.isEmpty else { continue }
                entries[index] = .send(knownAncestors: diff.possibleAncestors.map(WireRevision.tree))
                requested[index] = true
            }
            offered = zip(decoded.rows, requested).map { ($0.sequence, $1) }
            let capabilities = ReceiverCapabilities(
                maxHistory: tuning.maxHistory, blobs: true, deltas: await flow.takeFirstReply())
            await flow.finishChanges(offered: offered, caughtUp: false)
            let (properties, body) = ChangesReply(entries: entries, capabilities: capabilities).encode()
            return request.reply(properties: BLIPProperties(properties.pairs), body: body, isCompressed: true)
        } catch {
            await flow.finishChanges(offered: offered, caughtUp: false)
            throw Self.blipError(error)
        }
    }

    /// LiteCore's `IncomingRev`: the full body (a delta applied to the stored base), then the inserter; the
    /// reply goes once the batch is committed.
    func rev(_ request: BLIPMessage) async throws -> BLIPMessage {
        guard await flow.enterRev(request.number) else { throw CancellationError() }
        var sequence: JSONValue?
        let revision: ExistingRevision
        do {
            let decoded = try RevRequest(properties: MessageProperties(request.properties.pairs), body: request.body)
            sequence = decoded.sequence
            if let errorCode = decoded.errorCode {
                throw BLIPErrorReply(domain: "HTTP", code: errorCode, message: "the peer could not send the revision")
            }
            let body = try await fullBody(of: decoded)
            if !DocumentBody.isPlain(body) {
                let object = try JSONValue(parsing: body).objectValue ?? [:]
                if !(try BlobReference.references(in: object)).isEmpty {
                    throw BLIPErrorReply(domain: "HTTP", code: 501, message: "this puller does not fetch blobs")
                }
            }
            revision = ExistingRevision(
                docID: decoded.docID, revID: try decoded.revision.requiringRevisionID(in: "CBMobile_3"),
                history: decoded.history.ancestors,
                deleted: decoded.deleted, body: Data(body))
        } catch {
            await flow.abandonRev(sequence: sequence)
            throw Self.blipError(error)
        }
        switch await inserter.insert(revision, sequence: sequence) {
        case .success(.failed(let error)):
            throw BLIPErrorReply(domain: "HTTP", code: 400, message: "\(error)")
        case .failure(let error):
            throw Self.blipError(error)
        case .success:
            return request.reply()
        }
    }

    func norev(_ request: BLIPMessage) async throws -> BLIPMessage {
        let sequence = request.properties["sequence"].flatMap { try? JSONValue(parsing: $0) }
        guard await flow.enterNoRev(request.number, sequence: sequence) else { throw CancellationError() }
        return request.reply()
    }

    private func fullBody(of request: RevRequest) async throws -> [UInt8] {
        guard let deltaSource = request.deltaSource else { return request.body }
        let base = try await database.revision(
            request.docID, revID: try deltaSource.requiringRevisionID(in: "CBMobile_3"))
        guard let base, !base.deleted, let baseBody = base.body else {
            throw BLIPErrorReply(domain: "HTTP", code: 422, message: "no delta base \(deltaSource)")
        }
        return try JSONDelta.apply(delta: request.body, to: Array(baseBody))
    }

    private static func blipError(_ error: any Error) -> any Error {
        switch error {
        case let error as BLIPErrorReply: error
        case let error as ProtocolError: BLIPErrorReply(domain: "BLIP", code: 400, message: "\(error)")
        case is CancellationError: error
        default: BLIPErrorReply(domain: "HTTP", code: 500, message: "\(error)")
        }
    }
}
