import BLIPCodec
import BLIPConnection
import EdgeStore
import Logging
import ReplicationProtocol
import SyncIdentifiers
import Synchronization
import VersionVectors

/// The passive side of replication for one database over one BLIP connection: it answers the
/// requests of a Couchbase Lite active replicator (checkpoints, pushes, pull subscriptions,
/// attachments) and feeds pulls with `changes` and `rev` messages (spec §3, §9).
///
/// Create it, call `start()` before running the connection, and `stop()` once the connection ended.
package actor PassiveReplicationSession {
    package struct Configuration: Sendable {
        /// Collections this peer serves; `getCollections` answers `null` for any other, and legacy
        /// mode (no `getCollections`) works only when the default collection is among them.
        package var servedCollections: [CollectionName]
        /// Whether revisions may travel as JSON deltas, in either direction (spec §6).
        package var deltaSync: Bool
        /// Unanswered `changes` batches per pull feed; LiteCore allows 5, Sync Gateway 2 (spec §3.5).
        package var maxChangesBatchesInFlight: Int
        /// Told the versioning a refused `subChanges` asked for, so that the listener can say why a device is
        /// turned away.
        package var versioningRefused: @Sendable (String) async -> Void

        package init(
            servedCollections: [CollectionName] = [.default],
            deltaSync: Bool = true,
            maxChangesBatchesInFlight: Int = 5,
            versioningRefused: @escaping @Sendable (String) async -> Void = { _ in }
        ) {
            self.servedCollections = servedCollections
            self.deltaSync = deltaSync
            self.maxChangesBatchesInFlight = max(1, maxChangesBatchesInFlight)
            self.versioningRefused = versioningRefused
        }
    }

    /// Which collection addressing the peer chose with its first message (spec §3.0).
    enum Mode {
        case undecided
        /// Only the default collection; no message may carry `collection`.
        case legacy
        /// `collection` indexes this list; `nil` entries are collections this peer does not serve.
        case collectionAware([CollectionName?])
    }

    /// One collection as addressed on this connection.
    struct Keyspace: Sendable {
        var collection: CollectionName
        /// The `collection` property to put on messages this side originates; `nil` in legacy mode.
        var index: Int?
    }

    /// Per-keyspace bookkeeping; the key is the `collection` index, or 0 in legacy mode.
    struct KeyspaceState {
        /// LiteCore announces `deltas: true` only in its first reply per collection (spec §3.5).
        var hasAnnouncedCapabilities = false
        var pullFeed: PullFeed?
    }

    let connection: BLIPConnection
    let database: DocumentDatabase
    let configuration: Configuration
    let logger: Logger
    /// What this connection has moved so far, for status reports.
    package let counters: ReplicationCounters
    /// Whether the connection speaks CBMobile_4, naming revisions by version vector; the subprotocol decides.
    let usesVersionVectors: Bool
    var mode = Mode.undecided
    var keyspaceStates: [Int: KeyspaceState] = [:]
    /// The receivers of pushed revisions, one per keyspace they were addressed to (each with the inserter that
    /// stores them several per transaction), by the `collection` index that addressed them (-1 in legacy mode).
    /// The mode never changes once decided, so a pushed `rev` finds its receiver here without a hop onto this
    /// actor.
    let revisionReceivers = Mutex<[Int: RevisionReceiver]>([:])
    /// The versions a CBMobile_4 client pushed on this connection that its pull feed has not passed yet, by
    /// collection and document: they are not offered back to it, as LiteCore 4 offers none (WIRE-NOTES §6). Kept
    /// only while the connection has a pull feed (nil before), so a push-only client's pushes are not remembered.
    let versionsPushedHere = Mutex<[PushedDocument: Version]?>(nil)

    struct PushedDocument: Hashable {
        var collection: CollectionName
        var docID: String
    }

    package init(
        connection: BLIPConnection,
        database: DocumentDatabase,
        configuration: Configuration = Configuration(),
        counters: ReplicationCounters = ReplicationCounters(),
        logger: Logger
    ) {
        self.connection = connection
        self.database = database
        self.configuration = configuration
        usesVersionVectors = ReplicationSubprotocol(rawValue: connection.subprotocol).usesVersionVectors
        self.counters = counters
        self.logger = Self.logger(logger, taggedWith: database.name)
    }

    /// `logger` with the database in its metadata, as a session logs; one that has it already is returned as it is,
    /// so that a listener's sessions can share one logger per database (see `BLIPConnection.logger(_:taggedWith:)`).
    package static func logger(_ logger: Logger, taggedWith database: String) -> Logger {
        guard logger[metadataKey: "db"] != .string(database) else { return logger }
        var logger = logger
        logger[metadataKey: "db"] = .string(database)
        return logger
    }

    /// Registers the request handlers on the connection; call before `BLIPConnection.run`.
    package func start() async {
        await register(.getCollections) { session, request in try await session.getCollections(request) }
        await register(.getCheckpoint) { session, request in try await session.getCheckpoint(request) }
        await register(.setCheckpoint) { session, request in try await session.setCheckpoint(request) }
        await register(.proposeChanges) { session, request in try await session.proposeChanges(request) }
        await register(.changes) { session, request in try await session.changes(request) }
        await connection.setHandler(
            for: Profile.rev.rawValue,
            deferringReplies: { [self] request, turn, reply in
                try await rev(request, turn: turn, reply: reply)
            })
        await register(.subChanges) { session, request in try await session.subChanges(request) }
        await register(.unsubChanges) { session, request in try await session.unsubChanges(request) }
        await register(.getAttachment) { session, request in try await session.getAttachment(request) }
        await register(.proveAttachment) { session, request in try await session.proveAttachment(request) }
    }

    /// The profiles this side answers.
    static let handledProfiles: [Profile] = [
        .getCollections, .getCheckpoint, .setCheckpoint, .proposeChanges, .changes, .rev, .subChanges,
        .unsubChanges, .getAttachment, .proveAttachment,
    ]

    /// Ends every pull feed and unregisters the handlers (which hold this session); call once the
    /// connection has ended.
    package func stop() async {
        for key in keyspaceStates.keys {
            keyspaceStates[key]?.pullFeed?.cancel()
            keyspaceStates[key]?.pullFeed = nil
        }
        for profile in Self.handledProfiles {
            await connection.removeHandler(for: profile.rawValue)
        }
    }

    /// The tasks the pull feed of the keyspace `collectionIndex` addresses holds; `nil` without a feed (for tests).
    func pullFeedTasks(collectionIndex: Int?) -> Int? {
        keyspaceStates[collectionIndex ?? 0]?.pullFeed?.runningTasks
    }

    private func register(
        _ profile: Profile,
        _ handler: @escaping @Sendable (PassiveReplicationSession, BLIPMessage) async throws -> BLIPMessage
    ) async {
        await connection.setHandler(for: profile.rawValue) { [self] request in
            try await handler(self, request)
        }
    }

    /// Resolves the `collection` property of a collection-specific request, fixing the connection's
    /// mode on its first message (spec §3.0).
    func keyspace(for collectionIndex: Int?) throws(BLIPErrorReply) -> Keyspace {
        if case .undecided = mode {
            mode = .legacy
        }
        switch mode {
        case .undecided, .legacy:
            guard collectionIndex == nil else {
                throw ErrorReply.http(400, "inappropriate use of the collection property").blipError
            }
            guard configuration.servedCollections.contains(.default) else {
                throw ErrorReply.http(404, "the default collection is not served; use getCollections").blipError
            }
            return Keyspace(collection: .default, index: nil)
        case .collectionAware(let collections):
            guard let collectionIndex else {
                throw ErrorReply.http(400, "the collection property is required after getCollections").blipError
            }
            guard collections.indices.contains(collectionIndex) else {
                throw ErrorReply.http(400, "the collection property is out of range").blipError
            }
            guard let collection = collections[collectionIndex] else {
                throw ErrorReply.http(404, "collection \(collectionIndex) is not served").blipError
            }
            return Keyspace(collection: collection, index: collectionIndex)
        }
    }

    /// Whether the next `changes`/`proposeChanges` reply for `keyspace` is its first.
    func takeFirstReply(for keyspace: Keyspace) -> Bool {
        let key = keyspace.index ?? 0
        let isFirst = !(keyspaceStates[key]?.hasAnnouncedCapabilities ?? false)
        keyspaceStates[key, default: KeyspaceState()].hasAnnouncedCapabilities = true
        return isFirst
    }

    /// The receiver of pushed `rev`s addressed to `collectionIndex`.
    nonisolated func revisionReceiver(for collectionIndex: Int?) async throws -> RevisionReceiver {
        if let resolved = revisionReceivers.withLock({ $0[collectionIndex ?? -1] }) { return resolved }
        return try await resolveRevisionReceiver(for: collectionIndex)
    }

    /// Resolves the keyspace (fixing the connection's mode on its first message) and creates its receiver, on
    /// this actor, so that concurrent first `rev`s share one inserter.
    private func resolveRevisionReceiver(for collectionIndex: Int?) throws(BLIPErrorReply) -> RevisionReceiver {
        let keyspace = try keyspace(for: collectionIndex)
        return revisionReceivers.withLock { resolved in
            if let existing = resolved[collectionIndex ?? -1] { return existing }
            let created = RevisionReceiver(
                database: database, collection: keyspace.collection, collectionIndex: keyspace.index,
                inserter: RevisionInserter(database: database, collection: keyspace.collection),
                connection: connection, counters: counters, refusesReservedProperties: true,
                acceptsDeltas: configuration.deltaSync, logger: logger)
            resolved[collectionIndex ?? -1] = created
            return created
        }
    }

    /// What this side announces as a receiver of revisions (spec §3.5, §3.6).
    func receiverCapabilities(for keyspace: Keyspace) -> ReceiverCapabilities {
        .liteCore(
            includingDeltas: takeFirstReply(for: keyspace) && configuration.deltaSync,
            versionVectors: usesVersionVectors)
    }
}
