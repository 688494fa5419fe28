import BLIPCodec
import BLIPConnection
import BurstQueue
import EdgeStore
import Foundation
import Logging
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON

/// One connection's worth of active replication: the push loop, the pull subscription and the
/// handlers answering the upstream's requests (`changes`, `rev`, `norev`, `getAttachment`).
actor ActiveReplicatorSession {
    /// A pulled `changes` row, from its arrival until it is stored or known to need nothing.
    struct PulledRow {
        var sequence: JSONValue
        var isDone: Bool
    }

    /// A pulled revision as its `changes` row and its `rev` both name it: by rev-tree ID, or on CBMobile_4 by
    /// current version (a `rev` carries the rest of its vector in `history`, the row only the current version).
    struct RevisionKey: Hashable {
        var docID: String
        var revisionID: String

        init(docID: String, revisionID: String) {
            self.docID = docID
            self.revisionID = revisionID
        }

        init(docID: String, revision: WireRevision) {
            switch revision {
            case .tree(let revisionID): self.init(docID: docID, revisionID: revisionID.description)
            case .vector(let vector): self.init(docID: docID, revisionID: vector.current.description)
            }
        }
    }

    /// A pulled `rev` or `norev` that its handler is done with, waiting to be counted.
    struct FinishedPull {
        var requestNumber: UInt64
        /// `nil` for a `rev` without `id` or `rev`.
        var key: RevisionKey?
        /// Stored, or reported failed by the upstream (which counts as done, as in LiteCore).
        var isStoredRevision = false
        /// The stored revision's body as received (a delta's, when it came as one).
        var bytes = 0
        var failure: String?
        /// Whether the failure refused the revision itself (HTTP 4xx: its content, ID or history), counted as a
        /// rejected pull; server-side faults (5xx: the store, a blob the upstream did not deliver) are counted by
        /// kind where they happen.
        var isRefusal = true
    }

    static let handledProfiles: [Profile] = [.changes, .rev, .norev, .getAttachment]
    /// Pushed batches proposed or being sent at once (LiteCore: 5 change lists in flight).
    static let maxPushBatchesInFlight = 5

    let replicator: ActiveReplicator
    let connection: BLIPConnection
    let database: DocumentDatabase
    /// The upstream as this database numbers it: what it pulled from there is not pushed back.
    let remote: RemoteDatabaseID
    /// The local collection this session replicates.
    let collection: CollectionName
    /// Its `collection` number on this connection; `nil` in legacy mode, where no message carries one.
    let collectionIndex: Int?
    let checkpointer: Checkpointer
    let configuration: ActiveReplicator.Configuration
    /// Whether revisions travel as version vectors (CBMobile_4) rather than rev-tree IDs.
    let usesVersionVectors: Bool
    let logger: Logger
    /// Stores pulled revisions, resolving conflicts with the configured resolver; revisions that
    /// arrive together share a transaction.
    let receiver: RevisionReceiver

    var isStopping = false
    var pushIsIdle: Bool
    var pullIsIdle: Bool
    var pushLoop: Task<Void, any Error>?
    /// History length the upstream accepts, from its `proposeChanges` replies.
    var maxHistory = RevisionHistory.defaultMaximumLength
    /// Whether a `changes` reply already told the upstream it may send deltas.
    var hasAnnouncedDeltas = false

    /// Pulled rows by arrival number; `remote` advances over the done ones at the front.
    var pulledRows: [Int: PulledRow] = [:]
    var nextPulledRow = 0
    var firstUnfinishedPulledRow = 0
    var awaitedRevisions: [RevisionKey: Int] = [:]
    /// The number of the upstream's caught-up `changes` request, once it arrived.
    var caughtUpMarker: UInt64?
    /// All of the upstream's requests up to this number reached a handler; later ones are listed.
    var contiguousRequestNumber: UInt64 = 0
    var laterRequestNumbers: Set<UInt64> = []
    var pullWaiters: [CheckedContinuation<Void, Never>] = []
    /// Handled `rev`s and `norev`s, posted by their handlers without a hop onto this actor.
    let finishedPulls = BurstQueue<FinishedPull>()

    init(
        replicator: ActiveReplicator, connection: BLIPConnection, database: DocumentDatabase,
        remote: RemoteDatabaseID, collection: CollectionName = .default, collectionIndex: Int? = nil,
        checkpointer: Checkpointer, configuration: ActiveReplicator.Configuration, versionVectors: Bool,
        logger: Logger
    ) {
        self.replicator = replicator
        self.connection = connection
        self.database = database
        self.remote = remote
        self.collection = collection
        self.collectionIndex = collectionIndex
        self.checkpointer = checkpointer
        self.configuration = configuration
        usesVersionVectors = versionVectors
        self.logger = logger
        let resolver = configuration.conflictResolver
        receiver = RevisionReceiver(
            database: database, collection: collection, collectionIndex: collectionIndex,
            inserter: RevisionInserter(
                database: database, collection: collection, resolver: { resolver.resolve($0) }, receivedFrom: remote),
            connection: connection, counters: replicator.counters, refusesReservedProperties: false,
            acceptsDeltas: true, logger: logger)
        pushIsIdle = !configuration.direction.pushes
        pullIsIdle = !configuration.direction.pulls
    }

    /// Answers one of the upstream's requests addressed to this session's collection other than `rev`, which
    /// `receiveRevision` answers in its turn. Nonisolated, so that a request whose answer needs nothing of
    /// this actor does not hop onto it.
    nonisolated func handle(_ profile: Profile, _ request: BLIPMessage) async throws -> BLIPMessage {
        switch profile {
        case .changes: try await receiveChanges(request)
        case .norev: try await receiveNoRevision(request)
        default: try await serveAttachment(request)
        }
    }

    /// Ends a continuous replication: the push loop stops between batches and the pull stops
    /// waiting; what completed so far goes into the final checkpoint.
    func stopContinuous() {
        isStopping = true
        pushLoop?.cancel()
        wakePullWaiters()
    }

    /// Reports `idle` once both directions have caught up, `busy` otherwise.
    func setIdle(push: Bool? = nil, pull: Bool? = nil) async {
        pushIsIdle = push ?? pushIsIdle
        pullIsIdle = pull ?? pullIsIdle
        await replicator.recordIdleness(pushIsIdle && pullIsIdle, of: collection)
    }

    /// `getAttachment` from the upstream while it stores a pushed revision (spec §3.9).
    private func serveAttachment(_ request: BLIPMessage) async throws -> BLIPMessage {
        noteRequest(request.number)
        let decoded = try request.decode(GetAttachmentRequest.self)
        do {
            let content = try database.blobs.read(decoded.digest)
            replicator.counters.countPushedBlob(bytes: content.count)
            return request.reply(body: Array(content), isCompressed: decoded.compress)
        } catch StoreError.blobNotFound {
            throw ErrorReply.http(404, "no blob \(decoded.digest)").blipError
        } catch let error as StoreError {
            throw error.errorReply.blipError
        }
    }

    /// Sends a request and decodes its reply, turning error replies into `ActiveReplicatorError`.
    func send<Reply: ReplicationMessage>(
        _ request: some ReplicationRequest, expecting: Reply.Type, isUrgent: Bool = false
    ) async throws -> Reply {
        let profile = type(of: request).profile.rawValue
        let reply: BLIPMessage
        do {
            reply = try await connection.sendRequest(.request(request, isUrgent: isUrgent))
        } catch let error as BLIPErrorReply {
            throw ActiveReplicatorError.peerRefused(
                request: profile, domain: error.domain, code: error.code, message: error.message)
        }
        return try reply.decodeReply(Reply.self, to: profile)
    }
}
