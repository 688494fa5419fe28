import EdgeConfig
import EdgeGatewayApp
import EdgeStore
import Foundation
import Logging
import SyncListener

// The gateway's sync listener in a process of its own, so that a benchmark can measure its CPU time and peak
// memory apart from the client's: serves the database `bench` of the store in the given data directory over
// ws://127.0.0.1 on a free port, prints the port on a line, and runs until killed.
//
//   GatewayChild <data directory>

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: GatewayChild <data directory>\n".utf8))
    exit(2)
}
let directory = URL(fileURLWithPath: CommandLine.arguments[1])
var logger = Logger(label: "gateway-child")
logger.logLevel = .error
let store = try DocumentStore(dataDirectory: directory)
let settings = ListenerSettings(
    name: "bench", interface: "127.0.0.1", port: 0, tls: .off, authentication: .none,
    databases: ["bench"], deltaSync: true, maxConnections: 16, serviceDiscovery: nil)
let listener = try SyncListener(
    configuration: .init(
        settings, databases: [DatabaseSettings(name: "bench", collections: [.default])],
        dataDirectory: directory.path),
    environment: .init(store: store, dataDirectory: directory.path, nodeName: "bench", serverVersion: "bench"),
    logger: logger)
try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask { try await listener.run() }
    guard let port = await listener.boundPort() else { exit(1) }
    FileHandle.standardOutput.write(Data("\(port)\n".utf8))
    try await group.waitForAll()
}
