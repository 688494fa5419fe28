import EdgeConfig
import GatewayConfigurationFile

extension GatewayTOML {
    /// The file as the gateway loads it, with `environment` as its variables and no command-line overrides.
    package func configuration(environment: [String: String] = [:]) throws -> GatewayConfiguration {
        try ConfigurationLoader.parse(
            toml: description, source: "test", environment: environment, overrides: ConfigurationOverrides())
    }
}
