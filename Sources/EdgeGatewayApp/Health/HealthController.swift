import Foundation
import Hummingbird

/// Unauthenticated health routes for orchestration. They carry component states and counters only: never
/// configuration secrets, credentials or documents.
package struct HealthController: Sendable {
    let monitor: HealthMonitor

    package init(monitor: HealthMonitor) {
        self.monitor = monitor
    }

    package func addRoutes(to router: Router<some RequestContext>) {
        router.get("/health") { _, _ in try await self.fullReport() }
        router.head("/health") { _, _ in try await self.fullReport() }
        router.get("/health/live") { _, _ in try Self.json(["status": "up"], status: .ok) }
        router.head("/health/live") { _, _ in try Self.json(["status": "up"], status: .ok) }
        router.get("/health/ready") { _, _ in try await self.readiness() }
        router.head("/health/ready") { _, _ in try await self.readiness() }
    }

    private func fullReport() async throws -> Response {
        let report = await monitor.report()
        return try Self.json(report, status: report.status == .down ? .serviceUnavailable : .ok)
    }

    private func readiness() async throws -> Response {
        let report = await monitor.report()
        let ready = report.ready && report.status != .down
        let reason: String? =
            if !report.ready { "starting or shutting down" } else if !ready {
                report.components.first { $0.status == .down }.map {
                    "\($0.kind.rawValue) \($0.name): \($0.reason ?? "down")"
                }
            } else { nil }
        return try Self.json(
            ReadinessReply(status: ready ? "ready" : "not-ready", reason: reason),
            status: ready ? .ok : .serviceUnavailable
        )
    }

    private struct ReadinessReply: Encodable {
        var status: String
        var reason: String?
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(value)
        return Response(
            status: status,
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}
