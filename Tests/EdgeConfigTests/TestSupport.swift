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
