import BLIPCodec
import BLIPConnection
import EdgeIdentity
import EdgeStore
import Foundation
import Logging
import ReplicationProtocol
import SyncIdentifiers
import UpstreamDialer

/// The active side of replication: connects to an upstream's `/<db>/_blipsync`, and pushes the
/// local database's changes, pulls the upstream's, or both, resuming from a checkpoint kept on
/// both sides (spec §1, §3, §5, §9).
///
/// `run()` returns once a one-shot replication is idle and its checkpoint saved; a continuous one
/// runs until its task is cancelled, then saves its checkpoint and closes normally.
public actor ActiveReplicator {
    public enum Direction: String, Sendable, Hashable {
        case push
        case pull
        case pushAndPull

        var pushes: Bool { self != .pull }
        var pulls: Bool { self != .push }
    }

    /// How the replicator proves who it is to the upstream, besides a TLS client certificate (which goes in
    /// `Configuration.tls`).
    public enum Authentication: Sendable, Hashable {
        case none
        /// Sent preemptively as `Authorization: Basic` (spec §1.4).
        case basic(user: String, password: String)
        /// A Sync Gateway session: `Cookie: <name>=<value>` (spec §1.4).
        case sessionCookie(name: String, value: String)

        var upgradeHeaders: [(name: String, value: String)] {
            switch self {
            case .none:
                return []
            case .basic(let user, let password):
                let token = Data("\(user):\(password)".utf8).base64EncodedString()
                return [("Authorization", "Basic \(token)")]
            case .sessionCookie(let name, let value):
                return [("Cookie", "\(name)=\(value)")]
            }
        }
    }

    /// Where one connection goes and how its server is trusted.
    public struct Endpoint: Sendable {
        /// `ws://host:port/db` or `wss://host:port/db`.
        package var remoteURL: String
        package var tls: ClientTLSConfiguration?

        package init(remoteURL: String, tls: ClientTLSConfiguration?) {
            self.remoteURL = remoteURL
            self.tls = tls
        }
    }

    public typealias EndpointResolver = @Sendable () async throws -> Endpoint

    public struct Configuration: Sendable {
        /// `ws://host:port/db` or `wss://host:port/db`; `/_blipsync` is appended.
        public var remoteURL: String
        /// Decides before each connection where to connect and how to trust it, instead of `remoteURL` and
        /// `tls`: a paired gateway is looked for at each address of its pairing payload, and the certificate
        /// that matched the payload is the one pinned. A thrown error ends the run as a dial error would.
        package var endpointResolver: EndpointResolver?
        /// The upstream's stable identity. Checkpoints are keyed by it, not by the URL, so reaching
        /// the same upstream by another address resumes where the last run stopped.
        public var remoteUUID: String
        public var direction: Direction
        public var continuous: Bool
        public var authentication: Authentication
        /// For `wss://`: the server trust policy and our client certificate; the system roots with a hostname
        /// check when `nil`.
        public var tls: ClientTLSConfiguration?
        /// Interval of WebSocket pings; a silent peer is dropped within two of them. `nil` sends none.
        package var heartbeat: Duration?
        /// Rows per `proposeChanges` and per `changes` batch asked of the upstream.
        public var batchSize: Int
        /// How often progress is saved as a checkpoint while replicating, so that a crash or a lost connection
        /// costs at most this much work again, not the whole run.
        package var checkpointInterval: Duration
        /// Decides pulled revisions that conflict with local ones.
        package var conflictResolver: ConflictResolver
        /// Push and pull only these documents; empty means all.
        package var documentIDs: [String]
        /// Pull only these Sync Gateway channels; empty means all the upstream lets this user see.
        package var channels: [String]
        /// The collections replicated, each with its own checkpoint; only the default one in legacy mode.
        public var collections: [CollectionName]
        /// The subprotocols offered, most preferred first (the `protocol` setting).
        package var subprotocols: [ReplicationSubprotocol]

        public init(
            remoteURL: String,
            endpointResolver: EndpointResolver? = nil,
            remoteUUID: String,
            direction: Direction,
            continuous: Bool = false,
            authentication: Authentication = .none,
            tls: ClientTLSConfiguration? = nil,
            heartbeat: Duration? = nil,
            batchSize: Int = 200,
            checkpointInterval: Duration = .seconds(5),
            conflictResolver: ConflictResolver = .default,
            documentIDs: [String] = [],
            channels: [String] = [],
            collections: [CollectionName] = [.default],
            subprotocols: [ReplicationSubprotocol]? = nil
        ) {
            self.remoteURL = remoteURL
            self.endpointResolver = endpointResolver
            self.remoteUUID = remoteUUID
            self.direction = direction
            self.continuous = continuous
            self.authentication = authentication
            self.tls = tls
            self.heartbeat = heartbeat
            self.batchSize = max(1, batchSize)
            self.checkpointInterval = checkpointInterval
            self.conflictResolver = conflictResolver
            self.documentIDs = documentIDs
            self.channels = channels
            self.collections = collections.isEmpty ? [.default] : collections
            self.subprotocols = subprotocols ?? ReplicationSubprotocol.activeOffer
        }

        /// The document-ID filter, `nil` when every document replicates.
        var documentIDFilter: [String]? { documentIDs.isEmpty ? nil : documentIDs }

        /// The channel filter, `nil` when every channel is pulled.
        var channelFilter: [String]? { channels.isEmpty ? nil : channels }

        /// The local changes the push considers.
        var pushedChanges: ChangesOptions { ChangesOptions(docIDs: documentIDFilter.map(Set.init)) }
    }

    package enum Activity: String, Sendable, Hashable {
        case stopped
        case offline
        case connecting
        case idle
        case busy
    }

    public struct Status: Sendable, Hashable {
        package var activity: Activity = .stopped
        /// Revisions pushed or pulled (or found already present on the other side) in this run.
        public var completed = 0
        /// Revisions this run has learned it must push or pull.
        package var total = 0
        /// What the upstream chose on the last connection: version vectors (CBMobile_4) or rev trees.
        package var subprotocol: ReplicationSubprotocol?
        public var lastError: String?
        package var lastSuccess: Date?
    }

    let database: DocumentDatabase
    /// Documents and bytes moved and refused since start, over every run: `pushed` went upstream, `pulled`
    /// came from it.
    public nonisolated let counters = ReplicationCounters()
    /// The newest numeric sequence the upstream's changes feed announced for the default collection, for
    /// `pullCheckpointLag`; kept across reconnections.
    var newestRemoteSequence: UInt64?
    private(set) var configuration: Configuration
    let logger: Logger
    var currentStatus = Status()
    var activeSessions: [ActiveReplicatorSession] = []
    /// Whether each running session (by collection) is idle; the replicator is idle when all are.
    var sessionActivity: [String: Bool] = [:]

    /// The default collection's session, or the first one: what push-only questions are answered from.
    var activeSession: ActiveReplicatorSession? {
        activeSessions.first { $0.collection == .default } ?? activeSessions.first
    }
    var stopRequested = false
    /// Why the current connection closed while a replication was still using it.
    var lostConnection: (any Error)?

    public init(database: DocumentDatabase, configuration: Configuration, logger: Logger) {
        self.database = database
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "upstream"] = .string(configuration.remoteURL)
        self.logger = logger
    }

    public func status() -> Status {
        currentStatus
    }

    /// Replaces the server trust (and client certificate) used from the next connection on, such as a pin that
    /// changed in the trust store; a connection already open keeps the trust it was made with.
    package func replaceTLS(_ tls: ClientTLSConfiguration?) {
        configuration.tls = tls
    }

    /// Connects, replicates, saves the checkpoint and closes with 1000. Errors are also kept in
    /// `status().lastError`. Cancelling the calling task stops replication between batches; the
    /// connection itself is not cancelled, so the final `setCheckpoint` still reaches the peer.
    public func run() async throws {
        stopRequested = false
        let work = Task { try await self.connectAndReplicate() }
        try await withTaskCancellationHandler {
            try await work.value
        } onCancel: {
            Task { await self.requestStop() }
        }
    }

    private func requestStop() async {
        stopRequested = true
        for session in activeSessions { await session.stopContinuous() }
    }

    private func connectAndReplicate() async throws {
        do {
            currentStatus.activity = .connecting
            let endpoint =
                try await configuration.endpointResolver?()
                ?? Endpoint(remoteURL: configuration.remoteURL, tls: configuration.tls)
            let dialer = UpstreamDialer(
                target: try UpstreamTarget(url: Self.syncURL(for: endpoint.remoteURL)),
                options: .init(
                    subprotocols: configuration.subprotocols.map(\.rawValue),
                    headers: [("User-Agent", Self.userAgent)] + configuration.authentication.upgradeHeaders,
                    tls: endpoint.tls,
                    heartbeat: configuration.heartbeat
                ),
                logger: logger
            )
            try await dialer.run { session in
                let subprotocol = ReplicationSubprotocol(rawValue: session.subprotocol)
                let connection = try BLIPConnection(subprotocol: session.subprotocol, logger: self.logger)
                await self.connectionOpened(subprotocol)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        let ending: any Error
                        do {
                            ending = try await connection.run(inbound: session.inbound, outbound: session.outbound)
                        } catch {
                            ending = error
                        }
                        await self.connectionEnded(ending)
                    }
                    do {
                        try await self.replicate(over: connection, versionVectors: subprotocol.usesVersionVectors)
                    } catch {
                        if let lost = await self.lostConnection {
                            throw ActiveReplicatorError.connectionLost(reason: "\(lost)")
                        }
                        await connection.close(.internalError, reason: "\(error)")
                        throw error
                    }
                    // A continuous replication the upstream hung up on ends quietly (its sessions were told to
                    // stop), but nobody asked it to: that is a lost connection, to be retried.
                    if let lost = await self.lostConnection, await !self.stopRequested {
                        throw ActiveReplicatorError.connectionLost(reason: "\(lost)")
                    }
                    await connection.close()
                    try await group.waitForAll()
                }
            }
            currentStatus.activity = .stopped
            currentStatus.lastSuccess = Date()
        } catch {
            let error = Self.namingTheProtocolSetting(error, offered: configuration.subprotocols)
            currentStatus.activity = .stopped
            currentStatus.lastError = "\(error)"
            if !(error is CancellationError) { counters.countError(ReplicationErrorKind(classifying: error)) }
            throw error
        }
    }

    static let userAgent = "EdgeGateway (active replicator)"

    private func connectionOpened(_ subprotocol: ReplicationSubprotocol) {
        lostConnection = nil
        currentStatus.subprotocol = subprotocol
    }

    /// A server that speaks none of the offered subprotocols, picks one that was not offered, or refuses the pull's
    /// versioning: stopped with an error that says which `protocol` setting fits, since retrying cannot help.
    static func namingTheProtocolSetting(_ error: any Error, offered: [ReplicationSubprotocol]) -> any Error {
        let offer = ReplicationSubprotocol.offer(offered)
        switch error {
        case UpstreamDialError.subprotocolRejected(_, let chosen?):
            return ActiveReplicatorError.incompatibleProtocol(
                "the upstream chose \(chosen), which was not offered (\(offer))")
        case UpstreamDialError.upgradeRefused(_, let status, _, _, let body)
        where (status == 403 || status == 500) && body.localizedCaseInsensitiveContains("protocol"):
            return ActiveReplicatorError.incompatibleProtocol(
                "the upstream speaks none of \(offer) (HTTP \(status) \(body))")
        case ActiveReplicatorError.peerRefused("subChanges", let domain, 501, let message):
            return ActiveReplicatorError.incompatibleProtocol(
                "the upstream refused the pull's document versioning over \(offer) (\(domain) 501 \(message))")
        default:
            return error
        }
    }

    /// The socket closed: if replication is still running, the upstream went away (or stopped answering pings);
    /// a continuous replication is told to stop, so that the run ends with an error and is retried.
    private func connectionEnded(_ ending: any Error) async {
        guard !activeSessions.isEmpty else { return }
        lostConnection = ending
        for session in activeSessions { await session.stopContinuous() }
    }

    /// The WebSocket URL of the upstream database (spec §1.1).
    static func syncURL(for remoteURL: String) throws(ActiveReplicatorError) -> String {
        guard let components = URLComponents(string: remoteURL), let scheme = components.scheme?.lowercased(),
            scheme == "ws" || scheme == "wss"
        else {
            throw .invalidRemoteURL(remoteURL, reason: "expected ws://host:port/db or wss://host:port/db")
        }
        guard components.host?.isEmpty == false else {
            throw .invalidRemoteURL(remoteURL, reason: "it names no host")
        }
        let path = components.path.split(separator: "/")
        guard path.count == 1, !path[0].hasPrefix("_") else {
            throw .invalidRemoteURL(remoteURL, reason: "the path must be one database name, not starting with '_'")
        }
        var result = components
        result.path = "/\(path[0])/_blipsync"
        result.query = nil
        result.fragment = nil
        guard let url = result.string else {
            throw .invalidRemoteURL(remoteURL, reason: "it cannot be rebuilt with /_blipsync")
        }
        return url
    }

    /// One replication over an open connection: checkpoints, then push and pull side by side, then
    /// the final checkpoint save.
    private func replicate(over connection: BLIPConnection, versionVectors: Bool) async throws {
        let sessions = try await openSessions(over: connection, versionVectors: versionVectors)
        activeSessions = sessions
        sessionActivity = [:]
        await dispatchRequests(of: connection, to: sessions)
        defer { activeSessions = [] }
        if stopRequested {
            for session in sessions { await session.stopContinuous() }
        }
        currentStatus.activity = .busy
        let direction = configuration.direction
        let checkpointers = sessions.map(\.checkpointer)
        let periodicSaves = Task { [logger, interval = configuration.checkpointInterval] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled else { return }
                for checkpointer in checkpointers {
                    do {
                        try await checkpointer.save()
                    } catch {
                        logger.warning("saving the checkpoint failed; retrying later", metadata: ["error": "\(error)"])
                    }
                }
            }
        }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for session in sessions {
                    if direction.pushes {
                        group.addTask { try await session.push() }
                    }
                    if direction.pulls {
                        group.addTask { try await session.pull() }
                    }
                }
                try await group.waitForAll()
            }
        } catch {
            periodicSaves.cancel()
            throw error
        }
        periodicSaves.cancel()
        await periodicSaves.value
        for checkpointer in checkpointers {
            try await checkpointer.save()
        }
        for profile in ActiveReplicatorSession.handledProfiles {
            await connection.removeHandler(for: profile.rawValue)
        }
    }

    /// One session per replicated collection, each with its checkpoint settled with the peer's (spec §5.4).
    ///
    /// Only the default collection over CBMobile_3: legacy mode, `getCheckpoint` and no `collection` property,
    /// which every rev-tree upstream understands. Otherwise collection-aware mode (spec §3.1): `getCollections`
    /// comes first and returns the peer's checkpoints, and every message of collection *i* carries
    /// `collection: i`. CBMobile_4 is always collection-aware, as Couchbase Lite 4 is, and so is a connection to a
    /// peer that refuses legacy mode (LiteCore 4: "inappropriate use of the collection property").
    private func openSessions(
        over connection: BLIPConnection, versionVectors: Bool
    ) async throws -> [ActiveReplicatorSession] {
        let collections = configuration.collections
        let remote = try await database.remoteDatabaseID(identifiedBy: configuration.remoteUUID)
        if collections == [.default] && !versionVectors {
            let checkpointer = try await Checkpointer(
                database: database, checkpointID: checkpointID(), connection: connection, logger: logger)
            do {
                try await checkpointer.reconcileWithPeer()
                return [
                    ActiveReplicatorSession(
                        replicator: self, connection: connection, database: database, remote: remote,
                        checkpointer: checkpointer, configuration: configuration, versionVectors: false,
                        logger: logger)
                ]
            } catch let refusal as BLIPErrorReply
                where refusal.domain == ErrorDomain.http.rawValue && refusal.code == 400
                && refusal.message.localizedCaseInsensitiveContains("collection")
            {
                logger.info(
                    "the upstream has no legacy mode; replicating the default collection collection-aware",
                    metadata: ["reason": "\(refusal.message)"])
            }
        }
        var checkpointers: [Checkpointer] = []
        for (index, collection) in collections.enumerated() {
            checkpointers.append(
                try await Checkpointer(
                    database: database, checkpointID: checkpointID(for: collection), collectionIndex: index,
                    connection: connection, logger: logger))
        }
        let request = GetCollectionsRequest(
            checkpointIDs: checkpointers.map(\.checkpointID), collections: collections,
            uuid: versionVectors ? database.uuid.uuidString.lowercased() : nil)
        let reply: BLIPMessage
        do {
            reply = try await connection.sendRequest(.request(request))
        } catch let error as BLIPErrorReply {
            throw ActiveReplicatorError.peerRefused(
                request: "getCollections", domain: error.domain, code: error.code, message: error.message)
        }
        let entries = try reply.decodeReply(GetCollectionsReply.self, to: "getCollections").entries
        guard entries.count == collections.count else {
            throw ActiveReplicatorError.invalidReply(
                request: "getCollections", reason: "\(entries.count) entries for \(collections.count) collections")
        }
        var sessions: [ActiveReplicatorSession] = []
        for (index, entry) in entries.enumerated() {
            if case .missing = entry {
                throw ActiveReplicatorError.collectionNotFound(collections[index].description)
            }
            await checkpointers[index].reconcile(withPeerEntry: entry)
            sessions.append(
                ActiveReplicatorSession(
                    replicator: self, connection: connection, database: database, remote: remote,
                    collection: collections[index],
                    collectionIndex: index, checkpointer: checkpointers[index], configuration: configuration,
                    versionVectors: versionVectors, logger: logger))
        }
        return sessions
    }

    /// Routes the upstream's requests to the session of the collection they name. Every session hears of every
    /// request number, because a pull knows it has caught up only once all requests before the caught-up
    /// marker have arrived, whichever collection they were for.
    private func dispatchRequests(of connection: BLIPConnection, to sessions: [ActiveReplicatorSession]) async {
        @Sendable func target(of request: BLIPMessage) async throws -> ActiveReplicatorSession {
            let index = request.properties["collection"].flatMap { Int($0) }
            let target: ActiveReplicatorSession
            if sessions.count == 1 && sessions[0].collectionIndex == nil {
                guard index == nil else {
                    throw ErrorReply.http(400, "collection property without getCollections").blipError
                }
                target = sessions[0]
            } else {
                guard let index, sessions.indices.contains(index) else {
                    throw ErrorReply.http(400, "the collection property is missing or out of range").blipError
                }
                target = sessions[index]
            }
            for session in sessions where session !== target {
                await session.noteRequest(request.number)
            }
            return target
        }
        for profile in ActiveReplicatorSession.handledProfiles where profile != .rev {
            await connection.setHandler(for: profile.rawValue) { request in
                try await target(of: request).handle(profile, request)
            }
        }
        await connection.setHandler(
            for: Profile.rev.rawValue,
            inArrivalOrder: { request, turn in
                try await target(of: request).receiveRevision(request, turn: turn)
            })
    }

    /// The checkpoint ID of a collection: the filters are part of it, so changing them starts over; the default
    /// collection keeps the ID it always had.
    func checkpointID(for collection: CollectionName = .default) -> String {
        Checkpointer.checkpointID(
            localUUID: database.uuid, remoteUUID: configuration.remoteUUID, docIDs: configuration.documentIDFilter,
            channels: configuration.channelFilter, collection: collection == .default ? nil : collection.qualifiedName)
    }

    func recordTotal(_ count: Int) {
        currentStatus.total += count
    }

    func recordCompleted(_ count: Int) {
        currentStatus.completed += count
        currentStatus.lastSuccess = Date()
    }

    func recordError(_ message: String) {
        currentStatus.lastError = message
    }

    func recordIdleness(_ isIdle: Bool, of collection: CollectionName) {
        sessionActivity[collection.description] = isIdle
        let allIdle = activeSessions.allSatisfy { sessionActivity[$0.collection.description] == true }
        recordActivity(allIdle ? .idle : .busy)
        // Caught up: save now rather than at the next interval, as LiteCore does (spec §5.4).
        if allIdle && configuration.continuous {
            let checkpointers = activeSessions.map(\.checkpointer)
            Task { [logger] in
                for checkpointer in checkpointers {
                    do {
                        try await checkpointer.save()
                    } catch {
                        logger.debug("saving the checkpoint when idle failed", metadata: ["error": "\(error)"])
                    }
                }
            }
        }
    }

    func recordActivity(_ activity: Activity) {
        currentStatus.activity = activity
        // Caught up with the upstream is a successful sync, even when there was nothing to move.
        if activity == .idle {
            currentStatus.lastSuccess = Date()
        }
    }
}

package enum ActiveReplicatorError: Error, Sendable, Hashable, CustomStringConvertible {
    case invalidRemoteURL(String, reason: String)
    /// The peer answered a request with an error.
    case peerRefused(request: String, domain: String, code: Int, message: String)
    /// The peer's reply could not be understood.
    case invalidReply(request: String, reason: String)
    /// A revision could not be stored locally.
    case storeFailed(docID: String, reason: String)
    /// The connection closed in the middle of replicating: the upstream went away, or missed its heartbeats.
    case connectionLost(reason: String)
    /// The upstream does not serve a collection this replicator is configured for (`getCollections` → null).
    case collectionNotFound(String)
    /// A push-only question was asked of a pull-only replicator.
    case notPushing(operation: String)
    /// The upstream and the `protocol` setting have no replication protocol in common.
    case incompatibleProtocol(String)

    package var description: String {
        switch self {
        case .invalidRemoteURL(let url, let reason):
            "invalid upstream URL '\(url)': \(reason)"
        case .peerRefused(let request, let domain, let code, let message):
            "the upstream refused \(request): \(domain) \(code)\(message.isEmpty ? "" : " \(message)")"
        case .invalidReply(let request, let reason):
            "the upstream's reply to \(request) is invalid: \(reason)"
        case .storeFailed(let docID, let reason):
            "storing the pulled document '\(docID)' failed: \(reason)"
        case .connectionLost(let reason):
            "the connection to the upstream was lost: \(reason)"
        case .collectionNotFound(let collection):
            "collection '\(collection)' is not found on the upstream"
        case .notPushing(let operation):
            "\(operation) needs a replicator that pushes, but this one only pulls"
        case .incompatibleProtocol(let reason):
            "\(reason); set the upstream's protocol to \"3\" for Sync Gateway 3.x, Edge Server 1.x and Couchbase Lite 3.x, "
                + "to \"4\" for a Couchbase Lite 4.1+ listener, or \"auto\" for both"
        }
    }
}
