import BLIPCodec
import BLIPConnection
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers

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
        let statuses = try await proposalStatuses(decoded.rows, in: keyspace.collection)
            .map { status -> ProposeChangesReply.Status in
                guard case .conflict = status, !decoded.conflictIncludesRev else { return status }
                return .conflict(currentRevision: nil)
            }
        return request.reply(
            with: ProposeChangesReply(statuses: statuses, capabilities: receiverCapabilities(for: keyspace)))
    }

    /// The verdict on each proposed row: rows naming a rev-tree revision (every CBMobile_3 row, and a CBMobile_4
    /// row for a revision written before its document had a vector) by the rev tree, version vectors by
    /// comparing vectors (spec §3.6, §4.6).
    private nonisolated func proposalStatuses(
        _ rows: [ReplicationProtocol.ProposedChange], in collection: CollectionName
    ) async throws -> [ProposeChangesReply.Status] {
        var treeRows: [Int] = []
        var treeProposals: [EdgeStore.ProposedChange] = []
        var vectorRows: [Int] = []
        var vectorProposals: [ProposedVersion] = []
        for (index, row) in rows.enumerated() {
            switch row.revision {
            case .tree(let revisionID):
                treeRows.append(index)
                treeProposals.append(
                    EdgeStore.ProposedChange(
                        docID: row.docID, revID: revisionID, parentRevID: row.remoteRevision?.revisionID))
            case .vector(let vector):
                vectorRows.append(index)
                vectorProposals.append(ProposedVersion(docID: row.docID, vector: vector))
            }
        }
        var statuses = [ProposeChangesReply.Status](repeating: .accepted, count: rows.count)
        if !treeProposals.isEmpty {
            let verdicts = try await storeCall {
                try await database.checkProposedChanges(treeProposals, in: collection)
            }
            for (index, verdict) in zip(treeRows, verdicts) {
                statuses[index] =
                    switch verdict {
                    case .accept: .accepted
                    case .alreadyHave: .alreadyKnown
                    case .conflict(let current): .conflict(currentRevision: .tree(current))
                    case .invalid: .failed(verdict.statusCode)
                    }
            }
        }
        if !vectorProposals.isEmpty {
            let verdicts = try await storeCall {
                try await database.checkProposedVersions(vectorProposals, in: collection)
            }
            for (index, verdict) in zip(vectorRows, verdicts) {
                statuses[index] =
                    switch verdict {
                    case .accept: .accepted
                    case .alreadyHave: .alreadyKnown
                    // The store writes its current version (or legacy revision ID) as the wire does.
                    case .conflict(let current): .conflict(currentRevision: try? WireRevision(received: current))
                    case .invalid(let error): .failed(error.errorReply.code)
                    }
            }
        }
        return statuses
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
            // Couchbase Lite pushes with `proposeChanges`; only a rev-tree peer offers revisions this way.
            queries.append(
                RevisionQuery(docID: row.docID, revIDs: [try row.revision.requiringRevisionID(in: "a changes row")]))
            queryRows.append(index)
        }
        let diffs = try await storeCall {
            try await database.revisionDiffs(
                queries, in: keyspace.collection, ancestorsWithBodiesOnly: configuration.deltaSync)
        }
        for (row, diff) in zip(queryRows, diffs) {
            switch diff {
            case .success(let diff) where !diff.missing.isEmpty:
                entries[row] = .send(knownAncestors: diff.possibleAncestors.map(WireRevision.tree))
            case .success:
                entries[row] = .skip
            case .failure(let error):
                entries[row] = .status(error.errorReply.code)
            }
        }
        return request.reply(with: ChangesReply(entries: entries, capabilities: receiverCapabilities(for: keyspace)))
    }

    /// `rev`: stored through the keyspace's `RevisionReceiver`, and answered through `reply` only once it is
    /// durable, by the group commit that makes it so; this returns once the revision is queued.
    ///
    /// Nonisolated, like everything it calls but the keyspace lookup: decoding and JSON work of
    /// concurrent `rev`s would otherwise queue on this actor, one core at a time.
    nonisolated func rev(_ request: BLIPMessage, turn: BLIPArrivalTurn, reply: BLIPPendingReply) async throws {
        let decoded = try request.decode(RevRequest.self)
        let receiver = try await revisionReceiver(for: decoded.collection)
        // Noted before it is stored, so that the pull feed, which may read the commit first, knows it.
        if case .vector(let vector) = decoded.revision {
            let pushed = PushedDocument(collection: receiver.collection, docID: decoded.docID)
            versionsPushedHere.withLock { versions in versions?[pushed] = vector.current }
        }
        let acknowledgement = request.reply()
        try await receiver.receive(decoded, noConflicts: decoded.noConflicts, turn: turn) { [counters] result in
            reply.answer(
                Result {
                    try Self.countStored(result.get(), in: counters)
                    return acknowledgement
                })
        }
    }

    /// Counts what one `rev` stored; a revision the store refused becomes the error reply that reports it.
    private static func countStored(
        _ received: RevisionReceiver.Received?, in counters: ReplicationCounters
    ) throws(BLIPErrorReply) {
        guard let received else {
            counters.countMissingRevision()
            return
        }
        counters.countPushedBlob(bytes: received.fetchedBlobBytes)
        if case .failed(let error) = received.outcome {
            if case .conflict = error { counters.countConflict() } else { counters.countRejectedPush() }
            throw error.errorReply.blipError
        }
        counters.countPushed(bytes: received.storedBytes)
    }
}
