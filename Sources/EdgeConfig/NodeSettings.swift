import Logging

/// The `[node]` table: identity, storage location and logging of this gateway.
package struct NodeSettings: Sendable, Equatable {
    /// Human-readable node name; also the default DNS-SD instance name.
    package var name: String
    /// Absolute path of the data directory. A relative `data_dir` is resolved against the
    /// process's working directory (not the config file's), so `./data` works the same from a
    /// container's WORKDIR or a shell.
    package var dataDirectory: String
    package var logLevel: Logger.Level

    package init(name: String, dataDirectory: String, logLevel: Logger.Level) {
        self.name = name
        self.dataDirectory = dataDirectory
        self.logLevel = logLevel
    }
}

/// The `[ops]` table: the always-on HTTP endpoint for health, readiness, status and metrics.
package struct OpsSettings: Sendable, Equatable {
    /// IP address to bind; `127.0.0.1` keeps it private to the host, `0.0.0.0` inside a container.
    package var address: String
    /// TCP port; 0 asks the system for a free port.
    package var port: Int

    package init(address: String, port: Int) {
        self.address = address
        self.port = port
    }
}
