import EdgeReplication
import Foundation
import Hummingbird
import SyncListener

/// The ops API beside /health: listeners' connection counts, upstreams' replication status and, for pushing
/// upstreams, which documents are still waiting to be pushed. Like /health it carries no document bodies.
struct StatusController: Sendable {
    let listeners: [SyncListener]
    let upstreams: [UpstreamService]

    struct ListenerReport: Encodable {
        struct DatabaseReport: Encodable {
            var name: String
            var totalConnections: Int
            var activeConnections: Int
        }
        struct ConnectionReport: Encodable {
            var peer: String
            var user: String?
            var database: String
            var userAgent: String?
            var subprotocol: String
            var since: Date
            var documentsPushed: Int
            var documentsPulled: Int
        }
        var name: String
        var state: String
        var port: Int?
        var totalConnections: Int
        var activeConnections: Int
        var databases: [DatabaseReport]
        var connections: [ConnectionReport]
        var documentsPushed: Int
        var documentsPulled: Int
    }

    struct UpstreamReport: Encodable {
        var name: String
        var database: String
        var url: String
        var remoteUUID: String
        var direction: String
        var continuous: Bool
        var activity: String
        var completed: Int
        var total: Int
        var lastError: String?
        var lastSuccess: Date?
        /// The `protocol` setting, and the subprotocol the upstream chose on the last connection.
        var protocolSetting: String
        var subprotocol: String?
    }

    struct PendingReport: Encodable {
        var upstream: String
        var documentIDs: [String]
    }

    struct DocumentPendingReport: Encodable {
        var upstream: String
        var documentID: String
        var pending: Bool
    }

    struct Refusal: Encodable {
        var error: String
    }

    func addRoutes(to router: Router<some RequestContext>) {
        router.get("/listeners") { _, _ in
            var reports: [ListenerReport] = []
            for listener in listeners {
                reports.append(Self.report(await listener.status()))
            }
            return try HealthController.json(reports, status: .ok)
        }
        router.get("/upstreams") { _, _ in
            var reports: [UpstreamReport] = []
            for upstream in upstreams {
                reports.append(await Self.report(upstream))
            }
            return try HealthController.json(reports, status: .ok)
        }
        router.get("/upstreams/{name}/pending") { _, context in
            try await withUpstream(context.parameters.get("name")) { upstream in
                let pending = try await upstream.replicator.pendingDocumentIDs()
                return try HealthController.json(
                    PendingReport(upstream: upstream.settings.name, documentIDs: pending.sorted()), status: .ok)
            }
        }
        router.get("/upstreams/{name}/pending/{docID}") { _, context in
            try await withUpstream(context.parameters.get("name")) { upstream in
                let docID = context.parameters.get("docID") ?? ""
                let pending = try await upstream.replicator.isDocumentPending(docID)
                return try HealthController.json(
                    DocumentPendingReport(upstream: upstream.settings.name, documentID: docID, pending: pending),
                    status: .ok)
            }
        }
    }

    private func withUpstream(
        _ name: String?, _ body: (UpstreamService) async throws -> Response
    ) async throws -> Response {
        guard let upstream = upstreams.first(where: { $0.settings.name == name }) else {
            return try HealthController.json(Refusal(error: "no upstream named \"\(name ?? "")\""), status: .notFound)
        }
        do {
            return try await body(upstream)
        } catch ActiveReplicatorError.notPushing(let operation) {
            return try HealthController.json(
                Refusal(error: "\(operation): upstream \"\(upstream.settings.name)\" only pulls"), status: .conflict)
        }
    }

    static func report(_ status: ListenerStatus) -> ListenerReport {
        let state: String =
            switch status.state {
            case .starting: "starting"
            case .running: "running"
            case .stopped: "stopped"
            case .failed(let reason): "failed: \(reason)"
            }
        return ListenerReport(
            name: status.name, state: state, port: status.boundPort, totalConnections: status.totalConnections,
            activeConnections: status.activeConnections,
            databases: status.databases.map {
                .init(name: $0.name, totalConnections: $0.totalConnections, activeConnections: $0.activeConnections)
            },
            connections: status.connections.map {
                .init(
                    peer: $0.peer, user: $0.user, database: $0.database, userAgent: $0.userAgent,
                    subprotocol: $0.subprotocol, since: $0.since,
                    documentsPushed: $0.documentsPushed, documentsPulled: $0.documentsPulled)
            },
            documentsPushed: status.documentsPushed, documentsPulled: status.documentsPulled)
    }

    static func report(_ upstream: UpstreamService) async -> UpstreamReport {
        let status = await upstream.replicator.status()
        return UpstreamReport(
            name: upstream.settings.name, database: upstream.settings.database,
            url: upstream.settings.url.absoluteString, remoteUUID: upstream.remoteUUID,
            direction: upstream.settings.direction.rawValue, continuous: upstream.settings.continuous,
            activity: status.activity.rawValue, completed: status.completed, total: status.total,
            lastError: status.lastError, lastSuccess: status.lastSuccess,
            protocolSetting: upstream.settings.replicationProtocol.rawValue,
            subprotocol: status.subprotocol?.rawValue)
    }
}
