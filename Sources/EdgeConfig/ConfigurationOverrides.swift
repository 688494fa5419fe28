import Logging

/// Settings given on the command line; they take precedence over environment variables, which
/// take precedence over the configuration file. Values are validated like file values.
public struct ConfigurationOverrides: Sendable, Equatable {
    /// Replaces `[node] data_dir`; a relative path is resolved against the working directory.
    public var dataDirectory: String?
    public var logLevel: Logger.Level?
    public var opsPort: Int?
    package var opsAddress: String?

    public init(
        dataDirectory: String? = nil,
        logLevel: Logger.Level? = nil,
        opsPort: Int? = nil,
        opsAddress: String? = nil
    ) {
        self.dataDirectory = dataDirectory
        self.logLevel = logLevel
        self.opsPort = opsPort
        self.opsAddress = opsAddress
    }

    var nodeValues: [String: OverrideValue] {
        Self.commandLineValues(["data_dir": dataDirectory, "log_level": logLevel?.rawValue])
    }

    var opsValues: [String: OverrideValue] {
        Self.commandLineValues(["port": opsPort.map(String.init), "address": opsAddress])
    }

    private static func commandLineValues(_ values: [String: String?]) -> [String: OverrideValue] {
        values.compactMapValues { value in
            value.map { OverrideValue(origin: .commandLine, text: $0) }
        }
    }
}
