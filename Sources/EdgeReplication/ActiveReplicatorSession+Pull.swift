import BLIPCodec
import BLIPConnection
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncJSON
import VersionVectors

// Pulling: `subChanges`, then answering the upstream's `changes` and storing its `rev`s
// (spec §3.4, §3.5, §3.7, §3.8).
extension ActiveReplicatorSession {

    /// Subscribes from the checkpoint's `remote`; a one-shot pull returns once the upstream said it
    /// is caught up and every revision asked for is stored, a continuous one when stopped.
    func pull() async throws {
        let since = await checkpointer.current.remote
        // Like CBL: a first pull into an empty database need not fetch tombstones.
        let localIsEmpty = try await database.changes(in: collection, since: 0, limit: 1).isEmpty
        let activeOnly = since == nil && localIsEmpty
        var request = Self.subscription(
            configuration: configuration, since: since, activeOnly: activeOnly,
            versioning: usesVersionVectors ? .versionVectors : .revisionTrees)
        request.collection = collectionIndex
        _ = try await send(request, expecting: EmptyReply.self)
        while !isStopping {
            if isPullCaughtUp && pulledRows.isEmpty {
                await setIdle(pull: true)
                if !configuration.continuous { return }
            }
            await withCheckedContinuation { pullWaiters.append($0) }
        }
    }

    /// `subChanges` as LiteCore's puller builds it: channels as the `sync_gateway/bychannel` filter
    /// with a comma-separated `channels` property, document IDs as a `{"docIDs":[…]}` body (spec
    /// §3.4). Sync Gateway refuses `docIDs` on a continuous feed (HTTP 400), as it does for
    /// Couchbase Lite.
    static func subscription(
        configuration: ActiveReplicator.Configuration, since: JSONValue?, activeOnly: Bool,
        versioning: SubChangesRequest.Versioning
    ) -> SubChangesRequest {
        let channels = configuration.channelFilter
        return SubChangesRequest(
            since: since, continuous: configuration.continuous, batchSize: configuration.batchSize,
            versioning: versioning, activeOnly: activeOnly,
            filter: channels == nil ? nil : SubChangesRequest.channelFilter, channels: channels,
            docIDs: configuration.documentIDFilter)
    }

    /// The upstream said it is caught up, and every request it sent before saying so has arrived.
    /// Handlers run concurrently, so the marker can be handled before the last batches.
    var isPullCaughtUp: Bool {
        guard let caughtUpMarker else { return false }
        return contiguousRequestNumber >= caughtUpMarker - 1
    }

    /// Records that the upstream's request `number` reached a handler.
    func noteRequest(_ number: UInt64) {
        guard number > contiguousRequestNumber else { return }
        laterRequestNumbers.insert(number)
        while laterRequestNumbers.remove(contiguousRequestNumber + 1) != nil {
            contiguousRequestNumber += 1
        }
        wakePullWaitersIfCaughtUp()
    }

    /// Wakes `pull()` only when it has something to act on: waking it for every revision kept the session
    /// actor busy with turns that found nothing to do.
    func wakePullWaitersIfCaughtUp() {
        if isPullCaughtUp && pulledRows.isEmpty {
            wakePullWaiters()
        }
    }

    func wakePullWaiters() {
        let waiters = pullWaiters
        pullWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    /// `changes`: which offered revisions to send, with the ancestors this side has as a base.
    func receiveChanges(_ request: BLIPMessage) async throws -> BLIPMessage {
        noteRequest(request.number)
        let decoded = try request.decode(ChangesRequest.self)
        if decoded.isCaughtUp {
            caughtUpMarker = request.number
            wakePullWaitersIfCaughtUp()
            return request.reply()
        }
        // Slots are reserved in the same actor turn as `noteRequest`, so a caught-up marker that
        // overtook this batch still waits for its rows.
        let firstRow = nextPulledRow
        nextPulledRow += decoded.rows.count
        for (offset, row) in decoded.rows.enumerated() {
            pulledRows[firstRow + offset] = PulledRow(sequence: row.sequence, isDone: false)
        }
        await setIdle(pull: false)
        if collection == .default { await replicator.noteRemoteSequences(decoded.rows.map(\.sequence)) }
        var entries = [ChangesReply.Entry](repeating: .skip, count: decoded.rows.count)
        // A peer that ignores the `docIDs` body must not bring in other documents.
        let pulledDocIDs = configuration.documentIDFilter.map(Set.init)
        let offered = decoded.rows.indices.filter { index in
            decoded.rows[index].flags.offersRevision
                && pulledDocIDs.map { $0.contains(decoded.rows[index].docID) } ?? true
        }
        for (index, knownAncestors) in try await wantedRevisions(of: decoded.rows, at: offered) {
            let row = decoded.rows[index]
            entries[index] = .send(knownAncestors: knownAncestors)
            awaitedRevisions[RevisionKey(docID: row.docID, revision: row.revision)] = firstRow + index
        }
        let wanted = entries.count { $0 != .skip }
        for (index, entry) in entries.enumerated() where entry == .skip {
            pulledRows[firstRow + index]?.isDone = true
        }
        await replicator.recordTotal(wanted)
        await advanceRemote()
        // Like LiteCore: `deltas: true` in the first reply of the collection on this connection.
        let capabilities = ReceiverCapabilities.liteCore(
            includingDeltas: !hasAnnouncedDeltas, versionVectors: usesVersionVectors)
        hasAnnouncedDeltas = true
        return request.reply(with: ChangesReply(entries: entries, capabilities: capabilities))
    }

    /// Of the offered rows at `indices`, those to ask for, each with what this side has of its document: for a
    /// rev-tree row the ancestors that have a body (the only possible delta bases); for a version row every version
    /// of the local vector, as Couchbase Lite 4 lists them (WIRE-NOTES §6), or the legacy revision it has. A version
    /// the local vector already covers is not asked for.
    private func wantedRevisions(
        of rows: [ChangeRow], at indices: [Int]
    ) async throws -> [(index: Int, knownAncestors: [WireRevision])] {
        var treeQueries: [RevisionQuery] = []
        var treeRows: [Int] = []
        var versionRows: [(index: Int, version: Version)] = []
        for index in indices {
            switch rows[index].revision {
            case .tree(let revisionID):
                treeQueries.append(RevisionQuery(docID: rows[index].docID, revIDs: [revisionID]))
                treeRows.append(index)
            case .vector(let vector):
                guard usesVersionVectors else {
                    throw ProtocolError.invalidVersion(
                        vector.description, reason: "a CBMobile_3 changes row names revisions by rev-tree ID")
                }
                versionRows.append((index, vector.current))
            }
        }
        var wanted: [(index: Int, knownAncestors: [WireRevision])] = []
        let diffs = try await storeCall {
            try await database.revisionDiffs(treeQueries, in: collection, ancestorsWithBodiesOnly: true)
        }
        for (index, diff) in zip(treeRows, diffs) {
            guard case .success(let diff) = diff, !diff.missing.isEmpty else { continue }
            wanted.append((index, diff.possibleAncestors.map(WireRevision.tree)))
        }
        let local = try await storeCall {
            try await database.currentVersioning(of: versionRows.map { rows[$0.index].docID }, in: collection)
        }
        for ((index, version), local) in zip(versionRows, local) {
            switch local {
            case .absent: wanted.append((index, []))
            case .legacy(let revisionID): wanted.append((index, [.tree(revisionID)]))
            case .vector(let vector) where !vector.covers(version):
                wanted.append((index, vector.versions.map(WireRevision.init)))
            case .vector: break
            }
        }
        return wanted
    }

    /// `rev`: fetches the blobs it lacks, stores it (resolving a conflict with the local current
    /// revision in the same transaction), then replies.
    ///
    /// Nonisolated, bookkeeping included, so that concurrent revisions are decoded and prepared in
    /// parallel, and so that a group commit's worth of them is counted in one turn of this actor.
    nonisolated func receiveRevision(_ request: BLIPMessage, turn: BLIPArrivalTurn) async throws -> BLIPMessage {
        // Posted whatever happens, even for a `rev` that does not decode: the caught-up check counts
        // every request number, and the row its `id` and `rev` name must not stay pending forever (a `rev`
        // without them cannot be matched to any row).
        var finished = FinishedPull(requestNumber: request.number)
        defer { post(finished) }
        do {
            let decoded: RevRequest
            do {
                decoded = try request.decode(RevRequest.self)
            } catch {
                // `rev` names the current version alone on CBMobile_4, as the `changes` row did; a replacement
                // (`sendReplacementRevs`, announced on CBMobile_4) names the row's revision in `replacedRev`.
                finished.key = request.properties["id"].flatMap { docID in
                    (request.properties["replacedRev"] ?? request.properties["rev"]).map {
                        RevisionKey(docID: docID, revisionID: $0)
                    }
                }
                throw error
            }
            finished.key = RevisionKey(docID: decoded.docID, revision: decoded.replacedRevision ?? decoded.revision)
            try await store(decoded, turn: turn)
            finished.isStoredRevision = true
            finished.bytes = decoded.body.count
        } catch {
            finished.failure = "\(error)"
            finished.isRefusal = ((error as? BLIPErrorReply)?.code ?? 400) < 500
            throw error
        }
        return request.reply()
    }

    /// `norev`: the upstream cannot send a revision it offered; nothing is left to wait for.
    func receiveNoRevision(_ request: BLIPMessage) async throws -> BLIPMessage {
        let decoded = try request.decode(NoRevRequest.self)
        logger.info("the upstream could not send a revision", metadata: ["doc": "\(decoded.docID)"])
        replicator.counters.countMissingRevision()
        let key = RevisionKey(docID: decoded.docID, revision: decoded.revision)
        post(FinishedPull(requestNumber: request.number, key: key))
        return request.reply()
    }

    /// Queues the bookkeeping of a handled `rev` or `norev`, to be done with the others that finish
    /// alongside it: one group commit answers hundreds of `rev`s, and a hop onto this actor, the
    /// replicator and the checkpointer for each of them cost more than storing it.
    private nonisolated func post(_ finished: FinishedPull) {
        if finishedPulls.post(finished) {
            Task { await self.recordFinishedPulls() }
        }
    }

    private func recordFinishedPulls() async {
        let finished = finishedPulls.takeAll()
        var stored = 0
        var storedBytes = 0
        var lastFailure: String?
        for pull in finished {
            noteRequest(pull.requestNumber)
            if pull.isStoredRevision {
                stored += 1
                storedBytes += pull.bytes
            }
            if let failure = pull.failure {
                lastFailure = failure
                if pull.isRefusal { replicator.counters.countRejectedPull() }
            }
            if let key = pull.key, let row = awaitedRevisions.removeValue(forKey: key) {
                pulledRows[row]?.isDone = true
            }
        }
        // Counted before `advanceRemote` can wake a one-shot `pull()`, whose caller reads the count.
        if stored > 0 {
            replicator.counters.countPulled(documents: stored, bytes: storedBytes)
            await replicator.recordCompleted(stored)
        }
        if let lastFailure { await replicator.recordError(lastFailure) }
        await advanceRemote()
    }

    /// Moves `remote` to the last row with nothing pending before it.
    private func advanceRemote() async {
        var lastDone: JSONValue?
        while let row = pulledRows[firstUnfinishedPulledRow], row.isDone {
            lastDone = row.sequence
            pulledRows.removeValue(forKey: firstUnfinishedPulledRow)
            firstUnfinishedPulledRow += 1
        }
        if let lastDone {
            await checkpointer.setRemote(lastDone)
        }
        wakePullWaitersIfCaughtUp()
    }

    private nonisolated func store(_ request: RevRequest, turn: BLIPArrivalTurn) async throws {
        guard let received = try await receiver.receive(request, noConflicts: false, turn: turn) else { return }
        replicator.counters.countPulledBlob(bytes: received.fetchedBlobBytes)
        switch received.outcome {
        case .failed(let error):
            throw error.errorReply.blipError
        case .resolvedConflict(_, let resolvedRevID):
            logger.info(
                "resolved a conflict with a pulled revision",
                metadata: [
                    "doc": "\(request.docID)", "pulled": "\(request.revision)", "resolved": "\(resolvedRevID)",
                    "resolver": "\(configuration.conflictResolver.rawValue)",
                ])
        case .inserted, .alreadyPresent:
            break
        }
    }
}

/// A reply with nothing in it, such as the one to `subChanges`.
struct EmptyReply: ReplicationMessage {
    init(properties: MessageProperties, body: [UInt8]) {}

    func encode() -> (properties: MessageProperties, body: [UInt8]) {
        (MessageProperties(), [])
    }
}
