import EdgeGatewayTestSupport
import Foundation
import Testing

@testable import EdgeStore

@Suite("Kill safety")
struct CrashSafetyTests {
    /// The StoreCrashProbe executable, built next to the test bundle in the build products directory.
    private static func probeExecutable() throws -> URL {
        var candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL,
            Bundle.main.bundleURL.deletingLastPathComponent(),
        ]
        candidates += Bundle.allBundles.map { $0.bundleURL.deletingLastPathComponent() }
        for directory in candidates {
            let url = directory.appendingPathComponent("StoreCrashProbe")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw ProbeError.executableNotFound(searched: candidates.map(\.path))
    }

    enum ProbeError: Error {
        case executableNotFound(searched: [String])
        case exitedEarly(status: Int32)
    }

    @Test("Every acknowledged write survives SIGKILL and the database stays intact")
    func killMidWrite() async throws {
        try await withTemporaryDirectory { directory in
            let process = SpawnedProcess()
            process.executableURL = try Self.probeExecutable()
            process.arguments = [directory.path]
            let output = Pipe()
            process.standardOutput = output
            try process.run()

            // Read acknowledgements until enough have arrived, then kill without warning.
            var received = Data()
            let reader = output.fileHandleForReading
            while received.split(separator: UInt8(ascii: "\n")).count < 600 {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                received += chunk
            }
            guard process.isRunning else {
                throw ProbeError.exitedEarly(status: process.terminationStatus)
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)
            // Acknowledgements written just before the kill are still in the pipe.
            received += reader.readDataToEndOfFile()

            // Only complete lines are acknowledgements.
            var lines = received.split(
                separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            lines.removeLast()
            let acknowledged = lines.map { String(decoding: $0, as: UTF8.self) }
            #expect(acknowledged.count >= 600)

            let database = try await DocumentStore(dataDirectory: directory).database(
                named: "probe", createIfMissing: false)
            #expect(try await database.integrityCheck() == ["ok"])
            var missing: [String] = []
            for docID in acknowledged where try await database.document(docID) == nil {
                missing.append(docID)
            }
            #expect(missing.isEmpty, "acknowledged but lost: \(missing.prefix(10))")
        }
    }
}
