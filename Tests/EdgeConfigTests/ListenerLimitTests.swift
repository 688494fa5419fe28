import Testing

@testable import EdgeConfig

@Suite("Listener limits: message size, idle timeout and heartbeat")
struct ListenerLimitTests {
    private func listener(_ extraKeys: String) -> String {
        minimalTOML.replacingOccurrences(of: "auth = \"none\"", with: "auth = \"none\"\n" + extraKeys)
    }

    @Test func defaults() throws {
        let settings = try #require(try parse(minimalTOML).listeners.first)
        #expect(settings.maxMessageSize == 64 << 20)
        #expect(settings.idleTimeout == .seconds(900))
        #expect(settings.heartbeat == .seconds(300))
    }

    @Test(arguments: [
        ("max_message_size = 2097152", 2 << 20),
        ("max_message_size = \"20MB\"", 20_000_000),
        ("max_message_size = \"64MiB\"", 64 << 20),
        ("max_message_size = \"1024 KiB\"", 1 << 20),
        ("max_message_size = \"1GiB\"", 1 << 30),
    ])
    func messageSizes(line: String, bytes: Int) throws {
        #expect(try parse(listener(line)).listeners.first?.maxMessageSize == bytes)
    }

    @Test func messageSizeOutOfRange() throws {
        let error = try parseError(listener("max_message_size = \"512KiB\""))
        #expect(error.line == 7)
        #expect(error.keyPath == "listener \"lan\".max_message_size")
        #expect(error.message == "must be between 1MiB and 1GiB, got 512KiB")
    }

    @Test(arguments: ["\"20 megabytes\"", "\"MB\"", "-5", "1.5", "\"99999999999999999999GB\""])
    func messageSizeNotASize(value: String) throws {
        let error = try parseError(listener("max_message_size = \(value)"))
        #expect(error.keyPath == "listener \"lan\".max_message_size")
        #expect(error.message.hasPrefix("must be a size such as 1048576 (bytes), \"512KiB\", \"20MB\" or \"64MiB\""))
    }

    @Test(
        arguments: [
            ("idle_timeout = \"30m\"", Duration.seconds(1_800)),
            ("idle_timeout = 301", .seconds(301)),
            ("idle_timeout = \"off\"", nil),
            ("idle_timeout = 0", nil),
        ] as [(String, Duration?)])
    func idleTimeouts(line: String, timeout: Duration?) throws {
        #expect(try parse(listener(line)).listeners.first?.idleTimeout == timeout)
    }

    @Test func idleTimeoutMustOutlastTheHeartbeat() throws {
        let error = try parseError(listener("idle_timeout = \"5m\""))
        #expect(error.line == 7)
        #expect(error.keyPath == "listener \"lan\".idle_timeout")
        #expect(error.message == "must be longer than Couchbase Lite's 5m heartbeat, or \"off\"; got 5m")
    }

    @Test func idleTimeoutNotADuration() throws {
        let error = try parseError(listener("idle_timeout = \"never\""))
        #expect(error.keyPath == "listener \"lan\".idle_timeout")
        #expect(error.message.hasPrefix("must be a duration"))
    }

    @Test(
        arguments: [
            ("heartbeat = \"30s\"", Duration.seconds(30)),
            ("heartbeat = 2", .seconds(2)),
            ("heartbeat = \"1s\"", .seconds(1)),
            ("heartbeat = \"off\"", nil),
            ("heartbeat = 0", nil),
        ] as [(String, Duration?)])
    func heartbeats(line: String, heartbeat: Duration?) throws {
        #expect(try parse(listener(line)).listeners.first?.heartbeat == heartbeat)
    }

    @Test func heartbeatBelowASecond() throws {
        let error = try parseError(listener("heartbeat = \"500ms\""))
        #expect(error.line == 7)
        #expect(error.keyPath == "listener \"lan\".heartbeat")
        #expect(error.message == "must be at least 1s, or \"off\"; got 500ms")
    }

    @Test(arguments: ["\"often\"", "-5", "true"])
    func heartbeatNotADuration(value: String) throws {
        let error = try parseError(listener("heartbeat = \(value)"))
        #expect(error.keyPath == "listener \"lan\".heartbeat")
        #expect(error.message.hasPrefix("must be a duration"))
    }
}
