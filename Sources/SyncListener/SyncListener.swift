import BLIPConnection
import EdgeConfig
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
    /// What the listener needs besides its own settings.
    public struct Environment: Sendable {
        public var store: DocumentStore
        /// All configured databases; the listener serves those its settings name.
        public var databases: [DatabaseSettings]
        /// The node's data directory; the self-signed identity lives in its `identity` subdirectory.
        public var dataDirectory: String
        /// Subject of a generated self-signed certificate.
        public var nodeName: String
        /// Reported by `GET /`.
        public var serverVersion: String
        /// Reported by `GET /` when known, so that a client can tell which node answers at an address.
        public var nodeID: NodeID?
        /// How long a new connection may take for its TLS handshake and first request head (`HandshakeDeadline`).
        /// Couchbase Lite sends its upgrade at once, but its side of the TLS handshake (checking the certificate)
        /// runs on a device that may be busy, as may this box: 30 s, where common HTTP servers allow 20 to 60 s.
        public var handshakeTimeout: Duration
        /// Scrypt verifications of Basic credentials run at once (about 32 MiB each with the standard
        /// parameters), and how many more wait for one; further attempts get 503 (`PasswordVerificationGate`).
        public var passwordVerificationLimit: PasswordVerificationGate.Limit

        public static let defaultHandshakeTimeout = Duration.seconds(30)

        public init(
            store: DocumentStore, databases: [DatabaseSettings], dataDirectory: String, nodeName: String,
            serverVersion: String, nodeID: NodeID? = nil, handshakeTimeout: Duration = defaultHandshakeTimeout,
            passwordVerificationLimit: PasswordVerificationGate.Limit = .standard
        ) {
            self.handshakeTimeout = handshakeTimeout
            self.passwordVerificationLimit = passwordVerificationLimit
            self.store = store
            self.databases = databases
            self.dataDirectory = dataDirectory
            self.nodeName = nodeName
            self.serverVersion = serverVersion
            self.nodeID = nodeID
        }
    }

    /// The WebSocket message limit LiteCore applies (spec §1.6).
    static let maxWebSocketFrameSize = 1 << 20

    public let settings: ListenerSettings
    let environment: Environment
    let bindAddress: String
    let tlsConfiguration: TLSConfiguration?
    let servedIdentity: ServedIdentity?
    /// The users accepted with `auth = "basic"`; nil for other kinds of authentication.
    public let users: ListenerUsers?
    let passwordVerifications: PasswordVerificationGate?
    package let servedCollections: [String: [CollectionName]]
    let state: ListenerState
    package let startTime = Date()
    let verifiedCredentials = VerifiedCredentialsCache()
    let logger: Logger

    /// Validates the settings and loads the TLS identity; the server starts in `run()`.
    public init(settings: ListenerSettings, environment: Environment, logger: Logger) throws {
        self.settings = settings
        self.environment = environment
        var logger = logger
        logger[metadataKey: "listener"] = .string(settings.name)
        self.logger = logger
        guard let address = InterfaceAddress.bindAddress(forListenerInterface: settings.interface) else {
            throw SyncListenerError.interfaceNotFound(settings.interface)
        }
        bindAddress = address
        var collections: [String: [CollectionName]] = [:]
        for name in settings.databases {
            guard let database = environment.databases.first(where: { $0.name == name }) else {
                throw SyncListenerError.unknownDatabase(listener: settings.name, database: name)
            }
            collections[name] = database.collections
        }
        servedCollections = collections
        (servedIdentity, tlsConfiguration) = try Self.makeTLSConfiguration(
            settings, environment: environment, logger: logger)
        if case .basic(let usersFile) = settings.authentication {
            users = ListenerUsers(file: usersFile, dataDirectory: environment.dataDirectory)
            passwordVerifications = PasswordVerificationGate(environment.passwordVerificationLimit)
        } else {
            passwordVerifications = nil
            users = nil
        }
        state = ListenerState(name: settings.name, databases: settings.databases)
    }

    /// The certificate and key new `wss://` connections get; nil when TLS is off. Pairing payloads pin its digest.
    public var identity: TLSIdentity? {
        servedIdentity?.identity
    }

    /// Files whose change `reloadFiles()` picks up: the users file, and the certificate files of `tls = "file"`.
    public var reloadableFiles: [String] {
        var files: [String] = []
        if let users { files.append(users.file) }
        switch settings.tls {
        case .off, .selfSigned: break
        case .pemFiles(let certificate, let privateKey): files += [certificate, privateKey]
        case .pkcs12File(let path, _): files.append(path)
        }
        return files
    }

    /// Reads the users file and the certificate files again. What does not load is refused with a log line
    /// and shown in `status()`, and what was in force before stays in force.
    public func reloadFiles() {
        if let users {
            users.log(users.reload(), to: logger)
        }
        guard let servedIdentity else { return }
        do {
            guard let reloaded = try TLSIdentity.loadFromFiles(settings.tls) else { return }
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
                address: .hostname(bindAddress, port: settings.port), serverName: nil),
            onServerRunning: { channel in await state.serverStarted(port: channel.localAddress?.port) },
            logger: logger
        )
        do {
            try await application.run()
            await state.serverEnded(failure: nil)
        } catch let error as IOError where error.errnoCode == EADDRINUSE || error.errnoCode == EACCES {
            // The rest of the node (ops endpoint, upstreams, other listeners) keeps running so that /health
            // can say which port is taken; the listener is reported down until the node restarts.
            let problem = SyncListenerError.portUnavailable(
                listener: settings.name, address: bindAddress, port: settings.port,
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
                idleTimeout: listener.settings.idleTimeout,
                handshakeTimeout: listener.environment.handshakeTimeout,
                heartbeat: listener.settings.heartbeat,
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
        _ settings: ListenerSettings, environment: Environment, logger: Logger
    ) throws -> (ServedIdentity?, TLSConfiguration?) {
        let identity: TLSIdentity
        do {
            switch settings.tls {
            case .off:
                if case .clientCertificate = settings.authentication {
                    throw SyncListenerError.clientCertificatesNeedTLS(listener: settings.name)
                }
                return (nil, nil)
            case .selfSigned:
                identity = try TLSIdentity.loadOrCreateSelfSigned(
                    directory: URL(fileURLWithPath: environment.dataDirectory).appendingPathComponent("identity").path,
                    commonName: environment.nodeName, logger: logger)
            case .pemFiles, .pkcs12File:
                identity = try TLSIdentity.loadFromFiles(settings.tls)!
            }
            var clientAuthentication = TLSIdentity.ClientAuthentication.none
            if case .clientCertificate(let authorities) = settings.authentication {
                let roots = try ServerTrustPolicy.certificates(inFiles: authorities)
                clientAuthentication = .required(trustedRoots: roots)
            }
            let served = ServedIdentity(identity)
            var configuration = try identity.serverTLSConfiguration(clientAuthentication: clientAuthentication)
            // A generated identity is never replaced while running: only files can change under the listener.
            if settings.tls != .selfSigned {
                served.install(in: &configuration)
            }
            return (served, configuration)
        } catch let error as SyncListenerError {
            throw error
        } catch {
            throw SyncListenerError.tlsSetupFailed(listener: settings.name, reason: "\(error)")
        }
    }
}
