import EdgeGatewayTestSupport
import Foundation
import Testing

@testable import EdgeConfig

@Suite("Secrets and files referenced by the configuration")
struct SecretFileTests {
    private func upstreamTOML(passwordFile: String) -> String {
        minimalTOML + """

            [[upstream]]
            name = "cloud"
            database = "inventory"
            url = "wss://sync.example.com/inventory"
            username = "store"
            password_file = "\(passwordFile)"
            """
    }

    @Test func passwordFileIsReadRelativeToConfigurationFile() throws {
        let directory = try TemporaryDirectory()
        try directory.write("secrets/cloud.password", "pa55word\r\n")
        let file = try directory.write(
            "gateway.toml", upstreamTOML(passwordFile: "secrets/cloud.password"))

        let configuration = try ConfigurationLoader.load(file: file, environment: [:])

        #expect(
            configuration.upstreams.first?.authentication
                == .basic(username: "store", password: Secret("pa55word")))
    }

    @Test func missingPasswordFileNamesKeyLineAndPath() throws {
        let directory = try TemporaryDirectory()
        let error = try parseError(
            upstreamTOML(passwordFile: "missing.password"), baseDirectory: directory.path)
        #expect(error.line == 14)
        #expect(error.keyPath == "upstream \"cloud\".password_file")
        #expect(
            error.message.hasPrefix(
                "file not found: \(directory.path)/missing.password; create it, or correct the path"))
    }

    @Test func emptyPasswordFileIsAnError() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("empty.password", "\n")
        let error = try parseError(upstreamTOML(passwordFile: path))
        #expect(error.message == "file \(path) is empty")
    }

    @Test func secretsNeverAppearInDescriptions() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("cloud.password", "TopSecret-42\n")
        let configuration = try parse(upstreamTOML(passwordFile: path))

        #expect(!String(describing: configuration).contains("TopSecret-42"))
        #expect(!String(reflecting: configuration).contains("TopSecret-42"))
        var dumped = ""
        dump(configuration, to: &dumped)
        #expect(!dumped.contains("TopSecret-42"))
        #expect(String(describing: configuration).contains("<redacted>"))
    }

    @Test func environmentPasswordNeverAppearsInErrors() throws {
        let error = try parseError(
            upstreamTOML(passwordFile: "/nonexistent").replacingOccurrences(
                of: "username = \"store\"", with: "username = \"a:b\""),
            environment: ["EDGE_GATEWAY_UPSTREAM_CLOUD_PASSWORD": "TopSecret-42"]
        )
        #expect(error.keyPath == "upstream \"cloud\".username")
        #expect(!error.description.contains("TopSecret-42"))
    }

    @Test func unusableFileLeavesOutOnlyItsEntryWhenServing() throws {
        let directory = try TemporaryDirectory()
        let toml = upstreamTOML(passwordFile: "missing.password")
        let strict = try parseError(toml, baseDirectory: directory.path)
        let configuration = try ConfigurationLoader.parse(
            toml: toml, source: "test.toml", environment: [:], baseDirectory: directory.path,
            unusableFiles: .disableEntry)
        #expect(configuration.listeners.map(\.name) == ["lan"])
        #expect(configuration.upstreams.isEmpty)
        #expect(configuration.unavailableEntries == [UnavailableEntry(kind: .upstream, name: "cloud", problem: strict)])
        #expect(strict.unusableFile == "\(directory.path)/missing.password")
    }

    @Test func entryLeftOutForItsFileIsStillCheckedForEverythingElse() throws {
        let directory = try TemporaryDirectory()
        let toml = upstreamTOML(passwordFile: "missing.password") + "\nheartbeat = \"500ms\"\n"
        let error = try #require(throws: ConfigurationError.self) {
            try ConfigurationLoader.parse(
                toml: toml, source: "test.toml", environment: [:], baseDirectory: directory.path,
                unusableFiles: .disableEntry)
        }
        #expect(error.keyPath == "upstream \"cloud\".heartbeat")
        #expect(error.unusableFile == nil)
    }

    @Test func environmentOverridesOfALeftOutListenerAreNotUnmatched() throws {
        let directory = try TemporaryDirectory()
        let toml = minimalTOML.replacingOccurrences(
            of: "auth = \"none\"", with: "auth = \"none\"\ntls = \"file\"\ntls_pkcs12 = \"gateway.p12\"")
        let configuration = try ConfigurationLoader.parse(
            toml: toml, source: "test.toml", environment: ["EDGE_GATEWAY_LISTENER_LAN_PORT": "5000"],
            baseDirectory: directory.path, unusableFiles: .disableEntry)
        #expect(configuration.listeners.isEmpty)
        #expect(configuration.unavailableEntries.map(\.name) == ["lan"])
        #expect(configuration.unavailableEntries.first?.problem.keyPath == "listener \"lan\".tls_pkcs12")
    }

    @Test(.enabled(if: geteuid() != 0, "root reads every file"))
    func unreadableFileNamesTheUserAndTheFix() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("cloud.password", "pa55word\n")
        chmod(path, 0)
        let error = try parseError(upstreamTOML(passwordFile: path))
        #expect(error.message.hasPrefix("file is not readable by the gateway (uid \(geteuid())): \(path); give it"))
        #expect(error.unusableFile == path)
    }

    /// The configuration names the users file; the running listener reads it (and re-reads it when it changes).
    @Test func usersFileIsNamedRelativeToTheConfiguration() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("users.toml", "")
        let configuration = try parse(
            minimalTOML.replacingOccurrences(
                of: "auth = \"none\"", with: "auth = \"basic\"\nusers_file = \"users.toml\""),
            baseDirectory: directory.path
        )
        #expect(configuration.listeners.first?.authentication == .basic(usersFile: path))
    }

    @Test func emptyUsersFileIsAcceptedAsUsersFile() throws {
        let directory = try TemporaryDirectory()
        let empty = try directory.write("users.toml", "# nobody yet\n")
        let configuration = try parse(
            minimalTOML.replacingOccurrences(
                of: "auth = \"none\"", with: "auth = \"basic\"\nusers_file = \"users.toml\""),
            baseDirectory: directory.path
        )
        #expect(configuration.listeners.first?.authentication == .basic(usersFile: empty))
    }

    @Test func basicAuthWithoutUsersFileUsesTheDataDirectory() throws {
        let configuration = try parse(
            "[node]\ndata_dir = \"/srv/gateway-data\"\n"
                + minimalTOML.replacingOccurrences(of: "auth = \"none\"", with: "auth = \"basic\""),
            environment: ["EDGE_GATEWAY_DATA_DIR": "/var/lib/edge-gateway"])
        #expect(configuration.listeners.first?.authentication == .basic(usersFile: "/var/lib/edge-gateway/users.toml"))
    }

    @Test func directoryInsteadOfFile() throws {
        let directory = try TemporaryDirectory()
        let error = try parseError(upstreamTOML(passwordFile: directory.path))
        #expect(error.message == "\(directory.path) is a directory, expected a file")
    }
}

@Suite("Secrets stay out of the main configuration file")
struct InlineSecretTests {
    @Test func inlinePasswordIsAnUnknownKey() throws {
        let error = try parseError(
            minimalTOML + """

                [[upstream]]
                name = "cloud"
                database = "inventory"
                url = "wss://sync.example.com/inventory"
                username = "store"
                password = "TopSecret-42"
                """
        )
        #expect(error.line == 14)
        #expect(error.message == "unknown key `password`")
        #expect(error.allowedValues.contains("password_file"))
        #expect(!error.description.contains("TopSecret-42"))
    }
}
