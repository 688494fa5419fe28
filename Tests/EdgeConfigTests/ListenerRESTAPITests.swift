import Testing

@testable import EdgeConfig

@Suite("Listener REST API switch: rest_api and rest_max_body_size")
struct ListenerRESTAPITests {
    private func listener(auth: String = "none", _ extraKeys: String) -> String {
        minimalTOML.replacingOccurrences(of: "auth = \"none\"", with: "auth = \"\(auth)\"\n" + extraKeys)
    }

    @Test func defaults() throws {
        let open = try #require(try parse(minimalTOML).listeners.first)
        #expect(open.restAPI == .readOnly, "an unauthenticated listener is read-only unless enabled explicitly")
        #expect(open.restMaxBodySize == 20_000_000)
        let authenticated = try #require(try parse(listener(auth: "basic", "")).listeners.first)
        #expect(authenticated.restAPI == .readWrite)
    }

    @Test(arguments: [
        ("none", "rest_api = true", RESTAPIAccess.readWrite),
        ("none", "rest_api = false", .off),
        ("basic", "rest_api = false", .off),
        ("basic", "rest_api = true", .readWrite),
    ])
    func explicit(auth: String, line: String, access: RESTAPIAccess) throws {
        #expect(try parse(listener(auth: auth, line)).listeners.first?.restAPI == access)
    }

    @Test func bodySize() throws {
        #expect(try parse(listener("rest_max_body_size = \"1MiB\"")).listeners.first?.restMaxBodySize == 1 << 20)
        let tooSmall = try parseError(listener("rest_max_body_size = 10"))
        #expect(tooSmall.keyPath == "listener \"lan\".rest_max_body_size")
        #expect(tooSmall.message == "must be between 1KiB and 1GiB, got 10")
    }

    @Test func notABoolean() throws {
        let error = try parseError(listener("rest_api = \"yes\""))
        #expect(error.keyPath == "listener \"lan\".rest_api")
        #expect(error.message == "must be true or false, got string")
    }

    @Test func bodySizeWithoutTheAPI() throws {
        let error = try parseError(listener("rest_api = false\nrest_max_body_size = \"1MiB\""))
        #expect(error.keyPath == "listener \"lan\".rest_max_body_size")
        #expect(error.message == "`rest_max_body_size` is only used with rest_api = true")
    }
}
