import EdgeGatewayTestSupport
import Testing

@testable import EdgeConfig

@Suite("Upstream URL, trust and authentication")
struct UpstreamValidationTests {
    private func upstream(_ keys: String, url: String = "wss://sync.example.com:4984/inventory")
        -> String
    {
        minimalTOML + """

            [[upstream]]
            name = "cloud"
            database = "inventory"
            url = "\(url)"
            \(keys)
            """
    }

    /// The same rules as the listener's `heartbeat` (ListenerLimitTests): a key means one thing everywhere.
    @Test(
        arguments: [
            ("heartbeat = \"30s\"", Duration.seconds(30)),
            ("heartbeat = \"off\"", nil),
            ("heartbeat = 0", nil),
        ] as [(String, Duration?)])
    func heartbeats(line: String, heartbeat: Duration?) throws {
        #expect(try parse(upstream(line)).upstreams.first?.heartbeat == heartbeat)
    }

    @Test func heartbeatBelowASecond() throws {
        let error = try #require(throws: ConfigurationError.self) { try parse(upstream("heartbeat = \"500ms\"")) }
        #expect(error.keyPath == "upstream \"cloud\".heartbeat")
        #expect(error.message == "must be at least 1s, or \"off\"; got 500ms")
    }

    @Test func defaults() throws {
        let settings = try #require(try parse(upstream("")).upstreams.first)
        #expect(settings.direction == .pushAndPull)
        #expect(settings.continuous)
        #expect(settings.collections == [.default])
        #expect(settings.authentication == .none)
        #expect(settings.serverTrust == .certificateAuthorities([]))
        #expect(settings.heartbeat == .seconds(300))
        #expect(settings.maxAttempts == 0)
        #expect(settings.maxAttemptWait == .seconds(300))
        #expect(settings.conflictResolver == .default)
        #expect(settings.remoteUUID == nil)
    }

    @Test(arguments: [
        ("https://sync.example.com/inventory", "must be a ws:// or wss:// URL"),
        ("wss:///inventory", "must name a host"),
        ("wss://user:pw@sync.example.com/inventory", "must not contain credentials"),
        ("wss://sync.example.com", "must end with the remote database name"),
        (
            "wss://sync.example.com/inventory/_blipsync",
            "must end with the database name; /_blipsync is appended"
        ),
        ("wss://sync.example.com/inventory?x=1", "must not have a query or fragment"),
    ])
    func badURLs(url: String, expectedMessage: String) throws {
        let error = try parseError(upstream("", url: url))
        #expect(error.line == 12)
        #expect(error.keyPath == "upstream \"cloud\".url")
        #expect(error.message.hasPrefix(expectedMessage))
        #expect(!error.description.contains("pw@"))
    }

    @Test func badDirection() throws {
        let error = try parseError(upstream("type = \"both\""))
        #expect(error.line == 13)
        #expect(error.allowedValues == ["push", "pull", "push-and-pull"])
    }

    @Test func channelsNeedPull() throws {
        let error = try parseError(upstream("type = \"push\"\nchannels = [\"a\"]"))
        #expect(error.line == 14)
        #expect(error.keyPath == "upstream \"cloud\".channels")
    }

    @Test func collectionsMustBelongToTheDatabase() throws {
        let error = try parseError(upstream("collections = [\"store.orders\"]"))
        #expect(error.keyPath == "upstream \"cloud\".collections[0]")
        #expect(error.allowedValues == ["_default._default"])
    }

    @Test func trustSettingsNeedTLS() throws {
        let error = try parseError(
            upstream("server_trust = \"self-signed-only\"", url: "ws://peer.local:4984/inventory"))
        #expect(error.line == 13)
        #expect(error.message == "`server_trust` is only used with wss:// URLs")
    }

    @Test func pinnedDigestIsNormalised() throws {
        let digest =
            "9F:86:D0:81:88:4C:7D:65:9A:2F:EA:A0:C5:5A:D0:15:A3:BF:4F:1B:2B:0B:82:2C:D1:5D:6C:15:B0:F0:0A:08"
        let settings = try #require(
            try parse(upstream("server_trust = \"pinned\"\npinned_sha256 = \"\(digest)\""))
                .upstreams.first
        )
        #expect(
            settings.serverTrust
                == .pinnedSHA256("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
        )
    }

    @Test func pinnedNeedsAPin() throws {
        let error = try parseError(upstream("server_trust = \"pinned\""))
        #expect(error.keyPath == "upstream \"cloud\".server_trust")
        #expect(
            error.message == "server_trust = \"pinned\" needs pinned_certificate or pinned_sha256")
    }

    @Test func badPinnedDigest() throws {
        let error = try parseError(upstream("server_trust = \"pinned\"\npinned_sha256 = \"abc\""))
        #expect(error.line == 14)
        #expect(error.keyPath == "upstream \"cloud\".pinned_sha256")
    }

    @Test func basicAuthWithoutPassword() throws {
        let error = try parseError(upstream("username = \"store\""))
        #expect(error.keyPath == "upstream \"cloud\".password_file")
        #expect(error.message.contains("EDGE_GATEWAY_UPSTREAM_<NAME>_PASSWORD"))
    }

    @Test func sessionAuthentication() throws {
        let directory = try TemporaryDirectory()
        try directory.write("session", "abc123\n")
        let settings = try #require(
            try parse(
                upstream("auth = \"session\"\nsession_id_file = \"session\""),
                baseDirectory: directory.path
            )
            .upstreams.first
        )
        #expect(
            settings.authentication
                == .session(cookieName: "SyncGatewaySession", sessionID: Secret("abc123")))
    }

    @Test func keysOfAnotherAuthModeAreRejected() throws {
        let error = try parseError(upstream("auth = \"none\"\nsession_id_file = \"session\""))
        #expect(error.line == 14)
        #expect(error.message == "`session_id_file` is only used with auth = \"session\"")
    }

    @Test func clientCertificateNeedsTLS() throws {
        let error = try parseError(
            upstream(
                "auth = \"client-cert\"\nclient_certificate = \"c.pem\"\nclient_key = \"k.pem\"",
                url: "ws://peer/inventory")
        )
        #expect(error.keyPath == "upstream \"cloud\".auth")
        #expect(error.message == "auth = \"client-cert\" requires a wss:// url")
    }

    @Test func durationsAndRetries() throws {
        let settings = try #require(
            try parse(
                upstream(
                    "heartbeat = 30\nmax_attempt_wait = \"2m\"\nmax_attempts = 5\ncontinuous = false"
                )
            ).upstreams.first
        )
        #expect(settings.heartbeat == .seconds(30))
        #expect(settings.maxAttemptWait == .seconds(120))
        #expect(settings.maxAttempts == 5)
        #expect(!settings.continuous)
    }
}
