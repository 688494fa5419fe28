import EdgeGatewayTestSupport
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One `edge-gateway serve` child process with a plain listener for the `inventory` database, on loopback or, with
/// `namespace`, on an address of that network namespace (the process runs there; its ops endpoint is on the
/// namespace's own loopback). Its output goes to a log file, not a pipe: a long run logs more than a pipe holds,
/// and a full pipe would stall the gateway.
struct GatewayProcess {
    /// A network namespace to run in, and the address of it that the listener binds.
    struct Network {
        var namespace: String
        var address: String
    }

    let directory: URL
    let listenerPort: Int
    let opsPort: Int
    let dataDirectory: URL
    let network: Network?
    private(set) var process: SpawnedProcess?

    var configPath: String { directory.appendingPathComponent("gateway.toml").path }
    var logPath: String { directory.appendingPathComponent("gateway.log").path }
    var url: String { "ws://\(network?.address ?? "127.0.0.1"):\(listenerPort)/inventory" }

    static var binary: URL {
        // `swift test` runs the test bundle from the products directory, where the executable is built too.
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("edge-gateway")
    }

    /// - Parameter dataDirectory: where the stores go, `data` under `directory` by default; the log and the
    ///   configuration stay in `directory`.
    init(
        directory: URL, dataDirectory: URL? = nil, network: Network? = nil, listenerSettings: String = "",
        extraConfiguration: String = ""
    ) throws {
        self.directory = directory
        self.dataDirectory = dataDirectory ?? directory.appendingPathComponent("data")
        self.network = network
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // A namespace of the test's own has every port free.
        listenerPort = network == nil ? try freeLoopbackPort() : 4984
        // Neither port is bound until the gateway starts, so the system may hand out the same free one twice.
        var opsPort = network == nil ? try freeLoopbackPort() : 4985
        while opsPort == listenerPort {
            opsPort = try freeLoopbackPort()
        }
        self.opsPort = opsPort
        try """
        [node]
        name = "reliability"
        data_dir = "\(self.dataDirectory.path)"

        [ops]
        address = "127.0.0.1"
        port = \(opsPort)

        [[database]]
        name = "inventory"

        [[listener]]
        name = "lan"
        interface = "\(network?.address ?? "127.0.0.1")"
        port = \(listenerPort)
        tls = "off"
        auth = "none"
        databases = ["inventory"]
        \(listenerSettings)

        \(extraConfiguration)
        """.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// Starts `serve` and waits until its ops endpoint answers /health.
    mutating func start() async throws {
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        _ = try log.seekToEnd()
        let process = SpawnedProcess()
        if let network {
            // `ip netns exec` execs the command: the process held is the gateway itself, as signals need.
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "ip", "netns", "exec", network.namespace, Self.binary.path, "serve", "--config", configPath,
            ]
        } else {
            process.executableURL = Self.binary
            process.arguments = ["serve", "--config", configPath]
        }
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("EDGE_GATEWAY_") }
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
        // A debug build on a busy machine can take several seconds to open its stores and bind.
        for _ in 0..<600 {
            if (try? await health()) != nil { return }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.terminate()
        process.waitUntilExit()
        throw ReliabilityFailure("gateway did not come up:\n\(logTail())")
    }

    /// SIGKILL: no shutdown path runs, as when the power goes.
    mutating func kill() {
        guard let process else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    /// Drops a process that the caller saw exit.
    mutating func forget() {
        process = nil
    }

    /// SIGTERM, then waits for the exit; returns the exit status.
    mutating func terminate() -> Int32 {
        guard let process else { return 0 }
        Foundation.kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        self.process = nil
        return process.terminationStatus
    }

    /// GET /health as JSON text.
    func health() async throws -> String {
        if let network {
            return try await NamespacedHTTP.get(namespace: network.namespace, port: opsPort, path: "/health").body
        }
        let (body, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(opsPort)/health")!)
        return String(decoding: body, as: UTF8.self)
    }

    /// GET /metrics as Prometheus text.
    func metrics() async throws -> String {
        let (body, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(opsPort)/metrics")!)
        return String(decoding: body, as: UTF8.self)
    }

    /// The process's resident and peak resident memory, open descriptors and threads, from /proc.
    struct Usage: CustomStringConvertible {
        var residentKiB = 0
        /// The resident size split: private memory (the heap, stacks) against mapped files (the binary, its
        /// libraries) and shared memory (SQLite's WAL index), which grow for different reasons.
        var anonymousKiB = 0
        var fileKiB = 0
        var sharedKiB = 0
        var peakResidentKiB = 0
        var fileDescriptors = 0
        var threads = 0
        /// How many threads bear each name, so that a growing count says whose threads they are.
        var threadNames: [String: Int] = [:]
        /// What the gateway's heap holds live (its `edgegateway_process_heap_in_use_bytes`), set by
        /// `usageWithHeap()`: the part of the anonymous memory that a leak grows and the allocator's keeping does not.
        var heapInUseKiB: Int?
        /// What SQLite holds of that heap (its `edgegateway_store_sqlite_memory_bytes`): page caches that fill as
        /// the database grows.
        var sqliteKiB: Int?

        var description: String {
            let names = threadNames.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
            let heap = heapInUseKiB.map { ", heap in use \($0) KiB (SQLite \(sqliteKiB.map { "\($0)" } ?? "?"))" } ?? ""
            return "RSS \(residentKiB / 1024) MiB (anonymous \(anonymousKiB / 1024), files \(fileKiB / 1024), "
                + "shared \(sharedKiB / 1024); peak \(peakResidentKiB / 1024) MiB\(heap)), \(fileDescriptors) fds, "
                + "\(threads) threads (\(names))"
        }
    }

    /// `usage()`, then the gateway's heap in use from its metrics (read after /proc, so that the scrape's own
    /// allocations are not in the resident size).
    func usageWithHeap() async throws -> Usage {
        var usage = usage()
        let metrics = try await metrics()
        usage.heapInUseKiB = Self.sample(metrics, "edgegateway_process_heap_in_use_bytes").map { Int($0) / 1024 }
        usage.sqliteKiB = Self.sample(metrics, "edgegateway_store_sqlite_memory_bytes").map { Int($0) / 1024 }
        return usage
    }

    /// The sum of `name`'s samples in Prometheus text whose labels include `labels`; `nil` when there is none.
    static func sample(_ metrics: String, _ name: String, _ labels: [String: String] = [:]) -> Double? {
        var total: Double?
        for line in metrics.split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ") {
            guard labels.allSatisfy({ line.contains("\($0.key)=\"\($0.value)\"") }),
                let value = line.split(separator: " ").last.flatMap({ Double($0) })
            else { continue }
            total = (total ?? 0) + value
        }
        return total
    }

    func usage() -> Usage {
        guard let pid = process?.processIdentifier else { return Usage() }
        var usage = Usage()
        let status = ProcessStatus(pid: pid)
        usage.residentKiB = status["VmRSS"]
        usage.peakResidentKiB = status["VmHWM"]
        usage.anonymousKiB = status["RssAnon"]
        usage.fileKiB = status["RssFile"]
        usage.sharedKiB = status["RssShmem"]
        usage.threads = status["Threads"]
        usage.fileDescriptors = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).count
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
            let name = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)) ?? "?"
            usage.threadNames[name.trimmingCharacters(in: .whitespacesAndNewlines), default: 0] += 1
        }
        return usage
    }

    func logTail(_ characters: Int = 4000) -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return String(text.suffix(characters))
    }
}

struct ReliabilityFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Sizes of a run: the bounded CI ones by default; the full runs of `scripts/reliability/` set them through the
/// environment.
enum ReliabilityScale {
    static func integer(_ name: String, default value: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap(Int.init) ?? value
    }
}

func reliabilityDirectory(_ name: String) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("edge-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}
