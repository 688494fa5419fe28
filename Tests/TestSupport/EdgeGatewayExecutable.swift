import Foundation

/// The `edge-gateway` binary built alongside the test bundles, run as a real child process.
package enum EdgeGatewayExecutable {
    package static var url: URL {
        // `swift test` runs the test bundle from the products directory, where the executable is built too.
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("edge-gateway")
    }

    package struct Outcome: Sendable {
        package var status: Int32
        package var standardOutput: String
        package var standardError: String
    }

    /// A started command whose output the caller reads from the pipes.
    package struct Running: Sendable {
        package let process: SpawnedProcess
        package let standardOutputPipe: Pipe
        package let standardErrorPipe: Pipe
    }

    /// Runs a command to completion and collects its output.
    /// - Parameter executable: runs this program instead (such as `setpriv`), which runs the binary in turn.
    package static func run(
        _ arguments: [String], environment: [String: String] = [:], executable: URL? = nil
    ) async throws -> Outcome {
        let running = try start(arguments, environment: environment, executable: executable)
        return try await onOwnThread {
            let output = running.standardOutputPipe.fileHandleForReading.readDataToEndOfFile()
            let error = running.standardErrorPipe.fileHandleForReading.readDataToEndOfFile()
            running.process.waitUntilExit()
            return Outcome(
                status: running.process.terminationStatus,
                standardOutput: String(decoding: output, as: UTF8.self),
                standardError: String(decoding: error, as: UTF8.self)
            )
        }
    }

    package static func start(
        _ arguments: [String], environment: [String: String] = [:], executable: URL? = nil
    ) throws -> Running {
        let process = SpawnedProcess()
        process.executableURL = executable ?? url
        process.arguments = arguments
        process.environment = childEnvironment(environment)
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        // A command that asks for confirmation must read end-of-file, never wait on the test's own terminal.
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return Running(process: process, standardOutputPipe: output, standardErrorPipe: error)
    }

    /// The test's environment without the gateway's own variables (a developer's shell may set some), plus
    /// `environment`.
    package static func childEnvironment(_ environment: [String: String] = [:]) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("EDGE_GATEWAY_") }.merging(environment) {
            _, new in new
        }
    }
}
