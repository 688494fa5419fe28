import Foundation
import Synchronization

/// The gateway's health as orchestration sees it: the components' reports plus whether start-up has finished.
package final class HealthMonitor: Sendable {
    package struct Report: Sendable, Codable, Equatable {
        package var status: HealthStatus
        package var ready: Bool
        package var node: String
        package var version: String
        package var uptimeSeconds: Int
        package var components: [ComponentHealth]
    }

    private struct State {
        var reporters: [any HealthReporting] = []
        var ready = false
    }

    private let state = Mutex(State())
    private let nodeName: String
    private let startedAt = ContinuousClock.now

    package init(nodeName: String) {
        self.nodeName = nodeName
    }

    package func register(_ reporter: any HealthReporting) {
        state.withLock { $0.reporters.append(reporter) }
    }

    /// Called once every service has started and every socket is bound.
    package func markReady() {
        state.withLock { $0.ready = true }
    }

    package var isReady: Bool {
        state.withLock { $0.ready }
    }

    package func report() async -> Report {
        let (reporters, ready) = state.withLock { ($0.reporters, $0.ready) }
        var components: [ComponentHealth] = []
        for reporter in reporters {
            components += await reporter.healthReports()
        }
        let worst = components.map(\.status).max() ?? .up
        let uptime = ContinuousClock.now - startedAt
        return Report(
            status: worst,
            ready: ready,
            node: nodeName,
            version: EdgeGatewayVersion.current,
            uptimeSeconds: Int(uptime.components.seconds),
            components: components
        )
    }
}
