import EdgeGatewayApp
import Foundation
import GatewayConfigurationFile
import Hummingbird
import Logging

/// Runs `body` with a whole gateway built in-process, as `serve` builds it, from a configuration with the
/// `inventory` database over a fresh data directory (or `dataDirectory`; removed after either way), its ops endpoint on a loopback port
/// the system picks, and `listeners` and `upstreams`.
package func withTemporaryGateway(
    name: String = "test-node",
    listeners: [GatewayTOML.Table] = [],
    upstreams: [GatewayTOML.Table] = [],
    dataDirectory: URL? = nil,
    logger: Logger = Logger(label: "test"),
    _ body: (any ApplicationProtocol) async throws -> Void
) async throws {
    let directory =
        dataDirectory
        ?? FileManager.default.temporaryDirectory.appendingPathComponent("edge-gateway-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = GatewayTOML(name: name, dataDirectory: directory.path, listeners: listeners, upstreams: upstreams)
    let application = try await buildApplication(configuration: try file.configuration(), logger: logger)
    try await body(application)
}
