import Benchmark
import EdgeConfig
import EdgeReplication
import EdgeStore
import Foundation
import Logging
import SyncListener

// Replication throughput through a real loopback socket: the project's active replicator against its own
// listener, both in this process, as in the Couchbase Lite reference figure (client and server on one machine).
// docs/s = documentCount / wall clock per iteration.
let documentCount = 100_000
let databaseName = "bench"

var quietLogger: Logger {
    var logger = Logger(label: "replication-benchmark")
    logger.logLevel = .error
    return logger
}

func temporaryDirectory(_ label: String) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("edge-bench-\(label)-\(UUID().uuidString)")
}

/// 100,000 documents of about 1 KB, each with one revision, inserted in batches as a replicator would.
func seed(_ database: DocumentDatabase) async throws {
    let padding = String(repeating: "x", count: 960)
    for start in stride(from: 0, to: documentCount, by: 500) {
        let batch = try (start..<min(start + 500, documentCount)).map { index in
            ExistingRevision(
                docID: "doc-\(index)", revID: try RevisionID("1-" + String(format: "%040x", index)), history: [],
                body: Data(#"{"n":\#(index),"type":"reading","padding":"\#(padding)"}"#.utf8))
        }
        _ = try await database.insertExistingRevisions(batch)
    }
}

/// Runs a listener serving `store` on 127.0.0.1 for the duration of `body`.
func withListener(
    store: DocumentStore, directory: URL, tls: ListenerTLS = .off, _ body: (Int) async throws -> Void
) async throws {
    let settings = ListenerSettings(
        name: "bench", interface: "127.0.0.1", port: 0, tls: tls, authentication: .none,
        databases: [databaseName], deltaSync: true, maxConnections: 16, serviceDiscovery: nil)
    let listener = try SyncListener(
        settings: settings,
        environment: .init(
            store: store, databases: [DatabaseSettings(name: databaseName, collections: [DatabaseSettings.defaultCollection])],
            dataDirectory: directory.path, nodeName: "bench", serverVersion: "bench"),
        logger: quietLogger)
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await listener.run() }
        guard let port = await listener.boundPort() else { throw CancellationError() }
        try await body(port)
        group.cancelAll()
    }
}

func replicate(_ local: DocumentDatabase, port: Int, direction: ActiveReplicator.Direction) async throws {
    let replicator = ActiveReplicator(
        database: local,
        configuration: .init(
            remoteURL: "ws://127.0.0.1:\(port)/\(databaseName)", remoteUUID: UUID().uuidString, direction: direction),
        logger: quietLogger)
    try await replicator.run()
    let status = await replicator.status()
    guard status.completed == documentCount else {
        fatalError("replicated \(status.completed) of \(documentCount): \(status.lastError ?? "no error")")
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .peakMemoryResident], timeUnits: .milliseconds,
        maxDuration: .seconds(300), maxIterations: 3)

    Benchmark("Ingest: push 100,000 docs of 1 KB into the listener (ws://)") { benchmark in
        let sourceDirectory = temporaryDirectory("source")
        defer { try? FileManager.default.removeItem(at: sourceDirectory) }
        let source = try await DocumentStore(dataDirectory: sourceDirectory).database(named: "local")
        try await seed(source)
        for _ in benchmark.scaledIterations {
            let targetDirectory = temporaryDirectory("ingest")
            defer { try? FileManager.default.removeItem(at: targetDirectory) }
            let target = try DocumentStore(dataDirectory: targetDirectory)
            try await withListener(store: target, directory: targetDirectory) { port in
                benchmark.startMeasurement()
                try await replicate(source, port: port, direction: .push)
                benchmark.stopMeasurement()
            }
        }
    }

    Benchmark("Serve: pull 100,000 docs of 1 KB from the listener (ws://)") { benchmark in
        let servedDirectory = temporaryDirectory("served")
        defer { try? FileManager.default.removeItem(at: servedDirectory) }
        let served = try DocumentStore(dataDirectory: servedDirectory)
        try await seed(try await served.database(named: databaseName))
        for _ in benchmark.scaledIterations {
            let localDirectory = temporaryDirectory("pull")
            defer { try? FileManager.default.removeItem(at: localDirectory) }
            let local = try await DocumentStore(dataDirectory: localDirectory).database(named: "local")
            try await withListener(store: served, directory: servedDirectory) { port in
                benchmark.startMeasurement()
                try await replicate(local, port: port, direction: .pull)
                benchmark.stopMeasurement()
            }
        }
    }
}
