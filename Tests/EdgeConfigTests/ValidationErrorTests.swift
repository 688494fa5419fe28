import Testing

@testable import EdgeConfig

@Suite("Validation errors name the key, the line and the allowed values")
struct ValidationErrorTests {
    @Test func unknownKeyInListener() throws {
        let error = try parseError(
            """
            [[database]]
            name = "inventory"

            [[listener]]
            name = "lan"
            auth = "none"
            prot = 4984
            databases = ["inventory"]
            """
        )
        #expect(error.source == "test.toml")
        #expect(error.line == 7)
        #expect(error.keyPath == "listener \"lan\".prot")
        #expect(error.allowedValues.contains("port"))
        #expect(error.allowedValues.contains("interface"))
        #expect(
            error.description.hasPrefix(
                "test.toml:7: listener \"lan\".prot: unknown key `prot`; allowed: name, interface, port,"
            )
        )
    }

    @Test func unknownTopLevelTable() throws {
        let error = try parseError(minimalTOML + "\n[nodes]\nname = \"x\"\n")
        #expect(error.line == 9)
        #expect(error.keyPath == "nodes")
        #expect(error.allowedValues == ["node", "ops", "database", "listener", "upstream"])
    }

    @Test func wrongTypeForPort() throws {
        let error = try parseError(minimalTOML + "port = \"4984\"\n")
        #expect(error.line == 8)
        #expect(error.keyPath == "listener \"lan\".port")
        #expect(error.message == "must be an integer 0-65535, got string")
    }

    @Test func portOutOfRange() throws {
        let error = try parseError(
            minimalTOML.replacingOccurrences(
                of: "[[listener]]", with: "[ops]\nport = 70000\n\n[[listener]]"))
        #expect(error.keyPath == "ops.port")
        #expect(error.line == 5)
        #expect(error.message == "must be an integer 0-65535, got 70000")
    }

    @Test func badEnumValueListsAllowedValues() throws {
        let error = try parseError(minimalTOML + "tls = \"selfsigned\"\n")
        #expect(error.line == 8)
        #expect(error.keyPath == "listener \"lan\".tls")
        #expect(error.message == "unknown value \"selfsigned\"")
        #expect(error.allowedValues == ["off", "self-signed", "file"])
        #expect(
            error.description
                == "test.toml:8: listener \"lan\".tls: unknown value \"selfsigned\"; allowed: off, self-signed, file"
        )
    }

    @Test func badLogLevel() throws {
        let error = try parseError("[node]\nlog_level = \"verbose\"\n" + minimalTOML)
        #expect(error.line == 2)
        #expect(error.keyPath == "node.log_level")
        #expect(
            error.allowedValues == [
                "trace", "debug", "info", "notice", "warning", "error", "critical",
            ])
    }

    @Test func listenerNamesUnknownDatabase() throws {
        let error = try parseError(
            minimalTOML.replacingOccurrences(
                of: "[\"inventory\"]", with: "[\"inventory\", \"orders\"]"))
        #expect(error.line == 7)
        #expect(error.keyPath == "listener \"lan\".databases[1]")
        #expect(error.message == "unknown database \"orders\"")
        #expect(error.allowedValues == ["inventory"])
    }

    @Test func upstreamNamesUnknownDatabase() throws {
        let error = try parseError(
            minimalTOML + """

                [[upstream]]
                name = "cloud"
                database = "invntory"
                url = "wss://sync.example.com/inventory"
                """
        )
        #expect(error.line == 11)
        #expect(error.keyPath == "upstream \"cloud\".database")
        #expect(error.allowedValues == ["inventory"])
    }

    @Test func duplicateListenerNames() throws {
        let error = try parseError(
            minimalTOML + """

                [[listener]]
                name = "lan"
                port = 4990
                auth = "none"
                databases = ["inventory"]
                """
        )
        #expect(error.line == 10)
        #expect(error.keyPath == "listener[1].name")
        #expect(error.message == "duplicate listener name \"lan\" (first defined at line 5)")
    }

    @Test func namesCollidingAsEnvironmentVariables() throws {
        let error = try parseError(
            """
            [[database]]
            name = "inventory"
            [[listener]]
            name = "lan-a"
            auth = "none"
            databases = ["inventory"]
            [[listener]]
            name = "lan_a"
            port = 4990
            auth = "none"
            databases = ["inventory"]
            """
        )
        #expect(error.line == 8)
        #expect(error.message.contains("EDGE_GATEWAY_LISTENER_LAN_A_"))
    }

    @Test func duplicateDatabaseNames() throws {
        let error = try parseError("[[database]]\nname = \"inventory\"\n" + minimalTOML)
        #expect(error.line == 4)
        #expect(error.keyPath == "database[1].name")
    }

    @Test func syntaxErrorCarriesLineAndColumn() throws {
        let error = try parseError(minimalTOML + "port = = 4984\n")
        #expect(error.line == 8)
        #expect(error.column != nil)
        #expect(error.message.hasPrefix("TOML syntax error: "))
        #expect(error.description.hasPrefix("test.toml:8:"))
    }

    @Test func singleTableWhereArrayOfTablesIsExpected() throws {
        let error = try parseError("[database]\nname = \"inventory\"\n")
        #expect(error.line == 1)
        #expect(error.keyPath == "database")
        #expect(error.message == "must be an array of tables ([[database]]), got table")
    }

    @Test func atLeastOneDatabase() throws {
        let error = try parseError("[node]\nname = \"x\"\n")
        #expect(error.keyPath == "database")
        #expect(error.message == "at least one [[database]] is required")
    }

    @Test func listenerAuthIsRequired() throws {
        let error = try parseError(
            minimalTOML.replacingOccurrences(of: "auth = \"none\"\n", with: ""))
        #expect(error.line == 4)
        #expect(error.keyPath == "listener \"lan\".auth")
        #expect(error.allowedValues == ["none", "basic", "client-cert"])
    }

    @Test func invalidEntryName() throws {
        let error = try parseError(
            minimalTOML.replacingOccurrences(of: "name = \"lan\"", with: "name = \"lan 1\""))
        #expect(error.line == 5)
        #expect(error.keyPath == "listener[0].name")
    }

    /// The configuration always writes the scope, and follows Couchbase's naming rules like every other layer.
    @Test(arguments: [
        ("orders", "expected 'scope.collection'"), ("a.b.c", "expected 'scope.collection'"),
        ("store._default", "the '_default' collection exists only in the '_default' scope"),
        ("_store.orders", "must not start with '_'"), ("store.or ders", "only letters, digits"),
    ])
    func badCollectionName(name: String, brokenRule: String) throws {
        let error = try parseError(
            minimalTOML.replacingOccurrences(
                of: "name = \"inventory\"",
                with: "name = \"inventory\"\ncollections = [\"_default._default\", \"\(name)\"]"
            )
        )
        #expect(error.line == 3)
        #expect(error.keyPath == "database \"inventory\".collections[1]")
        #expect(error.message.hasPrefix("\"\(name)\" is not a collection name ("))
        #expect(error.message.contains(brokenRule))
        #expect(error.message.contains("write \"scope.collection\""))
    }

    @Test func portClashWithOps() throws {
        let error = try parseError(minimalTOML + "port = 4985\n")
        #expect(error.line == 8)
        #expect(error.message == "port 4985 on 0.0.0.0 is already used by [ops]")
    }

    @Test func wrongElementTypeInArray() throws {
        let error = try parseError(
            minimalTOML.replacingOccurrences(of: "[\"inventory\"]", with: "[\"inventory\", 3]"))
        #expect(error.keyPath == "listener \"lan\".databases[1]")
        #expect(error.message == "must be a string, got integer")
    }

    @Test func durationIsParsedAndChecked() throws {
        let error = try parseError(
            minimalTOML + """

                [[upstream]]
                name = "cloud"
                database = "inventory"
                url = "ws://peer.local:4984/inventory"
                heartbeat = "5 minutes"
                """
        )
        #expect(error.line == 13)
        #expect(error.keyPath == "upstream \"cloud\".heartbeat")
        #expect(error.message.hasPrefix("must be a duration such as 300 (seconds), \"300s\""))
    }
}
