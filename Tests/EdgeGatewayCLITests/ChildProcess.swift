import EdgeGatewayTestSupport
import Foundation

/// The `edge-gateway` binary built alongside this test bundle, run as a real child process.
struct EdgeGatewayBinary {
    static var url: URL {
        // `swift test` runs the test bundle from the products directory, where the executable is built too.
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("edge-gateway")
    }

    struct Outcome {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    /// Runs the binary to completion and collects its output.
    /// - Parameter executable: runs this program instead (such as `setpriv`), which runs the binary in turn.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], executable: URL? = nil
    ) async throws -> Outcome {
        let process = try start(arguments, environment: environment, executable: executable)
        let output = process.standardOutputPipe.fileHandleForReading.readDataToEndOfFile()
        let error = process.standardErrorPipe.fileHandleForReading.readDataToEndOfFile()
        process.process.waitUntilExit()
        return Outcome(
            status: process.process.terminationStatus,
            standardOutput: String(decoding: output, as: UTF8.self),
            standardError: String(decoding: error, as: UTF8.self)
        )
    }

    struct Running {
        let process: SpawnedProcess
        let standardOutputPipe: Pipe
        let standardErrorPipe: Pipe
    }

    static func start(
        _ arguments: [String], environment: [String: String] = [:], executable: URL? = nil
    ) throws -> Running {
        let process = SpawnedProcess()
        process.executableURL = executable ?? url
        process.arguments = arguments
        var inherited = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("EDGE_GATEWAY_") }
        inherited.merge(environment) { _, new in new }
        process.environment = inherited
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        // A command that asks for confirmation must read end-of-file, never wait on the test's own terminal.
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return Running(process: process, standardOutputPipe: output, standardErrorPipe: error)
    }
}

func temporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "edge-gateway-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}
