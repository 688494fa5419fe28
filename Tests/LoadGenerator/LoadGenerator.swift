import ArgumentParser
import EdgeGatewayTestSupport
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Many devices against one gateway, in a process of their own so that the gateway is measured apart from its
/// clients: each client is a `LeanClient`, a continuous push-and-pull BLIP connection without a store, all of them
/// on one event loop. Every writing client writes its documents; a document has fanned out when its `rev` has
/// reached every other client. The summary goes to standard output as one JSON object, progress to standard
/// error; it gives the CPU time the gateway and the generator each spent per delivery, so that a run shows the
/// generator is not what limits it.
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

    @Option(help: "The gateway's process ID, to sample its resident memory, descriptors and threads.")
    var gatewayPid: Int32?

    @Option(help: "Seconds to wait for convergence after the last write before giving up.")
    var timeout = 600

    @Option(
        help: """
            Seconds every client stays connected after convergence, with nothing written, before the gateway is \
            sampled again (gatewayAfterQuiet): what a quiet fleet holds once it has received a write.
            """)
    var quietSeconds = 0

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
        let sampler = gatewayPid.map(UsageSampler.init(pid:))
        let idle = sampler?.sample()

        let tracker = FanOutTracker(receivers: clients - 1)
        let fleet = try (0..<clients).map {
            try LeanClient(index: $0, url: url, heartbeat: .seconds(heartbeat), tracker: tracker)
        }

        let connectStart = ContinuousClock.now
        for client in fleet { client.start() }
        try await waitUntilIdle(fleet, deadline: connectStart + .seconds(timeout))
        let connected = ContinuousClock.now - connectStart
        report("\(clients) clients connected and idle after \(connected.milliseconds) ms")
        // The gateway has answered every subscription; a moment lets it finish with the connections' set-up.
        try await Task.sleep(for: .seconds(2))
        let gatewayConnected = sampler?.sample()

        let samplingTask = Task {
            while !Task.isCancelled {
                sampler?.sampleAndKeepPeak()
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        let writeStart = ContinuousClock.now
        let gatewayAtStart = sampler?.sample()
        let generatorAtStart = ProcessUsage(pid: getpid())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in fleet.prefix(writerCount) {
                group.addTask {
                    try await client.writeAll(count: documents, interval: .milliseconds(writeInterval))
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
        let gatewayAtEnd = sampler?.sample()
        let generatorAtEnd = ProcessUsage(pid: getpid())
        samplingTask.cancel()
        _ = await samplingTask.result
        var gatewayAfterQuiet: ProcessUsage?
        if quietSeconds > 0 {
            report("every client connected and quiet for \(quietSeconds) s")
            try await Task.sleep(for: .seconds(quietSeconds))
            gatewayAfterQuiet = sampler?.sample()
        }

        let incompleteClients = fleet.filter { $0.documentCount != expected }.map(\.name)
        for client in fleet { await client.stop() }
        let latencies = tracker.fanOutLatencies()
        let deliveries = tracker.deliveryLatencies()
        /// CPU seconds between the first write and convergence, in microseconds per delivery.
        func perDelivery(_ start: ProcessUsage?, _ end: ProcessUsage?) -> Double? {
            guard let start, let end, deliveries.count > 0 else { return nil }
            return (end.cpuSeconds - start.cpuSeconds) * 1e6 / Double(deliveries.count)
        }
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
            gatewayIdle: idle, gatewayConnected: gatewayConnected, gatewayPeak: sampler?.peak,
            gatewayEnd: sampler?.sample(),
            generator: ProcessUsage(pid: getpid()),
            gatewayMicrosecondsPerDelivery: perDelivery(gatewayAtStart, gatewayAtEnd),
            generatorMicrosecondsPerDelivery: perDelivery(generatorAtStart, generatorAtEnd),
            gatewayAfterQuiet: gatewayAfterQuiet)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        print(String(decoding: try encoder.encode(summary), as: UTF8.self))
        if !incompleteClients.isEmpty || summary.documentsFannedOut < expected {
            throw ExitCode(1)
        }
    }

    /// Waits until every client's first run has connected and caught up both ways.
    func waitUntilIdle(_ fleet: [LeanClient], deadline: ContinuousClock.Instant) async throws {
        var lastReport = ContinuousClock.now
        while true {
            let idle = fleet.filter(\.isIdle).count
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

/// When each document was written and when its `rev` reached each other client.
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

    /// Per document that reached every other client: from its write to its arrival at the last of them, sorted.
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

    /// Per delivery (one document at one client): from its write to its arrival there.
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
