import EdgeConfig
import EdgeReplication
import EdgeStore
import Foundation
import Logging
import NIOSSL
import ServiceLifecycle
import Synchronization

/// Keeps one `[[upstream]]` replicating: runs the active replicator, retries transient failures with
/// exponential back-off and jitter, stops on permanent ones, and reports all of it to /health.
final class UpstreamService: Service, HealthReporting {
    enum State: Sendable, Equatable {
        case starting
        case running
        case waitingToRetry(attempt: Int, error: String)
        case finished
        case failed(String)
    }

    let settings: UpstreamSettings
    let replicator: ActiveReplicator
    private let state = Mutex(State.starting)
    private let logger: Logger

    init(settings: UpstreamSettings, database: DocumentDatabase, logger: Logger) async throws {
        self.settings = settings
        var logger = logger
        logger[metadataKey: "upstream"] = .string(settings.name)
        self.logger = logger
        let remoteUUID = try await Self.remoteUUID(for: settings, in: database)
        replicator = ActiveReplicator(
            database: database,
            configuration: .init(
                remoteURL: settings.url.absoluteString,
                remoteUUID: remoteUUID,
                direction: ActiveReplicator.Direction(settings.direction),
                continuous: settings.continuous,
                credentials: try Self.credentials(settings),
                tlsConfiguration: try Self.tlsConfiguration(settings),
                conflictResolver: ActiveReplicator.ConflictResolver(settings.conflictResolver),
                documentIDs: settings.documentIDs,
                channels: settings.channels
            ),
            logger: logger
        )
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await self.replicateWithRetries()
        }
        // A finished one-shot replication or a permanent failure must not end the node (a returning service
        // would shut the whole group down): stay until shutdown.
        try? await gracefulShutdown()
    }

    private func replicateWithRetries() async {
        var attempt = 0
        while !Task.isCancelled {
            state.withLock { $0 = .running }
            do {
                try await replicator.run()
                state.withLock { $0 = .finished }
                logger.info("upstream replication finished")
                return
            } catch {
                if Task.isCancelled { return }
                attempt += 1
                let retryPolicy = UpstreamRetryPolicy(settings: settings)
                guard retryPolicy.isTransient(error), retryPolicy.allowsAttempt(attempt + 1) else {
                    state.withLock { $0 = .failed("\(error)") }
                    logger.error("upstream replication stopped", metadata: ["error": "\(error)", "attempts": "\(attempt)"])
                    return
                }
                let wait = retryPolicy.delay(afterAttempt: attempt)
                state.withLock { $0 = .waitingToRetry(attempt: attempt, error: "\(error)") }
                logger.warning(
                    "upstream replication failed; retrying",
                    metadata: ["error": "\(error)", "attempt": "\(attempt)", "retryIn": "\(wait)"]
                )
                try? await Task.sleep(for: wait)
            }
        }
    }

    func healthReports() async -> [ComponentHealth] {
        let status = await replicator.status()
        var details: [String: HealthValue] = [
            "database": .string(settings.database),
            "activity": .string(status.activity.rawValue),
            "completed": .integer(status.completed),
            "total": .integer(status.total),
            "lastSuccess": status.lastSuccess.map { .string($0.formatted(.iso8601)) } ?? .none,
            "lastError": status.lastError.map { .string($0) } ?? .none,
        ]
        let (health, reason): (HealthStatus, String?) =
            switch state.withLock({ $0 }) {
            case .starting, .running, .finished: (.up, nil)
            case .waitingToRetry(let attempt, let error): (.degraded, "retrying after attempt \(attempt): \(error)")
            case .failed(let error): (.down, "stopped: \(error)")
            }
        if case .waitingToRetry = state.withLock({ $0 }) {
            details["activity"] = "offline"
        }
        return [ComponentHealth(name: settings.name, kind: .upstream, status: health, reason: reason, details: details)]
    }

    /// The configured remote UUID, else one generated on first start and kept in the local database, so that
    /// checkpoints survive changes of the upstream's address.
    static func remoteUUID(for settings: UpstreamSettings, in database: DocumentDatabase) async throws -> String {
        if let configured = settings.remoteUUID { return configured }
        let docID = "upstream-remote-uuid/\(settings.name)"
        if let stored = try await database.localDocument(docID),
            let object = try? JSONSerialization.jsonObject(with: stored.body) as? [String: String],
            let uuid = object["uuid"]
        {
            return uuid
        }
        let uuid = UUID().uuidString.lowercased()
        try await database.putLocalDocument(
            docID, body: try JSONSerialization.data(withJSONObject: ["uuid": uuid]), expectedRevID: nil)
        return uuid
    }

    private static func credentials(_ settings: UpstreamSettings) throws -> ActiveReplicator.Credentials? {
        switch settings.authentication {
        case .none: return nil
        case .basic(let username, let password): return .init(user: username, password: password.value)
        case .session, .clientCertificate:
            throw UpstreamSetupError.unsupported(upstream: settings.name, what: "auth = \"\(settings.authentication.modeName)\"")
        }
    }

    private static func tlsConfiguration(_ settings: UpstreamSettings) throws -> TLSConfiguration? {
        guard let trust = settings.serverTrust else { return nil }
        switch trust {
        case .certificateAuthorities(let files):
            var configuration = TLSConfiguration.makeClientConfiguration()
            if !files.isEmpty {
                configuration.trustRoots = .certificates(try files.flatMap { try NIOSSLCertificate.fromPEMFile($0) })
            }
            return configuration
        case .selfSignedOnly, .pinnedCertificate, .pinnedSHA256:
            // The WebSocket client takes a plain TLSConfiguration, which cannot carry a pin check.
            throw UpstreamSetupError.unsupported(upstream: settings.name, what: "this server_trust mode")
        }
    }
}

enum UpstreamSetupError: Error, CustomStringConvertible {
    case unsupported(upstream: String, what: String)

    var description: String {
        switch self {
        case .unsupported(let upstream, let what):
            "upstream \"\(upstream)\": \(what) is not supported by this version's upstream replicator yet"
        }
    }
}

extension UpstreamAuthentication {
    var modeName: String {
        switch self {
        case .none: "none"
        case .basic: "basic"
        case .session: "session"
        case .clientCertificate: "client-cert"
        }
    }
}

extension ActiveReplicator.Direction {
    init(_ direction: ReplicationDirection) {
        switch direction {
        case .push: self = .push
        case .pull: self = .pull
        case .pushAndPull: self = .pushAndPull
        }
    }
}

extension ActiveReplicator.ConflictResolver {
    init(_ resolver: EdgeConfig.ConflictResolver) {
        switch resolver {
        case .default: self = .default
        case .localWins: self = .localWins
        case .remoteWins: self = .remoteWins
        case .merge: self = .merge
        }
    }
}
