/// The complete, validated configuration of one EdgeGateway node.
///
/// Produced by ``ConfigurationLoader``; every value has already been checked, every relative path
/// resolved to an absolute one and every secret read from its file.
public struct GatewayConfiguration: Sendable, Equatable {
    public var node: NodeSettings
    public var ops: OpsSettings
    public var databases: [DatabaseSettings]
    /// Passive-peer endpoints that Couchbase Lite apps connect to.
    public var listeners: [ListenerSettings]
    /// Active-peer replications to Sync Gateway, Edge Server or another EdgeGateway.
    public var upstreams: [UpstreamSettings]

    public init(
        node: NodeSettings,
        ops: OpsSettings,
        databases: [DatabaseSettings],
        listeners: [ListenerSettings],
        upstreams: [UpstreamSettings]
    ) {
        self.node = node
        self.ops = ops
        self.databases = databases
        self.listeners = listeners
        self.upstreams = upstreams
    }

    /// The database named `name`, if configured.
    public func database(named name: String) -> DatabaseSettings? {
        databases.first { $0.name == name }
    }
}
