import BLIPCodec
import EdgeStore
import Foundation
import ReplicationProtocol

// Pushing: local changes are proposed in batches, accepted ones sent as `rev`s (spec §3.6, §3.7).
extension ActiveReplicatorSession {
    /// A proposed row and the upstream revision it was proposed on top of.
    struct Proposal {
        var change: Change
        var remoteRevision: WireRevisionID?
    }

    /// Pushes every change after the checkpoint's `local`; continuous mode then follows new ones.
    func push() async throws {
        var since = Int64(clamping: await checkpointer.current.local)
        let options = configuration.pushedChanges
        // Several batches are proposed and sent at once, so the upstream always has revisions to
        // store while earlier ones are being committed (LiteCore keeps up to 5 change lists in
        // flight, `kMaxChangeListsInFlight`). `local` only moves past a batch once it and every
        // batch before it are done. A batch that lists a document still in flight waits for that
        // batch first, so no revision is proposed on top of one the upstream may not have yet.
        try await withThrowingTaskGroup(of: Int64.self) { batches in
            // Ends of the batches not yet checkpointed, oldest first; a batch is done once its
            // documents are no longer in flight.
            var ends: [Int64] = []
            var docIDsInFlight: [Int64: Set<String>] = [:]
            func recordFinished(_ end: Int64) async {
                docIDsInFlight[end] = nil
                var completedThrough: Int64?
                while let first = ends.first, docIDsInFlight[first] == nil {
                    ends.removeFirst()
                    completedThrough = first
                }
                if let completedThrough {
                    await checkpointer.setLocal(UInt64(completedThrough))
                }
            }
            while !isStopping {
                let batch = try await database.changes(
                    in: collection, since: since, limit: configuration.batchSize, options: options)
                guard let last = batch.last else { break }
                let docIDs = Set(batch.map(\.docID))
                while docIDsInFlight.count >= Self.maxPushBatchesInFlight
                    || docIDsInFlight.values.contains(where: { !$0.isDisjoint(with: docIDs) }),
                    let end = try await batches.next()
                {
                    await recordFinished(end)
                }
                ends.append(last.sequence)
                docIDsInFlight[last.sequence] = docIDs
                batches.addTask {
                    try await self.send(try await self.proposeBatch(batch))
                    return last.sequence
                }
                since = last.sequence
            }
            while let end = try await batches.next() {
                await recordFinished(end)
            }
        }
        await setIdle(push: true)
        guard configuration.continuous, !isStopping else { return }
        let feed = database.changeFeed(
            in: collection, since: since, batchSize: configuration.batchSize, options: options)
        let loop = Task {
            for try await batch in feed {
                try await self.pushBatch(batch)
                await self.setIdle(push: true)
            }
        }
        pushLoop = loop
        do {
            try await loop.value
        } catch is CancellationError {
            return
        }
    }

    /// Proposes one batch, sends what the upstream accepts, and moves `local` past the batch once
    /// every revision of it is stored there (or refused for good).
    private func pushBatch(_ batch: [Change]) async throws {
        guard let last = batch.last else { return }
        try await send(try await proposeBatch(batch))
        await checkpointer.setLocal(UInt64(last.sequence))
    }

    /// Proposes a batch; returns what the upstream accepted, after retrying rows whose guessed
    /// remote revision was stale.
    private func proposeBatch(_ batch: [Change]) async throws -> [Proposal] {
        await setIdle(push: false)
        await replicator.recordTotal(batch.count)
        var proposals: [Proposal] = []
        for change in batch {
            proposals.append(Proposal(change: change, remoteRevision: try await presumedRemoteRevision(of: change)))
        }
        var (accepted, conflicts) = try await propose(proposals)
        // A 409 naming an ancestor of ours only means the guessed remote revision was stale.
        var retries: [Proposal] = []
        for (proposal, current) in conflicts {
            if let current, try await isAncestor(current, of: proposal.change) {
                retries.append(Proposal(change: proposal.change, remoteRevision: current))
            } else {
                logger.info(
                    "the upstream has a conflicting revision",
                    metadata: ["doc": "\(proposal.change.docID)", "current": "\(current.map(\.description) ?? "?")"])
                await replicator.recordCompleted(1)
            }
        }
        if !retries.isEmpty {
            let (acceptedRetries, stillConflicting) = try await propose(retries)
            accepted += acceptedRetries
            await replicator.recordCompleted(stillConflicting.count)
        }
        return accepted
    }

    /// Sends accepted revisions; returns once the upstream answered each.
    private func send(_ accepted: [Proposal]) async throws {
        let maxHistory = maxHistory
        try await RevisionWindow.send(
            accepted, bodySize: \.change.bodySize, over: connection,
            reading: { window in
                try await self.database.outgoingRevisions(
                    window.map { proposal in
                        OutgoingRevisionRequest(
                            docID: proposal.change.docID, revID: proposal.change.revID,
                            knownRevIDs: Set(proposal.remoteRevision.flatMap { try? RevisionID($0) }.map { [$0] } ?? []),
                            maxHistory: maxHistory)
                    },
                    in: self.collection)
            },
            preparing: { proposal, revision in try await self.revisionRequest(proposal.change, revision) },
            finishing: { outcomes in
                var completed = 0
                for (change, outcome) in outcomes {
                    switch outcome {
                    case .success:
                        completed += 1
                    case .failure(let error):
                        await self.recordPushFailure(
                            change, reason: "rev refused: \(error.domain) \(error.code) \(error.message)")
                    }
                }
                await self.replicator.recordCompleted(completed)
            })
    }

    /// Sends `proposeChanges`; returns the accepted rows and the conflicting ones with the
    /// upstream's current revision. Rows it already has or refused otherwise count as done.
    private func propose(_ proposals: [Proposal]) async throws -> (
        accepted: [Proposal], conflicts: [(Proposal, WireRevisionID?)]
    ) {
        let rows = try proposals.map { proposal in
            ReplicationProtocol.ProposedChange(
                docID: proposal.change.docID, revisionID: try WireRevisionID(proposal.change.revID),
                remoteRevisionID: proposal.remoteRevision, bodySize: proposal.change.bodySize)
        }
        let reply = try await send(ProposeChangesRequest(rows: rows, collection: collectionIndex), expecting: ProposeChangesReply.self, isUrgent: true)
        maxHistory = reply.capabilities.maxHistory ?? maxHistory
        var accepted: [Proposal] = []
        var conflicts: [(Proposal, WireRevisionID?)] = []
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

    /// The revision the upstream most likely has: the parent of ours. A document pulled from the
    /// upstream and changed once here, or pushed and changed once, gets it right; a 409 naming a
    /// further ancestor is retried (see `pushBatch`).
    private func presumedRemoteRevision(of change: Change) async throws -> WireRevisionID? {
        guard change.revID.generation > 1 else { return nil }
        let parents = try await ancestry(of: change, maxCount: 1)
        return try parents?.first.map { try WireRevisionID($0) }
    }

    private func isAncestor(_ revision: WireRevisionID, of change: Change) async throws -> Bool {
        guard let candidate = try? RevisionID(revision) else { return false }
        return try await ancestry(of: change)?.contains(candidate) ?? false
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
        _ change: Change, _ revision: OutgoingRevision?
    ) async throws -> (Change, BLIPMessage)? {
        guard let revision else {
            // Superseded, compacted or removed by a pulled conflict's resolution since the batch
            // was read; a successor, if any, has a later sequence.
            await replicator.recordCompleted(1)
            return nil
        }
        let request = RevRequest(
            docID: change.docID, revisionID: try WireRevisionID(change.revID),
            history: RevisionHistory(try revision.history.map { try WireRevisionID($0) }),
            sequence: .number(JSONNumber(change.sequence)), deleted: revision.deleted, noConflicts: true,
            collection: collectionIndex, body: Array(revision.body))
        return (change, .request(request))
    }

    /// A revision the upstream refused is logged and skipped, so one bad document cannot stall the
    /// push; it is pushed again once it changes.
    private nonisolated func recordPushFailure(_ change: Change, reason: String) async {
        logger.warning("the upstream refused a pushed revision", metadata: ["doc": "\(change.docID)", "reason": "\(reason)"])
        await replicator.recordError("\(change.docID): \(reason)")
        await replicator.recordCompleted(1)
    }
}
