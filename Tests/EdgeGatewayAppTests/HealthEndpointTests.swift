import EdgeConfig
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import GatewayConfigurationFile
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import EdgeGatewayApp

@Suite("Health endpoint")
struct HealthEndpointTests {
    @Test("GET /health reports the node and an open, writable store")
    func fullReport() async throws {
        try await withTemporaryGateway(name: "health-test") { application in
            try await application.test(.live) { client in
                try await client.execute(uri: "/health", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "application/json")
                    let report = try JSONDecoder().decode(HealthMonitor.Report.self, from: Data(buffer: response.body))
                    #expect(report.status == .up)
                    #expect(report.node == "health-test")
                    let store = try #require(report.components.first { $0.kind == .store })
                    #expect(store.name == "inventory")
                    #expect(store.status == .up)
                    #expect(store.details["writable"] == .boolean(true))
                }
            }
        }
    }

    @Test("listeners appear in /health with their state, port and connection counts")
    func listenerReport() async throws {
        try await withTemporaryGateway(listeners: [GatewayTOML.listener(tls: "self-signed")]) { application in
            try await application.test(.live) { client in
                var listener: ComponentHealth?
                for _ in 0..<50 {
                    listener = try await client.execute(uri: "/health", method: .get) { response in
                        let report = try JSONDecoder().decode(
                            HealthMonitor.Report.self, from: Data(buffer: response.body))
                        return report.components.first { $0.kind == .listener }
                    }
                    if listener?.status == .up { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                let lan = try #require(listener)
                #expect(lan.name == "lan")
                #expect(lan.status == .up)
                #expect(lan.details["state"] == "running")
                #expect(lan.details["tls"] == .boolean(true))
                #expect(lan.details["activeConnections"] == .integer(0))
                #expect(lan.details["database.inventory.totalConnections"] == .integer(0))
                guard case .integer(let port) = lan.details["port"] else {
                    Issue.record("no bound port reported")
                    return
                }
                #expect(port > 0)
            }
        }
    }

    @Test("HEAD answers like GET, without a body", arguments: ["/health", "/health/live", "/health/ready"])
    func headRequests(path: String) async throws {
        try await withTemporaryGateway { application in
            try await application.test(.live) { client in
                try await client.execute(uri: path, method: .head) { response in
                    #expect(response.status == .ok)
                    #expect(response.body.readableBytes == 0)
                }
            }
        }
    }

    @Test("liveness and readiness answer 200 once the server runs")
    func livenessAndReadiness() async throws {
        try await withTemporaryGateway { application in
            try await application.test(.live) { client in
                try await client.execute(uri: "/health/live", method: .get) { response in
                    #expect(response.status == .ok)
                }
                try await client.execute(uri: "/health/ready", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(String(buffer: response.body).contains("\"ready\""))
                }
            }
        }
    }

    @Test("a component that is down turns /health and /health/ready into 503 and names the reason")
    func downComponent() async throws {
        let monitor = HealthMonitor(nodeName: "down-test")
        monitor.register(
            StaticReporter(reports: [
                ComponentHealth(name: "cloud", kind: .upstream, status: .down, reason: "HTTP 401 from upstream")
            ]))
        monitor.markReady()
        let router = Router()
        HealthController(monitor: monitor).addRoutes(to: router)
        let application = Application(router: router)
        try await application.test(.router) { client in
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                let report = try JSONDecoder().decode(HealthMonitor.Report.self, from: Data(buffer: response.body))
                #expect(report.status == .down)
            }
            try await client.execute(uri: "/health/ready", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(String(buffer: response.body).contains("upstream cloud: HTTP 401 from upstream"))
            }
        }
    }

    @Test("a degraded component keeps /health at 200 but reports it")
    func degradedComponent() async throws {
        let monitor = HealthMonitor(nodeName: "degraded-test")
        monitor.register(
            StaticReporter(reports: [
                ComponentHealth(name: "dns-sd", kind: .discovery, status: .degraded, reason: "no avahi-daemon"),
                ComponentHealth(name: "inventory", kind: .store, status: .up),
            ]))
        let router = Router()
        HealthController(monitor: monitor).addRoutes(to: router)
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                let report = try JSONDecoder().decode(HealthMonitor.Report.self, from: Data(buffer: response.body))
                #expect(report.status == .degraded)
                #expect(report.ready == false)
            }
            try await client.execute(uri: "/health/ready", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
            }
        }
    }
}

struct StaticReporter: HealthReporting {
    let reports: [ComponentHealth]
    func healthReports() async -> [ComponentHealth] { reports }
}

/// Writes `count` documents `doc-0`… (`{"n": i}`) into the `inventory` database of a new data directory, so that a
/// gateway started on it has something to push.
func seededInventoryDirectory(documents count: Int) async throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("edge-seeded-\(UUID().uuidString)")
    let store = try DocumentStore(dataDirectory: directory)
    let database = try await store.database(named: "inventory")
    for index in 0..<count {
        try await database.save("doc-\(index)", body: Data(#"{"n":\#(index)}"#.utf8), parentRevID: nil)
    }
    try database.close()
    return directory
}
