import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import SyncIdentifiers
import Synchronization
import Testing

@testable import EdgeReplication

/// The active replicator's checkpoints under failure: an upstream that dies mid-run, and one that is down at first.
@Suite("Active replicator resumes from its checkpoint")
struct ResumeTests {
    static let documentCount = 10_000

    /// `count` documents with one revision each, inserted in one batch (10,000 single saves would each pay a sync).
    static func seed(_ count: Int, in database: DocumentDatabase) async throws {
        let revisions = try (0..<count).map { index in
            ExistingRevision(
                docID: "doc-\(index)",
                revID: try RevisionID("1-" + String(format: "%040x", index)),
                history: [],
                body: Data(#"{"n":\#(index),"padding":"\#(String(repeating: "x", count: 200))"}"#.utf8))
        }
        _ = try await database.insertExistingRevisions(revisions)
    }

    static func documentCount(in database: DocumentDatabase) async throws -> Int {
        try await database.changes(since: 0).count
    }

    @Test("an upstream killed in the middle of a 10,000-document push is resumed from the checkpoint after its restart")
    func killAndRestartMidPush() async throws {
        let port = try freeLoopbackPort()
        let upstreamDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "edge-resume-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: upstreamDirectory) }
        let settings = TestGateway.settings(port: port)
        try await LocalDatabase.run { local in
            try await Self.seed(Self.documentCount, in: local.database)
            let configuration = ActiveReplicator.Configuration(
                remoteURL: "ws://127.0.0.1:\(port)/\(TestGateway.databaseName)", remoteUUID: "resumed",
                direction: .push, batchSize: 200, checkpointInterval: .milliseconds(100))

            // First run: the upstream goes away once it holds part of the documents. The replicator is not told:
            // it loses the connection in the middle of a batch, as when the upstream's process is killed.
            let replicator = ActiveReplicator(
                database: local.database, configuration: configuration, logger: testLogger)
            let firstRun = Shared<Task<Void, any Error>?>(nil)
            let receivedBeforeKill = Shared(0)
            try await TestGateway.run(settings: settings, dataDirectory: upstreamDirectory) { gateway in
                firstRun.set(Task { try await replicator.run() })
                let remote = try await gateway.database
                try await eventually("a third of the documents upstream") {
                    try await Self.documentCount(in: remote) >= Self.documentCount / 3
                }
                receivedBeforeKill.set(try await Self.documentCount(in: remote))
            }
            let betweenRuns = try ReservedLoopbackPort(port: port)
            let run = try #require(firstRun.value)
            await #expect(throws: (any Error).self) { try await run.value }
            #expect(receivedBeforeKill.value < Self.documentCount, "the push finished before the upstream was killed")

            // Second run against the restarted upstream, with a fresh replicator, as after a gateway restart.
            betweenRuns.release()
            try await TestGateway.run(settings: settings, dataDirectory: upstreamDirectory) { gateway in
                let remote = try await gateway.database
                let presentAtRestart = try await Self.documentCount(in: remote)
                let replicator = ActiveReplicator(
                    database: local.database, configuration: configuration, logger: testLogger)
                try await replicator.run()
                let status = await replicator.status()
                #expect(try await Self.documentCount(in: remote) == Self.documentCount)
                // `total` is what the second run proposed again; the ones the upstream already had are the re-sent part.
                let missing = Self.documentCount - presentAtRestart
                let proposedAgain = status.total - missing
                #expect(status.total < Self.documentCount, "the second run started from zero")
                #expect(proposedAgain >= 0)
                #expect(proposedAgain <= presentAtRestart / 2, "re-proposed \(proposedAgain) of \(presentAtRestart)")
                print(
                    "resume: \(presentAtRestart) present at restart, \(missing) missing, \(proposedAgain) proposed again"
                )
            }
        }
    }
}

/// A value that test closures running concurrently can set and read.
final class Shared<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) {
        storage = Mutex(value)
    }

    var value: Value { storage.withLock { $0 } }

    func set(_ value: Value) {
        storage.withLock { $0 = value }
    }
}
