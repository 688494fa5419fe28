import ArgumentParser
import EdgeGatewayApp

@main
struct EdgeGatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edge-gateway",
        abstract: "Edge sync gateway for Couchbase Lite apps.",
        discussion: """
            Couchbase Lite 3.x apps at a site sync with this gateway over the LAN (BLIP over WebSocket), \
            and the gateway replicates the same databases upstream to Sync Gateway, Couchbase Edge Server \
            or another EdgeGateway.

            The configuration file is taken from --config, else from EDGE_GATEWAY_CONFIG, else the \
            embedded default is used. EDGE_GATEWAY_* variables override the file.
            """,
        version: "edge-gateway \(EdgeGatewayVersion.current)",
        subcommands: [
            Serve.self, ConfigCommand.self, Health.self, PairCommand.self, CertCommand.self, TrustCommand.self,
            UsersCommand.self, DocsCommand.self, DatabaseCommand.self, StatusCommand.self, UpstreamCommand.self,
            ReplicateCommand.self,
            DiscoverCommand.self, Version.self,
        ],
        defaultSubcommand: Serve.self
    )
}
