import BLIPCodec
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON
import UpstreamDialer
import VersionVectors

// Pushing: local changes are proposed in batches, accepted ones sent as `rev`s (spec §3.6, §3.7).
extension ActiveReplicatorSession {
    /// A proposed row and the upstream revision it was proposed on top of.
    struct Proposal {
        var change: Change
        var remoteRevision: RevisionID?
        /// Whether the upstream named `remoteRevision` as its current one (in a 409), rather than it being our
        /// guess (the local parent). An upstream that lacks the document accepts a proposal whatever revision
        /// it names (spec §3.6, rule 2), so only a named revision is sure to be in its tree.
        var remoteRevisionIsKnown = false
        /// On CBMobile_4: the revision's whole vector (nil for a legacy revision, proposed by rev-tree ID), and the
        /// upstream's version this side last had from it.
        var vector: HybridLogicalVector?
        var remoteVersion: Version?
    }

    /// Pushes every change after the checkpoint's `local`; continuous mode then follows new ones.
    func push() async throws {
        let since = Int64(clamping: await checkpointer.current.local)
        let feed = database.changeFeed(
            in: collection, since: since, batchSize: configuration.batchSize, options: configuration.pushedChanges)
        guard configuration.continuous else {
            return try await pushBatches(from: feed.makeAsyncIterator())
        }
        let pipeline = Task { try await self.pushBatches(from: feed.makeAsyncIterator()) }
        pushLoop = pipeline
        do {
            try await withTaskCancellationHandler {
                try await pipeline.value
            } onCancel: {
                pipeline.cancel()
            }
        } catch is CancellationError {
            return
        }
    }

    /// Proposes a batch; returns what the upstream accepted, after retrying rows whose guessed
    /// remote revision was stale.
    ///
    /// Revisions pulled from this upstream and not changed here since are left out, as LiteCore's pusher does:
    /// the upstream has them, and proposing them back would only cost a round trip, or a false conflict when the
    /// upstream replaced one in the meantime.
    func proposeBatch(_ batch: [Change]) async throws -> [Proposal] {
        await setIdle(push: false)
        let (changes, onUpstream) = try await database.changesToPush(batch, to: remote, in: collection)
        guard !changes.isEmpty else { return [] }
        await replicator.recordTotal(changes.count)
        var proposals: [Proposal] = []
        if usesVersionVectors {
            proposals = try await versionedProposals(for: changes, pulled: onUpstream)
        } else {
            for change in changes {
                proposals.append(try await proposal(for: change, pulledRevision: onUpstream[change.docID]))
            }
        }
        var (accepted, conflicts) = try await propose(proposals)
        // A 409 naming an ancestor of ours only means the guessed remote revision was stale. A vector never
        // conflicts with a version it covers: such a 409 is a real conflict, which the pull resolves.
        var retries: [Proposal] = []
        for (proposal, current) in conflicts {
            if proposal.vector == nil, let current = current?.revisionID,
                try await isAncestor(current, of: proposal.change)
            {
                retries.append(Proposal(change: proposal.change, remoteRevision: current, remoteRevisionIsKnown: true))
            } else {
                logger.info(
                    "the upstream has a conflicting revision",
                    metadata: ["doc": "\(proposal.change.docID)", "current": "\(current?.description ?? "?")"])
                replicator.counters.countConflict()
                await replicator.recordCompleted(1)
            }
        }
        if !retries.isEmpty {
            let (acceptedRetries, stillConflicting) = try await propose(retries)
            accepted += acceptedRetries
            for _ in stillConflicting { replicator.counters.countConflict() }
            await replicator.recordCompleted(stillConflicting.count)
        }
        return accepted
    }

    /// CBMobile_4 proposals: each change with its revision's whole vector, and the version of the revision pulled
    /// from the upstream (which it is sure to have) as the one it is proposed over; both read in one go.
    private func versionedProposals(
        for changes: [Change], pulled: [String: RevisionID]
    ) async throws -> [Proposal] {
        let pulledRevisions = changes.compactMap { change in pulled[change.docID].map { (change.docID, $0) } }
        let vectors = try await database.vectors(
            of: changes.map { ($0.docID, $0.revID) } + pulledRevisions, in: collection)
        var pulledVersions: [String: Version] = [:]
        for ((docID, _), vector) in zip(pulledRevisions, vectors.dropFirst(changes.count)) {
            pulledVersions[docID] = vector?.current
        }
        return zip(changes, vectors).map { change, vector in
            Proposal(
                change: change, remoteRevision: pulled[change.docID],
                remoteRevisionIsKnown: pulled[change.docID] != nil,
                vector: vector, remoteVersion: pulledVersions[change.docID])
        }
    }

    /// Sends accepted revisions; returns once the upstream answered each.
    func send(_ accepted: [Proposal]) async throws {
        let maxHistory = maxHistory
        try await RevisionWindow.send(
            accepted, bodySize: \.change.bodySize, over: connection,
            reading: { window in
                try await self.database.outgoingRevisions(
                    window.map { proposal in
                        OutgoingRevisionRequest(
                            docID: proposal.change.docID, revID: proposal.change.revID,
                            // Cut at a guessed revision, the history would leave an upstream that never had
                            // the document without its older revisions; it gets them all, up to maxHistory.
                            knownRevIDs: proposal.remoteRevisionIsKnown
                                ? Set(proposal.remoteRevision.map { [$0] } ?? []) : [],
                            maxHistory: maxHistory)
                    },
                    in: self.collection)
            },
            preparing: { proposal, revision in try await self.revisionRequest(proposal, revision) },
            finishing: { outcomes in
                var completed = 0
                var bytes = 0
                for (change, outcome) in outcomes {
                    switch outcome {
                    case .success:
                        completed += 1
                        bytes += change.bodySize
                    case .failure(let error)
                    where error.domain == "HTTP" && UpstreamDialError.transientHTTPStatuses.contains(error.code):
                        // As Couchbase Lite does: a transient refusal (a full disk upstream answers 503) is not
                        // skipped; the batch stays unacknowledged, the connection ends and the retry resends it.
                        throw ActiveReplicatorError.peerRefused(
                            request: "rev", domain: error.domain, code: error.code, message: error.message)
                    case .failure(let error):
                        await self.recordPushFailure(
                            change, reason: "rev refused: \(error.domain) \(error.code) \(error.message)")
                    }
                }
                self.replicator.counters.countPushed(documents: completed, bytes: bytes)
                await self.replicator.recordCompleted(completed)
            })
    }

    /// Sends `proposeChanges`; returns the accepted rows and the conflicting ones with the
    /// upstream's current revision. Rows it already has or refused otherwise count as done.
    private func propose(_ proposals: [Proposal]) async throws -> (
        accepted: [Proposal], conflicts: [(Proposal, WireRevision?)]
    ) {
        let rows = proposals.map { proposal in
            guard let vector = proposal.vector else {
                return ReplicationProtocol.ProposedChange(
                    docID: proposal.change.docID, revisionID: proposal.change.revID,
                    remoteRevisionID: proposal.remoteRevision, bodySize: proposal.change.bodySize)
            }
            // As Couchbase Lite 4 writes the row: the whole vector, and no body size for a tombstone.
            return ReplicationProtocol.ProposedChange(
                docID: proposal.change.docID, revision: .vector(vector),
                remoteRevision: proposal.remoteVersion.map(WireRevision.init),
                bodySize: proposal.change.deleted ? nil : proposal.change.bodySize)
        }
        replicator.counters.countProposed(revisions: rows.count)
        let reply = try await send(
            ProposeChangesRequest(rows: rows, collection: collectionIndex), expecting: ProposeChangesReply.self,
            isUrgent: true)
        maxHistory = reply.capabilities.maxHistory ?? maxHistory
        var accepted: [Proposal] = []
        var conflicts: [(Proposal, WireRevision?)] = []
        for (index, proposal) in proposals.enumerated() {
            switch reply.status(at: index) {
            case .accepted:
                accepted.append(proposal)
            case .alreadyKnown:
                await replicator.recordCompleted(1)
            case .conflict(let current):
                conflicts.append((proposal, current))
            case .failed(let code):
                await recordPushFailure(proposal.change, reason: "proposeChanges status \(code)")
            }
        }
        return (accepted, conflicts)
    }

    /// A change to a document pulled from the upstream is proposed on top of the pulled revision, which the
    /// upstream is sure to have, so its `rev` history stops there; any other on top of a guess.
    private func proposal(for change: Change, pulledRevision: RevisionID?) async throws -> Proposal {
        if let pulledRevision, try await ancestry(of: change)?.contains(pulledRevision) == true {
            return Proposal(change: change, remoteRevision: pulledRevision, remoteRevisionIsKnown: true)
        }
        return Proposal(change: change, remoteRevision: try await presumedRemoteRevision(of: change))
    }

    /// The revision the upstream most likely has: the parent of ours. A document pulled from the
    /// upstream and changed once here, or pushed and changed once, gets it right; a 409 naming a
    /// further ancestor is retried (see `pushBatch`).
    private func presumedRemoteRevision(of change: Change) async throws -> RevisionID? {
        guard change.revID.generation > 1 else { return nil }
        return try await ancestry(of: change, maxCount: 1)?.first
    }

    private func isAncestor(_ revision: RevisionID, of change: Change) async throws -> Bool {
        try await ancestry(of: change)?.contains(revision) ?? false
    }

    /// The history of a change's revision; `nil` once the revision is gone, as when the pull
    /// resolved a conflict by removing the local branch while this batch was in flight.
    private func ancestry(
        of change: Change, maxCount: Int = .max
    ) async throws -> [RevisionID]? {
        do {
            return try await database.revisionHistory(
                change.docID, revID: change.revID, in: collection, maxCount: maxCount)
        } catch StoreError.revisionNotFound, StoreError.documentNotFound {
            return nil
        }
    }

    /// The `rev` for one accepted change, with its history down to the revision the upstream is believed
    /// to have; `nil` when the revision is gone.
    private nonisolated func revisionRequest(
        _ proposal: Proposal, _ revision: OutgoingRevision?
    ) async throws -> (Change, BLIPMessage)? {
        let change = proposal.change
        guard let revision else {
            // Superseded, compacted or removed by a pulled conflict's resolution since the batch
            // was read; a successor, if any, has a later sequence.
            await replicator.recordCompleted(1)
            return nil
        }
        // On CBMobile_4 a revision with a vector goes as that vector, which holds its history; a legacy one by its
        // rev-tree ID and history, as LiteCore 4 sends it.
        let (sent, history): (WireRevision, RevisionHistory) =
            if usesVersionVectors, let vector = revision.vector { (.vector(vector), RevisionHistory()) } else {
                (.tree(change.revID), RevisionHistory(revision.history))
            }
        let request = RevRequest(
            docID: change.docID, revision: sent, history: history,
            sequence: .number(JSONNumber(change.sequence)), deleted: revision.deleted, noConflicts: true,
            collection: collectionIndex, body: Array(revision.body))
        return (change, .request(request))
    }

    /// A revision the upstream refused is logged and skipped, so one bad document cannot stall the
    /// push; it is pushed again once it changes.
    private nonisolated func recordPushFailure(_ change: Change, reason: String) async {
        logger.warning(
            "the upstream refused a pushed revision", metadata: ["doc": "\(change.docID)", "reason": "\(reason)"])
        replicator.counters.countRejectedPush()
        await replicator.recordError("\(change.docID): \(reason)")
        await replicator.recordCompleted(1)
    }
}
