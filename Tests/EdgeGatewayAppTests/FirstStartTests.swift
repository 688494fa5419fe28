import EdgeConfig
import EdgeCredentials
import EdgeGatewayTestSupport
import EdgeIdentity
import EdgeReplication
import Foundation
import Hummingbird
import HummingbirdTesting
import ListenerUsersFile
import Logging
import Synchronization
import Testing
import UpstreamDialer

@testable import EdgeGatewayApp

/// The shipped `config/edge-gateway.toml`, run in-process as it is: only where it lives (data directory) and
/// where it listens (loopback, free ports, no DNS-SD) are overridden, through the same environment variables an
/// operator would use.
@Suite("First start with the shipped configuration")
struct FirstStartTests {
    static let noUsersReason = "no users: add one with `edge-gateway users add NAME`"

    @Test("the shipped configuration comes up: listener refusing everyone with 401, degraded with the advice")
    func shippedConfigurationComesUp() async throws {
        let gateway = try ShippedGateway()
        try await gateway.run { client in
            let listener = try await gateway.waitForListener(client) { $0.details["state"] == "running" }
            try await gateway.log.waitForMessage(containing: "docker compose exec gateway edge-gateway pair")
            #expect(listener.status == .degraded)
            #expect(listener.reason == Self.noUsersReason)
            #expect(listener.details["users"] == .integer(0))
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                let report = try JSONDecoder().decode(HealthMonitor.Report.self, from: Data(buffer: response.body))
                #expect(report.status == .degraded)
                #expect(report.components.first { $0.kind == .store }?.status == .up)
            }
            let refusal = await gateway.pushError(user: "alice", password: "s3cret")
            guard case .upgradeRefused(_, 401, _, _, _) = refusal else {
                Issue.record("expected 401, got \(String(describing: refusal))")
                return
            }
            let anonymous = await gateway.pushError(user: nil, password: nil)
            guard case .upgradeRefused(_, 401, _, _, _) = anonymous else {
                Issue.record("expected 401, got \(String(describing: anonymous))")
                return
            }
        }
        #expect(gateway.log.messages(containing: Self.noUsersReason).count == 1)
        #expect(gateway.log.messages(containing: "pairing payload").count == 1)
        #expect(gateway.log.messages(containing: "docker compose exec gateway edge-gateway pair").count == 1)
    }

    @Test("a second start with the same data directory does not repeat the pairing hint")
    func pairingHintOnlyOnFirstStart() async throws {
        let gateway = try ShippedGateway()
        try await gateway.run { client in
            try await gateway.waitForListener(client) { $0.details["state"] == "running" }
            try await gateway.log.waitForMessage(containing: "docker compose exec gateway edge-gateway pair")
        }
        let again = try ShippedGateway(dataDirectory: gateway.dataDirectory)
        try await again.run { client in
            try await again.waitForListener(client) { $0.details["state"] == "running" }
            try await again.log.waitForMessage(containing: "pairing payload")
            // The hint would be logged right after the payload.
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(again.log.messages(containing: "docker compose exec gateway edge-gateway pair").isEmpty)
        #expect(again.log.messages(containing: "pairing payload").count == 1)
    }

    @Test("a user added while the gateway runs can sync without a restart; a broken users file keeps the old users")
    func userAddedWhileRunning() async throws {
        let gateway = try ShippedGateway()
        try await gateway.run { client in
            try await gateway.waitForListener(client) { $0.details["state"] == "running" }
            let before = await gateway.pushError(user: "alice", password: "s3cret")
            guard case .upgradeRefused(_, 401, _, _, _) = before else {
                Issue.record("expected 401 before any user exists, got \(String(describing: before))")
                return
            }

            // What `edge-gateway users add alice` writes, to the file the configuration names by default.
            try UsersFile.write(
                [ListenerUser(name: "alice", passwordHash: try PasswordHash.make(password: "s3cret"))],
                to: gateway.usersFile)
            let listener = try await gateway.waitForListener(client) { $0.details["users"] == .integer(1) }
            #expect(listener.status == .up)
            #expect(listener.reason == nil)
            let pushed = try await gateway.push(user: "alice", password: "s3cret", documents: 3)
            #expect(pushed.completed == 3)
            try await gateway.waitForStore(client, lastSequence: 3)

            // A broken edit is refused as a whole: alice keeps working, /health and the log say why.
            try Data("[[user]]\nname = \"bob\"\npassword = \"plain\"\n".utf8).write(
                to: URL(fileURLWithPath: gateway.usersFile))
            let refused = try await gateway.waitForListener(client) { $0.status == .degraded }
            let reason = try #require(refused.reason)
            #expect(reason.contains(gateway.usersFile))
            #expect(reason.contains("plain passwords are not accepted"))
            #expect(reason.contains("the 1 user(s) read before stay in force"))
            #expect(refused.details["users"] == .integer(1))
            let stillPushing = try await gateway.push(user: "alice", password: "s3cret", documents: 1, prefix: "again")
            #expect(stillPushing.completed == 1)

            // Removing the last user refuses everyone again.
            try UsersFile.write([], to: gateway.usersFile)
            let empty = try await gateway.waitForListener(client) { $0.details["users"] == .integer(0) }
            #expect(empty.reason == Self.noUsersReason)
            let after = await gateway.pushError(user: "alice", password: "s3cret")
            guard case .upgradeRefused(_, 401, _, _, _) = after else {
                Issue.record("expected 401 once the user is removed, got \(String(describing: after))")
                return
            }
        }
        let refusals = gateway.log.entries.filter { $0.level == .error && $0.message.contains("users file refused") }
        #expect(refusals.count == 1)
        #expect(refusals.first?.message.contains(gateway.usersFile) == true)
    }

    @Test("a malformed users file at start: the listener serves, refuses everyone and names the file")
    func malformedUsersFileAtStart() async throws {
        let gateway = try ShippedGateway()
        try FileManager.default.createDirectory(at: gateway.dataDirectory, withIntermediateDirectories: true)
        try Data("[[user]\nname = \"alice\"\n".utf8).write(to: URL(fileURLWithPath: gateway.usersFile))
        try await gateway.run { client in
            let listener = try await gateway.waitForListener(client) { $0.details["state"] == "running" }
            #expect(listener.status == .degraded)
            let reason = try #require(listener.reason)
            #expect(reason.hasPrefix("users file refused: \(gateway.usersFile)"))
            #expect(reason.hasSuffix("nobody can sign in until it is fixed"))
            let refusal = await gateway.pushError(user: "alice", password: "s3cret")
            guard case .upgradeRefused(_, 401, _, _, _) = refusal else {
                Issue.record("expected 401, got \(String(describing: refusal))")
                return
            }
        }
        let errors = gateway.log.entries.filter { $0.level == .error }
        #expect(errors.count == 1)
        #expect(errors.first?.message.contains(gateway.usersFile) == true)
        #expect(try String(contentsOfFile: gateway.usersFile, encoding: .utf8) == "[[user]\nname = \"alice\"\n")
    }

    @Test("an unreadable users file is refused with a line that names it and says how to fix it")
    func unreadableUsersFile() async throws {
        let gateway = try ShippedGateway()
        try FileManager.default.createDirectory(atPath: gateway.usersFile, withIntermediateDirectories: true)
        try await gateway.run { client in
            let listener = try await gateway.waitForListener(client) { $0.details["state"] == "running" }
            #expect(listener.status == .degraded)
            #expect(listener.reason?.contains("\(gateway.usersFile): is a directory, expected the users file") == true)
        }
    }

    @Test("a second gateway on the same listener port: its listener is down naming the port, the first serves on")
    func secondGatewayOnTheSamePort() async throws {
        let first = try ShippedGateway()
        try await first.run { firstClient in
            let running = try await first.waitForListener(firstClient) { $0.details["state"] == "running" }
            guard case .integer(let port) = running.details["port"] else {
                Issue.record("no port in \(running)")
                return
            }
            let second = try ShippedGateway(listenerPort: port)
            try await second.run { secondClient in
                let failed = try await second.waitForListener(secondClient) { $0.details["state"] == "failed" }
                #expect(failed.status == .down)
                #expect(
                    failed.reason
                        == "listener 'lan': port \(port) on 127.0.0.1 is already in use (another gateway or program "
                        + "listens there): stop it, or give this listener another port (port in its [[listener]], "
                        + "or EDGE_GATEWAY_LISTENER_LAN_PORT)")
                try await secondClient.execute(uri: "/health", method: .get) { response in
                    #expect(response.status == .serviceUnavailable)
                }
            }
            #expect(
                second.log.entries.filter { $0.level >= .error }.map(\.message) == [
                    "listener 'lan': port \(port) on 127.0.0.1 is already in use (another gateway or program "
                        + "listens there): stop it, or give this listener another port (port in its [[listener]], "
                        + "or EDGE_GATEWAY_LISTENER_LAN_PORT)"
                ])
            let stillRunning = try await first.waitForListener(firstClient) { $0.details["state"] == "running" }
            #expect(stillRunning.reason == Self.noUsersReason)
        }
    }
}

/// One in-process gateway on the shipped configuration, with its own data directory and recorded log.
final class ShippedGateway: Sendable {
    static let configurationFile = packageRoot.appendingPathComponent("config/edge-gateway.toml").path

    let dataDirectory: URL
    let listenerPort: Int
    /// The shipped file, or an edited copy of it.
    let configurationFile: String
    let log = LogRecorder()
    private let ownsDirectory: Bool

    init(dataDirectory: URL? = nil, listenerPort: Int = 0, configurationFile: String = ShippedGateway.configurationFile)
        throws
    {
        self.dataDirectory =
            dataDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("edge-first-\(UUID().uuidString)")
        ownsDirectory = dataDirectory == nil
        self.listenerPort = listenerPort
        self.configurationFile = configurationFile
    }

    deinit {
        if ownsDirectory {
            try? FileManager.default.removeItem(at: dataDirectory)
        }
    }

    /// Where `users add` writes by default: the configuration names no users_file.
    var usersFile: String { dataDirectory.appendingPathComponent("users.toml").path }

    /// Loaded as `serve` loads it: an entry whose file cannot be used is left out and reported, not refused.
    func configuration() throws -> GatewayConfiguration {
        try ConfigurationLoader.load(
            file: configurationFile,
            environment: [
                "EDGE_GATEWAY_DATA_DIR": dataDirectory.path,
                "EDGE_GATEWAY_OPS_PORT": "0",
                "EDGE_GATEWAY_LISTENER_LAN_INTERFACE": "127.0.0.1",
                "EDGE_GATEWAY_LISTENER_LAN_PORT": "\(listenerPort)",
                // Tests never advertise on the host's network.
                "EDGE_GATEWAY_LISTENER_LAN_DNS_SD": "false",
            ],
            unusableFiles: .disableEntry)
    }

    func run(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let application = try await buildApplication(configuration: try configuration(), logger: log.logger)
        try await application.test(.live) { client in try await body(client) }
    }

    @discardableResult
    func waitForListener(
        _ client: some TestClientProtocol, _ condition: (ComponentHealth) -> Bool
    ) async throws -> ComponentHealth {
        let listener = try await UpstreamTests.waitFor(.listener, in: client, condition)
        if case .integer(let bound) = listener.details["port"] {
            port.withLock { $0 = bound }
        }
        return listener
    }

    func waitForStore(_ client: some TestClientProtocol, lastSequence: Int) async throws {
        try await UpstreamTests.waitFor(.store, in: client) { $0.details["lastSequence"] == .integer(lastSequence) }
    }

    /// Pushes `documents` new documents over wss:// with the pinned certificate, as a device would.
    func push(
        user: String?, password: String?, documents: Int, prefix: String = "doc"
    ) async throws -> ActiveReplicator.Status {
        let identity = try TLSIdentity.loadOrCreateSelfSigned(
            directory: dataDirectory.appendingPathComponent("identity").path, commonName: "unused",
            logger: Logger(label: "device", factory: { _ in SwiftLogNoOpLogHandler() }))
        return try await pushDocuments(
            port: try boundPort(), pinning: identity, user: user, password: password, documents: documents,
            prefix: prefix)
    }

    /// The dial error a push ends with; nil if it succeeded or failed otherwise (recorded as an issue).
    func pushError(user: String?, password: String?) async -> UpstreamDialError? {
        await dialError { _ = try await push(user: user, password: password, documents: 1, prefix: "refused") }
    }

    /// The listener's bound port, as /health last reported it.
    private let port = Mutex<Int?>(nil)

    private func boundPort() throws -> Int {
        guard let port = port.withLock({ $0 }) else {
            Issue.record("push before /health reported the listener's port")
            throw CancellationError()
        }
        return port
    }
}

/// Keeps every log entry, to check what an operator would read.
final class LogRecorder: Sendable {
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: Logger.Metadata
    }

    private let recorded = Mutex<[Entry]>([])

    var entries: [Entry] { recorded.withLock { $0 } }

    var logger: Logger {
        Logger(label: "first-start") { _ in Handler(recorder: self) }
    }

    func messages(containing text: String) -> [String] {
        entries.map(\.message).filter { $0.contains(text) }
    }

    /// Waits up to 10 s for a message containing `text`: services log concurrently with the test.
    func waitForMessage(containing text: String) async throws {
        for _ in 0..<100 {
            if !messages(containing: text).isEmpty { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("nothing logged containing \(text)")
    }

    func append(_ entry: Entry) {
        recorded.withLock { $0.append(entry) }
    }

    struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            recorder.append(
                Entry(
                    level: event.level, message: event.message.description,
                    metadata: metadata.merging(event.metadata ?? [:]) { $1 }))
        }
    }
}
