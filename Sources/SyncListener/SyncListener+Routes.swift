import BLIPConnection
import EdgeConfig
import EdgeReplication
import EdgeStore
import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import ReplicationProtocol

extension SyncListener {
    /// A refused replication request: the HTTP answer the client gets.
    struct Refusal: Error {
        var status: HTTPResponse.Status
        var message: String
        var headers: HTTPFields = [:]

        var response: Response {
            var headers = headers
            headers[.contentType] = "text/plain; charset=utf-8"
            return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: message)))
        }
    }

    /// A replication request that may be upgraded.
    struct AcceptedSync {
        var database: DocumentDatabase
        var subprotocol: ReplicationSubprotocol
    }

    /// The one check behind both routers: the WebSocket router upgrades only requests that pass it,
    /// and the HTTP router answers everything else on the same path with the precise status.
    ///
    /// Order: credentials first (so that database names are not disclosed to strangers), then the
    /// database (404), capacity (503, which Couchbase Lite retries), the upgrade itself (400), and the
    /// subprotocol. No common
    /// subprotocol is a 403, as the 2017 public LiteCore listener answered, rather than Sync Gateway's
    /// 500: both stop the client, and 403 says the request itself is unacceptable.
    func validateSync(_ request: Request, databaseName: String?) async throws(Refusal) -> AcceptedSync {
        try authenticate(request)
        let database = try await servedDatabase(databaseName)
        guard await state.activeConnections < settings.maxConnections else {
            throw Refusal(status: .serviceUnavailable, message: "Replication limit exceeded")
        }
        guard Self.isWebSocketUpgrade(request) else {
            throw Refusal(status: .badRequest, message: "a WebSocket upgrade is required")
        }
        let offered = request.headers[values: .secWebSocketProtocol]
        guard let subprotocol = ReplicationSubprotocol.select(offered: offered) else {
            throw Refusal(status: .forbidden, message: ReplicationSubprotocol.mismatchMessage())
        }
        return AcceptedSync(database: database, subprotocol: subprotocol)
    }

    static func isWebSocketUpgrade(_ request: Request) -> Bool {
        request.headers[values: .upgrade].contains { $0.lowercased().contains("websocket") }
    }

    func authenticate(_ request: Request) throws(Refusal) {
        guard case .basic(let users) = settings.authentication else {
            // `.none`, or `.clientCertificate`, which the TLS handshake already enforced.
            return
        }
        guard let header = request.headers[.authorization],
            let credentials = BasicCredentials(authorizationHeader: header),
            credentials.matches(users)
        else {
            throw Refusal(
                status: .unauthorized, message: "Login required",
                headers: [.wwwAuthenticate: "Basic charset=\"UTF-8\""])
        }
    }

    func servedDatabase(_ name: String?) async throws(Refusal) -> DocumentDatabase {
        guard let name, settings.databases.contains(name) else {
            throw Refusal(status: .notFound, message: "no database '\(name ?? "")' here")
        }
        do {
            return try await environment.store.database(named: name, createIfMissing: true)
        } catch {
            logger.error("cannot open served database", metadata: ["db": "\(name)", "error": "\(error)"])
            throw Refusal(status: .internalServerError, message: "database '\(name)' is unavailable")
        }
    }

    func makeWebSocketRouter() -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.ws("/{db}/_blipsync") { request, context in
            do {
                let accepted = try await validateSync(request, databaseName: context.parameters.get("db"))
                return .upgrade([.secWebSocketProtocol: accepted.subprotocol.rawValue])
            } catch {
                return .dontUpgrade
            }
        } onUpgrade: { inbound, outbound, context in
            guard let name = context.requestContext.parameters.get("db"),
                let subprotocol = ReplicationSubprotocol.select(
                    offered: context.request.headers[values: .secWebSocketProtocol])
            else { return }
            let database = try await environment.store.database(named: name, createIfMissing: true)
            try await replicate(
                database: database, subprotocol: subprotocol, inbound: inbound, outbound: outbound)
        }
        return router
    }

    private func replicate(
        database: DocumentDatabase, subprotocol: ReplicationSubprotocol, inbound: WebSocketInboundStream,
        outbound: WebSocketOutboundWriter
    ) async throws {
        await state.connectionOpened(database: database.name)
        let connection = try BLIPConnection(subprotocol: subprotocol.rawValue, logger: logger)
        let session = PassiveReplicationSession(
            connection: connection, database: database,
            configuration: .init(
                servedCollections: servedCollections[database.name] ?? [.default], deltaSync: settings.deltaSync),
            logger: logger)
        await session.start()
        do {
            try await connection.run(inbound: inbound, outbound: outbound)
        } catch {
            logger.debug("replication connection ended", metadata: ["error": "\(error)"])
        }
        await session.stop()
        await state.connectionClosed(database: database.name)
    }

    func makeHTTPRouter() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.get("/") { _, _ in
            var vendor: JSONObject = ["name": "EdgeGateway", "version": .string(environment.serverVersion)]
            if let nodeID = environment.nodeID {
                vendor["node_id"] = .string(nodeID.description)
            }
            let info: JSONValue = [
                "couchdb": "Welcome",
                "vendor": .object(vendor),
                "version": .string("EdgeGateway/\(environment.serverVersion)"),
            ]
            return Self.jsonResponse(info)
        }
        router.get("/{db}/_blipsync") { request, context in
            do throws(Refusal) {
                _ = try await validateSync(request, databaseName: context.parameters.get("db"))
                // Valid upgrades never get here, the WebSocket router took them; only a request that
                // became acceptable in between (a connection slot freed up) does.
                return Refusal(status: .serviceUnavailable, message: "please retry").response
            } catch {
                return error.response
            }
        }
        router.get("/{db}") { request, context in
            do {
                try authenticate(request)
                let database = try await servedDatabase(context.parameters.get("db"))
                let lastSequence = try await database.lastSequence()
                let info: JSONValue = [
                    "db_name": .string(database.name),
                    "update_seq": .integer(Int(lastSequence)),
                    "instance_start_time": .integer(Int(startTime.timeIntervalSince1970 * 1_000_000)),
                    "state": "Online",
                ]
                return Self.jsonResponse(info)
            } catch let refusal as Refusal {
                return refusal.response
            }
        }
        return router
    }

    static func jsonResponse(_ value: JSONValue) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: value.serialized)))
    }
}
