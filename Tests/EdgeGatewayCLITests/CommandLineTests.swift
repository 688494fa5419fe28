import EdgeGatewayTestSupport
import Foundation
import GatewayConfigurationFile
import Testing

@Suite("edge-gateway command line")
struct CommandLineTests {
    @Test("version prints the version")
    func version() async throws {
        let outcome = try await EdgeGatewayExecutable.run(["version"])
        #expect(outcome.status == 0)
        #expect(outcome.standardOutput.hasPrefix("edge-gateway "))
    }

    @Test("config check accepts a valid file and summarises it")
    func checkValidConfiguration() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("good.toml")
        try GatewayTOML(name: "site", dataDirectory: nil, opsPort: nil).write(to: file.path)
        let outcome = try await EdgeGatewayExecutable.run(["config", "check", file.path])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardOutput.contains("OK (node \"site\", 1 database(s)"))
    }

    @Test("config check names the bad key and its line, and exits non-zero")
    func checkBadConfiguration() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("bad.toml")
        try """
        [node]
        name = "site"

        [ops]
        port = "4985"
        """.write(to: file, atomically: true, encoding: .utf8)
        let outcome = try await EdgeGatewayExecutable.run(["config", "check", file.path])
        #expect(outcome.status == 2)
        #expect(outcome.standardError.contains("bad.toml:5: ops.port: must be an integer 0-65535"))
    }

    @Test("serve starts, health probes it, SIGTERM stops it cleanly, then health fails")
    func serveHealthAndGracefulShutdown() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try freeLoopbackPort()
        let file = directory.appendingPathComponent("gateway.toml")
        try GatewayTOML(name: "cli-test", dataDirectory: directory.appendingPathComponent("data").path, opsPort: port)
            .write(to: file.path)

        let gateway = try EdgeGatewayExecutable.start(["serve", "--config", file.path])
        defer { if gateway.process.isRunning { gateway.process.terminate() } }

        var healthy: EdgeGatewayExecutable.Outcome?
        for _ in 0..<100 where gateway.process.isRunning {
            let probe = try await EdgeGatewayExecutable.run(["health", "--config", file.path])
            if probe.status == 0 {
                healthy = probe
                break
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        let probe = try #require(healthy, "the gateway never became healthy")
        #expect(probe.standardOutput.hasPrefix("healthy: HTTP 200, status up"))

        kill(gateway.process.processIdentifier, SIGTERM)
        await gateway.process.waitForExit()
        #expect(gateway.process.terminationReason == .exit)
        #expect(gateway.process.terminationStatus == 0)
        let logs = String(decoding: gateway.standardErrorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(logs.contains("msg=stopped"))

        let afterwards = try await EdgeGatewayExecutable.run(["health", "--config", file.path])
        #expect(afterwards.status == 1)
        #expect(afterwards.standardOutput.hasPrefix("unhealthy:"))
    }
}
