import EdgeGatewayTestSupport
import Foundation
import Testing

/// `serve` started under a low soft limit on open files, as container runtimes start it (soft 1,024 under a high
/// hard limit); `prlimit` sets the limits and then runs the gateway as the same process.
@Suite(
    "The open-file limit at start",
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit"), "needs prlimit (util-linux)"))
struct OpenFileLimitTests {
    static func soft(openFileLimitOf pid: Int32) throws -> String? {
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let line = limits.split(separator: "\n").first { $0.hasPrefix("Max open files") }
        return line?.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).first.map(String.init)
    }

    /// Runs `serve` on the shipped configuration (one listener, the default max_connections) under `limits`
    /// until it is healthy, then stops it; returns its soft limit while serving and its log.
    static func serve(limits: String) async throws -> (soft: String?, log: String) {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = FirstStartCommandTests.environment(
            dataDirectory: directory.appendingPathComponent("data"), opsPort: try freeLoopbackPort(),
            listenerPort: try freeLoopbackPort())
        let gateway = try EdgeGatewayExecutable.start(
            ["--nofile=\(limits)", EdgeGatewayExecutable.url.path, "serve"], environment: environment,
            executable: URL(fileURLWithPath: "/usr/bin/prlimit"))
        defer { if gateway.process.isRunning { gateway.process.terminate() } }
        try await FirstStartCommandTests.waitForHealth(environment: environment, gateway: gateway) {
            $0.hasPrefix("healthy")
        }
        let soft = try soft(openFileLimitOf: gateway.process.processIdentifier)
        kill(gateway.process.processIdentifier, SIGTERM)
        await gateway.process.waitForExit()
        let log = String(decoding: gateway.standardErrorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (soft, log)
    }

    @Test("a soft limit below the hard one is raised to it, and nothing is said")
    func raisedToTheHardLimit() async throws {
        let (soft, log) = try await Self.serve(limits: "256:4096")
        #expect(soft == "4096")
        #expect(!log.contains("open-file limit"), "\(log)")
    }

    @Test("a hard limit below what max_connections needs: one warning with both figures and the fix")
    func hardLimitTooLow() async throws {
        let (soft, log) = try await Self.serve(limits: "256:512")
        #expect(soft == "512")
        let warnings = log.split(separator: "\n").filter { $0.contains("open-file limit") }
        #expect(warnings.count == 1, "\(log)")
        #expect(warnings.first?.contains("level=warning") == true)
        // The shipped configuration: one listener of the default 1,000 connections, plus the reserve of 256.
        #expect(warnings.first?.contains("is 512 (hard limit 512), below the 1256") == true, "\(log)")
        #expect(warnings.first?.contains("ulimits: nofile: 65536") == true)
    }
}
