import DocumentRESTAPI
import EdgeCredentials
import EdgeIdentity
import SyncIdentifiers

extension SyncListener {
    /// What one listener serves and how. The gateway maps a `[[listener]]` entry of its configuration file to it;
    /// the listener itself knows nothing of that file.
    public struct Configuration: Sendable {
        /// Names the listener in logs, status and errors.
        public var name: String
        /// An IP address or the name of a network interface whose address is bound.
        public var interface: String
        /// TCP port; 0 asks the system for a free one.
        public var port: Int
        public var tls: TLS
        public var authentication: Authentication
        /// The databases served, in the order status reports them.
        public var databases: [ServedDatabase]
        /// Whether revisions may be sent to clients as deltas.
        public var deltaSync: Bool
        /// Concurrent replication connections accepted before new ones are refused with 503.
        public var maxConnections: Int
        /// The largest incoming BLIP message; a client that sends a bigger one is disconnected.
        package var maxMessageSize: Int
        /// Connections on which nothing arrives for this long are closed; nil never closes them.
        package var idleTimeout: Duration?
        /// Interval of the WebSocket pings sent to clients; nil sends none.
        package var heartbeat: Duration?
        /// The document REST API on the listener's port; nil does not serve it.
        package var restAPI: DocumentRESTAPI.Configuration?

        public init(
            name: String, interface: String, port: Int, tls: TLS, authentication: Authentication,
            databases: [ServedDatabase], deltaSync: Bool, maxConnections: Int, maxMessageSize: Int,
            idleTimeout: Duration?, heartbeat: Duration?, restAPI: DocumentRESTAPI.Configuration?
        ) {
            self.name = name
            self.interface = interface
            self.port = port
            self.tls = tls
            self.authentication = authentication
            self.databases = databases
            self.deltaSync = deltaSync
            self.maxConnections = maxConnections
            self.maxMessageSize = maxMessageSize
            self.idleTimeout = idleTimeout
            self.heartbeat = heartbeat
            self.restAPI = restAPI
        }
    }

    /// A database the listener serves, with the collections clients may replicate.
    public struct ServedDatabase: Sendable, Equatable {
        package var name: String
        package var collections: [CollectionName]

        package init(name: String, collections: [CollectionName]) {
            self.name = name
            self.collections = collections
        }
    }

    /// Where the listener's certificate comes from.
    public enum TLS: Sendable {
        /// Plain `ws://`.
        case off
        /// An identity generated once in the data directory's `identity` subdirectory and kept there.
        case selfSigned
        /// An identity in files the operator provides: `load` reads them, at start and again whenever one of
        /// `files` changes, so that a renewed certificate is served without a restart.
        case files([String], load: @Sendable () throws -> TLSIdentity)

        package var isEnabled: Bool {
            if case .off = self { false } else { true }
        }
    }

    /// How the listener authenticates clients.
    public enum Authentication: Sendable {
        case none
        /// HTTP Basic against the users `load` reads from `usersFile`: at start and whenever the file changes.
        case basic(usersFile: String, load: @Sendable () throws -> [ListenerUser])
        /// TLS client certificates that chain to one of these CA certificates (PEM files).
        case clientCertificate(trustedCertificateAuthorities: [String])
    }
}
