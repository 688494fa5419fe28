import Logging

/// The `[node]` table: identity, storage location and logging of this gateway.
public struct NodeSettings: Sendable, Equatable {
    /// Human-readable node name; also the default DNS-SD instance name.
    public var name: String
    /// Absolute path of the data directory. A relative `data_dir` is resolved against the
    /// process's working directory (not the config file's), so `./data` works the same from a
    /// container's WORKDIR or a shell.
    public var dataDirectory: String
    public var logLevel: Logger.Level

    public init(name: String, dataDirectory: String, logLevel: Logger.Level) {
        self.name = name
        self.dataDirectory = dataDirectory
        self.logLevel = logLevel
    }
}

/// The `[ops]` table: the always-on HTTP endpoint for health, readiness, status and metrics.
public struct OpsSettings: Sendable, Equatable {
    /// IP address to bind; `127.0.0.1` keeps it private to the host, `0.0.0.0` inside a container.
    public var address: String
    /// TCP port; 0 asks the system for a free port.
    public var port: Int

    public init(address: String, port: Int) {
        self.address = address
        self.port = port
    }
}
