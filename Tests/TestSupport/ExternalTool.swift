import Foundation

/// Runs a command found on PATH to completion and collects its output: the independent tools (python3 with
/// zxing-cpp, openssl) that tests check our output against.
public struct ExternalToolOutcome: Sendable {
    public var status: Int32
    public var output: String
    public var error: String
}

public func runExternalTool(_ name: String, _ arguments: [String]) throws -> ExternalToolOutcome {
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
