import EdgeConfig
import EdgeCredentials
import EdgeGatewayTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import ListenerUsersFile
import Logging
import Testing

@testable import EdgeGatewayApp

/// Bad input an operator can give the appliance, on the shipped configuration edited as an operator would: the
/// node keeps its ops endpoint, the broken part is down (or degraded) in /health with a reason that names the file,
/// directory or port and the fix, the log says it once, and no data is touched.
@Suite("Bad input: the node stays up and names the fix")
struct BadInputTests {
    @Test("tls = \"file\" naming missing certificate files: the listener is down naming the file, the store serves")
    func missingCertificateFile() async throws {
        let site = try EditedSite { shipped in
            shipped.replacingOccurrences(of: "tls = \"self-signed\"", with: "tls = \"file\"")
                .replacingOccurrences(of: "# tls_certificate = ", with: "tls_certificate = ")
                .replacingOccurrences(of: "# tls_key = ", with: "tls_key = ")
        }
        let certificate = site.directory.appendingPathComponent("tls/gateway.crt").path
        let line = try site.line(startingWith: "tls_certificate = ")
        let expected =
            "\(site.configurationFile):\(line): listener \"lan\".tls_certificate: file not found: \(certificate); "
            + "create it, or correct the path (relative paths are resolved against \(site.directory.path)), "
            + "or remove the key"
        try await site.gateway.run { client in
            let report = try await Self.health(client, expectedStatus: .serviceUnavailable)
            #expect(report.status == .down)
            let listener = try #require(report.components.first { $0.kind == .listener })
            #expect(listener.name == "lan")
            #expect(listener.status == .down)
            #expect(listener.reason == expected)
            #expect(report.components.first { $0.kind == .store }?.status == .up)
            #expect(try await Self.page(client).contains(expected.htmlEscaped))
        }
        #expect(site.gateway.log.entries.filter { $0.level >= .error }.map(\.message) == [expected])
        #expect(!FileManager.default.fileExists(atPath: certificate))
        // Nothing was generated in place of the missing identity.
        let identity = site.gateway.dataDirectory.appendingPathComponent("identity")
        #expect(!FileManager.default.fileExists(atPath: identity.path))
    }

    @Test("certificate files that exist but do not load: the listener is down saying why, the node serves")
    func certificateFilesThatDoNotLoad() async throws {
        let site = try EditedSite { shipped in
            shipped.replacingOccurrences(of: "tls = \"self-signed\"", with: "tls = \"file\"")
                .replacingOccurrences(of: "# tls_certificate = ", with: "tls_certificate = ")
                .replacingOccurrences(of: "# tls_key = ", with: "tls_key = ")
        }
        let tls = site.directory.appendingPathComponent("tls")
        try FileManager.default.createDirectory(at: tls, withIntermediateDirectories: true)
        let certificate = tls.appendingPathComponent("gateway.crt")
        try "not a certificate\n".write(to: certificate, atomically: true, encoding: .utf8)
        try "not a key\n".write(to: tls.appendingPathComponent("gateway.key"), atomically: true, encoding: .utf8)
        try await site.gateway.run { client in
            let report = try await Self.health(client, expectedStatus: .serviceUnavailable)
            let listener = try #require(report.components.first { $0.kind == .listener })
            #expect(listener.status == .down)
            #expect(listener.reason?.hasPrefix("listener 'lan': TLS setup failed: ") == true, "\(listener)")
            #expect(report.components.first { $0.kind == .store }?.status == .up)
        }
        let errors = site.gateway.log.entries.filter { $0.level >= .error }
        #expect(errors.count == 1)
        #expect(errors.first?.message.hasPrefix("listener 'lan': TLS setup failed: ") == true)
        #expect(try String(contentsOf: certificate, encoding: .utf8) == "not a certificate\n")
    }

    @Test("an upstream whose password file is missing is down naming it; the listener serves on")
    func missingUpstreamPasswordFile() async throws {
        let site = try EditedSite { shipped in
            Self.uncommentingUpstream(shipped)
        }
        let passwordFile = site.directory.appendingPathComponent("secrets/upstream_password").path
        try await site.gateway.run { client in
            try await site.gateway.waitForListener(client) { $0.details["state"] == "running" }
            let report = try await Self.health(client, expectedStatus: .serviceUnavailable)
            let upstream = try #require(report.components.first { $0.kind == .upstream })
            #expect(upstream.name == "cloud")
            #expect(upstream.status == .down)
            let reason = try #require(upstream.reason)
            #expect(reason.hasPrefix("\(site.configurationFile):"))
            #expect(reason.contains("upstream \"cloud\".password_file: file not found: \(passwordFile); create it"))
            #expect(report.components.first { $0.kind == .listener }?.reason == FirstStartTests.noUsersReason)
            #expect(report.components.first { $0.kind == .store }?.status == .up)
        }
        let errors = site.gateway.log.entries.filter { $0.level >= .error }
        #expect(errors.count == 1)
        #expect(errors.first?.message.contains(passwordFile) == true)
        #expect(!FileManager.default.fileExists(atPath: passwordFile))
    }

    @Test("an upstream whose CA file is missing is down naming it")
    func missingUpstreamCAFile() async throws {
        let site = try EditedSite { shipped in
            Self.uncommentingUpstream(shipped).replacingOccurrences(
                of: "server_trust = \"ca\"", with: "server_trust = \"ca\"\nca_certificates = [\"tls/upstream-ca.pem\"]")
        }
        try FileManager.default.createDirectory(
            at: site.directory.appendingPathComponent("secrets"), withIntermediateDirectories: true)
        try "s3cret\n".write(
            to: site.directory.appendingPathComponent("secrets/upstream_password"), atomically: true, encoding: .utf8)
        let caFile = site.directory.appendingPathComponent("tls/upstream-ca.pem").path
        try await site.gateway.run { client in
            let upstream = try await UpstreamTests.waitFor(.upstream, in: client) { _ in true }
            #expect(upstream.status == .down)
            #expect(
                upstream.reason?.contains("upstream \"cloud\".ca_certificates[0]: file not found: \(caFile); create it")
                    == true, "\(String(describing: upstream.reason))")
            try await site.gateway.waitForListener(client) { $0.details["state"] == "running" }
        }
        #expect(site.gateway.log.entries.filter { $0.level >= .error }.count == 1)
    }

    @Test("a users_file that does not exist: the listener refuses everyone naming it, and takes it once it is written")
    func missingConfiguredUsersFile() async throws {
        let site = try EditedSite { shipped in
            shipped.replacingOccurrences(
                of: "# users_file = \"/var/lib/edge-gateway/users.toml\"", with: "users_file = \"users/users.toml\"")
        }
        let usersFile = site.directory.appendingPathComponent("users/users.toml").path
        try await site.gateway.run { client in
            let listener = try await site.gateway.waitForListener(client) { $0.details["state"] == "running" }
            #expect(listener.status == .degraded)
            #expect(
                listener.reason
                    == "users file refused: \(usersFile): the users file (users_file) does not exist: create it with "
                    + "`edge-gateway users add NAME`, or correct users_file (without it the users file is "
                    + "\(site.gateway.usersFile)); nobody can sign in until it is fixed")
            let refusal = await site.gateway.pushError(user: "alice", password: "s3cret")
            guard case .upgradeRefused(_, 401, _, _, _) = refusal else {
                Issue.record("expected 401, got \(String(describing: refusal))")
                return
            }

            try FileManager.default.createDirectory(
                at: site.directory.appendingPathComponent("users"), withIntermediateDirectories: true)
            try UsersFile.write(
                [ListenerUser(name: "alice", passwordHash: try PasswordHash.make(password: "s3cret"))], to: usersFile)
            let up = try await site.gateway.waitForListener(client) { $0.details["users"] == .integer(1) }
            #expect(up.status == .up)
            #expect(try await site.gateway.push(user: "alice", password: "s3cret", documents: 1).completed == 1)
        }
        let errors = site.gateway.log.entries.filter { $0.level >= .error }
        #expect(errors.count == 1)
        #expect(errors.first?.message.contains(usersFile) == true)
    }

    @Test("a malformed users file at start names its line; fixing it takes effect without a restart")
    func malformedUsersFileFixedWhileRunning() async throws {
        let gateway = try ShippedGateway()
        try FileManager.default.createDirectory(at: gateway.dataDirectory, withIntermediateDirectories: true)
        try Data("[[user]]\nname = \"alice\"\npassword = \"plain\"\n".utf8)
            .write(to: URL(fileURLWithPath: gateway.usersFile))
        try await gateway.run { client in
            let listener = try await gateway.waitForListener(client) { $0.details["state"] == "running" }
            #expect(listener.status == .degraded)
            #expect(
                listener.reason
                    == "users file refused: \(gateway.usersFile):3: user[0].password: plain passwords are not "
                    + "accepted; store a hash with `edge-gateway users add NAME`; nobody can sign in until it is fixed")
            let refusal = await gateway.pushError(user: "alice", password: "plain")
            guard case .upgradeRefused(_, 401, _, _, _) = refusal else {
                Issue.record("expected 401, got \(String(describing: refusal))")
                return
            }
            try UsersFile.write(
                [ListenerUser(name: "alice", passwordHash: try PasswordHash.make(password: "s3cret"))],
                to: gateway.usersFile)
            let fixed = try await gateway.waitForListener(client) { $0.status == .up }
            #expect(fixed.details["users"] == .integer(1))
            #expect(try await gateway.push(user: "alice", password: "s3cret", documents: 1).completed == 1)
        }
        let errors = gateway.log.entries.filter { $0.level >= .error }
        #expect(errors.count == 1)
        #expect(errors.first?.message.contains("\(gateway.usersFile):3") == true)
    }

    @Test("a data directory that is a file: the store and listener are down naming it, the ops endpoint serves")
    func dataDirectoryThatIsAFile() async throws {
        let gateway = try ShippedGateway()
        try Data("not a directory".utf8).write(to: gateway.dataDirectory)
        let before = try DirectorySnapshot(of: gateway.dataDirectory)
        let expected =
            "data directory \(gateway.dataDirectory.path) is a file, not a directory: move it away, or set data_dir / "
            + "EDGE_GATEWAY_DATA_DIR to a directory; then restart the gateway (`docker compose restart gateway`)"
        try await gateway.run { client in
            let report = try await Self.health(client, expectedStatus: .serviceUnavailable)
            #expect(report.status == .down)
            #expect(report.components.map(\.kind) == [.store, .listener])
            #expect(report.components.map(\.status) == [.down, .down])
            #expect(report.components[0].name == "inventory")
            #expect(report.components[0].reason == expected)
            #expect(report.components[1].reason == "not started: the store is down (see the store's reason)")
            let page = try await Self.page(client)
            #expect(page.contains(expected.htmlEscaped))
            #expect(page.contains("unknown: the data directory cannot be read"))
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/health/ready", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
            }
        }
        #expect(gateway.log.entries.filter { $0.level >= .error }.map(\.message) == [expected])
        #expect(try DirectorySnapshot(of: gateway.dataDirectory) == before)
    }

    @Test(
        "a data directory on a read-only mount: the store is down saying so, nothing in it changed",
        .enabled(if: BadInputTests.canMountTmpfs, "needs root and mount -t tmpfs"))
    func readOnlyDataDirectory() async throws {
        let first = try ShippedGateway()
        let data = first.dataDirectory
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        #expect(try Self.mount(["-t", "tmpfs", "-o", "size=8m", "tmpfs", data.path]) == 0)
        defer {
            _ = try? Self.mount(["umount", data.path])
            try? FileManager.default.removeItem(at: data)
        }
        try await first.run { client in
            try await first.waitForListener(client) { $0.details["state"] == "running" }
        }
        #expect(try Self.mount(["-o", "remount,ro", data.path]) == 0)
        let before = try DirectorySnapshot(of: data)

        let again = try ShippedGateway(dataDirectory: data)
        let expected =
            "data directory \(data.path) is on a read-only file system; nothing was changed in it. Mount the volume "
            + "read-write (no `:ro` on it in compose.yaml), then restart the gateway (`docker compose restart gateway`)"
        try await again.run { client in
            let report = try await Self.health(client, expectedStatus: .serviceUnavailable)
            #expect(report.components.first { $0.kind == .store }?.reason == expected)
            #expect(report.components.first { $0.kind == .listener }?.status == .down)
        }
        #expect(again.log.entries.filter { $0.level >= .error }.map(\.message) == [expected])
        #expect(try DirectorySnapshot(of: data) == before)
    }

    /// Whether this process may mount a tmpfs (root in CI's container), found by mounting one.
    static let canMountTmpfs: Bool = {
        guard geteuid() == 0 else { return false }
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("edge-ro-probe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: probe) }
        guard (try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: true)) != nil,
            (try? mount(["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe.path])) == 0
        else { return false }
        _ = try? mount(["umount", probe.path])
        return true
    }()

    /// Runs `mount` with `arguments`, or `umount` when they start with it.
    static func mount(_ arguments: [String]) throws -> Int32 {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments.first == "umount" ? arguments : ["mount"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test("a data directory whose databases cannot be opened: down naming it, nothing in it changed")
    func databasesThatCannotBeOpened() async throws {
        let first = try ShippedGateway()
        try await first.run { client in
            try await first.waitForListener(client) { $0.details["state"] == "running" }
        }
        // The databases directory replaced by a file, as a botched restore might leave it.
        let databases = first.dataDirectory.appendingPathComponent("databases")
        try FileManager.default.removeItem(at: databases)
        try Data("not a directory".utf8).write(to: databases)
        let before = try DirectorySnapshot(of: first.dataDirectory)

        let again = try ShippedGateway(dataDirectory: first.dataDirectory)
        try await again.run { client in
            let store = try await UpstreamTests.waitFor(.store, in: client) { _ in true }
            #expect(store.status == .down)
            let reason = try #require(store.reason)
            #expect(reason.hasPrefix("the data directory \(first.dataDirectory.path) cannot be used: "))
            #expect(reason.hasSuffix("then restart the gateway (`docker compose restart gateway`) once it is fixed"))
            let listener = try await UpstreamTests.waitFor(.listener, in: client) { _ in true }
            #expect(listener.status == .down)
        }
        #expect(again.log.entries.filter { $0.level >= .error }.count == 1)
        #expect(try DirectorySnapshot(of: first.dataDirectory) == before)
    }

    @Test("a second gateway on the same ops port is refused with one error before its data directory is touched")
    func secondGatewayOnTheOpsPort() async throws {
        let gateway = try ShippedGateway()
        let shipped = try gateway.configuration()
        try await withClosedLoopbackPort { port in
            var configuration = shipped
            configuration.ops.port = port
            await #expect {
                _ = try await buildApplication(configuration: configuration, logger: gateway.log.logger)
            } throws: { error in
                "\(error)"
                    == "ops port \(port) on 127.0.0.1 is already in use (is another gateway running on this host?): "
                    + "stop it, or set another port with [ops] port or EDGE_GATEWAY_OPS_PORT"
            }
        }
        #expect(!FileManager.default.fileExists(atPath: gateway.dataDirectory.path))
    }

    @Test("an ops address that is not this host's is refused with one line naming it")
    func opsAddressNotLocal() async throws {
        let gateway = try ShippedGateway()
        var configuration = try gateway.configuration()
        // TEST-NET-1 (RFC 5737): never assigned to a host.
        configuration.ops.address = "192.0.2.1"
        let refused = configuration
        await #expect {
            _ = try await buildApplication(configuration: refused, logger: gateway.log.logger)
        } throws: { error in
            "\(error)"
                == "ops address 192.0.2.1 is not an address of this host: set [ops] address or "
                + "EDGE_GATEWAY_OPS_ADDRESS to one of its addresses, 127.0.0.1 or 0.0.0.0"
        }
        #expect(!FileManager.default.fileExists(atPath: gateway.dataDirectory.path))
    }

    // MARK: Helpers

    /// The shipped file's commented [[upstream]] example, uncommented as its instructions say, with the password
    /// file in the site's directory rather than /run/secrets.
    static func uncommentingUpstream(_ shipped: String) -> String {
        shipped.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("#") && line.dropFirst().first.map({ $0.isLetter || $0 == "[" }) == true
                ? String(line.dropFirst()) : String(line)
        }
        .joined(separator: "\n")
        .replacingOccurrences(of: "\"/run/secrets/upstream_password\"", with: "\"secrets/upstream_password\"")
    }

    static func health(
        _ client: some TestClientProtocol, expectedStatus: HTTPResponse.Status
    ) async throws -> HealthMonitor.Report {
        try await client.execute(uri: "/health", method: .get) { response in
            #expect(response.status == expectedStatus)
            return try JSONDecoder().decode(HealthMonitor.Report.self, from: Data(buffer: response.body))
        }
    }

    static func page(_ client: some TestClientProtocol) async throws -> String {
        try await client.execute(uri: "/", method: .get) { response in
            #expect(response.status == .ok)
            return String(buffer: response.body)
        }
    }
}

/// An edited copy of the shipped configuration in a directory of its own (relative paths in it resolve there),
/// with a gateway on it.
final class EditedSite: Sendable {
    let directory: URL
    let configurationFile: String
    let gateway: ShippedGateway

    init(_ edit: (String) -> String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("edge-site-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        configurationFile = directory.appendingPathComponent("edge-gateway.toml").path
        let shipped = try String(contentsOfFile: ShippedGateway.configurationFile, encoding: .utf8)
        let edited = edit(shipped)
        #expect(edited != shipped, "the edit changed nothing")
        try edited.write(toFile: configurationFile, atomically: true, encoding: .utf8)
        gateway = try ShippedGateway(
            dataDirectory: directory.appendingPathComponent("data"), configurationFile: configurationFile)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// The 1-based line of the edited file that starts with `prefix`, as errors cite it.
    func line(startingWith prefix: String) throws -> Int {
        let lines = try String(contentsOfFile: configurationFile, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        return try #require(lines.firstIndex { $0.hasPrefix(prefix) }) + 1
    }
}

/// Every file under a directory (or the file itself) with its size, modification time and contents: equal
/// snapshots mean nothing was written, created, removed or touched.
struct DirectorySnapshot: Equatable {
    struct Entry: Equatable {
        var path: String
        var size: Int64
        var modifiedNanoseconds: Int64
        var contents: Data?
    }

    var entries: [Entry]

    init(of root: URL) throws {
        var paths = [root.path]
        if let enumerator = FileManager.default.enumerator(atPath: root.path) {
            paths += enumerator.compactMap { $0 as? String }.map { root.appendingPathComponent($0).path }
        }
        entries = try paths.sorted().map { path in
            var info = stat()
            guard lstat(path, &info) == 0 else { throw CocoaError(.fileReadNoSuchFile) }
            let isFile = (info.st_mode & S_IFMT) == S_IFREG
            return Entry(
                path: path, size: Int64(info.st_size),
                modifiedNanoseconds: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
                contents: isFile ? FileManager.default.contents(atPath: path) : nil)
        }
    }
}
