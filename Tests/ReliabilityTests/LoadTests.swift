import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import Synchronization
import Testing

/// Many continuous clients against one gateway process. The fan-out clients are the lean BLIP clients of the
/// `LoadGenerator` process; the soak's run in this one, each on the project's own active replicator. CI runs 100 clients of 10 documents;
/// `scripts/reliability/load` runs the full sizes on release builds, and the soak. Figures are printed for
/// RELIABILITY.md; only correctness (convergence, no growth beyond 5 %) is asserted, timing is not.
@Suite("Load: many continuous clients")
struct LoadTests {
    static let clientCount = ReliabilityScale.integer("RELIABILITY_LOAD_CLIENTS", default: 100)
    static let documentsPerClient = ReliabilityScale.integer("RELIABILITY_LOAD_DOCUMENTS", default: 10)
    /// Milliseconds between one client's writes; 0 writes everything at once.
    static let writeInterval = ReliabilityScale.integer("RELIABILITY_LOAD_WRITE_INTERVAL", default: 1000)
    static let soakClients = ReliabilityScale.integer("RELIABILITY_SOAK_CLIENTS", default: 200)
    static let soakSeconds = ReliabilityScale.integer("RELIABILITY_SOAK_SECONDS", default: 60)
    /// How many clients write a document in each soak cycle, taking turns; every client syncs in every cycle. The
    /// soak is about connection churn: when every client wrote, a cycle of 200 clients delivered 40,000 documents and
    /// took 40–60 s of a CI run, and the soak's 16 cycles took 15 minutes.
    static let soakWritersPerCycle = ReliabilityScale.integer("RELIABILITY_SOAK_WRITERS", default: 20)

    static var loadGenerator: URL {
        EdgeGatewayExecutable.url.deletingLastPathComponent().appendingPathComponent("LoadGenerator")
    }

    @Test("every client receives every other client's documents; fan-out latency, RSS and descriptors are recorded")
    func fanOut() async throws {
        let root = try reliabilityDirectory("load")
        defer { try? FileManager.default.removeItem(at: root) }
        var gateway = try GatewayProcess(
            directory: root.appendingPathComponent("gateway")
        ) { $0.listeners[0]["max_connections"] = .integer(Self.clientCount + 100) }
        try await gateway.start()
        defer { _ = gateway.terminate() }
        let gatewayPID = try #require(gateway.process?.processIdentifier)

        // The clients run in a process of their own, as devices would, so the gateway's figures are its own.
        let summaryPath = root.appendingPathComponent("summary.json")
        let logPath = root.appendingPathComponent("load-generator.log")
        #expect(FileManager.default.createFile(atPath: summaryPath.path, contents: nil))
        #expect(FileManager.default.createFile(atPath: logPath.path, contents: nil))
        let generator = SpawnedProcess()
        generator.executableURL = Self.loadGenerator
        generator.arguments = [
            "--url", gateway.url, "--clients", "\(Self.clientCount)", "--documents", "\(Self.documentsPerClient)",
            "--write-interval", "\(Self.writeInterval)", "--gateway-pid", "\(gatewayPID)",
        ]
        generator.standardOutput = try FileHandle(forWritingTo: summaryPath)
        generator.standardError = try FileHandle(forWritingTo: logPath)
        generator.standardInput = FileHandle.nullDevice
        try generator.run()
        let deadline = ContinuousClock.now + .seconds(900)
        while generator.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        if generator.isRunning { generator.terminate() }
        generator.waitUntilExit()
        let log = (try? String(contentsOf: logPath, encoding: .utf8)) ?? ""
        let output = try Data(contentsOf: summaryPath)
        let summary = try #require(
            try? JSONDecoder().decode(LoadGeneratorSummary.self, from: output),
            "no summary from the load generator (exit \(generator.terminationStatus)):\n\(log.suffix(3000))")
        #expect(generator.terminationStatus == 0, "\(log.suffix(3000))")
        #expect(
            summary.documentsFannedOut == summary.documentsExpected,
            "\(summary.documentsFannedOut) of \(summary.documentsExpected) documents reached every client")
        #expect(summary.incompleteClients.isEmpty, "clients missing documents: \(summary.incompleteClients)")
        #expect(gateway.process?.isRunning == true, "the gateway died: \(gateway.logTail())")
        let idle = summary.gatewayIdle.map { "\($0)" } ?? "?"
        let connected = summary.gatewayConnected.map { "\($0)" } ?? "?"
        let peak = summary.gatewayPeak.map { "\($0)" } ?? "?"
        let writing = "one write every \(Self.writeInterval) ms per client"
        let timing =
            "connected in \(summary.connectedMilliseconds) ms, written in \(summary.writeMilliseconds) ms, converged "
            + "\(summary.convergedAfterLastWriteMilliseconds) ms after the last write"
        let fanOut =
            "fan-out p50 \(summary.fanOutP50Milliseconds) ms, p99 \(summary.fanOutP99Milliseconds) ms, max "
            + "\(summary.fanOutMaxMilliseconds) ms; \(summary.deliveries) deliveries, p50 "
            + "\(summary.deliveryP50Milliseconds) ms, p99 \(summary.deliveryP99Milliseconds) ms"
        let perDelivery = [
            ("gateway", summary.gatewayMicrosecondsPerDelivery),
            ("generator", summary.generatorMicrosecondsPerDelivery),
        ].map { "\($0) \($1.map { String(format: "%.0f", $0) } ?? "?") µs" }.joined(separator: ", ")
        let usage =
            "gateway idle: \(idle); with every client connected: \(connected); peak: \(peak); load generator: \(summary.generator); CPU per delivery: \(perDelivery)"
        print(
            "load: \(Self.clientCount) clients × \(Self.documentsPerClient) documents, \(writing): \(timing); \(fanOut); \(usage)"
        )
    }

    /// Lets the gateway finish tearing down closed connections and hand freed memory back (its heap trim runs
    /// every 10 s), so that both ends of the soak are measured in the same quiet state.
    static func settle() async throws {
        try await Task.sleep(for: .seconds(12))
    }

    /// Cycles before the first measurement: they open the database's connections, fill the allocator's arenas and
    /// start the runtime's workers, which the first cycles of a fresh gateway do and later ones do not.
    static let soakWarmUpCycles = 6

    /// How many cycles, each followed by a settled measurement, make each end of the soak.
    static let soakSamples = 5

    /// Whether the end's resident size has grown beyond what a quiet gateway's moves by itself: its least settled
    /// sample against the start's greatest, plus 5 %. The start's samples span that movement: what glibc keeps of
    /// freed memory differs after each settled cycle (anonymous memory 10–17 MiB within one run), and it keeps 2–3
    /// MiB more while one more parked libdispatch worker stays (RELIABILITY.md, Soak), so comparing one sample, a
    /// median or the floors at each end decided the 5 % by chance. Growth that lasts raises every end sample, the
    /// least too, so it still fails once it passes the start's spread.
    static func residentSizeHeld(start: [GatewayProcess.Usage], end: [GatewayProcess.Usage]) -> (
        held: Bool, startCeilingKiB: Int, endFloorKiB: Int
    ) {
        let ceiling = start.map(\.residentKiB).max() ?? 0
        let floor = end.map(\.residentKiB).min() ?? 0
        return (Double(floor) <= Double(ceiling) * 1.05, ceiling, floor)
    }

    @Test(
        "the soak's memory rule passes a quiet gateway's movement and fails growth beyond it",
        arguments: [
            // The CI run of 7d85904: level, with one more parked worker at the end.
            ([62, 62, 63], [65, 66, 65], true),
            ([64, 65, 64, 65, 65], [70, 66, 66, 66, 68], true),
            // Growth in every end sample beyond the start's spread and 5 %.
            ([63, 64, 63, 64, 63], [68, 69, 68, 70, 69], false),
            ([62, 62, 62], [66, 66, 80], false),
        ])
    func residentRule(startMiB: [Int], endMiB: [Int], held: Bool) {
        func samples(_ mebibytes: [Int]) -> [GatewayProcess.Usage] {
            mebibytes.map {
                var usage = GatewayProcess.Usage()
                usage.residentKiB = $0 * 1024
                return usage
            }
        }
        #expect(Self.residentSizeHeld(start: samples(startMiB), end: samples(endMiB)).held == held)
    }

    /// The sample of median resident size, for the counts of descriptors and threads at that end.
    static func median(_ samples: [GatewayProcess.Usage]) -> GatewayProcess.Usage {
        samples.sorted { $0.residentKiB < $1.residentKiB }[samples.count / 2]
    }

    /// The workers of libdispatch's root queues, by queue (Linux keeps the last 15 characters of a name such as
    /// `com.apple.root.default-qos`), which also run Swift's concurrency pool. The pool starts a worker when work is
    /// queued and none is idle, and a worker exits after 5 s without work, so at rest their number drifts by one with
    /// the gateway's timers (6/6/6 threads at the start and 6/7/7 at the end of one CI run, the extra one a
    /// default-QoS worker). A leaked thread never exits: every other thread is held to the 5 %, and each queue to at
    /// most one more worker than at the start.
    static func dispatchWorkers(_ usage: GatewayProcess.Usage) -> [String: Int] {
        usage.threadNames.filter { $0.key.contains("-qos") }
    }

    @Test(
        "a soak of clients connecting, syncing and disconnecting leaves memory, descriptors and threads as they were")
    func soak() async throws {
        let root = try reliabilityDirectory("soak")
        defer { try? FileManager.default.removeItem(at: root) }
        var gateway = try GatewayProcess(directory: root.appendingPathComponent("gateway"))
        try await gateway.start()
        defer { _ = gateway.terminate() }
        var built: [SyncClient] = []
        for index in 0..<Self.soakClients {
            built.append(
                try await SyncClient(
                    name: "s\(index)", directory: root.appendingPathComponent("s\(index)"), remoteURL: gateway.url))
        }
        let clients = built
        defer { for client in clients { client.close() } }

        var written = 0
        var cyclesRun = 0
        /// One cycle per client: this cycle's writers write, then every client connects, syncs once (continuous
        /// until caught up) and disconnects.
        func cycle(_ round: Int, writers: Int = Self.soakWritersPerCycle) async throws {
            let firstWriter = cyclesRun * writers
            cyclesRun += 1
            let writing = Set((firstWriter..<firstWriter + min(writers, clients.count)).map { $0 % clients.count })
            written += writing.count
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, client) in clients.enumerated() {
                    group.addTask {
                        if writing.contains(index) { try await client.write(round) }
                        // More clients than the listener's connection slots: a refused one retries, as Couchbase
                        // Lite does after a 503.
                        for attempt in 1...100 {
                            do {
                                try await client.syncOnce()
                                break
                            } catch  where attempt < 100 {
                                try await Task.sleep(for: .milliseconds(Int.random(in: 100...300)))
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        var rounds = 0
        /// `soakSamples` cycles, each measured once the gateway has settled.
        func settledSamples() async throws -> [GatewayProcess.Usage] {
            var samples: [GatewayProcess.Usage] = []
            for _ in 0..<Self.soakSamples {
                rounds += 1
                try await cycle(rounds)
                try await Self.settle()
                samples.append(gateway.usage())
            }
            return samples
        }
        func summary(_ samples: [GatewayProcess.Usage]) -> String {
            samples.map {
                "\($0.residentKiB / 1024)/\($0.anonymousKiB / 1024)/\($0.fileDescriptors)/\($0.threads)"
            }
            .joined(separator: " ")
        }

        for warmUp in 0..<Self.soakWarmUpCycles {
            try await cycle(-1 - warmUp)
        }
        let startSamples = try await settledSamples()
        // The heap's figures come from a scrape of /metrics, which counts the documents and so reads the database
        // into a page cache: once after each end's samples, not before every sample.
        let startHeap = try await gateway.usageWithHeap()
        let deadline = ContinuousClock.now + .seconds(Self.soakSeconds)
        var busy: [String] = []
        while ContinuousClock.now < deadline, rounds < 100_000 {
            rounds += 1
            try await cycle(rounds)
            let usage = gateway.usage()
            busy.append("\(usage.residentKiB / 1024)/\(usage.anonymousKiB / 1024)/\(usage.threads)")
        }
        let endSamples = try await settledSamples()
        let endHeap = try await gateway.usageWithHeap()
        // A client may finish its sync before another writes in the same cycle; one cycle without writers brings
        // every client up to date, and then each must hold every document written.
        try await cycle(rounds + 1, writers: 0)
        var behind: [String] = []
        for client in clients {
            let count = try await client.documentCount()
            if count != written { behind.append("\(client.name): \(count)") }
        }
        #expect(behind.isEmpty, "clients without all \(written) documents: \(behind.prefix(10))")
        let start = Self.median(startSamples)
        let end = Self.median(endSamples)
        print(
            "soak: right after each unsettled cycle, gateway RSS MiB/anonymous MiB/threads: \(busy.joined(separator: " "))"
        )
        print(
            "soak: settled samples, RSS MiB/anonymous MiB/fds/threads: at the start \(summary(startSamples)); "
                + "at the end \(summary(endSamples))")
        func heap(_ usage: GatewayProcess.Usage) -> String {
            let inUse = usage.heapInUseKiB.map { String(format: "%.1f", Double($0) / 1024) } ?? "?"
            let sqlite = usage.sqliteKiB.map { String(format: "%.1f", Double($0) / 1024) } ?? "?"
            return "\(inUse) MiB (SQLite \(sqlite))"
        }
        print("soak: heap in use after the start samples \(heap(startHeap)), after the end samples \(heap(endHeap))")
        func within5Percent(_ end: Int, _ start: Int) -> Bool { Double(end) <= Double(start) * 1.05 }
        let resident = Self.residentSizeHeld(start: startSamples, end: endSamples)
        let residentComparison =
            "least RSS at the end \(resident.endFloorKiB) KiB against the start's greatest \(resident.startCeilingKiB) KiB: "
            + "\(summary(startSamples)) → \(summary(endSamples))"
        #expect(resident.held, "\(residentComparison)")
        #expect(within5Percent(end.fileDescriptors, start.fileDescriptors), "fds \(start) → \(end)")
        let startPool = Self.dispatchWorkers(start)
        let endPool = Self.dispatchWorkers(end)
        #expect(
            within5Percent(end.threads - endPool.values.reduce(0, +), start.threads - startPool.values.reduce(0, +)),
            "threads outside libdispatch's worker pools \(start) → \(end)")
        for (queue, workers) in endPool {
            #expect(workers <= startPool[queue, default: 0] + 1, "libdispatch \(queue) workers: \(start) → \(end)")
        }
        print(
            "soak: \(Self.soakClients) clients × \(cyclesRun) connect/sync/disconnect cycles, \(written) documents, "
                + "\(Self.soakSeconds) s between "
                + "the settled samples; greatest RSS at the start \(resident.startCeilingKiB / 1024) MiB, least at the end "
                + "\(resident.endFloorKiB / 1024) MiB; gateway at the start "
                + "(median): \(start); at the end: \(end)")
    }
}
