import EdgeConfig
import EdgeIdentity
import EdgeReplication
import EdgeStore
import Foundation
import Logging
import ReplicationProtocol
import ServiceLifecycle
import SyncIdentifiers
import Synchronization

/// Keeps one `[[upstream]]` replicating: runs the active replicator, retries transient failures with
/// exponential back-off and jitter, stops on permanent ones, and reports all of it to /health.
final class UpstreamService: Service, HealthReporting {
    enum State: Sendable, Equatable {
        case starting
        case running
        case waitingToRetry(attempt: Int, error: String)
        /// Trying again after `attempt` failures: offline until the new connection syncs.
        case reconnecting(attempt: Int, error: String)
        case finished
        case failed(String)
    }

    let settings: UpstreamSettings
    let remoteUUID: String
    let replicator: ActiveReplicator
    private let state: Mutex<State>
    private let logger: Logger
    private let dataDirectory: String
    /// Why the trust store's current contents are not in force; nil when they are.
    private let trustProblem = Mutex<String?>(nil)
    /// Transient failures retried since start, over every run.
    let retries = Atomic<Int>(0)
    private let trustChanges: AsyncStream<Void>
    private let trustChanged: AsyncStream<Void>.Continuation

    init(settings: UpstreamSettings, database: DocumentDatabase, dataDirectory: String, logger: Logger) async throws {
        self.settings = settings
        self.dataDirectory = dataDirectory
        (trustChanges, trustChanged) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        var logger = logger
        logger[metadataKey: "upstream"] = .string(settings.name)
        self.logger = logger
        let remoteUUID = try await UpstreamRemoteUUID.resolve(for: settings, in: database)
        self.remoteUUID = remoteUUID
        // Without a pin yet the node still starts: the upstream waits, reported down, until `trust add` records
        // one (the trust store is watched).
        var tls: ClientTLSConfiguration?
        do {
            tls = try Self.clientTLSConfiguration(settings, dataDirectory: dataDirectory)
            state = Mutex(.starting)
        } catch let error as UpstreamSetupError {
            state = Mutex(.failed("\(error)"))
            logger.error("\(error)")
        }
        replicator = ActiveReplicator(
            database: database,
            configuration: .init(
                remoteURL: settings.url.absoluteString,
                endpointResolver: try settings.pairing.map { payload in
                    ActiveReplicator.pairedEndpointResolver(
                        payload, clientIdentity: try Self.clientIdentity(settings), logger: logger)
                },
                remoteUUID: remoteUUID,
                direction: ActiveReplicator.Direction(settings.direction),
                continuous: settings.continuous,
                authentication: Self.authentication(settings),
                tls: tls,
                heartbeat: settings.heartbeat,
                conflictResolver: ActiveReplicator.ConflictResolver(settings.conflictResolver),
                documentIDs: settings.documentIDs,
                channels: settings.channels,
                collections: settings.collections,
                subprotocols: settings.replicationProtocol.offer
            ),
            logger: logger
        )
    }

    /// The trust store file, when this upstream trusts the pin recorded there (`server_trust = "trust-store"`).
    var trustStoreFile: String? {
        guard settings.serverTrust == .trustStore else { return nil }
        return TrustedPeerStore(dataDirectory: dataDirectory).path
    }

    /// Reads the trust store again: the next connection uses its pin, and an upstream that stopped (a refused
    /// certificate is not retried) starts again. A trust store that does not load leaves the previous pin.
    func reloadTrust() async {
        do {
            let tls = try Self.clientTLSConfiguration(settings, dataDirectory: dataDirectory)
            await replicator.replaceTLS(tls)
            trustProblem.withLock { $0 = nil }
            logger.info("trust store reloaded: the next connection uses its pin")
            trustChanged.yield()
        } catch {
            let problem = "trust store refused: \(error); the pin read before stays in force"
            trustProblem.withLock { $0 = problem }
            logger.error("\(problem)")
        }
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            if case .starting = self.state.withLock({ $0 }) {
                await self.replicateWithRetries()
            }
            for await _ in self.trustChanges {
                guard case .failed = self.state.withLock({ $0 }) else { continue }
                self.logger.info("upstream starts again with the changed trust store")
                await self.replicateWithRetries()
            }
        }
        // A finished one-shot replication or a permanent failure must not end the node (a returning service
        // would shut the whole group down): stay until shutdown.
        try? await gracefulShutdown()
    }

    private func replicateWithRetries() async {
        var attempt = 0
        var lastError = ""
        while !Task.isCancelled {
            state.withLock { $0 = attempt == 0 ? .running : .reconnecting(attempt: attempt, error: lastError) }
            let syncedBefore = await replicator.status().lastSuccess
            do {
                try await replicator.run()
                state.withLock { $0 = .finished }
                logger.info("upstream replication finished")
                return
            } catch {
                if Task.isCancelled { return }
                // A run that synced before it failed was a working connection: the back-off starts over, as
                // Couchbase Lite's does, rather than growing with every outage since start.
                if let synced = await replicator.status().lastSuccess, synced != syncedBefore {
                    attempt = 0
                }
                attempt += 1
                lastError = "\(error)"
                let retryPolicy = UpstreamRetryPolicy(settings: settings)
                guard retryPolicy.isTransient(error), retryPolicy.allowsAttempt(attempt + 1) else {
                    state.withLock { $0 = .failed("\(error)") }
                    logger.error(
                        "upstream replication stopped", metadata: ["error": "\(error)", "attempts": "\(attempt)"])
                    return
                }
                retries.add(1, ordering: .relaxed)
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
            "remoteUUID": .string(remoteUUID),
            "activity": .string(status.activity.rawValue),
            "completed": .integer(status.completed),
            "total": .integer(status.total),
            "lastSuccess": status.lastSuccess.map { .string($0.formatted(.iso8601)) } ?? .none,
            "lastError": status.lastError.map { .string($0) } ?? .none,
            "protocol": status.subprotocol.map { .string($0.rawValue) } ?? .none,
        ]
        let connected = status.activity == .idle || status.activity == .busy
        var (health, reason): (HealthStatus, String?) =
            switch state.withLock({ $0 }) {
            case .starting, .running, .finished: (.up, nil)
            case .reconnecting where connected: (.up, nil)
            case .waitingToRetry(let attempt, let error), .reconnecting(let attempt, let error):
                (.degraded, "retrying after attempt \(attempt): \(error)")
            case .failed(let error): (.down, "stopped: \(error)")
            }
        // Between attempts, and while an attempt has not connected yet, the upstream is unreachable: not "up"
        // and "connecting" every few seconds through an outage.
        if health == .degraded, reason?.hasPrefix("retrying") == true {
            details["activity"] = "offline"
        }
        if health == .up, let problem = trustProblem.withLock({ $0 }) {
            (health, reason) = (.degraded, problem)
        }
        return [ComponentHealth(name: settings.name, kind: .upstream, status: health, reason: reason, details: details)]
    }

    private static func authentication(_ settings: UpstreamSettings) -> ActiveReplicator.Authentication {
        switch settings.authentication {
        case .none, .clientCertificate, .clientPKCS12: .none
        case .basic(let username, let password): .basic(user: username, password: password.value)
        case .session(let cookieName, let sessionID): .sessionCookie(name: cookieName, value: sessionID.value)
        }
    }

    /// The trust policy and client certificate for a `wss://` upstream; `nil` for `ws://`.
    static func clientTLSConfiguration(
        _ settings: UpstreamSettings, dataDirectory: String
    ) throws -> ClientTLSConfiguration? {
        guard let trust = settings.serverTrust else { return nil }
        let policy: ServerTrustPolicy
        switch trust {
        case .certificateAuthorities(let files) where files.isEmpty:
            policy = .systemRoots(checkHostname: true)
        case .certificateAuthorities(let files):
            policy = try .ca(rootsFiles: files, checkHostname: true)
        case .selfSignedOnly:
            policy = .selfSignedOnly
        case .pinnedCertificate(let path):
            policy = try .pinned(certificateFile: path)
        case .pinnedSHA256(let fingerprint):
            policy = try .pinned(fingerprint: fingerprint)
        case .trustStore:
            let host = settings.url.host ?? ""
            let port = settings.url.port ?? 443
            guard let pinned = try TrustedPeerStore(dataDirectory: dataDirectory).policy(host: host, port: port) else {
                throw UpstreamSetupError.noTrustedCertificate(
                    upstream: settings.name, endpoint: TrustedPeerStore.endpoint(host: host, port: port))
            }
            policy = pinned
        }
        return try policy.clientTLSConfiguration(clientIdentity: try clientIdentity(settings))
    }

    /// The client certificate presented to the upstream, if its authentication uses one.
    static func clientIdentity(_ settings: UpstreamSettings) throws -> TLSIdentity? {
        switch settings.authentication {
        case .clientCertificate(let certificate, let privateKey):
            try TLSIdentity.loadRequiringPrivateKeyFile(certificatePEMFile: certificate, keyPEMFile: privateKey)
        case .clientPKCS12(let path, let password):
            try TLSIdentity.loadRequiringPrivateKeyFile(pkcs12File: path, password: password.value)
        case .none, .basic, .session:
            nil
        }
    }
}

enum UpstreamSetupError: Error, CustomStringConvertible {
    case noTrustedCertificate(upstream: String, endpoint: String)

    var description: String {
        switch self {
        case .noTrustedCertificate(let upstream, let endpoint):
            "upstream \"\(upstream)\" uses server_trust = \"trust-store\", but no certificate is trusted for "
                + "\(endpoint): run `edge-gateway trust add \(endpoint)` (or add its pairing payload)"
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

extension UpstreamProtocol {
    /// The `Sec-WebSocket-Protocol` offer of this setting, most preferred first.
    package var offer: [ReplicationSubprotocol] {
        switch self {
        case .auto: ReplicationSubprotocol.activeOffer
        case .versionVectors: ReplicationSubprotocol.versionVectorOffer
        case .revisionTrees: ReplicationSubprotocol.revisionTreeOffer
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
