import Foundation
import Testing

@testable import EdgeConfig

/// A valid configuration with one database and one open listener, for tests to extend.
let minimalTOML = """
    [[database]]
    name = "inventory"

    [[listener]]
    name = "lan"
    auth = "none"
    databases = ["inventory"]

    """

func parse(
    _ toml: String,
    environment: [String: String] = [:],
    overrides: ConfigurationOverrides = ConfigurationOverrides(),
    baseDirectory: String? = nil
) throws -> GatewayConfiguration {
    try ConfigurationLoader.parse(
        toml: toml,
        source: "test.toml",
        environment: environment,
        overrides: overrides,
        baseDirectory: baseDirectory
    )
}

/// The error parsing `toml` must throw.
func parseError(
    _ toml: String,
    environment: [String: String] = [:],
    overrides: ConfigurationOverrides = ConfigurationOverrides(),
    baseDirectory: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> ConfigurationError {
    try #require(throws: ConfigurationError.self, sourceLocation: sourceLocation) {
        try parse(
            toml, environment: environment, overrides: overrides, baseDirectory: baseDirectory)
    }
}

/// The package's root directory, for the shipped files under config/.
let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()
    .deletingLastPathComponent()
    .deletingLastPathComponent()

/// A fresh directory under the system's temporary directory, removed when released.
final class TemporaryDirectory {
    let path: String

    init() throws {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("EdgeConfigTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Writes `contents` to `relativePath`, creating intermediate directories, and returns the absolute path.
    @discardableResult
    func write(_ relativePath: String, _ contents: String) throws -> String {
        let url = URL(fileURLWithPath: path).appendingPathComponent(relativePath)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(),
            withIntermediateDirectories: true
        )
        try contents.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }
}
