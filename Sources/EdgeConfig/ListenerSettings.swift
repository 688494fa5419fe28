import EdgeCredentials

/// One `[[listener]]` entry: a passive-peer endpoint (`ws://` or `wss://host:port/<db>/_blipsync`)
/// that Couchbase Lite apps replicate with.
public struct ListenerSettings: Sendable, Equatable {
    public var name: String
    /// An IP address (`0.0.0.0`, `::`, `192.168.1.10`) or a network interface name (`eth0`)
    /// whose address the listener binds.
    public var interface: String
    /// TCP port; 0 asks the system for a free port.
    public var port: Int
    public var tls: ListenerTLS
    public var authentication: ListenerAuthentication
    /// Names of the configured databases this listener serves.
    public var databases: [String]
    /// Whether revisions may be sent to clients as deltas.
    public var deltaSync: Bool
    /// Concurrent replication connections accepted before new ones are refused with 503.
    public var maxConnections: Int
    /// A site of a thousand devices fits: an idle connection holds about 50 KB (BENCHMARKS.md, listener memory).
    package static let defaultMaxConnections = 1000
    /// Advertise the listener with DNS-SD (Bonjour/Avahi); `nil` when `dns_sd = false`.
    public var serviceDiscovery: ServiceDiscoverySettings?
    /// The largest incoming BLIP message in bytes; a client that sends a bigger one is disconnected.
    package var maxMessageSize: Int
    /// Connections on which nothing arrives (no data, no ping) for this long are closed; `nil` never closes them.
    package var idleTimeout: Duration?
    /// Interval of the WebSocket pings sent to replication clients; a client that has not answered one when the
    /// next is due is disconnected, so a device that vanished is noticed within two heartbeats. `nil` sends none.
    package var heartbeat: Duration?
    /// What the document REST API on the listener's port may do (`rest_api`).
    package var restAPI: RESTAPIAccess
    /// The largest REST request body in bytes (`rest_max_body_size`); bigger ones get 413 and change nothing.
    package var restMaxBodySize: Int

    /// 64 MiB, the BLIP codec's default: large attachments arrive as one message each.
    public static let defaultMaxMessageSize = 64 << 20
    /// Three of Couchbase Lite's default 300 s heartbeats, so a live client is never taken for an idle one.
    public static let defaultIdleTimeout = Duration.seconds(15 * 60)
    /// The users file of an `auth = "basic"` listener without `users_file`, in the data directory: it holds
    /// state the gateway's own commands write, so it lives on the data volume, not beside read-only config.
    package static let defaultUsersFileName = "users.toml"
    /// 20 MB, Sync Gateway's own request limit: a document with inline attachments fits, a runaway upload does not.
    public static let defaultRESTMaxBodySize = 20_000_000

    public init(
        name: String,
        interface: String,
        port: Int,
        tls: ListenerTLS,
        authentication: ListenerAuthentication,
        databases: [String],
        deltaSync: Bool,
        maxConnections: Int,
        serviceDiscovery: ServiceDiscoverySettings?,
        maxMessageSize: Int = ListenerSettings.defaultMaxMessageSize,
        idleTimeout: Duration? = ListenerSettings.defaultIdleTimeout,
        heartbeat: Duration? = couchbaseLiteHeartbeat,
        restAPI: RESTAPIAccess? = nil,
        restMaxBodySize: Int = ListenerSettings.defaultRESTMaxBodySize
    ) {
        self.name = name
        self.interface = interface
        self.port = port
        self.tls = tls
        self.authentication = authentication
        self.databases = databases
        self.deltaSync = deltaSync
        self.maxConnections = maxConnections
        self.serviceDiscovery = serviceDiscovery
        self.maxMessageSize = maxMessageSize
        self.idleTimeout = idleTimeout
        self.heartbeat = heartbeat
        self.restAPI = restAPI ?? .defaultAccess(for: authentication)
        self.restMaxBodySize = restMaxBodySize
    }
}

/// The document REST API's reach on one listener.
public enum RESTAPIAccess: Sendable, Equatable {
    /// Not served: every REST route answers 404 as if it did not exist.
    case off
    /// Reads only; writes get 403.
    case readOnly
    case readWrite

    /// Without `rest_api`: anyone who can reach an unauthenticated listener may read, but only authenticated
    /// clients may write, so that turning on REST never opens an unauthenticated database to writes silently.
    package static func defaultAccess(for authentication: ListenerAuthentication) -> RESTAPIAccess {
        authentication == .none ? .readOnly : .readWrite
    }
}

/// How a listener secures its connections (`tls = "off" | "self-signed" | "file"`).
public enum ListenerTLS: Sendable, Equatable {
    /// Plain `ws://`; only sensible on a trusted network.
    case off
    /// `wss://` with a self-signed identity generated once and kept in the data directory;
    /// clients pin it or accept only self-signed certificates, as Couchbase Lite P2P does.
    case selfSigned
    /// `wss://` with a PEM certificate chain and private key (absolute paths).
    case pemFiles(certificate: String, privateKey: String)
    /// `wss://` with a PKCS#12 bundle (absolute path) and its optional password.
    case pkcs12File(path: String, password: Secret?)

    package var isEnabled: Bool { self != .off }
}

/// How a listener authenticates clients (`auth = "none" | "basic" | "client-cert"`).
public enum ListenerAuthentication: Sendable, Equatable {
    /// Anyone who can reach the listener may replicate.
    case none
    /// HTTP Basic credentials checked against the users file at this absolute path. The file need not exist
    /// yet: until `edge-gateway users add` creates it the listener refuses everyone, and the running gateway
    /// re-reads it whenever it changes.
    case basic(usersFile: String)
    /// TLS client certificates that chain to one of these CA certificates (absolute PEM paths).
    case clientCertificate(trustedCertificateAuthorities: [String])
}

/// DNS-SD advertisement of a listener.
public struct ServiceDiscoverySettings: Sendable, Equatable {
    /// Service type such as `_edgegateway._tcp`.
    package var serviceType: String
    /// Instance name shown to browsers; defaults to the node name.
    package var instanceName: String

    package static let defaultServiceType = "_edgegateway._tcp"

    package init(
        serviceType: String = ServiceDiscoverySettings.defaultServiceType, instanceName: String
    ) {
        self.serviceType = serviceType
        self.instanceName = instanceName
    }
}
