import Foundation

/// Runs a command found on PATH to completion and collects its output: the independent tools (python3 with
/// zxing-cpp, openssl) that tests check our output against.
package struct ExternalToolOutcome: Sendable {
    package var status: Int32
    package var output: String
    package var error: String
}

package func runExternalTool(_ name: String, _ arguments: [String]) async throws -> ExternalToolOutcome {
    try await onOwnThread { try runExternalToolBlocking(name, arguments) }
}

/// `runExternalTool` on the calling thread: for callers already on a thread of their own, or off the concurrency pool.
package func runExternalToolBlocking(_ name: String, _ arguments: [String]) throws -> ExternalToolOutcome {
    let process = SpawnedProcess()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [name] + arguments
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ExternalToolOutcome(
        status: process.terminationStatus,
        output: String(decoding: outputData, as: UTF8.self),
        error: String(decoding: errorData, as: UTF8.self)
    )
}
