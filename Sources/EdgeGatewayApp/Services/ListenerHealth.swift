import SyncListener

/// Reports every sync listener: whether it is serving, where, and how many replication connections it has.
struct ListenerHealth: HealthReporting {
    let listeners: [SyncListener]

    func healthReports() async -> [ComponentHealth] {
        var reports: [ComponentHealth] = []
        for listener in listeners {
            reports.append(ComponentHealth(status: await listener.status(), tls: listener.configuration.tls.isEnabled))
        }
        return reports
    }
}

extension ComponentHealth {
    init(status: ListenerStatus, tls: Bool) {
        var details: [String: HealthValue] = [
            "tls": .boolean(tls),
            "totalConnections": .integer(status.totalConnections),
            "activeConnections": .integer(status.activeConnections),
            "port": status.boundPort.map { .integer($0) } ?? .none,
        ]
        for database in status.databases {
            details["database.\(database.name).totalConnections"] = .integer(database.totalConnections)
            details["database.\(database.name).activeConnections"] = .integer(database.activeConnections)
        }
        if let users = status.users {
            details["users"] = .integer(users)
        }
        let (health, state, reason): (HealthStatus, String, String?) =
            switch status.state {
            // Serving, but refusing everyone (no users) or on files it refused: a person has to act.
            case .running where !status.problems.isEmpty:
                (.degraded, "running", status.problems.joined(separator: "; "))
            case .running: (.up, "running", nil)
            // Not serving yet is "down" so that readiness waits for every listener to be bound.
            case .starting: (.down, "starting", "not listening yet")
            case .stopped: (.down, "stopped", "stopped")
            case .failed(let message): (.down, "failed", message)
            }
        details["state"] = .string(state)
        self.init(name: status.name, kind: .listener, status: health, reason: reason, details: details)
    }
}
