import ArgumentParser
import EdgeConfig
import Foundation
import Logging

/// Options that choose and adjust the configuration, shared by every command that needs one.
struct ConfigurationOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Path of the TOML configuration file. Defaults to $EDGE_GATEWAY_CONFIG, else the embedded default.",
            valueName: "file"
        )
    )
    var config: String?

    @Option(name: .customLong("data-dir"), help: ArgumentHelp("Overrides [node] data_dir.", valueName: "dir"))
    var dataDirectory: String?

    @Option(
        name: .customLong("log-level"),
        help: "Overrides [node] log_level: trace, debug, info, notice, warning, error or critical."
    )
    var logLevel: Logger.Level?

    @Option(name: .customLong("ops-port"), help: "Overrides [ops] port.")
    var opsPort: Int?

    static let configFileVariable = "EDGE_GATEWAY_CONFIG"

    var configurationFile: String? {
        config ?? ProcessInfo.processInfo.environment[Self.configFileVariable]
    }

    /// Loads and validates the configuration, or prints the one clear error and exits non-zero.
    /// - Parameter unusableFiles: `serve` runs what it can and reports entries whose files it cannot use; the
    ///   other commands refuse such a configuration.
    func load(unusableFiles: UnusableFilePolicy = .reject) throws -> GatewayConfiguration {
        do {
            return try ConfigurationLoader.load(
                file: configurationFile,
                environment: ProcessInfo.processInfo.environment,
                overrides: ConfigurationOverrides(dataDirectory: dataDirectory, logLevel: logLevel, opsPort: opsPort),
                unusableFiles: unusableFiles
            )
        } catch {
            printError("configuration error: \(error)")
            throw ExitCode(2)
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
