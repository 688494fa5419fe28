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

    @Test("the shipped site example validates once its referenced files exist")
    func shippedExample() throws {
        let directory = try TemporaryDirectory()
        let example = try String(
            contentsOf: packageRoot.appendingPathComponent("config/edge-gateway.toml"),
            encoding: .utf8
        )
        let file = try directory.write("edge-gateway.toml", example)
        try directory.write("tls/gateway.crt", "certificate")
        try directory.write("tls/gateway.key", "key")
        try directory.write(
            "users.toml",
            try String(
                contentsOf: packageRoot.appendingPathComponent("config/users.example.toml"),
                encoding: .utf8)
        )
        try directory.write("secrets/cloud.password", "s3cret\n")

        let configuration = try ConfigurationLoader.load(file: file, environment: [:])

        #expect(configuration.node.name == "site-gateway")
        #expect(
            configuration.databases.map(\.collections) == [["_default._default", "store.orders"]])
        #expect(
            configuration.databases.first?.deltaRetention
                == DeltaRetention(revisionBodies: 10, maximumAge: .seconds(7 * 86_400)))
        let listener = try #require(configuration.listeners.first)
        #expect(
            listener.tls
                == .pemFiles(
                    certificate: "\(directory.path)/tls/gateway.crt",
                    privateKey: "\(directory.path)/tls/gateway.key"))
        guard case .basic(let users) = listener.authentication else {
            Issue.record("expected basic authentication, got \(listener.authentication)")
            return
        }
        #expect(users.map(\.name) == ["store-app", "handheld-07"])
        #expect(
            listener.serviceDiscovery
                == ServiceDiscoverySettings(
                    serviceType: "_edgegateway._tcp", instanceName: "Site gateway"))
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
