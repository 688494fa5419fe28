import CoreMetrics
import EdgeReplication
import EdgeStore
import Foundation
import Prometheus
import SyncListener
import Synchronization

/// The gateway's metrics: a Prometheus registry of its own, filled through swift-metrics.
///
/// Each application gets its own registry and hands its factory to every metric it makes, instead of
/// bootstrapping swift-metrics' one global factory: tests run many gateways in one process, and each must expose
/// only its own figures.
///
/// Most figures already exist as live counters and status snapshots (connection counts, `ReplicationCounters`,
/// upstream status); they are copied into the registry when scraped, so replication itself never touches a
/// metric. Only commit durations, one per write transaction, are recorded as they happen.
final class GatewayMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory
    private let series = Mutex<[String: Series]>([:])

    private enum Series {
        case counter(CoreMetrics.Counter, reported: Int)
        case gauge(CoreMetrics.Gauge)
    }

    static let commitDurationLabel = "edgegateway_store_commit_duration_seconds"

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        // Commits of one batched transaction take from a millisecond (WAL, small batch) to seconds (a slow SD
        // card's fsync); the default buckets start at 5 ms.
        factory.durationHistogramBuckets[Self.commitDurationLabel] = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .milliseconds(2500), .seconds(5),
        ]
        self.factory = factory
    }

    /// Records every commit of `database` in the commit duration histogram.
    func observeCommits(of database: DocumentDatabase) {
        let timer = CoreMetrics.Timer(
            label: Self.commitDurationLabel, dimensions: [("database", database.name)], factory: factory)
        database.commitDurations.observe { duration in
            let (seconds, attoseconds) = duration.components
            timer.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
    }

    /// Sets a gauge to `value`.
    func set(_ name: String, _ labels: [(String, String)], _ value: Double) {
        let key = Self.key(name, labels)
        let gauge = series.withLock { series -> CoreMetrics.Gauge in
            if case .gauge(let gauge) = series[key] { return gauge }
            let gauge = CoreMetrics.Gauge(label: name, dimensions: labels, factory: factory)
            series[key] = .gauge(gauge)
            return gauge
        }
        gauge.record(value)
    }

    /// Brings a counter to `total`, a count kept elsewhere since start: counters only go up, so what it grew
    /// by since the last scrape is added.
    func advance(_ name: String, _ labels: [(String, String)], to total: Int) {
        let key = Self.key(name, labels)
        series.withLock { series in
            switch series[key] {
            case .counter(let counter, let reported):
                if total > reported {
                    counter.increment(by: total - reported)
                    series[key] = .counter(counter, reported: total)
                }
            default:
                let counter = CoreMetrics.Counter(label: name, dimensions: labels, factory: factory)
                counter.increment(by: max(0, total))
                series[key] = .counter(counter, reported: max(0, total))
            }
        }
    }

    private static func key(_ name: String, _ labels: [(String, String)]) -> String {
        labels.reduce(name) { $0 + "\u{0}" + $1.0 + "=" + $1.1 }
    }
}

extension GatewayMetrics {
    /// The counters of one side of replication, under `prefix` (`edgegateway_listener` or
    /// `edgegateway_upstream`), in the direction as this gateway sees it.
    func copy(
        _ counters: ReplicationCounters, prefix: String, labels: [(String, String)],
        receivedArePushes: Bool
    ) {
        let received = labels + [("direction", "received")]
        let sent = labels + [("direction", "sent")]
        let (receivedDocuments, sentDocuments) =
            receivedArePushes
            ? (counters.documentsPushed, counters.documentsPulled)
            : (counters.documentsPulled, counters.documentsPushed)
        let (receivedBytes, sentBytes) =
            receivedArePushes
            ? (counters.bytesPushed, counters.bytesPulled) : (counters.bytesPulled, counters.bytesPushed)
        let (receivedRejected, sentRejected) =
            receivedArePushes
            ? (counters.pushesRejected, counters.pullsRejected) : (counters.pullsRejected, counters.pushesRejected)
        advance("\(prefix)_documents_total", received, to: receivedDocuments)
        advance("\(prefix)_documents_total", sent, to: sentDocuments)
        advance("\(prefix)_bytes_total", received, to: receivedBytes)
        advance("\(prefix)_bytes_total", sent, to: sentBytes)
        advance("\(prefix)_revisions_rejected_total", received, to: receivedRejected)
        advance("\(prefix)_revisions_rejected_total", sent, to: sentRejected)
        advance("\(prefix)_conflicts_total", labels, to: counters.conflicts)
        // Offers go from the pushing side: received by a listener, sent by an upstream replicator.
        advance(
            "\(prefix)_revisions_proposed_total", receivedArePushes ? received : sent, to: counters.revisionsProposed)
        // Every kind, zeros included, so that a rate over any of them is defined from the first scrape.
        for kind in ReplicationErrorKind.allCases {
            advance("\(prefix)_errors_total", labels + [("kind", kind.rawValue)], to: counters.errors(of: kind))
        }
    }
}
