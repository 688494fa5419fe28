import BLIPCodec
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON
import Synchronization
import VersionVectors

// The client pulls: `subChanges` starts a feed of `changes` batches, and every row the client
// asks for goes out as a `rev` (spec §3.4, §3.5, §3.7, §3.8).
extension PassiveReplicationSession {
    /// What one pull feed needs to know about its subscriber.
    struct PullSubscription: Sendable {
        var keyspace: Keyspace
        var since: Int64
        var continuous: Bool
        var batchSize: Int
        var options: ChangesOptions
        /// The puller takes the current revision in place of a requested one that is gone
        /// (`sendReplacementRevs`, Couchbase Lite 3.2+).
        var takesReplacements: Bool
    }

    /// `subChanges`: accepted at once with an empty reply; the feed runs in tasks of its own (`PullFeed`).
    func subChanges(_ request: BLIPMessage) async throws -> BLIPMessage {
        let decoded = try request.decode(SubChangesRequest.self)
        let keyspace = try keyspace(for: decoded.collection)
        // The subprotocol fixes how revisions are named; a pull asking for the other kind is refused as LiteCore
        // refuses it (WIRE-NOTES §3). No `versioning` at all means the connection's own.
        let versioning: SubChangesRequest.Versioning = usesVersionVectors ? .versionVectors : .revisionTrees
        if let asked = decoded.versioning, asked != versioning {
            await configuration.versioningRefused(asked.rawValue)
            throw ErrorReply.liteCore(501, "Incompatible document versioning.").blipError
        }
        if decoded.filter != nil {
            // Like LiteCore's passive side: this peer models no channels, so no filter can apply.
            throw ErrorReply.liteCore(LiteCoreErrorCode.unsupported, "Filtering not supported").blipError
        }
        let subscription = PullSubscription(
            keyspace: keyspace,
            since: try Self.startSequence(decoded.since),
            continuous: decoded.continuous,
            batchSize: max(1, decoded.batchSize ?? SubChangesRequest.defaultBatchSize),
            options: ChangesOptions(activeOnly: decoded.activeOnly, docIDs: decoded.docIDs.map(Set.init)),
            takesReplacements: decoded.sendReplacementRevs
        )
        let key = keyspace.index ?? 0
        versionsPushedHere.withLock { versions in versions = versions ?? [:] }
        keyspaceStates[key, default: KeyspaceState()].pullFeed?.cancel()
        let feed = PullFeed(maxUnansweredBatches: configuration.maxChangesBatchesInFlight)
        keyspaceStates[key, default: KeyspaceState()].pullFeed = feed
        feed.startReader { [self] in await readPullFeed(feed, subscription, resuming: nil) }
        return request.reply()
    }

    /// `unsubChanges`: stops the collection's feed.
    func unsubChanges(_ request: BLIPMessage) async throws -> BLIPMessage {
        let decoded = try request.decode(UnsubChangesRequest.self)
        let key = try keyspace(for: decoded.collection).index ?? 0
        keyspaceStates[key]?.pullFeed?.cancel()
        keyspaceStates[key]?.pullFeed = nil
        return request.reply()
    }

    /// `since` is this side's own sequence as the client saved it: a JSON number, or a JSON string of
    /// digits (the `collections` transcript shows `since: "2"`).
    static func startSequence(_ since: JSONValue?) throws(BLIPErrorReply) -> Int64 {
        switch since {
        case nil, .null?:
            return 0
        case .number(let number)?:
            if let sequence = number.int64Value, sequence >= 0 { return sequence }
        case .string(let text)?:
            if let sequence = Int64(text), sequence >= 0 { return sequence }
        default:
            break
        }
        throw ErrorReply.http(400, "'since' \(since!) is not a sequence of this peer").blipError
    }

    /// Reads the backlog and offers it in batches, sends the caught-up marker, then (if continuous) offers live
    /// changes, with at most `maxChangesBatchesInFlight` batches unanswered (`PullFeedLimits`). A continuous feed's
    /// reader ends each time it has caught up, and the next commit resumes it from `iterator`.
    nonisolated func readPullFeed(
        _ feed: PullFeed, _ subscription: PullSubscription, resuming iterator: ChangeFeed.AsyncIterator?
    ) async {
        do {
            var iterator = iterator
            if iterator == nil {
                var since = subscription.since
                while true {
                    try Task.checkCancellation()
                    let batch = try await database.changes(
                        in: subscription.keyspace.collection, since: since, limit: subscription.batchSize,
                        options: subscription.options)
                    guard let last = batch.last else { break }
                    try await offerInTurn(batch, feed: feed, subscription: subscription)
                    since = last.sequence
                }
                let caughtUp = ChangesRequest(rows: [], collection: subscription.keyspace.index)
                try await connection.sendNoReply(.request(caughtUp, isUrgent: true, isNoReply: true))
                guard subscription.continuous else {
                    feed.readerEnded()
                    return
                }
                iterator = database.changeFeed(
                    in: subscription.keyspace.collection, since: since, batchSize: subscription.batchSize,
                    options: subscription.options
                ).makeAsyncIterator()
            }
            guard var iterator else { return }
            while let batch = try await iterator.nextCommitted() {
                try Task.checkCancellation()
                try await offerInTurn(batch, feed: feed, subscription: subscription)
            }
            feed.readerCaughtUp(iterator) { [self] iterator in
                await readPullFeed(feed, subscription, resuming: iterator)
            }
        } catch is CancellationError {
            return
        } catch StoreError.cancelled {
            return
        } catch {
            logger.debug("pull feed ended", metadata: ["error": "\(error)"])
            feed.cancel()
        }
    }

    /// Starts offering `read` (less what this client pushed itself) once the feed has room for one more unanswered
    /// batch, and returns once its `changes` is numbered: each batch is numbered before anything after it, the
    /// caught-up marker included, as LiteCore numbers a pull's messages, so a client's replies are to the same
    /// numbers.
    private nonisolated func offerInTurn(
        _ read: [Change], feed: PullFeed, subscription: PullSubscription
    ) async throws {
        let batch = notPushedHere(read, in: subscription.keyspace.collection)
        guard !batch.isEmpty else { return }
        try await feed.limits.sendingBatch()
        let numbering = NumberingSignal()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            numbering.waiting(continuation)
            let started = feed.startOffer { [self] in
                defer { numbering.signal() }
                do {
                    try await offer(batch, subscription: subscription, feed: feed, numbered: numbering.signal)
                } catch is CancellationError {
                } catch {
                    logger.debug("pull feed ended", metadata: ["error": "\(error)"])
                    feed.cancel()
                }
            }
            if !started { numbering.signal() }
        }
        try Task.checkCancellation()
    }

    /// Offers one batch (never empty: an empty `changes` tells the puller it is caught up) and sends a `rev` (or
    /// `norev`) for every row asked for. The batch's revisions are read while the reply is outstanding, so that
    /// they go out as soon as it arrives; its place among the unanswered batches is freed then, not once its
    /// revisions are answered.
    private nonisolated func offer(
        _ batch: [Change], subscription: PullSubscription, feed: PullFeed, numbered: @escaping @Sendable () -> Void
    ) async throws {
        let (receiver, limits) = (feed.receiver, feed.limits)
        let rows = batch.map { change in
            // A CBMobile_4 tombstone row has no body size (WIRE-NOTES §6).
            ChangeRow(
                sequence: .integer(Int(change.sequence)), docID: change.docID, revision: wireRevision(of: change),
                flags: change.deleted ? .deleted : [],
                bodySize: usesVersionVectors && change.deleted ? nil : change.bodySize)
        }
        let collection = subscription.keyspace.collection
        let readAhead = readAhead(batch, in: collection, receiver: receiver, limits: limits)
        let request = ChangesRequest(rows: rows, collection: subscription.keyspace.index)
        let replyMessage: BLIPMessage
        do {
            replyMessage = try await connection.sendRequest(.request(request, isUrgent: true), numbered: numbered)
        } catch {
            limits.batchAnswered()
            readAhead?.task.cancel()
            if let readAhead { limits.prefetched(readAhead.bytes) }
            throw error
        }
        limits.batchAnswered()
        let prefetched = try? await readAhead?.task.value
        if let readAhead { limits.prefetched(readAhead.bytes) }
        // Read ahead before the reply; anything written since may have changed what is to be sent (a body
        // dropped, a newer revision to send in its place), so then everything is read again. Another process's
        // write counts once the store has noticed it (`wakeChangeObservers`); until then the revisions read
        // ahead are still the ones offered.
        let readAheadIsCurrent = prefetched.map { !database.hasCommitted(after: $0.generation) } ?? false
        let reply = try replyMessage.decode(ChangesReply.self)
        let capabilities = receiver.update(with: reply.capabilities)
        // What the puller has of each document: rev-tree revisions, or from a CBMobile_4 puller the versions of its
        // vector, which a vector sent whole does not need but which name its delta base.
        let requested = batch.enumerated().compactMap { index, change -> (Change, [WireRevision], Int)? in
            guard case .send(let known) = reply.entry(at: index) else { return nil }
            return (change, known, index)
        }
        try await RevisionWindow.send(
            requested, bodySize: \.0.bodySize, over: connection,
            waitingForRoom: { bytes in try await limits.reading(bytes) },
            answered: { bytes in limits.answered(bytes) },
            reading: { window in
                let requests = window.map { change, known, _ in
                    OutgoingRevisionRequest(
                        docID: change.docID, revID: change.revID,
                        knownRevIDs: Set(known.compactMap(\.revisionID)),
                        maxHistory: capabilities.effectiveMaxHistory)
                }
                var revisions = [OutgoingRevision?](repeating: nil, count: requests.count)
                var unread: [Int] = []
                for (position, (_, known, index)) in window.enumerated() {
                    // A read-ahead revision is the one to send when the puller has none of the document's.
                    if known.allSatisfy({ $0.revisionID == nil }), readAheadIsCurrent, let prefetched,
                        readAhead?.maxHistory == capabilities.effectiveMaxHistory,
                        let revision = prefetched.revisions[index]
                    {
                        revisions[position] = revision
                    } else {
                        unread.append(position)
                    }
                }
                if !unread.isEmpty {
                    let read = try await self.database.outgoingRevisions(unread.map { requests[$0] }, in: collection)
                    for (position, revision) in zip(unread, read) {
                        revisions[position] = revision
                    }
                }
                if subscription.takesReplacements {
                    for (index, request) in requests.enumerated() where revisions[index] == nil {
                        revisions[index] = try await self.database.currentOutgoingRevision(
                            replacing: request, in: collection)
                    }
                }
                let deltaBases = try await self.deltaBases(
                    for: window.map { ($0.0, $0.1.first) }, capabilities: capabilities, in: collection)
                return Array(zip(revisions, deltaBases))
            },
            preparing: { requested, read in
                try await self.revisionRequest(
                    requested.0, read.0, deltaBase: read.1, capabilities: capabilities,
                    keyspace: subscription.keyspace)
            },
            finishing: { outcomes in
                for (sent, outcome) in outcomes {
                    try await self.finishRevision(sent, outcome, capabilities: capabilities)
                }
            })
    }

    /// Starts reading `offered`'s revisions, as sent to a puller that has none of them, while their `changes`
    /// reply is outstanding, with the database's last sequence before the read; `nil` when the feed's read-ahead
    /// allowance is used up.
    private nonisolated func readAhead(
        _ offered: [Change], in collection: CollectionName, receiver: PullReceiverState,
        limits: PullFeedLimits
    ) -> (task: Task<ReadAheadRevisions, any Error>, bytes: Int, maxHistory: Int)? {
        let bytes = offered.reduce(0) { $0 + max(0, $1.bodySize) }
        guard limits.mayPrefetch(bytes) else { return nil }
        let maxHistory = receiver.current.effectiveMaxHistory
        let requests = offered.map { change in
            OutgoingRevisionRequest(docID: change.docID, revID: change.revID, maxHistory: maxHistory)
        }
        let database = database
        let task = Task.detached { () async throws -> ReadAheadRevisions in
            try await database.readAheadRevisions(requests, in: collection, bodyBytes: bytes)
        }
        return (task, bytes, maxHistory)
    }
}

extension PassiveReplicationSession {
    /// `changes` less those whose current version this client pushed on this connection; each document the feed
    /// passes is forgotten.
    nonisolated func notPushedHere(_ changes: [Change], in collection: CollectionName) -> [Change] {
        guard usesVersionVectors else { return changes }
        return versionsPushedHere.withLock { versions in
            guard versions?.isEmpty == false else { return changes }
            return changes.filter { change in
                let pushed = versions?.removeValue(forKey: PushedDocument(collection: collection, docID: change.docID))
                return pushed == nil || pushed != change.version
            }
        }
    }

    /// How `change` is named to this puller: by its current version on CBMobile_4, unless it is a revision
    /// written before its document had a vector (LiteCore 4 and Sync Gateway 4 send those by rev-tree ID).
    nonisolated func wireRevision(of change: Change) -> WireRevision {
        guard usesVersionVectors, let version = change.version else { return .tree(change.revID) }
        return WireRevision(version)
    }

    /// For each requested change, the revision to send a delta against: the first the puller said it has (its
    /// `changes` reply lists them, nearest first: a rev-tree ID, or a CBMobile_4 puller's current version), read
    /// with its body in one snapshot for the whole window; `nil` where there is none with a body, or where no
    /// delta may be sent.
    private nonisolated func deltaBases(
        for window: [(Change, WireRevision?)], capabilities: ReceiverCapabilities,
        in collection: CollectionName
    ) async throws -> [OutgoingRevision?] {
        guard configuration.deltaSync, capabilities.deltas else { return window.map { _ in nil } }
        // A CBMobile_4 puller's versions are turned into revision IDs for the whole window in one read.
        var baseIDs = window.map { $0.1?.revisionID }
        var versionRows: [Int] = []
        var versions: [(docID: String, version: Version)] = []
        for (row, (change, known)) in window.enumerated() {
            guard case .vector(let vector)? = known else { continue }
            versionRows.append(row)
            versions.append((change.docID, vector.current))
        }
        for (row, base) in zip(versionRows, try await database.revisionIDs(currentVersions: versions, in: collection)) {
            baseIDs[row] = base
        }
        var requests: [OutgoingRevisionRequest] = []
        var rows: [Int] = []
        for (row, ((change, _), base)) in zip(window, baseIDs).enumerated() {
            guard let base else { continue }
            requests.append(OutgoingRevisionRequest(docID: change.docID, revID: base, knownRevIDs: [], maxHistory: 1))
            rows.append(row)
        }
        var bases = [OutgoingRevision?](repeating: nil, count: window.count)
        guard !requests.isEmpty else { return bases }
        for (row, base) in zip(rows, try await database.outgoingRevisions(requests, in: collection)) {
            bases[row] = base
        }
        return bases
    }
}

/// What the puller announced in its `changes` replies; `deltas` comes only in the first (spec §3.5).
final class PullReceiverState: Sendable {
    private let capabilities = Mutex(ReceiverCapabilities())

    var current: ReceiverCapabilities { capabilities.withLock { $0 } }

    func update(with announced: ReceiverCapabilities) -> ReceiverCapabilities {
        capabilities.withLock { capabilities in
            capabilities.maxHistory = announced.maxHistory ?? capabilities.maxHistory
            capabilities.blobs = capabilities.blobs || announced.blobs
            capabilities.deltas = capabilities.deltas || announced.deltas
            return capabilities
        }
    }
}

/// Tells a feed's reader that the batch it started offering has been numbered (or has failed before it was).
private final class NumberingSignal: Sendable {
    private let waiter = Mutex<CheckedContinuation<Void, Never>?>(nil)

    func waiting(_ continuation: CheckedContinuation<Void, Never>) {
        waiter.withLock { $0 = continuation }
    }

    /// Resumes the reader; only the first call does anything.
    @Sendable func signal() {
        waiter.withLock { $0.take() }?.resume()
    }
}
