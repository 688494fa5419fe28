import ArgumentParser
import EdgeGatewayTestSupport
import EdgeReplication
import EdgeStore
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Many devices against one gateway, in a process of their own so that the gateway is measured apart from its
/// clients: each client is the project's own `ActiveReplicator`, continuous push and pull, with its own database.
/// Every client writes its documents; a document has fanned out when it has committed in every other client's
/// database. The summary goes to standard output as one JSON object, progress to standard error.
@main
struct LoadGenerator: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load-generator",
        abstract:
            "Continuous Couchbase Lite-style clients against one gateway; measures fan-out and the gateway's usage."
    )

    @Option(help: "The gateway database's replication URL, ws://host:port/db.")
    var url: String

    @Option(help: "How many clients connect at once.")
    var clients = 100

    @Option(help: "How many documents each writing client writes.")
    var documents = 10

    @Option(help: "How many of the clients write (default: all); every client receives what the others write.")
    var writers: Int?

    @Option(
        help: """
            Milliseconds between one client's writes (each waits a random 50–150 % of it; the clients start at \
            random offsets within one interval). 0 writes every document at once: a burst, which measures \
            throughput rather than latency.
            """)
    var writeInterval = 1000

    @Option(
        help: "Where the clients' databases go (default: a new directory under /dev/shm, else the temporary directory)."
    )
    var directory: String?

    @Option(help: "The gateway's process ID, to sample its resident memory, descriptors and threads.")
    var gatewayPid: Int32?

    @Option(help: "Seconds to wait for convergence after the last write before giving up.")
    var timeout = 600

    @Option(help: "The clients' WebSocket heartbeat, in seconds.")
    var heartbeat = 30

    func validate() throws {
        guard clients >= 2 else {
            throw ValidationError("--clients must be at least 2: a document fans out to the others")
        }
        guard documents >= 1 else { throw ValidationError("--documents must be at least 1") }
        if let writers, !(1...clients).contains(writers) {
            throw ValidationError("--writers must be between 1 and --clients (\(clients)), got \(writers)")
        }
        guard writeInterval >= 0 else { throw ValidationError("--write-interval must not be negative") }
        guard url.hasPrefix("ws://") || url.hasPrefix("wss://") else {
            throw ValidationError("--url must be a ws:// or wss:// URL, got \(url)")
        }
    }

    var writerCount: Int { writers ?? clients }

    func run() async throws {
        raiseDescriptorLimit()
        let root = URL(fileURLWithPath: directory ?? Self.defaultDirectory())
        let ownsDirectory = directory == nil
        defer { if ownsDirectory { try? FileManager.default.removeItem(at: root) } }
        let sampler = gatewayPid.map(UsageSampler.init(pid:))
        let idle = sampler?.sample()

        // The clients' stores are the harness, not the system under test: one store holds every client's
        // database, on tmpfs by default, so that the machine's disk does not throttle the clients.
        let store = try DocumentStore(dataDirectory: root)
        var fleet: [Client] = []
        for index in 0..<clients {
            fleet.append(try await Client(index: index, store: store, url: url, heartbeat: .seconds(heartbeat)))
        }
        let tracker = FanOutTracker(receivers: clients - 1)
        let watchers = fleet.map { client in Task { try await client.watchArrivals(into: tracker) } }
        defer { for watcher in watchers { watcher.cancel() } }

        let connectStart = ContinuousClock.now
        for client in fleet { client.start() }
        try await waitUntilIdle(fleet, deadline: connectStart + .seconds(timeout))
        let connected = ContinuousClock.now - connectStart
        report("\(clients) clients connected and idle after \(connected.milliseconds) ms")

        let samplingTask = Task {
            while !Task.isCancelled {
                sampler?.sampleAndKeepPeak()
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        let writeStart = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in fleet.prefix(writerCount) {
                group.addTask {
                    try await client.writeAll(
                        count: documents, interval: .milliseconds(writeInterval), tracker: tracker)
                }
            }
            try await group.waitForAll()
        }
        let lastWrite = ContinuousClock.now
        report("\(writerCount * documents) documents written in \((lastWrite - writeStart).milliseconds) ms")

        let expected = writerCount * documents
        let deadline = lastWrite + .seconds(timeout)
        var lastReport = ContinuousClock.now
        while tracker.fannedOut() < expected, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            if ContinuousClock.now - lastReport > .seconds(10) {
                lastReport = .now
                report("\(tracker.fannedOut()) of \(expected) documents at every client")
            }
        }
        let converged = ContinuousClock.now
        samplingTask.cancel()
        _ = await samplingTask.result

        var incompleteClients: [String] = []
        for client in fleet where try await client.documentCount() != expected {
            incompleteClients.append(client.name)
        }
        for client in fleet { await client.stop() }
        let latencies = tracker.fanOutLatencies()
        let deliveries = tracker.deliveryLatencies()
        let summary = LoadGeneratorSummary(
            clients: clients, writers: writerCount, documentsPerClient: documents,
            writeIntervalMilliseconds: writeInterval,
            connectedMilliseconds: connected.milliseconds,
            writeMilliseconds: (lastWrite - writeStart).milliseconds,
            convergedMilliseconds: (converged - writeStart).milliseconds,
            convergedAfterLastWriteMilliseconds: (converged - lastWrite).milliseconds,
            documentsFannedOut: tracker.fannedOut(), documentsExpected: expected,
            deliveries: deliveries.count,
            fanOutP50Milliseconds: latencies.percentile(0.5).milliseconds,
            fanOutP99Milliseconds: latencies.percentile(0.99).milliseconds,
            fanOutMaxMilliseconds: (latencies.last ?? .zero).milliseconds,
            deliveryP50Milliseconds: deliveries.percentile(0.5),
            deliveryP99Milliseconds: deliveries.percentile(0.99),
            incompleteClients: incompleteClients,
            gatewayIdle: idle, gatewayPeak: sampler?.peak, gatewayEnd: sampler?.sample(),
            generator: ProcessUsage(pid: getpid()))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        print(String(decoding: try encoder.encode(summary), as: UTF8.self))
        if !incompleteClients.isEmpty || summary.documentsFannedOut < expected {
            throw ExitCode(1)
        }
    }

    static func defaultDirectory() -> String {
        let base = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        return base + "/edge-load-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    /// Waits until every client's first run has connected and caught up both ways.
    func waitUntilIdle(_ fleet: [Client], deadline: ContinuousClock.Instant) async throws {
        var lastReport = ContinuousClock.now
        while true {
            var idle = 0
            for client in fleet where await client.isIdle() { idle += 1 }
            if idle == fleet.count { return }
            if ContinuousClock.now > deadline {
                throw ValidationError("only \(idle) of \(fleet.count) clients connected before the timeout")
            }
            if ContinuousClock.now - lastReport > .seconds(10) {
                lastReport = .now
                report("\(idle) of \(fleet.count) clients connected")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

func report(_ line: String) {
    FileHandle.standardError.write(Data("load-generator: \(line)\n".utf8))
}

/// One device: a database of its own and a continuous push-and-pull replicator, reconnected after a lost
/// connection as Couchbase Lite does.
final class Client: Sendable {
    let name: String
    let database: DocumentDatabase
    let configuration: ActiveReplicator.Configuration
    private let replicator = Mutex<ActiveReplicator?>(nil)
    private let loop = Mutex<Task<Void, Never>?>(nil)
    static let quietLogger = Logger(label: "load-generator.client") { _ in SwiftLogNoOpLogHandler() }

    init(index: Int, store: DocumentStore, url: String, heartbeat: Duration) async throws {
        name = "c\(index)"
        database = try await store.database(named: name)
        // The replicator's default checkpoint interval, 5 s, is Couchbase Lite's (LiteCore's checkpoint save delay),
        // so these clients save checkpoints to the gateway as often as real devices do.
        configuration = ActiveReplicator.Configuration(
            remoteURL: url, remoteUUID: "load-gateway", direction: .pushAndPull, continuous: true,
            heartbeat: heartbeat, batchSize: 200)
    }

    func start() {
        let task = Task {
            while !Task.isCancelled {
                let current = ActiveReplicator(
                    database: database, configuration: configuration, logger: Self.quietLogger)
                replicator.withLock { $0 = current }
                _ = try? await current.run()
                // Couchbase Lite's first retry waits about a second; jitter keeps a refused fleet from returning
                // in step.
                try? await Task.sleep(for: .milliseconds(Int.random(in: 500...1500)))
            }
        }
        loop.withLock { $0 = task }
    }

    func stop() async {
        let task = loop.withLock { $0 }
        task?.cancel()
        await task?.value
    }

    func isIdle() async -> Bool {
        guard let current = replicator.withLock({ $0 }) else { return false }
        return await current.status().activity == .idle
    }

    /// Writes `count` documents of this client's own, the first after a random part of one interval.
    func writeAll(count: Int, interval: Duration, tracker: FanOutTracker) async throws {
        func pause(_ fraction: ClosedRange<Double>) async throws {
            guard interval > .zero else { return }
            try await Task.sleep(for: interval * Double.random(in: fraction))
        }
        try await pause(0...1)
        for index in 0..<count {
            if index > 0 { try await pause(0.5...1.5) }
            let docID = "\(name)-\(index)"
            tracker.wrote(docID)
            _ = try await database.save(
                docID, body: Data(#"{"writer":"\#(name)","n":\#(index)}"#.utf8), parentRevID: nil)
        }
    }

    /// Records every other client's document as it commits here.
    func watchArrivals(into tracker: FanOutTracker) async throws {
        let ownPrefix = "\(name)-"
        for try await batch in database.changeFeed(since: 0) {
            let now = ContinuousClock.now
            for change in batch where !change.docID.hasPrefix(ownPrefix) {
                tracker.arrived(change.docID, at: now)
            }
        }
    }

    func documentCount() async throws -> Int {
        try await database.changes(since: 0, limit: .max).count
    }
}

/// When each document was written and when it committed at each other client.
final class FanOutTracker: Sendable {
    private struct Entry {
        var written: ContinuousClock.Instant?
        var arrivals = 0
        var lastArrival: ContinuousClock.Instant?
    }
    private struct State {
        var entries: [String: Entry] = [:]
        var fannedOut = 0
        var deliveries = LatencyHistogram()
    }
    private let state = Mutex(State())
    let receivers: Int

    init(receivers: Int) {
        self.receivers = receivers
    }

    func wrote(_ docID: String) {
        state.withLock { $0.entries[docID, default: Entry()].written = .now }
    }

    func arrived(_ docID: String, at instant: ContinuousClock.Instant) {
        state.withLock { state in
            var entry = state.entries[docID, default: Entry()]
            entry.arrivals += 1
            entry.lastArrival = instant
            if let written = entry.written { state.deliveries.record(instant - written) }
            if entry.arrivals == receivers { state.fannedOut += 1 }
            state.entries[docID] = entry
        }
    }

    /// Documents that have reached every other client.
    func fannedOut() -> Int {
        state.withLock { $0.fannedOut }
    }

    /// Per document that reached every other client: from its write to its commit at the last of them, sorted.
    func fanOutLatencies() -> [Duration] {
        state.withLock { state in
            state.entries.values.compactMap { entry in
                guard entry.arrivals >= receivers, let written = entry.written, let last = entry.lastArrival else {
                    return nil
                }
                return last - written
            }.sorted()
        }
    }

    /// Per delivery (one document at one client): from its write to its commit there.
    func deliveryLatencies() -> LatencyHistogram {
        state.withLock { $0.deliveries }
    }
}

/// Samples a process's usage and keeps the largest figures seen.
final class UsageSampler: Sendable {
    let pid: Int32
    private let peakUsage = Mutex(ProcessUsage())

    init(pid: Int32) {
        self.pid = pid
    }

    var peak: ProcessUsage { peakUsage.withLock { $0 } }

    func sample() -> ProcessUsage {
        ProcessUsage(pid: pid)
    }

    func sampleAndKeepPeak() {
        let usage = sample()
        peakUsage.withLock { $0 = $0.peak(with: usage) }
    }
}

/// Millisecond buckets: a thousand clients make a hundred million deliveries, too many to keep one by one.
struct LatencyHistogram: Sendable {
    private var buckets: [Int] = []
    private(set) var count = 0

    mutating func record(_ latency: Duration) {
        let bucket = Int(Swift.max(0, latency.milliseconds))
        if bucket >= buckets.count { buckets.append(contentsOf: repeatElement(0, count: bucket + 1 - buckets.count)) }
        buckets[bucket] += 1
        count += 1
    }

    /// The smallest whole number of milliseconds within which `fraction` of the deliveries arrived.
    func percentile(_ fraction: Double) -> Int64 {
        let wanted = Swift.max(1, Int((Double(count) * fraction).rounded(.up)))
        var seen = 0
        for (bucket, inBucket) in buckets.enumerated() {
            seen += inBucket
            if seen >= wanted { return Int64(bucket) }
        }
        return 0
    }
}

extension Duration {
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

extension Array where Element == Duration {
    /// The value below which `fraction` of this sorted array lies.
    func percentile(_ fraction: Double) -> Duration {
        guard !isEmpty else { return .zero }
        return self[Swift.min(count - 1, Swift.max(0, Int((Double(count) * fraction).rounded(.up)) - 1))]
    }
}
