import Foundation
import GatewayConfigurationFile

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One `edge-gateway serve` child process on a configuration file of its own: by default a plain listener `lan`
/// for the `inventory` database on loopback, or, with `network`, on an address of that network namespace (the
/// process runs there; its ops endpoint is on the namespace's own loopback). `configure` changes the file before
/// it is written. Its output goes to a log file, not a pipe: a long run logs more than a pipe holds, and a full
/// pipe would stall the gateway.
package struct GatewayProcess {
    /// A network namespace to run in, and the address of it that the listener binds.
    package struct Network {
        package var namespace: String
        package var address: String

        package init(namespace: String, address: String) {
            self.namespace = namespace
            self.address = address
        }
    }

    package let directory: URL
    package let listenerPort: Int
    package let opsPort: Int
    package let dataDirectory: URL
    package let network: Network?
    /// Variables the process gets besides the test's own, such as the D-Bus that DNS-SD uses.
    package let environment: [String: String]
    package let configuration: GatewayTOML
    package private(set) var process: SpawnedProcess?

    package var configPath: String { directory.appendingPathComponent("gateway.toml").path }
    package var logPath: String { directory.appendingPathComponent("gateway.log").path }
    package var url: String { "ws://\(network?.address ?? "127.0.0.1"):\(listenerPort)/inventory" }

    /// - Parameters:
    ///   - dataDirectory: where the stores go, `data` under `directory` by default; the log and the
    ///     configuration stay in `directory`.
    ///   - configure: changes the file; ports it sets are the ones the process is reached on.
    package init(
        directory: URL, dataDirectory: URL? = nil, network: Network? = nil, environment: [String: String] = [:],
        configure: (inout GatewayTOML) -> Void = { _ in }
    ) throws {
        self.directory = directory
        self.dataDirectory = dataDirectory ?? directory.appendingPathComponent("data")
        self.network = network
        self.environment = environment
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // A namespace of the test's own has every port free.
        let listenerPort = network == nil ? try freeLoopbackPort() : 4984
        // Neither port is bound until the gateway starts, so the system may hand out the same free one twice.
        var opsPort = network == nil ? try freeLoopbackPort() : 4985
        while opsPort == listenerPort {
            opsPort = try freeLoopbackPort()
        }
        var configuration = GatewayTOML(name: directory.lastPathComponent, dataDirectory: self.dataDirectory.path)
        configuration.ops?["port"] = .integer(opsPort)
        configuration.listeners = [
            GatewayTOML.listener(interface: network?.address ?? "127.0.0.1", port: listenerPort)
        ]
        configure(&configuration)
        self.configuration = configuration
        guard case .integer(let finalOpsPort) = configuration.ops?["port"] else {
            throw HarnessFailure("a gateway under test needs [ops] with a port, to be seen up")
        }
        self.opsPort = finalOpsPort
        if case .integer(let finalListenerPort) = configuration.listeners.first?["port"] {
            self.listenerPort = finalListenerPort
        } else {
            self.listenerPort = listenerPort
        }
        try configuration.write(to: configPath)
    }

    /// Starts `serve` (with `arguments` after the configuration's) and waits until its ops endpoint answers
    /// /health.
    package mutating func start(arguments: [String] = []) async throws {
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        _ = try log.seekToEnd()
        let process = SpawnedProcess()
        let serve = [EdgeGatewayExecutable.url.path, "serve", "--config", configPath] + arguments
        if let network {
            // `ip netns exec` execs the command: the process held is the gateway itself, as signals need.
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["ip", "netns", "exec", network.namespace] + serve
        } else {
            process.executableURL = EdgeGatewayExecutable.url
            process.arguments = Array(serve.dropFirst())
        }
        process.environment = EdgeGatewayExecutable.childEnvironment(environment)
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
        throw HarnessFailure("gateway did not come up:\n\(logTail())")
    }

    /// SIGKILL: no shutdown path runs, as when the power goes.
    package mutating func kill() {
        guard let process else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    /// Drops a process that the caller saw exit.
    package mutating func forget() {
        process = nil
    }

    /// SIGTERM, then waits for the exit; returns the exit status.
    package mutating func terminate() -> Int32 {
        guard let process else { return 0 }
        Foundation.kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        self.process = nil
        return process.terminationStatus
    }

    /// GET /health as JSON text.
    package func health() async throws -> String {
        if let network {
            return try await NamespacedHTTP.get(namespace: network.namespace, port: opsPort, path: "/health").body
        }
        let (body, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(opsPort)/health")!)
        return String(decoding: body, as: UTF8.self)
    }

    /// GET /metrics as Prometheus text.
    package func metrics() async throws -> String {
        let (body, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(opsPort)/metrics")!)
        return String(decoding: body, as: UTF8.self)
    }

    /// The process's resident and peak resident memory, open descriptors and threads, from /proc.
    package struct Usage: CustomStringConvertible {
        package var residentKiB = 0
        /// The resident size split: private memory (the heap, stacks) against mapped files (the binary, its
        /// libraries) and shared memory (SQLite's WAL index), which grow for different reasons.
        package var anonymousKiB = 0
        package var fileKiB = 0
        package var sharedKiB = 0
        package var peakResidentKiB = 0
        package var fileDescriptors = 0
        package var threads = 0
        /// How many threads bear each name, so that a growing count says whose threads they are.
        package var threadNames: [String: Int] = [:]
        /// What the gateway's heap holds live (its `edgegateway_process_heap_in_use_bytes`), set by
        /// `usageWithHeap()`: the part of the anonymous memory that a leak grows and the allocator's keeping does not.
        package var heapInUseKiB: Int?
        /// What SQLite holds of that heap (its `edgegateway_store_sqlite_memory_bytes`): page caches that fill as
        /// the database grows.
        package var sqliteKiB: Int?

        package init() {}

        package var description: String {
            let names = threadNames.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
            let heap = heapInUseKiB.map { ", heap in use \($0) KiB (SQLite \(sqliteKiB.map { "\($0)" } ?? "?"))" } ?? ""
            return "RSS \(residentKiB / 1024) MiB (anonymous \(anonymousKiB / 1024), files \(fileKiB / 1024), "
                + "shared \(sharedKiB / 1024); peak \(peakResidentKiB / 1024) MiB\(heap)), \(fileDescriptors) fds, "
                + "\(threads) threads (\(names))"
        }
    }

    /// `usage()`, then the gateway's heap in use from its metrics (read after /proc, so that the scrape's own
    /// allocations are not in the resident size).
    package func usageWithHeap() async throws -> Usage {
        var usage = usage()
        let metrics = try await metrics()
        usage.heapInUseKiB = Self.sample(metrics, "edgegateway_process_heap_in_use_bytes").map { Int($0) / 1024 }
        usage.sqliteKiB = Self.sample(metrics, "edgegateway_store_sqlite_memory_bytes").map { Int($0) / 1024 }
        return usage
    }

    /// The sum of `name`'s samples in Prometheus text whose labels include `labels`; `nil` when there is none.
    package static func sample(_ metrics: String, _ name: String, _ labels: [String: String] = [:]) -> Double? {
        var total: Double?
        for line in metrics.split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ") {
            guard labels.allSatisfy({ line.contains("\($0.key)=\"\($0.value)\"") }),
                let value = line.split(separator: " ").last.flatMap({ Double($0) })
            else { continue }
            total = (total ?? 0) + value
        }
        return total
    }

    package func usage() -> Usage {
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

    package func logTail(_ characters: Int = 4000) -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return String(text.suffix(characters))
    }

    /// Everything the gateway logged so far.
    package var logText: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }
}

/// Why a test harness could not do its part (start a gateway, reach a namespace).
package struct HarnessFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

extension GatewayProcess {
    /// Runs another command of the gateway on this one's configuration, as an operator would beside it.
    package func run(_ arguments: [String]) async throws -> EdgeGatewayExecutable.Outcome {
        try await EdgeGatewayExecutable.run(arguments + ["--config", configPath])
    }
}
