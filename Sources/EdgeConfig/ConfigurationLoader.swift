import Foundation

/// Loads the gateway configuration.
///
/// Precedence, highest first: ``ConfigurationOverrides`` (command line), `EDGE_GATEWAY_…`
/// environment variables, the configuration file, built-in defaults. Every value, whatever its
/// origin, goes through the same validation, and the first problem is thrown as a
/// ``ConfigurationError`` naming its origin.
public enum ConfigurationLoader {
    /// The source name errors in the embedded default configuration cite.
    package static let embeddedDefaultName = "embedded default.toml"

    /// Loads `file`, or the file named by `EDGE_GATEWAY_CONFIG` when `file` is nil, or else the
    /// embedded default configuration.
    ///
    /// Relative paths inside the file are resolved against the file's directory; a relative
    /// `data_dir` against the current working directory.
    /// - Parameters:
    ///   - environment: usually `ProcessInfo.processInfo.environment`.
    ///   - unusableFiles: whether a listener or upstream whose file cannot be used refuses the whole
    ///     configuration, or is only left out and listed.
    package static func load(
        file: String?,
        environment: [String: String],
        overrides: ConfigurationOverrides = ConfigurationOverrides(),
        unusableFiles: UnusableFilePolicy = .reject
    ) throws -> GatewayConfiguration {
        guard let file = file ?? environment[EnvironmentOverrides.configFileVariable] else {
            return try parse(
                toml: try defaultConfigurationTOML(),
                source: embeddedDefaultName,
                environment: environment,
                overrides: overrides,
                unusableFiles: unusableFiles
            )
        }
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            let reason =
                FileManager.default.fileExists(atPath: file)
                ? "is not readable UTF-8 text" : "does not exist"
            throw ConfigurationError(
                source: file, message: "cannot read the configuration file: it \(reason)")
        }
        let fileURL = URL(fileURLWithPath: file, relativeTo: currentDirectory)
        return try parse(
            toml: text,
            source: file,
            environment: environment,
            overrides: overrides,
            baseDirectory: fileURL.deletingLastPathComponent().standardizedFileURL.path,
            unusableFiles: unusableFiles
        )
    }

    /// Parses and validates configuration text.
    /// - Parameters:
    ///   - source: the name errors cite, normally the file path.
    ///   - baseDirectory: the directory relative paths in the text are resolved against; the
    ///     current working directory when nil.
    public static func parse(
        toml: String,
        source: String,
        environment: [String: String],
        overrides: ConfigurationOverrides = ConfigurationOverrides(),
        baseDirectory: String? = nil,
        unusableFiles: UnusableFilePolicy = .reject
    ) throws -> GatewayConfiguration {
        let environmentOverrides = try EnvironmentOverrides(environment: environment)
        let workingDirectory = FileManager.default.currentDirectoryPath
        let (_, root) = try ConfigurationDocument.parse(
            toml,
            name: source,
            baseDirectory: baseDirectory ?? workingDirectory
        )
        let decoder = ConfigurationDecoder(
            environment: environmentOverrides,
            overrides: overrides,
            workingDirectory: workingDirectory,
            unusableFiles: unusableFiles
        )
        return try decoder.decode(root)
    }

    /// The text of the embedded default configuration, e.g. to print as a starting point.
    package static func defaultConfigurationTOML() throws -> String {
        guard
            let url = Bundle.module.url(forResource: "default", withExtension: "toml"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else {
            throw ConfigurationError(
                source: embeddedDefaultName,
                message:
                    "the resource is missing from the EdgeConfig bundle; the installation is incomplete"
            )
        }
        return text
    }

    private static var currentDirectory: URL {
        URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
    }
}
