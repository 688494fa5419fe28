import BLIPConnection
import EdgeIdentity
import EdgeReplication
import EdgeStore
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NetworkInterfaces
import ReplicationProtocol
import ServiceLifecycle
import SyncIdentifiers

/// One configured `[[listener]]`: an HTTP server whose `GET /<db>/_blipsync` upgrades to a BLIP
/// WebSocket on which Couchbase Lite clients replicate with a `PassiveReplicationSession`.
///
/// Run it as a `Service` (it returns on graceful shutdown or cancellation); read `boundPort()` and
/// `status()` from other tasks.
public struct SyncListener: Service {
    /// What the listener shares with the rest of the node.
    public struct Environment: Sendable {
        package var store: DocumentStore
        /// The node's data directory; the self-signed identity lives in its `identity` subdirectory.
        package var dataDirectory: String
        /// Subject of a generated self-signed certificate.
        package var nodeName: String
        /// Reported by `GET /`.
        package var serverVersion: String
        /// Reported by `GET /` when known, so that a client can tell which node answers at an address.
        package var nodeID: NodeID?
        /// How long a new connection may take for its TLS handshake and first request head (`HandshakeDeadline`).
        /// Couchbase Lite sends its upgrade at once, but its side of the TLS handshake (checking the certificate)
        /// runs on a device that may be busy, as may this box: 30 s, where common HTTP servers allow 20 to 60 s.
        package var handshakeTimeout: Duration
        /// Scrypt verifications of Basic credentials run at once (about 32 MiB each with the standard
        /// parameters), and how many more wait for one; further attempts get 503 (`PasswordVerificationGate`).
        package var passwordVerificationLimit: PasswordVerificationGate.Limit

        public static let defaultHandshakeTimeout = Duration.seconds(30)

        public init(
            store: DocumentStore, dataDirectory: String, nodeName: String,
            serverVersion: String, nodeID: NodeID? = nil, handshakeTimeout: Duration = defaultHandshakeTimeout,
            passwordVerificationLimit: PasswordVerificationGate.Limit = .standard
        ) {
            self.handshakeTimeout = handshakeTimeout
            self.passwordVerificationLimit = passwordVerificationLimit
            self.store = store
            self.dataDirectory = dataDirectory
            self.nodeName = nodeName
            self.serverVersion = serverVersion
            self.nodeID = nodeID
        }
    }

    /// The WebSocket message limit LiteCore applies (spec §1.6).
    static let maxWebSocketFrameSize = 1 << 20

    public let configuration: Configuration
    let environment: Environment
    let bindAddress: String
    let tlsConfiguration: TLSConfiguration?
    let servedIdentity: ServedIdentity?
    /// The users accepted with `auth = "basic"`; nil for other kinds of authentication.
    package let users: ListenerUsers?
    let passwordVerifications: PasswordVerificationGate?
    package let servedCollections: [String: [CollectionName]]
    let state: ListenerState
    package let startTime = Date()
    let verifiedCredentials = VerifiedCredentialsCache()
    let quietConnections = QuietConnectionSweep()
    let logger: Logger
    let connectionLoggers: ConnectionLoggers

    /// Checks the configuration and loads the TLS identity; the server starts in `run()`.
    public init(configuration: Configuration, environment: Environment, logger: Logger) throws {
        self.configuration = configuration
        self.environment = environment
        var logger = logger
        logger[metadataKey: "listener"] = .string(configuration.name)
        self.logger = logger
        connectionLoggers = ConnectionLoggers(base: logger)
        guard let address = InterfaceAddress.bindAddress(forListenerInterface: configuration.interface) else {
            throw SyncListenerError.interfaceNotFound(configuration.interface)
        }
        bindAddress = address
        servedCollections = Dictionary(
            configuration.databases.map { ($0.name, $0.collections) }, uniquingKeysWith: { first, _ in first })
        (servedIdentity, tlsConfiguration) = try Self.makeTLSConfiguration(
            configuration, environment: environment, logger: logger)
        if case .basic(let usersFile, let load) = configuration.authentication {
            users = ListenerUsers(file: usersFile, load: load)
            passwordVerifications = PasswordVerificationGate(environment.passwordVerificationLimit)
        } else {
            passwordVerifications = nil
            users = nil
        }
        state = ListenerState(name: configuration.name, databases: configuration.databases.map(\.name))
    }

    /// The certificate and key new `wss://` connections get; nil when TLS is off. Pairing payloads pin its digest.
    package var identity: TLSIdentity? {
        servedIdentity?.identity
    }

    /// Files whose change `reloadFiles()` picks up: the users file, and the certificate files of `tls = "file"`.
    package var reloadableFiles: [String] {
        var files: [String] = []
        if let users { files.append(users.file) }
        if case .files(let certificateFiles, _) = configuration.tls { files += certificateFiles }
        return files
    }

    /// Reads the users file and the certificate files again. What does not load is refused with a log line
    /// and shown in `status()`, and what was in force before stays in force.
    package func reloadFiles() {
        if let users {
            users.log(users.reload(), to: logger)
        }
        guard let servedIdentity, case .files(_, let load) = configuration.tls else { return }
        do {
            let reloaded = try load()
            guard reloaded.derBytes != servedIdentity.identity.derBytes || servedIdentity.problem != nil else { return }
            servedIdentity.replace(with: reloaded)
            let fingerprint = CertificateFingerprint(derBytes: reloaded.derBytes, algorithm: .sha256)
            logger.info("certificate reloaded: new connections get it", metadata: ["sha256": "\(fingerprint.colonHex)"])
        } catch {
            let problem = "certificate files refused: \(error); the certificate loaded before is still served"
            servedIdentity.refuse(problem)
            logger.error("\(problem)")
        }
    }

    /// The port the server listens on, once it runs (the configured one, or the system's pick for 0);
    /// `nil` if the server stopped without binding.
    public func boundPort() async -> Int? {
        await state.boundPort()
    }

    public func status() async -> ListenerStatus {
        var status = await state.snapshot
        status.problems = [users?.problem, servedIdentity?.problem].compactMap { $0 }
        status.users = users?.users.count
        return status
    }

    public func run() async throws {
        if let users {
            users.logInitialCondition(to: logger)
        }
        let state = self.state
        let application = Application(
            router: makeHTTPRouter(),
            server: try serverBuilder(),
            configuration: ApplicationConfiguration(
                address: .hostname(bindAddress, port: configuration.port), serverName: nil),
            onServerRunning: { channel in await state.serverStarted(port: channel.localAddress?.port) },
            logger: logger
        )
        let sweeping = Task { [quietConnections] in await quietConnections.run() }
        defer { sweeping.cancel() }
        do {
            try await application.run()
            await state.serverEnded(failure: nil)
        } catch let error as IOError where error.errnoCode == EADDRINUSE || error.errnoCode == EACCES {
            // The rest of the node (ops endpoint, upstreams, other listeners) keeps running so that /health
            // can say which port is taken; the listener is reported down until the node restarts.
            let problem = SyncListenerError.portUnavailable(
                listener: configuration.name, address: bindAddress, port: configuration.port,
                inUse: error.errnoCode == EADDRINUSE)
            logger.error("\(problem)")
            await state.serverEnded(failure: problem)
            try? await gracefulShutdown()
        } catch {
            await state.serverEnded(failure: error)
            throw error
        }
    }

    private func serverBuilder() throws -> HTTPServerBuilder {
        let listener = self
        let upgrade = HTTPServerBuilder { responder in
            SyncUpgradeChannel(
                responder: responder,
                maxFrameSize: Self.maxWebSocketFrameSize,
                idleTimeout: listener.configuration.idleTimeout,
                handshakeTimeout: listener.environment.handshakeTimeout,
                heartbeat: listener.configuration.heartbeat,
                judge: { path, headers, channel in
                    await listener.judgeUpgrade(path: path, headers: headers, channel: channel)
                },
                serve: { accepted, webSocket, logger in
                    await listener.replicate(accepted, webSocket: webSocket, logger: logger)
                })
        }
        guard let tlsConfiguration else { return upgrade }
        return try .tls(upgrade, tlsConfiguration: tlsConfiguration)
    }

    private static func makeTLSConfiguration(
        _ configuration: Configuration, environment: Environment, logger: Logger
    ) throws -> (ServedIdentity?, TLSConfiguration?) {
        let identity: TLSIdentity
        do {
            switch configuration.tls {
            case .off:
                if case .clientCertificate = configuration.authentication {
                    throw SyncListenerError.clientCertificatesNeedTLS(listener: configuration.name)
                }
                return (nil, nil)
            case .selfSigned:
                identity = try TLSIdentity.loadOrCreateSelfSigned(
                    directory: URL(fileURLWithPath: environment.dataDirectory).appendingPathComponent("identity").path,
                    commonName: environment.nodeName, logger: logger)
            case .files(_, let load):
                identity = try load()
            }
            var clientAuthentication = TLSIdentity.ClientAuthentication.none
            if case .clientCertificate(let authorities) = configuration.authentication {
                let roots = try ServerTrustPolicy.certificates(inFiles: authorities)
                clientAuthentication = .required(trustedRoots: roots)
            }
            let served = ServedIdentity(identity)
            var tlsConfiguration = try identity.serverTLSConfiguration(clientAuthentication: clientAuthentication)
            // A generated identity is never replaced while running: only files can change under the listener.
            if case .files = configuration.tls {
                served.install(in: &tlsConfiguration)
            }
            return (served, tlsConfiguration)
        } catch let error as SyncListenerError {
            throw error
        } catch {
            throw SyncListenerError.tlsSetupFailed(listener: configuration.name, reason: "\(error)")
        }
    }
}
