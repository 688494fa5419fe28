/// The complete, validated configuration of one EdgeGateway node.
///
/// Produced by ``ConfigurationLoader``; every value has already been checked, every relative path
/// resolved to an absolute one and every secret read from its file.
public struct GatewayConfiguration: Sendable, Equatable {
    package var node: NodeSettings
    package var ops: OpsSettings
    package var databases: [DatabaseSettings]
    /// Passive-peer endpoints that Couchbase Lite apps connect to.
    package var listeners: [ListenerSettings]
    /// Active-peer replications to Sync Gateway, Edge Server or another EdgeGateway.
    package var upstreams: [UpstreamSettings]
    /// Entries left out of `listeners` and `upstreams` because a file they name cannot be used; only with
    /// ``UnusableFilePolicy/disableEntry``.
    package var unavailableEntries: [UnavailableEntry]

    package init(
        node: NodeSettings,
        ops: OpsSettings,
        databases: [DatabaseSettings],
        listeners: [ListenerSettings],
        upstreams: [UpstreamSettings],
        unavailableEntries: [UnavailableEntry] = []
    ) {
        self.node = node
        self.ops = ops
        self.databases = databases
        self.listeners = listeners
        self.upstreams = upstreams
        self.unavailableEntries = unavailableEntries
    }

    /// The database named `name`, if configured.
    package func database(named name: String) -> DatabaseSettings? {
        databases.first { $0.name == name }
    }
}

/// What loading does with a `[[listener]]` or `[[upstream]]` whose certificate, key, CA or secret file is
/// missing, unreadable or empty.
public enum UnusableFilePolicy: Sendable {
    /// The whole configuration is refused with that file's error, as `config check` and the CLI commands do.
    case reject
    /// The entry is left out and listed in ``GatewayConfiguration/unavailableEntries`` with the error, so that a
    /// running node reports it and serves the rest. The entry's other keys are still validated: any other
    /// problem refuses the configuration as with `reject`.
    case disableEntry
}

/// A configured listener or upstream that cannot start because of a file it names.
package struct UnavailableEntry: Sendable, Equatable {
    package enum Kind: String, Sendable {
        case listener
        case upstream
    }

    package var kind: Kind
    package var name: String
    /// Names the configuration file and key, the unusable file and the fix.
    package var problem: ConfigurationError

    package init(kind: Kind, name: String, problem: ConfigurationError) {
        self.kind = kind
        self.name = name
        self.problem = problem
    }
}
