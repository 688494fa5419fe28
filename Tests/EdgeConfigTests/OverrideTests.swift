import EdgeGatewayTestSupport
import Foundation
import Logging
import Testing

@testable import EdgeConfig

@Suite("Environment and command-line overrides")
struct OverrideTests {
    private let withUpstream =
        minimalTOML + """

            [[upstream]]
            name = "cloud-1"
            database = "inventory"
            url = "wss://sync.example.com/inventory"
            username = "store"
            password_file = "/nonexistent/password"
            """

    @Test func environmentOverridesNodeAndOps() throws {
        let configuration = try parse(
            "[node]\nname = \"file-name\"\nlog_level = \"info\"\n" + minimalTOML,
            environment: [
                "EDGE_GATEWAY_NODE_NAME": "env-name",
                "EDGE_GATEWAY_DATA_DIR": "/srv/edge",
                "EDGE_GATEWAY_LOG_LEVEL": "debug",
                "EDGE_GATEWAY_OPS_ADDRESS": "0.0.0.0",
                "EDGE_GATEWAY_OPS_PORT": "9000",
            ]
        )
        #expect(
            configuration.node
                == NodeSettings(name: "env-name", dataDirectory: "/srv/edge", logLevel: .debug))
        #expect(configuration.ops == OpsSettings(address: "0.0.0.0", port: 9000))
    }

    @Test func environmentOverridesNamedListener() throws {
        let configuration = try parse(
            minimalTOML,
            environment: [
                "EDGE_GATEWAY_LISTENER_LAN_PORT": "5000",
                "EDGE_GATEWAY_LISTENER_LAN_INTERFACE": "eth0",
                "EDGE_GATEWAY_LISTENER_LAN_TLS": "off",
            ]
        )
        let listener = try #require(configuration.listeners.first)
        #expect(listener.port == 5000)
        #expect(listener.interface == "eth0")
        #expect(listener.tls == .off)
    }

    @Test func environmentOverridesUpstreamWithDashInName() throws {
        let configuration = try parse(
            withUpstream,
            environment: [
                "EDGE_GATEWAY_UPSTREAM_CLOUD_1_URL": "ws://10.0.0.5:4984/inventory",
                "EDGE_GATEWAY_UPSTREAM_CLOUD_1_PASSWORD": "from-env",
            ]
        )
        let upstream = try #require(configuration.upstreams.first)
        #expect(upstream.url.absoluteString == "ws://10.0.0.5:4984/inventory")
        #expect(upstream.serverTrust == nil)
        // The environment password wins, so the missing password_file is never read.
        #expect(upstream.authentication == .basic(username: "store", password: Secret("from-env")))
    }

    @Test func commandLineBeatsEnvironmentBeatsFile() throws {
        let toml =
            "[node]\ndata_dir = \"/from/file\"\nlog_level = \"error\"\n[ops]\nport = 7000\n"
            + minimalTOML
        let environment = ["EDGE_GATEWAY_OPS_PORT": "8000", "EDGE_GATEWAY_LOG_LEVEL": "warning"]

        let fromEnvironment = try parse(toml, environment: environment)
        #expect(fromEnvironment.ops.port == 8000)
        #expect(fromEnvironment.node.logLevel == .warning)
        #expect(fromEnvironment.node.dataDirectory == "/from/file")

        let fromCommandLine = try parse(
            toml,
            environment: environment,
            overrides: ConfigurationOverrides(
                dataDirectory: "/from/cli", logLevel: .trace, opsPort: 9000, opsAddress: "::1")
        )
        #expect(fromCommandLine.ops == OpsSettings(address: "::1", port: 9000))
        #expect(fromCommandLine.node.logLevel == .trace)
        #expect(fromCommandLine.node.dataDirectory == "/from/cli")
    }

    @Test func relativeDataDirectoryResolvesAgainstWorkingDirectory() throws {
        let configuration = try parse(
            minimalTOML,
            overrides: ConfigurationOverrides(dataDirectory: "state/db"),
            baseDirectory: "/somewhere/else"
        )
        let expected = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            .appendingPathComponent("state/db").standardizedFileURL.path
        #expect(configuration.node.dataDirectory == expected)
    }

    @Test func unknownVariableIsAnError() throws {
        let error = try parseError(
            minimalTOML, environment: ["EDGE_GATEWAY_OPS_PROT": "1", "HOME": "/root"])
        #expect(error.source == "environment variable EDGE_GATEWAY_OPS_PROT")
        #expect(error.message == "unknown EDGE_GATEWAY_ variable (misspelt?)")
        #expect(error.allowedValues.contains("EDGE_GATEWAY_OPS_PORT"))
        #expect(error.allowedValues.contains("EDGE_GATEWAY_LISTENER_<NAME>_PORT"))
    }

    @Test func variableForUnconfiguredListenerIsAnError() throws {
        let error = try parseError(
            minimalTOML, environment: ["EDGE_GATEWAY_LISTENER_WAN_PORT": "5000"])
        #expect(error.source == "environment variable EDGE_GATEWAY_LISTENER_WAN_PORT")
        #expect(error.allowedValues == ["LAN"])
    }

    @Test func environmentValueIsValidatedAndNamed() throws {
        let error = try parseError(
            minimalTOML, environment: ["EDGE_GATEWAY_LISTENER_LAN_PORT": "http"])
        #expect(error.source == "environment variable EDGE_GATEWAY_LISTENER_LAN_PORT")
        #expect(error.line == nil)
        #expect(error.keyPath == "listener \"lan\".port")
        #expect(error.message == "must be an integer 0-65535, got \"http\"")
        #expect(
            error.description
                == "environment variable EDGE_GATEWAY_LISTENER_LAN_PORT: listener \"lan\".port: must be an integer 0-65535, got \"http\""
        )
    }

    @Test func environmentEnumValueListsAllowedValues() throws {
        let error = try parseError(minimalTOML, environment: ["EDGE_GATEWAY_LOG_LEVEL": "verbose"])
        #expect(error.source == "environment variable EDGE_GATEWAY_LOG_LEVEL")
        #expect(error.allowedValues == Logger.Level.allCases.map(\.rawValue))
    }

    @Test func commandLineValueIsValidated() throws {
        let error = try parseError(minimalTOML, overrides: ConfigurationOverrides(opsPort: 70_000))
        #expect(error.source == "command line")
        #expect(error.keyPath == "ops.port")
        #expect(error.message == "must be an integer 0-65535, got 70000")
    }

    @Test func passwordVariableRequiresBasicAuth() throws {
        let error = try parseError(
            withUpstream
                .replacingOccurrences(of: "username = \"store\"\n", with: "")
                .replacingOccurrences(of: "password_file = \"/nonexistent/password\"", with: ""),
            environment: ["EDGE_GATEWAY_UPSTREAM_CLOUD_1_PASSWORD": "x"]
        )
        #expect(error.source == "environment variable EDGE_GATEWAY_UPSTREAM_CLOUD_1_PASSWORD")
        #expect(error.message == "`password` is only used with auth = \"basic\"")
    }

    @Test func configFileVariableIsUsedWithoutExplicitFile() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(
            "gateway.toml", "[node]\nname = \"from-variable\"\n" + minimalTOML)
        let configuration = try ConfigurationLoader.load(
            file: nil, environment: ["EDGE_GATEWAY_CONFIG": file])
        #expect(configuration.node.name == "from-variable")
    }

    @Test func missingConfigurationFile() throws {
        let error = try #require(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(file: "/nonexistent/gateway.toml", environment: [:])
        }
        #expect(
            error.description
                == "/nonexistent/gateway.toml: cannot read the configuration file: it does not exist"
        )
    }
}
