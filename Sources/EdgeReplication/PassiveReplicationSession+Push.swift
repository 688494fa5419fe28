import BLIPCodec
import EdgeStore
import Foundation
import ReplicationProtocol

// The client pushes: it proposes revisions, then sends them with `rev` (spec §3.6, §3.7).
extension PassiveReplicationSession {
    /// `proposeChanges`: the §3.6 decision per row; the empty noReply one is only a caught-up marker.
    func proposeChanges(_ request: BLIPMessage) async throws -> BLIPMessage {
        let decoded = try request.decode(ProposeChangesRequest.self)
        let keyspace = try keyspace(for: decoded.collection)
        if request.isNoReply {
            return request.reply()
        }
        counters.countProposed(revisions: decoded.rows.count)
        let proposals = decoded.rows.map { row in
            EdgeStore.ProposedChange(docID: row.docID, revID: row.revisionID, parentRevID: row.remoteRevisionID)
        }
        let verdicts = try await storeCall {
            try await database.checkProposedChanges(proposals, in: keyspace.collection)
        }
        let statuses = verdicts.map { verdict -> ProposeChangesReply.Status in
            switch verdict {
            case .accept:
                .accepted
            case .alreadyHave:
                .alreadyKnown
            case .conflict(let current):
                .conflict(currentRevision: decoded.conflictIncludesRev ? current : nil)
            case .invalid:
                .failed(verdict.statusCode)
            }
        }
        return request.reply(
            with: ProposeChangesReply(statuses: statuses, capabilities: receiverCapabilities(for: keyspace)))
    }

    /// `changes` from an active pusher (rare with rev-trees, spec §3.5): per row, the revisions this
    /// side has that may be ancestors, or "don't send" when it already has the revision.
    func changes(_ request: BLIPMessage) async throws -> BLIPMessage {
        let decoded = try request.decode(ChangesRequest.self)
        let keyspace = try keyspace(for: decoded.collection)
        if decoded.isCaughtUp || request.isNoReply {
            return request.reply()
        }
        counters.countProposed(revisions: decoded.rows.count)
        var entries = [ChangesReply.Entry](repeating: .skip, count: decoded.rows.count)
        var queries: [RevisionQuery] = []
        var queryRows: [Int] = []
        for (index, row) in decoded.rows.enumerated() where row.flags.offersRevision {
            queries.append(RevisionQuery(docID: row.docID, revIDs: [row.revisionID]))
            queryRows.append(index)
        }
        let diffs = try await storeCall {
            try await database.revisionDiffs(
                queries, in: keyspace.collection, ancestorsWithBodiesOnly: configuration.deltaSync)
        }
        for (row, diff) in zip(queryRows, diffs) {
            switch diff {
            case .success(let diff) where !diff.missing.isEmpty:
                entries[row] = .send(knownAncestors: diff.possibleAncestors)
            case .success:
                entries[row] = .skip
            case .failure(let error):
                entries[row] = .status(error.errorReply.code)
            }
        }
        return request.reply(with: ChangesReply(entries: entries, capabilities: receiverCapabilities(for: keyspace)))
    }

    /// `rev`: stored through the keyspace's `RevisionReceiver`, and only then answered.
    ///
    /// Nonisolated, like everything it calls but the keyspace lookup: decoding and JSON work of
    /// concurrent `rev`s would otherwise queue on this actor, one core at a time.
    nonisolated func rev(_ request: BLIPMessage) async throws -> BLIPMessage {
        let decoded = try request.decode(RevRequest.self)
        let receiver = try await revisionReceiver(for: decoded.collection)
        guard let received = try await receiver.receive(decoded, noConflicts: decoded.noConflicts) else {
            counters.countMissingRevision()
            return request.reply()
        }
        counters.countPushedBlob(bytes: received.fetchedBlobBytes)
        if case .failed(let error) = received.outcome {
            if case .conflict = error { counters.countConflict() } else { counters.countRejectedPush() }
            throw error.errorReply.blipError
        }
        counters.countPushed(bytes: received.storedBytes)
        return request.reply()
    }
}
