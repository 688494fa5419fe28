import EdgeConfig
import Logging

/// The parts of the node that could not start because of bad input (a missing certificate or secret file, a data
/// directory the gateway cannot write): each is reported `down` for as long as the node runs, with a reason that
/// names the file or directory and the fix, and was logged once when it was left out.
struct NotStartedComponents: HealthReporting {
    private(set) var components: [ComponentHealth] = []

    /// Leaves one listener or upstream out; `reason` names it, the file and the fix.
    mutating func add(_ kind: ComponentHealth.Kind, _ name: String, reason: String, logger: Logger) {
        logger.error("\(reason)", metadata: [kind.rawValue: "\(name)"])
        components.append(Self.notStarted(kind, name, reason: reason))
    }

    /// Leaves out everything that needs the data directory: the databases, and the listeners and upstreams that
    /// serve them. The problem is logged once; the others are reported as its consequence.
    mutating func storeUnavailable(_ problem: StoreUnavailable, configuration: GatewayConfiguration, logger: Logger) {
        logger.error("\(problem)")
        for database in configuration.databases {
            components.append(
                ComponentHealth(
                    name: database.name, kind: .store, status: .down, reason: problem.description,
                    details: ["writable": false]))
        }
        let consequence = "not started: the store is down (see the store's reason)"
        components += configuration.listeners.map { Self.notStarted(.listener, $0.name, reason: consequence) }
        components += configuration.upstreams.map { Self.notStarted(.upstream, $0.name, reason: consequence) }
    }

    func healthReports() async -> [ComponentHealth] {
        components
    }

    private static func notStarted(_ kind: ComponentHealth.Kind, _ name: String, reason: String) -> ComponentHealth {
        // "failed" as a listener whose port is taken reports it: not serving, and not going to without a fix.
        ComponentHealth(name: name, kind: kind, status: .down, reason: reason, details: ["state": "failed"])
    }
}
