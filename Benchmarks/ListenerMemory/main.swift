import BLIPCodec
import BLIPConnection
import EdgeConfig
import EdgeStore
import Foundation
import Logging
import ReplicationProtocol
import SyncListener
import UpstreamDialer

// Resident memory of a listener process, idle and with many connected continuous clients. The listener runs in a
// child process (this executable with `serve`), so the clients' own memory is not counted.
//
//   swift run -c release ListenerMemory [clients]

var quietLogger: Logger {
    var logger = Logger(label: "listener-memory")
    logger.logLevel = .error
    return logger
}

/// `VmRSS` and `VmHWM` of a process, in KiB.
func residentMemory(of pid: Int32) throws -> (current: Int, peak: Int) {
    let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
    func field(_ name: String) -> Int {
        let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") } ?? ""
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
    }
    return (field("VmRSS"), field("VmHWM"))
}

func serve(directory: String) async throws {
    let store = try DocumentStore(dataDirectory: URL(fileURLWithPath: directory))
    let settings = ListenerSettings(
        name: "memory", interface: "127.0.0.1", port: 0, tls: .off, authentication: .none,
        databases: ["db"], deltaSync: true, maxConnections: 5_000, serviceDiscovery: nil)
    let listener = try SyncListener(
        settings: settings,
        environment: .init(
            store: store, databases: [DatabaseSettings(name: "db", collections: [DatabaseSettings.defaultCollection])],
            dataDirectory: directory, nodeName: "memory", serverVersion: "bench"),
        logger: quietLogger)
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await listener.run() }
        guard let port = await listener.boundPort() else { throw CancellationError() }
        print(port)
        fflush(stdout)
        try await group.waitForAll()
    }
}

/// A client that subscribes to the continuous changes feed and then stays connected, as an idle app does.
func idleContinuousClient(port: Int, connected: @escaping @Sendable () -> Void, until stop: Task<Void, Never>) async throws {
    let dialer = UpstreamDialer(
        target: try UpstreamTarget(url: "ws://127.0.0.1:\(port)/db/_blipsync"),
        options: .init(subprotocols: [ReplicationSubprotocol.cbMobile3.rawValue]), logger: quietLogger)
    try await dialer.run { session in
        let connection = try BLIPConnection(subprotocol: session.subprotocol, logger: quietLogger)
        await connection.setHandler(for: Profile.changes.rawValue) { request in request.reply() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await connection.run(inbound: session.inbound, outbound: session.outbound) }
            let (properties, body) = SubChangesRequest(continuous: true).encode()
            _ = try await connection.sendRequest(
                BLIPMessage(kind: .request, properties: BLIPProperties(properties.pairs), body: body))
            connected()
            await stop.value
            await connection.close()
            try await group.waitForAll()
        }
    }
}

let arguments = CommandLine.arguments
if arguments.count >= 3, arguments[1] == "serve" {
    try await serve(directory: arguments[2])
    exit(0)
}
let clientCount = arguments.count >= 2 ? Int(arguments[1]) ?? 1_000 : 1_000

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("edge-memory-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let server = Process()
server.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
server.arguments = ["serve", directory.path]
let output = Pipe()
server.standardOutput = output
try server.run()
guard let portLine = String(data: output.fileHandleForReading.availableData, encoding: .utf8),
    let port = Int(portLine.trimmingCharacters(in: .whitespacesAndNewlines))
else {
    fatalError("the listener did not report its port")
}
try await Task.sleep(for: .seconds(2))
let idle = try residentMemory(of: server.processIdentifier)

actor Counter {
    var value = 0
    func increment() { value += 1 }
}
let connectedClients = Counter()
let stop = Task<Void, Never> {
    while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
}
let clients = Task {
    await withTaskGroup(of: Void.self) { group in
        for index in 0..<clientCount {
            group.addTask {
                do {
                    try await idleContinuousClient(port: port, connected: { Task { await connectedClients.increment() } }, until: stop)
                } catch {
                    print("client \(index) failed: \(error)")
                }
            }
            if index % 50 == 49 { try? await Task.sleep(for: .milliseconds(20)) }
        }
    }
}
for _ in 0..<600 where await connectedClients.value < clientCount {
    try await Task.sleep(for: .milliseconds(100))
}
try await Task.sleep(for: .seconds(3))
let loaded = try residentMemory(of: server.processIdentifier)
let connected = await connectedClients.value

print("| Listener process | VmRSS | VmHWM (peak) |")
print("|---|---:|---:|")
print("| idle, no clients | \(idle.current / 1024) MiB | \(idle.peak / 1024) MiB |")
print("| \(connected) idle continuous clients connected | \(loaded.current / 1024) MiB | \(loaded.peak / 1024) MiB |")

stop.cancel()
await clients.value
server.terminate()
server.waitUntilExit()
