import BLIPConnection
import DocumentRESTAPI
import EdgeReplication
import EdgeStore
import Foundation
import Hummingbird
import NIOCore
import ReplicationProtocol
import SyncJSON
import Synchronization

extension SyncListener {
    /// A refused replication request: the HTTP answer the client gets.
    struct Refusal: Error, Sendable {
        var status: HTTPResponse.Status
        var message: String
        var headers: HTTPFields = [:]
        /// For an upgrade refused for want of a common subprotocol: what the client offered.
        var unservedOffer: [String]?

        var responseHeaders: HTTPFields {
            var headers = headers
            headers[.contentType] = "text/plain; charset=utf-8"
            return headers
        }

        var response: Response {
            Response(status: status, headers: responseHeaders, body: .init(byteBuffer: ByteBuffer(string: message)))
        }

        static let listenerFull = Refusal(status: .serviceUnavailable, message: "Replication limit exceeded")
        static let loginRequired = Refusal(
            status: .unauthorized, message: "Login required", headers: [.wwwAuthenticate: "Basic charset=\"UTF-8\""])
    }

    /// A replication request that may be upgraded.
    struct AcceptedSync: Sendable {
        var database: DocumentDatabase
        var subprotocol: ReplicationSubprotocol
        /// What the connection's session counts, adding up into the listener's totals.
        var counters: ReplicationCounters
        var userAgent: String?
        /// The client's address, as `judgeUpgrade` saw it.
        var peer = "unknown"
        /// Set when the WebSocket layer closed the connection for a frame that broke RFC 6455.
        let frameViolation = FrameViolation()

        /// What a connection that ended without the peer's close frame counts as: a protocol error when the
        /// WebSocket layer closed it for a bad frame, otherwise a socket that dropped or failed.
        var endedWithoutCloseFrame: ReplicationErrorKind {
            frameViolation.wasRecorded ? .protocol : .network
        }
    }

    /// Whether a connection was closed for a frame that broke RFC 6455, which the connection's session then sees
    /// only as a socket that ended without a close frame.
    final class FrameViolation: Sendable {
        private let isSet = Atomic(false)

        func record() { isSet.store(true, ordering: .releasing) }

        var wasRecorded: Bool { isSet.load(ordering: .acquiring) }
    }

    /// The one check behind both the upgrade and the HTTP route: the upgrade goes ahead only for requests that
    /// pass it, and every other request on the same path gets the precise status.
    ///
    /// Order: credentials first (so that database names are not disclosed to strangers), then the
    /// database (404), capacity (503, which Couchbase Lite retries), the upgrade itself (400), and the
    /// subprotocol. No common subprotocol is a 403, as the 2017 public LiteCore listener answered, rather than
    /// Sync Gateway's 500: both stop the client, and 403 says the request itself is unacceptable.
    ///
    /// The capacity check here is advisory; `judgeUpgrade` reserves the slot atomically.
    func validateSync(headers: HTTPFields, databaseName: String?) async throws(Refusal) -> AcceptedSync {
        do {
            try await authenticate(headers)
        } catch {
            // Counted for databases this listener serves only: a stranger's guesses at names count nowhere. A
            // login refused unchecked because the verification gate is full is load, not a bad credential.
            if let databaseName, error.status == .unauthorized {
                state.databaseTotals[databaseName]?.countError(.auth)
            }
            throw error
        }
        let database = try await servedDatabase(databaseName)
        guard await state.activeConnections < configuration.maxConnections else {
            throw Refusal.listenerFull
        }
        guard Self.isWebSocketUpgrade(headers) else {
            throw Refusal(status: .badRequest, message: "a WebSocket upgrade is required")
        }
        let offered = headers[values: .secWebSocketProtocol]
        guard
            let subprotocol = ReplicationSubprotocol.select(offered: offered, supported: ReplicationSubprotocol.served)
        else {
            throw Refusal(
                status: .forbidden,
                message: ReplicationSubprotocol.mismatchMessage(supported: ReplicationSubprotocol.served),
                unservedOffer: ReplicationSubprotocol.entries(offered: offered).map(\.rawValue))
        }
        let databaseTotals = state.databaseTotals[database.name] ?? state.totals
        return AcceptedSync(
            database: database, subprotocol: subprotocol,
            counters: ReplicationCounters(aggregatingInto: databaseTotals), userAgent: headers[.userAgent])
    }

    /// `Upgrade: websocket` with the `upgrade` token in `Connection`, as RFC 6455 requires.
    ///
    /// The token matters beyond form: NIO's HTTP decoder stops parsing behind a request only when it sees an
    /// upgrade, and it needs the token for that, while NIO's upgrade handler does not. Upgrading without it let a
    /// request sent behind the upgrade in the same packet be decoded, buffered, and handed to the WebSocket decoder
    /// as HTTP parts once the upgrade completed, which aborted the process (found by `HTTPFuzzTests`).
    static func isWebSocketUpgrade(_ headers: HTTPFields) -> Bool {
        let connectionTokens = headers[values: .connection]
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \t")).lowercased() }
        return connectionTokens.contains("upgrade")
            && headers[values: .upgrade].contains { $0.lowercased().contains("websocket") }
    }

    func authenticate(_ headers: HTTPFields) async throws(Refusal) {
        guard let users, let passwordVerifications else {
            // `.none`, or `.clientCertificate`, which the TLS handshake already enforced.
            return
        }
        guard let header = headers[.authorization],
            let credentials = BasicCredentials(authorizationHeader: header)
        else {
            throw Refusal.loginRequired
        }
        let known = users.users
        // A recent success answers without a derivation, so it never waits behind a flood of guesses; only
        // real scrypt checks take one of the gate's slots.
        if verifiedCredentials.recentlyVerified(credentials, known) {
            return
        }
        guard let verified = await passwordVerifications.verify({ verifiedCredentials.verify(credentials, known) })
        else {
            logger.warning("refused Basic credentials unchecked: too many verifications under way")
            throw Refusal(
                status: .serviceUnavailable, message: "Too many logins at once; retry later",
                headers: [.retryAfter: "1"])
        }
        guard verified else {
            throw Refusal.loginRequired
        }
    }

    func servedDatabase(_ name: String?) async throws(Refusal) -> DocumentDatabase {
        guard let name, servedCollections[name] != nil else {
            throw Refusal(status: .notFound, message: "no database '\(name ?? "")' here")
        }
        do {
            return try await environment.store.database(named: name, createIfMissing: true)
        } catch {
            logger.error("cannot open served database", metadata: ["db": "\(name)", "error": "\(error)"])
            throw Refusal(status: .internalServerError, message: "database '\(name)' is unavailable")
        }
    }

    func makeHTTPRouter() -> Router<BasicRequestContext> {
        // HEAD wherever GET: the GET's status and headers (its ETag and Content-Length too), without the body,
        // as CouchDB and Sync Gateway answer it; client libraries open a database and test a document with it.
        let router = Router(context: BasicRequestContext.self, options: .autoGenerateHeadEndpoints)
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
            return DocumentRESTAPI.json(info)
        }
        // One parameter name at this depth for every route, so that the router's tree has one branch for it.
        router.get("/{keyspace}/_blipsync") { request, context in
            do throws(Refusal) {
                _ = try await validateSync(headers: request.headers, databaseName: context.parameters.get("keyspace"))
                // Upgrades that the listener judged never get here: they are upgraded or answered with their
                // refusal. What is left asked for an upgrade that NIO's WebSocket upgrader would not attempt.
                return Refusal(
                    status: .badRequest,
                    message:
                        "a WebSocket upgrade needs Connection: Upgrade, Sec-WebSocket-Key and Sec-WebSocket-Version: 13"
                ).response
            } catch {
                return error.response
            }
        }
        addRESTRoutes(to: router)
        guard configuration.restAPI == nil else { return router }
        router.get("/{keyspace}") { request, context in
            do {
                try await authenticate(request.headers)
                let database = try await servedDatabase(context.parameters.get("keyspace"))
                let lastSequence = try await database.lastSequence()
                let info: JSONValue = [
                    "db_name": .string(database.name),
                    "update_seq": .integer(Int(lastSequence)),
                    "instance_start_time": .integer(Int(startTime.timeIntervalSince1970 * 1_000_000)),
                    "state": "Online",
                ]
                return DocumentRESTAPI.json(info)
            } catch let refusal as Refusal {
                return refusal.response
            }
        }
        return router
    }
}
