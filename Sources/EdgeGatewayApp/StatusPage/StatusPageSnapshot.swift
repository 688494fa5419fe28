import EdgeConfig
import EdgeIdentity
import EdgeReplication
import Foundation
import NetworkInterfaces
import SyncListener

/// Everything the status page shows, read once per render from the services that own it.
///
/// Only names, addresses, states, counters and public certificate digests come in here: never a password, a
/// password hash, a key, a request header or a document.
struct StatusPageSnapshot: Sendable {
    struct Listener: Sendable {
        var status: ListenerStatus
        /// `ws://` or `wss://` endpoints devices can dial, one per reachable address and served database.
        var urls: [String]
        /// Colon-separated SHA-256 of the served certificate; nil with TLS off.
        var certificateSHA256: String?
        var authentication: String
        var maxConnections: Int
    }

    var health: HealthMonitor.Report
    /// Nil when the data directory could not be read.
    var nodeID: NodeID?
    var listeners: [Listener]
    var upstreams: [StatusController.UpstreamReport]
    var pairing: [PairingService.Entry]
    /// Listeners that serve without TLS, which therefore have no certificate to pair with.
    var listenersWithoutTLS: [String]
    var takenAt: Date
}

extension StatusPageSnapshot {
    /// Reads the current state; cheap enough for a page polled every few seconds.
    static func take(
        monitor: HealthMonitor, nodeID: NodeID?, listeners: [SyncListener], upstreams: [UpstreamService],
        pairing: PairingService?
    ) async -> StatusPageSnapshot {
        var listenerViews: [Listener] = []
        for listener in listeners {
            let status = await listener.status()
            listenerViews.append(
                Listener(
                    status: status,
                    urls: urls(of: listener.configuration, boundPort: status.boundPort),
                    certificateSHA256: listener.identity?.sha256Fingerprint.colonHex,
                    authentication: describe(listener.configuration.authentication),
                    maxConnections: listener.configuration.maxConnections))
        }
        let health = await monitor.report()
        var upstreamReports: [StatusController.UpstreamReport] = []
        for upstream in upstreams {
            var report = await StatusController.report(upstream)
            // Between attempts the replicator is stopped, but the upstream is not: its health says "offline".
            let component = health.components.first { $0.kind == .upstream && $0.name == report.name }
            if case .string(let activity)? = component?.details["activity"] {
                report.activity = activity
            }
            upstreamReports.append(report)
        }
        return StatusPageSnapshot(
            health: health,
            nodeID: nodeID,
            listeners: listenerViews,
            upstreams: upstreamReports,
            pairing: await pairing?.entries() ?? [],
            listenersWithoutTLS: listeners.filter { $0.identity == nil }.map(\.configuration.name),
            takenAt: Date())
    }

    /// The URLs a device would be configured with: one per address a device can dial (as pairing payloads list
    /// them) and served database. Empty while the listener is not bound, or when it has no such address.
    static func urls(of listener: SyncListener.Configuration, boundPort: Int?) -> [String] {
        guard let port = boundPort else { return [] }
        let scheme = listener.tls.isEnabled ? "wss" : "ws"
        let hosts = InterfaceAddress.reachableAddresses(forListenerInterface: listener.interface).map { address in
            address.family == .ipv6 ? "[\(address.description)]" : address.description
        }
        return hosts.flatMap { host in
            // Database names are letters, digits, '-' and '_': nothing to percent-encode.
            listener.databases.map { database in "\(scheme)://\(host):\(port)/\(database.name)" }
        }
    }

    static func describe(_ authentication: SyncListener.Authentication) -> String {
        switch authentication {
        case .none: "none: anyone who reaches the port"
        case .basic: "user name and password"
        case .clientCertificate: "client certificate"
        }
    }
}
