import Benchmark
import EdgeConfig
import EdgeGatewayApp
import EdgeReplication
import EdgeStore
import Foundation
import LiteCoreShapedPuller
import Logging
import ReplicationProtocol
import SyncIdentifiers
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
        configuration: .init(
            settings, databases: [DatabaseSettings(name: databaseName, collections: [.default])],
            dataDirectory: directory.path),
        environment: .init(store: store, dataDirectory: directory.path, nodeName: "bench", serverVersion: "bench"),
        logger: quietLogger)
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await listener.run() }
        guard let port = await listener.boundPort() else { throw CancellationError() }
        try await body(port)
        group.cancelAll()
    }
}

/// The two protocol generations compared: rev trees as Couchbase Lite 3.x offers them, and version vectors alone.
let generations: [(name: String, offer: [ReplicationSubprotocol])] = [
    ("CBMobile_3", [.cbMobile3]), ("CBMobile_4", [.cbMobile4]),
]

func replicate(
    _ local: DocumentDatabase, port: Int, direction: ActiveReplicator.Direction, offer: [ReplicationSubprotocol]
) async throws {
    let replicator = ActiveReplicator(
        database: local,
        configuration: .init(
            remoteURL: "ws://127.0.0.1:\(port)/\(databaseName)", remoteUUID: UUID().uuidString, direction: direction,
            subprotocols: offer),
        logger: quietLogger)
    try await replicator.run()
    let status = await replicator.status()
    guard status.completed == documentCount else {
        fatalError("replicated \(status.completed) of \(documentCount): \(status.lastError ?? "no error")")
    }
}

/// The gateway's listener in a child process (`GatewayChild`, built next to this executable), serving the store in
/// `directory`, so that its CPU time and peak memory are measured apart from the puller's.
struct GatewayProcess {
    let process: Process
    let port: Int

    init(serving directory: URL) throws {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("GatewayChild")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            fatalError("\(executable.path) is missing: run `swift build -c release --product GatewayChild` first")
        }
        process = Process()
        process.executableURL = executable
        process.arguments = [directory.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        guard let line = String(data: output.fileHandleForReading.availableData, encoding: .utf8),
            let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            fatalError("the gateway child did not report its port")
        }
        self.port = port
    }

    private var status: String {
        (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
    }

    /// User plus system CPU time so far, in milliseconds (`utime` and `stime` of `/proc/<pid>/stat`).
    var cpuMilliseconds: Int {
        let stat = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)) ?? ""
        // The fields after the parenthesised command name; utime and stime are the 14th and 15th of the line.
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return 0 }
        return (user + system) * 1_000 / Int(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// `VmHWM`, the peak resident set, in bytes.
    var peakResidentBytes: Int {
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return (Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0) * 1_024
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

/// The bytes of the SQLite files (database and write-ahead log) under a data directory.
func storeBytes(in directory: URL) -> Int {
    let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.fileSizeKey])
    var bytes = 0
    while let file = files?.nextObject() as? URL {
        guard file.lastPathComponent.contains(".sqlite3") else { continue }
        bytes += (try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
    }
    return bytes
}

/// The receiving database's file size after the run, per document: what version vectors cost on disk.
let storeBytesPerDocument = BenchmarkMetric.custom(
    "Store bytes per document", polarity: .prefersSmaller, useScalingFactor: false)
let gatewayCPU = BenchmarkMetric.custom("Gateway CPU (ms)", polarity: .prefersSmaller, useScalingFactor: false)
let gatewayPeakRSS = BenchmarkMetric.custom("Gateway peak RSS (MB)", polarity: .prefersSmaller, useScalingFactor: false)
/// `PullerCounters.waitingForPeer`: how long the puller had nothing to do but wait for the gateway.
let pullerWaitingForGateway = BenchmarkMetric.custom(
    "Puller waiting for the gateway (ms)", polarity: .prefersSmaller, useScalingFactor: false)
/// `PullerCounters.partialInsertionBatches`: batches the puller inserted after its 20 ms delay ran out.
let partialInsertionBatches = BenchmarkMetric.custom(
    "Puller batches cut short by the 20 ms delay", polarity: .prefersSmaller, useScalingFactor: false)

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .peakMemoryResident], timeUnits: .milliseconds,
        maxDuration: .seconds(300), maxIterations: 3)

    // The same run measures both generations side by side (issue 29/30: CBMobile_4 within 10% of CBMobile_3).
    for (generation, offer) in generations {
        Benchmark(
            "Ingest: push 100,000 docs of 1 KB into the listener over \(generation) (ws://)",
            configuration: .init(
                metrics: [.wallClock, .cpuTotal, .peakMemoryResident, storeBytesPerDocument],
                timeUnits: .milliseconds, maxDuration: .seconds(300), maxIterations: 3)
        ) { benchmark in
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
                    try await replicate(source, port: port, direction: .push, offer: offer)
                    benchmark.stopMeasurement()
                }
                benchmark.measurement(storeBytesPerDocument, storeBytes(in: targetDirectory) / documentCount)
            }
        }

        Benchmark(
            "Serve: pull 100,000 docs of 1 KB from the listener over \(generation) (ws://)",
            configuration: .init(
                metrics: [.wallClock, .cpuTotal, .peakMemoryResident, storeBytesPerDocument],
                timeUnits: .milliseconds, maxDuration: .seconds(300), maxIterations: 3)
        ) { benchmark in
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
                    try await replicate(local, port: port, direction: .pull, offer: offer)
                    benchmark.stopMeasurement()
                }
                benchmark.measurement(storeBytesPerDocument, storeBytes(in: localDirectory) / documentCount)
            }
        }
    }

    Benchmark(
        "Serve to a LiteCore-shaped puller: 100,000 docs of 1 KB, gateway in a child process (ws://)",
        configuration: .init(
            metrics: [
                .wallClock, .cpuTotal, .peakMemoryResident, gatewayCPU, gatewayPeakRSS, pullerWaitingForGateway,
                partialInsertionBatches,
            ],
            timeUnits: .milliseconds, maxDuration: .seconds(300), maxIterations: 3)
    ) { benchmark in
        let servedDirectory = temporaryDirectory("served-child")
        defer { try? FileManager.default.removeItem(at: servedDirectory) }
        do {
            let served = try DocumentStore(dataDirectory: servedDirectory)
            try await seed(try await served.database(named: "bench"))
        }
        for _ in benchmark.scaledIterations {
            let localDirectory = temporaryDirectory("litecore-pull")
            defer { try? FileManager.default.removeItem(at: localDirectory) }
            let local = try await DocumentStore(dataDirectory: localDirectory).database(named: "local")
            let gateway = try GatewayProcess(serving: servedDirectory)
            defer { gateway.stop() }
            let puller = LiteCoreShapedPuller(
                database: local, configuration: .init(url: "ws://127.0.0.1:\(gateway.port)/\(databaseName)"),
                logger: quietLogger)
            let cpuBefore = gateway.cpuMilliseconds
            benchmark.startMeasurement()
            let report = try await puller.run()
            benchmark.stopMeasurement()
            benchmark.measurement(gatewayCPU, gateway.cpuMilliseconds - cpuBefore)
            benchmark.measurement(gatewayPeakRSS, gateway.peakResidentBytes / 1_000_000)
            let waited = report.counters.waitingForPeer.components
            benchmark.measurement(
                pullerWaitingForGateway, Int(waited.seconds * 1_000 + waited.attoseconds / 1_000_000_000_000_000))
            benchmark.measurement(partialInsertionBatches, report.counters.partialInsertionBatches)
            guard report.counters.revsReceived == documentCount else {
                fatalError("pulled \(report.counters.revsReceived) of \(documentCount)")
            }
        }
    }
}
