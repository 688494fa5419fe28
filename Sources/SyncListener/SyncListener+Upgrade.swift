import BLIPConnection
import EdgeReplication
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOWebSocket
import ServiceLifecycle

extension SyncListener {
    /// Judges a WebSocket upgrade request; `nil` leaves paths other than `/<db>/_blipsync` to the HTTP router.
    ///
    /// An accepted upgrade holds a connection slot from this moment until its channel closes, whether the
    /// upgrade then completes or not.
    func judgeUpgrade(path: String, headers: HTTPFields, channel: any Channel) async -> SyncUpgradeChannel.Verdict? {
        guard let databaseName = Self.replicationDatabaseName(requestTarget: path) else { return nil }
        let peer = Self.peerDescription(channel.remoteAddress)
        do throws(Refusal) {
            var accepted = try await validateSync(headers: headers, databaseName: databaseName)
            accepted.peer = peer
            let record = ConnectionRecord(
                peer: peer, user: authenticatedUser(headers), database: accepted.database.name,
                userAgent: accepted.userAgent, subprotocol: accepted.subprotocol.rawValue, since: Date(),
                counters: accepted.counters)
            guard let id = await state.reserveConnection(record, limit: configuration.maxConnections) else {
                throw Refusal.listenerFull
            }
            let state = self.state
            channel.closeFuture.whenComplete { _ in
                Task { await state.releaseConnection(id: id) }
            }
            return .accept(accepted, responseHeaders: [.secWebSocketProtocol: accepted.subprotocol.rawValue])
        } catch {
            logger.debug(
                "refused replication upgrade",
                metadata: ["status": "\(error.status.code)", "reason": "\(error.message)"])
            await state.countRefusedUpgrade(status: error.status.code)
            if let offer = error.unservedOffer {
                await turnAway(
                    TurnedAwayClient(
                        reason: .noCommonSubprotocol, peer: peer, userAgent: headers[.userAgent],
                        offered: offer.joined(separator: ","), hint: TurnedAwayClient.hint(forOffer: offer), at: Date())
                )
            }
            return .refuse(error)
        }
    }

    /// Logs a client turned away at notice level, with what it offered and the hint, and keeps it for the status
    /// page and the metrics.
    func turnAway(_ client: TurnedAwayClient) async {
        await Self.turnAway(client, state: state, logger: logger)
    }

    static func turnAway(_ client: TurnedAwayClient, state: ListenerState, logger: Logger) async {
        let message: Logger.Message =
            switch client.reason {
            case .noCommonSubprotocol: "turned away a replication client: no common subprotocol"
            case .incompatibleVersioning: "turned away a pull: incompatible document versioning"
            }
        logger.notice(
            message,
            metadata: [
                "peer": "\(client.peer)", "user_agent": "\(client.userAgent ?? "none")", "offered": "\(client.offered)",
                "hint": "\(client.hint)",
            ])
        await state.recordTurnedAway(client)
    }

    /// The user name of a request `validateSync` accepted, when the listener checks users.
    func authenticatedUser(_ headers: HTTPFields) -> String? {
        guard case .basic = configuration.authentication, let header = headers[.authorization] else { return nil }
        return BasicCredentials(authorizationHeader: header)?.user
    }

    /// `address:port`, with IPv6 addresses in brackets as in a URL.
    static func peerDescription(_ address: SocketAddress?) -> String {
        guard let address, let ip = address.ipAddress else { return "unknown" }
        let host = if case .v6 = address { "[\(ip)]" } else { ip }
        return address.port.map { "\(host):\($0)" } ?? host
    }

    /// The database named by a `/<db>/_blipsync` request target (query ignored), percent-decoded.
    static func replicationDatabaseName(requestTarget: String) -> String? {
        let path = requestTarget.prefix { $0 != "?" }
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        guard components.count == 3, components[0].isEmpty, components[2] == "_blipsync",
            let name = String(components[1]).removingPercentEncoding, !name.isEmpty
        else { return nil }
        return name
    }

    /// Runs a passive replication session on an upgraded connection until it closes.
    func replicate(
        _ accepted: AcceptedSync, webSocket: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, logger: Logger
    ) async {
        var connectionConfiguration = BLIPConnection.Configuration()
        connectionConfiguration.maxIncomingMessageSize = configuration.maxMessageSize
        let database = accepted.database
        let subprotocol = accepted.subprotocol.rawValue
        let connectionLogger = connectionLoggers.logger(database: database.name, subprotocol: subprotocol)
        let connection: BLIPConnection
        do {
            connection = try BLIPConnection(
                subprotocol: subprotocol, configuration: connectionConfiguration, logger: connectionLogger)
        } catch {
            logger.error("cannot set up a BLIP connection", metadata: ["error": "\(error)"])
            try? await webSocket.channel.close()
            return
        }
        quietConnections.add(connection)
        defer { quietConnections.remove(connection) }
        // The session keeps this closure for the connection's life: it holds what it needs, not the whole listener.
        let (state, listenerLogger, peer, userAgent) = (self.state, self.logger, accepted.peer, accepted.userAgent)
        let session = PassiveReplicationSession(
            connection: connection, database: database,
            configuration: .init(
                servedCollections: servedCollections[database.name] ?? [.default], deltaSync: configuration.deltaSync,
                versioningRefused: { asked in
                    await Self.turnAway(
                        TurnedAwayClient(
                            reason: .incompatibleVersioning, peer: peer, userAgent: userAgent,
                            offered: "\(subprotocol), versioning \(asked)",
                            hint: TurnedAwayClient.hint(versioningAsked: asked, on: subprotocol), at: Date()),
                        state: state, logger: listenerLogger)
                }),
            counters: accepted.counters, logger: connectionLogger)
        await session.start()
        do {
            let ending = try await withGracefulShutdownHandler {
                try await connection.run(serverSide: webSocket)
            } onGracefulShutdown: {
                // 1001 says the node is going away, not that the replication finished. LiteCore's
                // c4error_mayBeTransient lists 1001 (kCodeGoingAway) among the WebSocket codes it retries, and its
                // replicator reads a 1000 it did not ask for as 1001 anyway; the spec's list in §1.4 (1006, 4001)
                // leaves it out.
                Task { await connection.close(.goingAway) }
            }
            switch ending.reason {
            case .closedByPeer where !ending.peerSentClose:
                // The socket ended without the peer's close frame: dropped under the connection, or closed by the
                // WebSocket layer for a frame that broke the protocol.
                accepted.counters.countError(accepted.endedWithoutCloseFrame)
            case .closedByPeer, .closedLocally:
                break
            case let reason:
                accepted.counters.countError(ReplicationErrorKind(classifying: reason))
            }
        } catch {
            self.logger.debug("replication connection ended", metadata: ["error": "\(error)"])
            // The socket failed under the connection (reset, timed out); a shutdown cancels quietly.
            if !(error is CancellationError) {
                accepted.counters.countError(accepted.endedWithoutCloseFrame)
            }
        }
        await session.stop()
    }
}
