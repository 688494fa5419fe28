import Foundation
import Synchronization

/// The gateway's health as orchestration sees it: the components' reports plus whether start-up has finished.
public final class HealthMonitor: Sendable {
    public struct Report: Sendable, Codable, Equatable {
        public var status: HealthStatus
        public var ready: Bool
        public var node: String
        public var version: String
        public var uptimeSeconds: Int
        public var components: [ComponentHealth]
    }

    private struct State {
        var reporters: [any HealthReporting] = []
        var ready = false
    }

    private let state = Mutex(State())
    private let nodeName: String
    private let startedAt = ContinuousClock.now

    public init(nodeName: String) {
        self.nodeName = nodeName
    }

    public func register(_ reporter: any HealthReporting) {
        state.withLock { $0.reporters.append(reporter) }
    }

    /// Called once every service has started and every socket is bound.
    public func markReady() {
        state.withLock { $0.ready = true }
    }

    public var isReady: Bool {
        state.withLock { $0.ready }
    }

    public func report() async -> Report {
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
