import EdgeConfig

/// Configured upstreams are reported as degraded rather than left out: this version validates them but does
/// not run an active replicator yet, and an operator must see that instead of assuming the data flows.
struct UpstreamHealth: HealthReporting {
    let upstreams: [UpstreamSettings]

    static let notRunningReason = "configured, but this version does not run upstream replication yet"

    func healthReports() async -> [ComponentHealth] {
        upstreams.map { upstream in
            ComponentHealth(
                name: upstream.name,
                kind: .upstream,
                status: .degraded,
                reason: Self.notRunningReason,
                details: ["database": .string(upstream.database), "activity": "stopped"]
            )
        }
    }
}
