import BLIPCodec
import BLIPConnection
import EdgeStore
import Foundation
import HummingbirdWSClient
import Logging
import NIOSSL
import ReplicationProtocol

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

    public struct Credentials: Sendable, Hashable {
        public var user: String
        public var password: String

        public init(user: String, password: String) {
            self.user = user
            self.password = password
        }
    }

    public struct Configuration: Sendable {
        /// `ws://host:port/db` or `wss://host:port/db`; `/_blipsync` is appended.
        public var remoteURL: String
        /// The upstream's stable identity. Checkpoints are keyed by it, not by the URL, so reaching
        /// the same upstream by another address resumes where the last run stopped.
        public var remoteUUID: String
        public var direction: Direction
        public var continuous: Bool
        /// Sent preemptively as `Authorization: Basic` (spec §1.4).
        public var credentials: Credentials?
        /// For `wss://`; the system defaults when `nil`.
        public var tlsConfiguration: TLSConfiguration?
        /// Rows per `proposeChanges` and per `changes` batch asked of the upstream.
        public var batchSize: Int
        /// Decides pulled revisions that conflict with local ones.
        public var conflictResolver: ConflictResolver
        /// Push and pull only these documents; empty means all.
        public var documentIDs: [String]
        /// Pull only these Sync Gateway channels; empty means all the upstream lets this user see.
        public var channels: [String]

        public init(
            remoteURL: String,
            remoteUUID: String,
            direction: Direction,
            continuous: Bool = false,
            credentials: Credentials? = nil,
            tlsConfiguration: TLSConfiguration? = nil,
            batchSize: Int = 200,
            conflictResolver: ConflictResolver = .default,
            documentIDs: [String] = [],
            channels: [String] = []
        ) {
            self.remoteURL = remoteURL
            self.remoteUUID = remoteUUID
            self.direction = direction
            self.continuous = continuous
            self.credentials = credentials
            self.tlsConfiguration = tlsConfiguration
            self.batchSize = max(1, batchSize)
            self.conflictResolver = conflictResolver
            self.documentIDs = documentIDs
            self.channels = channels
        }

        /// The document-ID filter, `nil` when every document replicates.
        var documentIDFilter: [String]? { documentIDs.isEmpty ? nil : documentIDs }

        /// The channel filter, `nil` when every channel is pulled.
        var channelFilter: [String]? { channels.isEmpty ? nil : channels }

        /// The local changes the push considers.
        var pushedChanges: ChangesOptions { ChangesOptions(docIDs: documentIDFilter.map(Set.init)) }
    }

    public enum Activity: String, Sendable, Hashable {
        case stopped
        case offline
        case connecting
        case idle
        case busy
    }

    public struct Status: Sendable, Hashable {
        public var activity: Activity = .stopped
        /// Revisions pushed or pulled (or found already present on the other side) in this run.
        public var completed = 0
        /// Revisions this run has learned it must push or pull.
        public var total = 0
        public var lastError: String?
        public var lastSuccess: Date?
    }

    let database: DocumentDatabase
    let configuration: Configuration
    let logger: Logger
    var currentStatus = Status()
    var activeSession: ActiveReplicatorSession?
    var stopRequested = false

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
        await activeSession?.stopContinuous()
    }

    private func connectAndReplicate() async throws {
        do {
            let url = try Self.syncURL(for: configuration.remoteURL)
            currentStatus.activity = .connecting
            var clientConfiguration = WebSocketClientConfiguration(maxFrameSize: 1 << 20)
            clientConfiguration.additionalHeaders[.secWebSocketProtocol] = ReplicationSubprotocol.clientOffer
            if let credentials = configuration.credentials {
                let token = Data("\(credentials.user):\(credentials.password)".utf8).base64EncodedString()
                clientConfiguration.additionalHeaders[.authorization] = "Basic \(token)"
            }
            let logger = logger
            try await WebSocketClient.connect(
                url: url, configuration: clientConfiguration,
                tlsConfiguration: url.hasPrefix("wss:") ? configuration.tlsConfiguration ?? .makeClientConfiguration() : nil,
                logger: logger
            ) { inbound, outbound, _ in
                // HummingbirdWSClient does not expose the 101 response's headers, so the echoed
                // subprotocol cannot be checked here; the listeners this replicator targets
                // (Sync Gateway, LiteCore, this project) all choose the first offered entry.
                let connection = try BLIPConnection(subprotocol: ReplicationSubprotocol.cbMobile3.rawValue, logger: logger)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await connection.run(inbound: inbound, outbound: outbound) }
                    do {
                        try await self.replicate(over: connection)
                    } catch {
                        await connection.close(.internalError, reason: "\(error)")
                        throw error
                    }
                    await connection.close()
                    try await group.waitForAll()
                }
            }
            currentStatus.activity = .stopped
            currentStatus.lastSuccess = Date()
        } catch {
            currentStatus.activity = .stopped
            currentStatus.lastError = "\(error)"
            throw error
        }
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
    private func replicate(over connection: BLIPConnection) async throws {
        let checkpointer = try await Checkpointer(
            database: database, checkpointID: checkpointID, connection: connection, logger: logger)
        let session = ActiveReplicatorSession(
            replicator: self, connection: connection, database: database, checkpointer: checkpointer,
            configuration: configuration, logger: logger)
        await session.registerHandlers()
        activeSession = session
        defer { activeSession = nil }
        if stopRequested {
            await session.stopContinuous()
        }
        currentStatus.activity = .busy
        try await checkpointer.reconcileWithPeer()
        let direction = configuration.direction
        try await withThrowingTaskGroup(of: Void.self) { group in
            if direction.pushes {
                group.addTask { try await session.push() }
            }
            if direction.pulls {
                group.addTask { try await session.pull() }
            }
            try await group.waitForAll()
        }
        try await checkpointer.save()
        await session.unregisterHandlers()
    }

    /// This pairing's checkpoint ID: the filters are part of it, so changing them starts over.
    var checkpointID: String {
        Checkpointer.checkpointID(
            localUUID: database.uuid, remoteUUID: configuration.remoteUUID, docIDs: configuration.documentIDFilter,
            channels: configuration.channelFilter)
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

    func recordActivity(_ activity: Activity) {
        currentStatus.activity = activity
    }
}

public enum ActiveReplicatorError: Error, Sendable, Hashable, CustomStringConvertible {
    case invalidRemoteURL(String, reason: String)
    /// The peer answered a request with an error.
    case peerRefused(request: String, domain: String, code: Int, message: String)
    /// The peer's reply could not be understood.
    case invalidReply(request: String, reason: String)
    /// A revision could not be stored locally.
    case storeFailed(docID: String, reason: String)
    /// A push-only question was asked of a pull-only replicator.
    case notPushing(operation: String)

    public var description: String {
        switch self {
        case .invalidRemoteURL(let url, let reason):
            "invalid upstream URL '\(url)': \(reason)"
        case .peerRefused(let request, let domain, let code, let message):
            "the upstream refused \(request): \(domain) \(code)\(message.isEmpty ? "" : " \(message)")"
        case .invalidReply(let request, let reason):
            "the upstream's reply to \(request) is invalid: \(reason)"
        case .storeFailed(let docID, let reason):
            "storing the pulled document '\(docID)' failed: \(reason)"
        case .notPushing(let operation):
            "\(operation) needs a replicator that pushes, but this one only pulls"
        }
    }
}
