import BLIPCodec
import BLIPConnection
import EdgeConfig
import EdgeGatewayApp
import EdgeStore
import Foundation
import Logging
import ReplicationProtocol
import SyncListener
import UpstreamDialer

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
        configuration: .init(
            settings, databases: [DatabaseSettings(name: "db", collections: [.default])],
            dataDirectory: directory),
        environment: .init(store: store, dataDirectory: directory, nodeName: "memory", serverVersion: "bench"),
        logger: quietLogger)
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await listener.run() }
        guard let port = await listener.boundPort() else { throw CancellationError() }
        FileHandle.standardOutput.write(Data("\(port)\n".utf8))
        try await group.waitForAll()
    }
}

/// A client that subscribes to the continuous changes feed and then stays connected, as an idle app does.
func idleContinuousClient(port: Int, connected: @escaping @Sendable () -> Void, until stop: Task<Void, Never>)
    async throws
{
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
