import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import Synchronization
import Testing

/// SIGTERM while N devices sync continuously. CI runs 20 clients; `scripts/reliability/restart` runs 100.
@Suite("Restart: SIGTERM during continuous sync")
struct GracefulRestartTests {
    static let clientCount = ReliabilityScale.integer("RELIABILITY_RESTART_CLIENTS", default: 20)
    /// How long a SIGTERMed gateway may take to drain and exit.
    static let gracePeriod = Duration.seconds(15)

    @Test("the gateway drains and exits 0; every client resumes from its checkpoint and all converge after the restart")
    func sigtermDuringContinuousSync() async throws {
        let root = try reliabilityDirectory("restart")
        defer { try? FileManager.default.removeItem(at: root) }
        var gateway = try GatewayProcess(directory: root.appendingPathComponent("gateway"))
        try await gateway.start()
        var built: [SyncClient] = []
        for index in 0..<Self.clientCount {
            built.append(
                try await SyncClient(
                    name: "c\(index)", directory: root.appendingPathComponent("client-\(index)"), remoteURL: gateway.url
                ))
        }
        let clients = built
        defer { for client in clients { client.close() } }
        for client in clients { client.start() }

        // Each client writes a document every 100 ms until the end, across the restart.
        let written = WriteCounts(clients: Self.clientCount)
        let writers = Task {
            for round in 0..<600 {
                guard !Task.isCancelled else { break }
                for (index, client) in clients.enumerated() {
                    try await client.write(round)
                    written.counts.withLock { $0[index] = round + 1 }
                }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        defer { writers.cancel() }
        try await Task.sleep(for: .seconds(3))

        let stopping = ContinuousClock.now
        let process = try #require(gateway.process)
        kill(process.processIdentifier, SIGTERM)
        let deadline = ContinuousClock.now + Self.gracePeriod
        while ContinuousClock.now < deadline, process.isRunning {
            try await Task.sleep(for: .milliseconds(20))
        }
        let drainTime = ContinuousClock.now - stopping
        let stillRunning = process.isRunning
        if stillRunning { gateway.kill() }
        process.waitUntilExit()
        let exited = ContinuousClock.now
        gateway.forget()
        #expect(!stillRunning, "the gateway did not exit within \(Self.gracePeriod) of SIGTERM:\n\(gateway.logTail())")
        #expect(
            process.terminationReason == .exit && process.terminationStatus == 0,
            "exit \(process.terminationStatus):\n\(gateway.logTail())")

        // What each client had acknowledged against what the gateway kept of it.
        var unacknowledgedOnGateway = 0
        do {
            let store = try DocumentStore(dataDirectory: gateway.dataDirectory)
            let database = try await store.database(named: "inventory", createIfMissing: false)
            defer { try? database.close() }
            #expect(try await database.integrityCheck() == ["ok"])
            let onGateway = Set(try await database.changes(since: 0).map(\.docID))
            for client in clients {
                let acknowledged = try await client.acknowledgedSequence()
                let own = try await client.database.changes(since: 0).filter { $0.docID.hasPrefix("\(client.name)-") }
                let acknowledgedOwn = own.filter { $0.sequence <= acknowledged }
                for change in acknowledgedOwn {
                    #expect(onGateway.contains(change.docID), "\(change.docID) acknowledged but not on the gateway")
                }
                unacknowledgedOnGateway +=
                    own.filter { $0.sequence > acknowledged && onGateway.contains($0.docID) }.count
            }
        }

        try await gateway.start()
        try await Task.sleep(for: .seconds(2))
        writers.cancel()
        _ = try? await writers.value
        // One more document each, written after the restart: converging on them needs every client to push to
        // and pull from the new gateway process, however few rounds the writers managed on a loaded machine.
        for client in clients { try await client.write(Int.max) }
        let total = written.counts.withLock { $0.reduce(0, +) } + clients.count
        let converged = ContinuousClock.now + .seconds(180)
        var counts: [Int] = []
        while ContinuousClock.now < converged {
            counts = []
            for client in clients { counts.append(try await client.documentCount()) }
            if counts.allSatisfy({ $0 == total }) { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(counts.allSatisfy { $0 == total }, "not converged: \(counts) of \(total)")
        // Counted by when runs began, not by how many: a run that began while the gateway was down may still be
        // connecting when the new one starts listening, and then it is the reconnection.
        let reconnected = clients.filter { ($0.latestRunStarted ?? exited) > exited }.count
        var stragglers: [String] = []
        for client in clients where (client.latestRunStarted ?? exited) <= exited {
            let status = await client.status()
            stragglers.append(
                "\(client.name): \(status.map { "\($0.activity), last error \($0.lastError ?? "none")" } ?? "no run")")
        }
        #expect(reconnected == Self.clientCount, "only \(reconnected) clients reconnected; the others: \(stragglers)")
        for client in clients { await client.stop() }
        #expect(gateway.terminate() == 0)
        print(
            "restart: \(Self.clientCount) clients; SIGTERM to exit \(drainTime); \(unacknowledgedOnGateway) documents "
                + "on the gateway past their client's checkpoint (proposed again after the restart, bodies not resent); "
                + "all \(Self.clientCount) clients converged on \(total) documents")
    }
}

/// How many documents each client has written so far.
final class WriteCounts: Sendable {
    let counts: Mutex<[Int]>

    init(clients: Int) {
        counts = Mutex(Array(repeating: 0, count: clients))
    }
}
