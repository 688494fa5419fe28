import EdgeReplication
import EdgeStore
import Foundation
import Hummingbird
import NIOCore
import ReplicationProtocol
import SyncListener
import Synchronization

/// `GET /metrics`: the gateway's figures in Prometheus' text exposition format, written by swift-prometheus.
///
/// Names follow Prometheus' conventions: the `edgegateway_` prefix, base units (seconds, bytes), `_total` for
/// counters. Direction is this gateway's: `received` came from the peer, `sent` went to it.
struct MetricsController: Sendable {
    let metrics: GatewayMetrics
    let listeners: [SyncListener]
    let upstreams: [UpstreamService]
    let databases: [DocumentDatabase]

    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    func addRoutes(to router: Router<some RequestContext>) {
        router.get("/metrics") { _, _ in
            await collect()
            let text = metrics.registry.emitToBuffer()
            return Response(
                status: .ok, headers: [.contentType: Self.contentType],
                body: .init(byteBuffer: ByteBuffer(bytes: text)))
        }
    }

    /// Copies the live figures into the registry.
    func collect() async {
        for listener in listeners {
            await collect(listener)
        }
        for upstream in upstreams {
            await collect(upstream)
        }
        for database in databases {
            let labels = [("database", database.name)]
            if let count = try? await database.liveDocumentCount() {
                metrics.set("edgegateway_store_documents", labels, Double(count))
            }
            metrics.set("edgegateway_store_size_bytes", labels, Double(database.sizeOnDisk()))
        }
        metrics.set("edgegateway_build_info", [("version", EdgeGatewayVersion.current)], 1)
        if let start = ProcessFigures.startTime {
            metrics.set("edgegateway_process_start_time_seconds", [], start)
        }
        if let resident = ProcessFigures.residentMemory() {
            metrics.set("edgegateway_process_resident_memory_bytes", [], resident)
        }
        if let heap = ProcessFigures.heapInUse() {
            metrics.set("edgegateway_process_heap_in_use_bytes", [], heap)
        }
        metrics.set("edgegateway_store_sqlite_memory_bytes", [], Double(SQLiteMemory.bytesInUse))
        if let descriptors = ProcessFigures.openFileDescriptors() {
            metrics.set("edgegateway_process_open_fds", [], descriptors)
        }
    }

    private func collect(_ listener: SyncListener) async {
        let status = await listener.status()
        for database in status.databases {
            let labels = [("listener", status.name), ("database", database.name)]
            metrics.set("edgegateway_listener_connections_open", labels, Double(database.activeConnections))
            metrics.advance("edgegateway_listener_connections_total", labels, to: database.totalConnections)
        }
        for (code, count) in status.refusedUpgrades {
            metrics.advance(
                "edgegateway_listener_refused_upgrades_total", [("listener", status.name), ("status", "\(code)")],
                to: count)
        }
        for reason in TurnedAwayClient.Reason.allCases {
            metrics.advance(
                "edgegateway_listener_turned_away_total", [("listener", status.name), ("reason", reason.rawValue)],
                to: status.turnedAwayCounts[reason] ?? 0)
        }
        for (database, counters) in listener.databaseReplicationCounters {
            metrics.copy(
                counters, prefix: "edgegateway_listener",
                labels: [("listener", status.name), ("database", database)], receivedArePushes: true)
        }
    }

    private func collect(_ upstream: UpstreamService) async {
        let labels = [("upstream", upstream.settings.name), ("database", upstream.settings.database)]
        let status = await upstream.replicator.status()
        for activity in [ActiveReplicator.Activity.stopped, .offline, .connecting, .idle, .busy] {
            metrics.set(
                "edgegateway_upstream_activity", labels + [("activity", activity.rawValue)],
                status.activity == activity ? 1 : 0)
        }
        if let lastSuccess = status.lastSuccess {
            metrics.set(
                "edgegateway_upstream_last_success_timestamp_seconds", labels, lastSuccess.timeIntervalSince1970)
        }
        if let lag = try? await upstream.replicator.pushCheckpointLag() {
            metrics.set(
                "edgegateway_upstream_checkpoint_lag_sequences", labels + [("direction", "sent")], Double(lag))
        }
        if let lag = try? await upstream.replicator.pullCheckpointLag() {
            metrics.set(
                "edgegateway_upstream_checkpoint_lag_sequences", labels + [("direction", "received")], Double(lag))
        }
        if let subprotocol = status.subprotocol {
            for offered in upstream.settings.replicationProtocol.offer {
                metrics.set(
                    "edgegateway_upstream_protocol", labels + [("protocol", offered.rawValue)],
                    offered == subprotocol ? 1 : 0)
            }
        }
        metrics.advance("edgegateway_upstream_retries_total", labels, to: upstream.retries.load(ordering: .relaxed))
        metrics.copy(
            upstream.replicator.counters, prefix: "edgegateway_upstream", labels: labels, receivedArePushes: false)
    }
}
