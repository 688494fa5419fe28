import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import Logging
import Synchronization

@testable import EdgeReplication

/// A device in a reliability test: its own database and a continuous push-and-pull replicator to the gateway,
/// reconnected after every lost connection as Couchbase Lite does (back-off capped at `retryWait`).
final class SyncClient: Sendable {
    let name: String
    let database: DocumentDatabase
    let configuration: ActiveReplicator.Configuration
    private let replicator = Mutex<ActiveReplicator?>(nil)
    private let loop = Mutex<Task<Void, Never>?>(nil)
    private let latestRunStart = Mutex<ContinuousClock.Instant?>(nil)
    static let quietLogger = Logger(label: "reliability.client") { _ in SwiftLogNoOpLogHandler() }

    init(name: String, directory: URL, remoteURL: String, direction: ActiveReplicator.Direction = .pushAndPull)
        async throws
    {
        self.name = name
        raiseDescriptorLimit()
        let store = try DocumentStore(dataDirectory: directory)
        database = try await store.database(named: "client")
        configuration = ActiveReplicator.Configuration(
            remoteURL: remoteURL, remoteUUID: "reliability-gateway", direction: direction, continuous: true,
            heartbeat: .seconds(5), batchSize: 100, checkpointInterval: .milliseconds(200))
    }

    /// When the newest replicator run began (each reconnection is a new run). A run that began after the
    /// gateway process died can only have connected to the one started after it.
    var latestRunStarted: ContinuousClock.Instant? { latestRunStart.withLock { $0 } }

    func start(retryWait: Duration = .milliseconds(300)) {
        let task = Task {
            while !Task.isCancelled {
                let current = ActiveReplicator(
                    database: database, configuration: configuration, logger: Self.quietLogger)
                replicator.withLock { $0 = current }
                latestRunStart.withLock { $0 = .now }
                _ = try? await current.run()
                try? await Task.sleep(for: retryWait)
            }
        }
        loop.withLock { $0 = task }
    }

    /// Stops replicating; a running replicator saves its checkpoint and closes normally.
    func stop() async {
        let task = loop.withLock { $0 }
        task?.cancel()
        await task?.value
    }

    func status() async -> ActiveReplicator.Status? {
        guard let current = replicator.withLock({ $0 }) else { return nil }
        return await current.status()
    }

    /// The push checkpoint this client saved: every local sequence up to it was acknowledged by the gateway.
    func acknowledgedSequence() async throws -> Int64 {
        let probe = ActiveReplicator(database: database, configuration: configuration, logger: Self.quietLogger)
        let checkpoint = try await Checkpointer.savedLocalCopy(
            in: database, checkpointID: await probe.checkpointID(), logger: Self.quietLogger)
        return Int64(checkpoint?.local ?? 0)
    }

    /// Writes one new document of this client's own.
    @discardableResult
    func write(_ index: Int) async throws -> String {
        let docID = "\(name)-\(index)"
        _ = try await database.save(docID, body: Data(#"{"writer":"\#(name)","n":\#(index)}"#.utf8), parentRevID: nil)
        return docID
    }

    /// One one-shot push and pull: connects, syncs until caught up both ways, saves the checkpoint, disconnects.
    func syncOnce() async throws {
        var once = configuration
        once.continuous = false
        try await ActiveReplicator(database: database, configuration: once, logger: Self.quietLogger).run()
    }

    func documentCount() async throws -> Int {
        try await database.changes(since: 0).count
    }

    func close() {
        try? database.close()
    }
}
