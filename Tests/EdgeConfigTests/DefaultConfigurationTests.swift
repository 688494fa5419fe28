import EdgeGatewayTestSupport
import Foundation
import Logging
import Testing

@testable import EdgeConfig

@Suite("Shipped configurations")
struct DefaultConfigurationTests {
    @Test("the embedded default loads with one open self-signed listener and no upstream")
    func embeddedDefault() throws {
        let configuration = try ConfigurationLoader.load(file: nil, environment: [:])
        let workingDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        #expect(configuration.node.name == "edge-gateway")
        #expect(
            configuration.node.dataDirectory
                == workingDirectory.appendingPathComponent("data").standardizedFileURL.path)
        #expect(configuration.node.logLevel == .info)
        #expect(configuration.ops == OpsSettings(address: "127.0.0.1", port: 4985))
        #expect(configuration.databases == [DatabaseSettings(name: "inventory")])
        let listener = try #require(configuration.listeners.first)
        #expect(configuration.listeners.count == 1)
        #expect(listener.tls == .selfSigned)
        #expect(listener.authentication == .none)
        #expect(listener.port == 4984)
        #expect(listener.databases == ["inventory"])
        #expect(listener.serviceDiscovery == nil)
        #expect(configuration.upstreams.isEmpty)
    }

    @Test("the shipped site configuration loads as it is, naming no file that must exist")
    func shippedSiteConfiguration() throws {
        let file = packageRoot.appendingPathComponent("config/edge-gateway.toml").path
        let configuration = try ConfigurationLoader.load(
            file: file, environment: ["EDGE_GATEWAY_DATA_DIR": "/srv/edge-data"])

        #expect(configuration.node.dataDirectory == "/srv/edge-data")
        #expect(configuration.ops == OpsSettings(address: "127.0.0.1", port: 4985))
        #expect(configuration.databases.map(\.name) == ["inventory"])
        let listener = try #require(configuration.listeners.first)
        #expect(configuration.listeners.count == 1)
        #expect(listener.tls == .selfSigned)
        #expect(listener.authentication == .basic(usersFile: "/srv/edge-data/users.toml"))
        #expect(listener.port == 4984)
        #expect(configuration.upstreams.isEmpty)
    }

    @Test("the commented [[upstream]] example is valid once uncommented and its password file exists")
    func shippedUpstreamExample() throws {
        let directory = try TemporaryDirectory()
        let shipped = try String(
            contentsOf: packageRoot.appendingPathComponent("config/edge-gateway.toml"), encoding: .utf8)
        let exampleStart = try #require(shipped.range(of: "\n#[[upstream]]"))
        // The example's settings are `#key = value` (no space); lines starting with "# " explain or show
        // alternatives and stay comments.
        let example = shipped[exampleStart.lowerBound...].split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in
                line.range(of: #"^#(\[\[upstream\]\]|[a-z_0-9]+ = )"#, options: .regularExpression) != nil
                    ? String(line.dropFirst()) : String(line)
            }
            .joined(separator: "\n")
        let uncommented = shipped[..<exampleStart.lowerBound] + example
        let passwordFile = try directory.write("secrets/cloud.password", "s3cret\n")
        let file = try directory.write(
            "edge-gateway.toml",
            uncommented.replacingOccurrences(of: "/run/secrets/upstream_password", with: passwordFile))

        let configuration = try ConfigurationLoader.load(file: file, environment: [:])

        let upstream = try #require(configuration.upstreams.first)
        #expect(upstream.url.absoluteString == "wss://sync.example.com:4984/inventory")
        #expect(upstream.direction == .pushAndPull)
        #expect(upstream.authentication == .basic(username: "store-42", password: Secret("s3cret")))
        #expect(upstream.serverTrust == .certificateAuthorities([]))
        #expect(upstream.channels == ["store-42"])
        #expect(upstream.heartbeat == .seconds(300))
    }

    @Test(
        "every key is documented in the site example",
        arguments: [
            ("[node]", ConfigurationDecoder.nodeKeys),
            ("[ops]", ConfigurationDecoder.opsKeys),
            ("[[database]]", DatabaseSettings.keys),
            ("[[listener]]", ListenerSettings.keys),
            ("[[upstream]]", UpstreamSettings.keys),
        ]
    )
    func everyKeyDocumented(table: String, keys: [String]) throws {
        let example = try String(
            contentsOf: packageRoot.appendingPathComponent("config/edge-gateway.toml"),
            encoding: .utf8
        )
        let documentedKeys = Set(
            example.split(separator: "\n").compactMap { line -> String? in
                let code = line.drop { $0 == "#" || $0 == " " }
                guard let equals = code.firstIndex(of: "=") else { return nil }
                return code[..<equals].trimmingCharacters(in: .whitespaces)
            }
        )
        for key in keys {
            #expect(
                documentedKeys.contains(key),
                "\(table) key `\(key)` is not in config/edge-gateway.toml")
        }
    }

    @Test("every environment variable is documented in environment.example")
    func everyVariableDocumented() throws {
        let example = try String(
            contentsOf: packageRoot.appendingPathComponent("config/environment.example"),
            encoding: .utf8
        )
        for variable in EnvironmentOverrides.acceptedVariables {
            let concrete =
                variable
                .replacingOccurrences(of: "LISTENER_<NAME>", with: "LISTENER_LAN")
                .replacingOccurrences(of: "UPSTREAM_<NAME>", with: "UPSTREAM_CLOUD")
            #expect(
                example.contains("\n\(concrete)="),
                "\(variable) is not in config/environment.example")
        }
    }
}
