import EdgeGatewayTestSupport
import Foundation
import Testing

/// The commands of the container's first start, run as the container runs them: the configuration from
/// $EDGE_GATEWAY_CONFIG (the repository's config/edge-gateway.toml, unmodified) and the data from
/// $EDGE_GATEWAY_DATA_DIR, nothing else prepared.
/// Whether the gateway can be started as uid 65534, to see files and directories as the container's user would.
let canRunAsAnotherUser = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

@Suite("First start commands with the shipped configuration")
struct FirstStartCommandTests {
    static let shippedConfiguration = packageRoot.appendingPathComponent("config/edge-gateway.toml").path

    /// The container's environment, on loopback ports of this test and without DNS-SD.
    static func environment(dataDirectory: URL, opsPort: Int, listenerPort: Int) -> [String: String] {
        [
            "EDGE_GATEWAY_CONFIG": shippedConfiguration,
            "EDGE_GATEWAY_DATA_DIR": dataDirectory.path,
            "EDGE_GATEWAY_OPS_PORT": "\(opsPort)",
            "EDGE_GATEWAY_LISTENER_LAN_INTERFACE": "127.0.0.1",
            "EDGE_GATEWAY_LISTENER_LAN_PORT": "\(listenerPort)",
            "EDGE_GATEWAY_LISTENER_LAN_DNS_SD": "false",
        ]
    }

    @Test("config check accepts the shipped file as it is and mentions that no user exists yet")
    func configCheck() async throws {
        let outcome = try await EdgeGatewayExecutable.run(["config", "check", Self.shippedConfiguration])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(
            outcome.standardOutput.contains("OK (node \"site-gateway\", 1 database(s), 1 listener(s), 0 upstream(s))"))
        #expect(outcome.standardOutput.contains("has no users yet"))
    }

    @Test("pair and users add find the configuration and the data directory through the environment")
    func pairAndUsersAddWithoutOptions() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data")
        let environment = Self.environment(dataDirectory: data, opsPort: 4985, listenerPort: 4984)

        let pair = try await EdgeGatewayExecutable.run(["pair", "--format", "json"], environment: environment)
        #expect(pair.status == 0, "\(pair.standardError)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(pair.standardOutput.utf8)) as? [String: Any])
        #expect((json["payload"] as? String)?.hasPrefix("edgegw://pair?") == true)
        #expect((json["urls"] as? [String])?.first == "wss://127.0.0.1:4984/inventory")
        #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent("identity/identity-cert.pem").path))

        let passwordFile = directory.appendingPathComponent("pw").path
        try "s3cret\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        // Before the first start too: the data directory is created for the users file.
        let beforeFirstStart = Self.environment(
            dataDirectory: directory.appendingPathComponent("fresh"), opsPort: 4985, listenerPort: 4984)
        let early = try await EdgeGatewayExecutable.run(
            ["users", "add", "bob", "--password-file", passwordFile], environment: beforeFirstStart)
        #expect(early.status == 0, "\(early.standardError)")
        #expect(
            try await EdgeGatewayExecutable.run(["users", "list"], environment: beforeFirstStart).standardOutput
                == "bob\n")

        let added = try await EdgeGatewayExecutable.run(
            ["users", "add", "alice", "--password-file", passwordFile], environment: environment)
        #expect(added.status == 0, "\(added.standardError)")
        let usersFile = data.appendingPathComponent("users.toml").path
        #expect(added.standardOutput.contains("added alice to \(usersFile)"))
        let listed = try await EdgeGatewayExecutable.run(["users", "list"], environment: environment)
        #expect(listed.standardOutput == "alice\n")
    }

    @Test("the gateway serves on the shipped file, takes a user added by the CLI without restart, survives SIGHUP")
    func serveAddUserAndHangUp() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data")
        let environment = Self.environment(
            dataDirectory: data, opsPort: try freeLoopbackPort(), listenerPort: try freeLoopbackPort())

        let gateway = try EdgeGatewayExecutable.start(["serve"], environment: environment)
        defer { if gateway.process.isRunning { gateway.process.terminate() } }

        let degraded = try await Self.waitForHealth(environment: environment, gateway: gateway) {
            $0.contains("listener lan: no users: add one with `edge-gateway users add NAME`")
        }
        #expect(degraded.hasPrefix("healthy: HTTP 200, status degraded"))

        let passwordFile = directory.appendingPathComponent("pw").path
        try "s3cret\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let added = try await EdgeGatewayExecutable.run(
            ["users", "add", "alice", "--password-file", passwordFile], environment: environment)
        #expect(added.status == 0, "\(added.standardError)")
        let up = try await Self.waitForHealth(environment: environment, gateway: gateway) {
            $0.hasPrefix("healthy: HTTP 200, status up")
        }
        #expect(!up.contains("no users"))

        kill(gateway.process.processIdentifier, SIGHUP)
        try await Task.sleep(for: .milliseconds(500))
        #expect(gateway.process.isRunning)
        try await Self.waitForHealth(environment: environment, gateway: gateway) {
            $0.hasPrefix("healthy: HTTP 200, status up")
        }

        kill(gateway.process.processIdentifier, SIGTERM)
        await gateway.process.waitForExit()
        #expect(gateway.process.terminationStatus == 0)
        let logs = String(decoding: gateway.standardErrorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let lines = logs.split(separator: "\n")
        #expect(lines.filter { $0.contains("no users: add one with `edge-gateway users add NAME`") }.count == 1)
        #expect(lines.filter { $0.contains("docker compose exec gateway edge-gateway pair") }.count == 1)
        #expect(lines.filter { $0.contains("msg=\"users loaded\"") || $0.contains("msg=users loaded") }.count >= 1)
        #expect(lines.contains { $0.contains("SIGHUP: reloading") })
    }

    @Test("a second gateway on the same ops port exits with one line naming the port and the fix")
    func secondGatewayOnTheOpsPort() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let opsPort = try freeLoopbackPort()
        let first = Self.environment(
            dataDirectory: directory.appendingPathComponent("first"), opsPort: opsPort,
            listenerPort: try freeLoopbackPort())
        let gateway = try EdgeGatewayExecutable.start(["serve"], environment: first)
        defer { if gateway.process.isRunning { gateway.process.terminate() } }
        try await Self.waitForHealth(environment: first, gateway: gateway) { $0.hasPrefix("healthy") }

        let second = Self.environment(
            dataDirectory: directory.appendingPathComponent("second"), opsPort: opsPort,
            listenerPort: try freeLoopbackPort())
        let clash = try await EdgeGatewayExecutable.run(["serve"], environment: second)
        #expect(clash.status == 1)
        let critical = clash.standardError.split(separator: "\n").filter { $0.contains("level=critical") }
        #expect(critical.count == 1)
        #expect(
            critical.first?.contains(
                "ops port \(opsPort) on 127.0.0.1 is already in use (is another gateway running on this host?): "
                    + "stop it, or set another port with [ops] port or EDGE_GATEWAY_OPS_PORT") == true,
            "\(clash.standardError)")
        // Refused before its data directory was created or opened.
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("second").path))
        #expect(gateway.process.isRunning)
    }

    @Test(
        "a data directory owned by another user: the node stays up, health names it and the chown, nothing touched",
        .enabled(if: canRunAsAnotherUser, "needs root and /usr/bin/setpriv to run the gateway as another user"))
    func dataDirectoryOfAnotherUser() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Readable by everyone (so the configuration and the binary's directory can be reached), writable by root.
        chmod(directory.path, 0o755)
        let data = directory.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        chmod(data.path, 0o755)
        try "keep me\n".write(to: data.appendingPathComponent("node-id"), atomically: true, encoding: .utf8)
        let before = try Self.snapshot(data)
        let environment = Self.environment(
            dataDirectory: data, opsPort: try freeLoopbackPort(), listenerPort: try freeLoopbackPort())

        let problem =
            "data directory \(data.path) is not writable by the gateway (uid 65534; it has uid 0, mode 755); nothing "
            + "was changed in it. Fix the owner: `chown -R 65534 \(data.path)` on the host"
        let logs = try await Self.serveAsAnotherUser(environment: environment, expectingHealth: problem)
        let errors = logs.split(separator: "\n").filter { $0.contains("level=error") || $0.contains("level=critical") }
        #expect(errors.count == 1, "\(logs)")
        #expect(errors.first?.contains(problem) == true, "\(logs)")
        #expect(errors.first?.contains("then restart the gateway") == true)
        #expect(try Self.snapshot(data) == before)
    }

    @Test(
        "a database file left by another user in a writable data directory: reported before it is opened",
        .enabled(if: canRunAsAnotherUser, "needs root and /usr/bin/setpriv to run the gateway as another user"))
    func databaseOfAnotherUser() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        chmod(directory.path, 0o755)
        let data = directory.appendingPathComponent("data")
        let databases = data.appendingPathComponent("databases")
        try FileManager.default.createDirectory(at: databases, withIntermediateDirectories: true)
        chown(data.path, 65534, 65534)
        chown(databases.path, 65534, 65534)
        let database = databases.appendingPathComponent("inventory.sqlite3")
        try Data("left by root".utf8).write(to: database)
        chmod(database.path, 0o644)
        let before = try Self.snapshot(data)
        let environment = Self.environment(
            dataDirectory: data, opsPort: try freeLoopbackPort(), listenerPort: try freeLoopbackPort())

        let problem =
            "\(database.path) in the data directory is not writable by the gateway (uid 65534; it has uid 0, mode 644)"
        let logs = try await Self.serveAsAnotherUser(environment: environment, expectingHealth: problem)
        #expect(logs.split(separator: "\n").filter { $0.contains("level=error") && $0.contains(problem) }.count == 1)
        #expect(try Self.snapshot(data) == before)
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("node-id").path))
    }

    @Test(
        "a users file the gateway's user cannot read: the node serves, health names the file and the fix",
        .enabled(if: canRunAsAnotherUser, "needs root and /usr/bin/setpriv to run the gateway as another user"))
    func unreadableUsersFile() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        chmod(directory.path, 0o755)
        let data = directory.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        chown(data.path, 65534, 65534)
        // Written by root, e.g. `users add` run on the host without --user: mode 600, owned by root.
        let usersFile = data.appendingPathComponent("users.toml").path
        try "# nobody\n".write(toFile: usersFile, atomically: true, encoding: .utf8)
        chmod(usersFile, 0o600)
        let environment = Self.environment(
            dataDirectory: data, opsPort: try freeLoopbackPort(), listenerPort: try freeLoopbackPort())

        let gateway = try EdgeGatewayExecutable.start(
            ["--reuid=65534", "--regid=65534", "--clear-groups", EdgeGatewayExecutable.url.path, "serve"],
            environment: environment, executable: URL(fileURLWithPath: "/usr/bin/setpriv"))
        defer { if gateway.process.isRunning { gateway.process.terminate() } }
        let health = try await Self.waitForHealth(environment: environment, gateway: gateway) {
            $0.contains("listener lan:")
        }
        #expect(health.hasPrefix("healthy: HTTP 200, status degraded"))
        #expect(
            health.contains(
                "listener lan: users file refused: \(usersFile): the users file is not readable by the gateway "
                    + "(uid 65534): give it to that user (`chown 65534 \(usersFile)`, mode 600), or write it with "
                    + "`edge-gateway users add` run as that user; nobody can sign in until it is fixed"),
            "\(health)")
        // The fix the line gives, applied while the gateway runs: the file is re-read, no restart.
        chown(usersFile, 65534, 65534)
        let fixed = try await Self.waitForHealth(environment: environment, gateway: gateway) {
            $0.contains("listener lan: no users: add one")
        }
        #expect(!fixed.contains("users file refused"), "\(fixed)")
        kill(gateway.process.processIdentifier, SIGTERM)
        await gateway.process.waitForExit()
        let logs = String(decoding: gateway.standardErrorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(logs.split(separator: "\n").filter { $0.contains("level=error") && $0.contains(usersFile) }.count == 1)
    }

    @Test("a configuration naming a missing certificate file: serve reports the listener down, config check fails")
    func missingCertificateFile() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let shipped = try String(contentsOfFile: Self.shippedConfiguration, encoding: .utf8)
        let file = directory.appendingPathComponent("edge-gateway.toml")
        try shipped.replacingOccurrences(of: "tls = \"self-signed\"", with: "tls = \"file\"")
            .replacingOccurrences(of: "# tls_certificate = ", with: "tls_certificate = ")
            .replacingOccurrences(of: "# tls_key = ", with: "tls_key = ")
            .write(to: file, atomically: true, encoding: .utf8)
        let environment = Self.environment(
            dataDirectory: directory.appendingPathComponent("data"), opsPort: try freeLoopbackPort(),
            listenerPort: try freeLoopbackPort()
        ).merging(["EDGE_GATEWAY_CONFIG": file.path]) { $1 }
        let problem =
            "listener \"lan\".tls_certificate: file not found: \(directory.path)/tls/gateway.crt; create it, "
            + "or correct the path"

        let check = try await EdgeGatewayExecutable.run(["config", "check", file.path])
        #expect(check.status == 2)
        #expect(check.standardError.contains(problem), "\(check.standardError)")

        let gateway = try EdgeGatewayExecutable.start(["serve"], environment: environment)
        defer { if gateway.process.isRunning { gateway.process.terminate() } }
        let health = try await Self.waitForHealth(environment: environment, gateway: gateway) {
            $0.contains("listener lan:")
        }
        #expect(health.hasPrefix("unhealthy: HTTP 503, status down"), "\(health)")
        #expect(health.contains(problem), "\(health)")
        kill(gateway.process.processIdentifier, SIGTERM)
        await gateway.process.waitForExit()
        #expect(gateway.process.terminationStatus == 0)
        let logs = String(decoding: gateway.standardErrorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errors = logs.split(separator: "\n").filter { $0.contains("level=error") || $0.contains("level=critical") }
        #expect(errors.count == 1, "\(logs)")
        // logfmt escapes the quotes around the listener's name.
        #expect(errors.first?.contains(problem.replacingOccurrences(of: "\"", with: "\\\"")) == true, "\(logs)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("tls").path))
    }

    /// Runs `serve` as uid 65534 until `edge-gateway health` reports `problem` (unhealthy), then stops it with
    /// SIGTERM; returns its log.
    static func serveAsAnotherUser(environment: [String: String], expectingHealth problem: String) async throws
        -> String
    {
        let gateway = try EdgeGatewayExecutable.start(
            ["--reuid=65534", "--regid=65534", "--clear-groups", EdgeGatewayExecutable.url.path, "serve"],
            environment: environment, executable: URL(fileURLWithPath: "/usr/bin/setpriv"))
        defer { if gateway.process.isRunning { gateway.process.terminate() } }
        let health = try await waitForHealth(environment: environment, gateway: gateway) { $0.contains("store ") }
        #expect(health.hasPrefix("unhealthy: HTTP 503, status down"), "\(health)")
        #expect(health.contains("store inventory: \(problem)"), "\(health)")
        #expect(health.contains("listener lan: not started: the store is down"), "\(health)")
        kill(gateway.process.processIdentifier, SIGTERM)
        await gateway.process.waitForExit()
        #expect(gateway.process.terminationStatus == 0)
        return String(decoding: gateway.standardErrorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    /// Names, sizes, modification times and contents of everything under `directory`.
    static func snapshot(_ directory: URL) throws -> [String] {
        let paths = [""] + (FileManager.default.enumerator(atPath: directory.path)?.compactMap { $0 as? String } ?? [])
        return paths.sorted().map { relative in
            let path = directory.appendingPathComponent(relative).path
            var info = stat()
            guard lstat(path, &info) == 0 else { return "\(relative): missing" }
            let contents = (info.st_mode & S_IFMT) == S_IFREG ? FileManager.default.contents(atPath: path) : nil
            return "\(relative): \(info.st_size) bytes, mtime \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec), "
                + "contents \(contents.map { $0.base64EncodedString() } ?? "-")"
        }
    }

    /// Runs `edge-gateway health` until its line satisfies `condition` (10 s at most).
    @discardableResult
    static func waitForHealth(
        environment: [String: String], gateway: EdgeGatewayExecutable.Running, _ condition: (String) -> Bool
    ) async throws -> String {
        var last = ""
        for _ in 0..<100 where gateway.process.isRunning {
            last = try await EdgeGatewayExecutable.run(["health"], environment: environment).standardOutput
            if condition(last) { return last }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("health never matched; last: \(last)")
        throw CancellationError()
    }
}
