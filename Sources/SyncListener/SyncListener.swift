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
import NetworkInterfaces
import NIOCore
import ReplicationProtocol
import ServiceLifecycle

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

        public init(
            store: DocumentStore, databases: [DatabaseSettings], dataDirectory: String, nodeName: String,
            serverVersion: String, nodeID: NodeID? = nil
        ) {
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
    /// The certificate and key served on `wss://`; nil when TLS is off. Pairing payloads pin its digest.
    public let identity: TLSIdentity?
    let servedCollections: [String: [EdgeStore.CollectionName]]
    let state: ListenerState
    let startTime = Date()
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
        var collections: [String: [EdgeStore.CollectionName]] = [:]
        for name in settings.databases {
            guard let database = environment.databases.first(where: { $0.name == name }) else {
                throw SyncListenerError.unknownDatabase(listener: settings.name, database: name)
            }
            collections[name] = try database.collections.map { text in
                do {
                    return try EdgeStore.CollectionName(parsing: text)
                } catch {
                    throw SyncListenerError.invalidCollection(database: name, collection: text, reason: "\(error)")
                }
            }
        }
        servedCollections = collections
        (identity, tlsConfiguration) = try Self.makeTLSConfiguration(settings, environment: environment, logger: logger)
        state = ListenerState(name: settings.name, databases: settings.databases)
    }

    /// The port the server listens on, once it runs (the configured one, or the system's pick for 0);
    /// `nil` if the server stopped without binding.
    public func boundPort() async -> Int? {
        await state.boundPort()
    }

    public func status() async -> ListenerStatus {
        await state.snapshot
    }

    public func run() async throws {
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
    ) throws -> (TLSIdentity?, TLSConfiguration?) {
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
            case .pemFiles(let certificate, let privateKey):
                identity = try TLSIdentity.load(certificatePEMFile: certificate, keyPEMFile: privateKey)
            case .pkcs12File(let path, let password):
                identity = try TLSIdentity.load(pkcs12File: path, password: password?.value ?? "")
            }
            var clientAuthentication = TLSIdentity.ClientAuthentication.none
            if case .clientCertificate(let authorities) = settings.authentication {
                let roots = try ServerTrustPolicy.certificates(inFiles: authorities)
                clientAuthentication = .required(trustedRoots: roots)
            }
            return (identity, try identity.serverTLSConfiguration(clientAuthentication: clientAuthentication))
        } catch let error as SyncListenerError {
            throw error
        } catch {
            throw SyncListenerError.tlsSetupFailed(listener: settings.name, reason: "\(error)")
        }
    }
}
