import BLIPCodec
import BLIPConnection
import Foundation
import Hummingbird
import HummingbirdWSClient
import Logging
import NIOSSL
import ReplicationProtocol
import SyncIdentifiers

/// A minimal active replicator for tests: it connects like Couchbase Lite and sends the requests
/// the CBL 3.2.4 transcripts show, built from the codec and the connection.
package struct ActivePeer {
    package let connection: BLIPConnection

    package static let subprotocolOffer = "BLIP_3+CBMobile_3,BLIP_3+CBMobile_2"

    /// Connects to `/<database>/_blipsync`, runs `body`, then closes normally.
    package static func connect(
        port: Int,
        database: String = TestGateway.databaseName,
        tls: TLSConfiguration? = nil,
        credentials: (user: String, password: String)? = nil,
        offering offer: String = subprotocolOffer,
        configure: @escaping @Sendable (BLIPConnection) async -> Void = { _ in },
        _ body: @escaping @Sendable (ActivePeer) async throws -> Void
    ) async throws {
        var headers: HTTPFields = [.secWebSocketProtocol: offer]
        if let credentials {
            headers[.authorization] =
                "Basic " + Data("\(credentials.user):\(credentials.password)".utf8).base64EncodedString()
        }
        let scheme = tls == nil ? "ws" : "wss"
        try await WebSocketClient.connect(
            url: "\(scheme)://127.0.0.1:\(port)/\(database)/_blipsync",
            configuration: WebSocketClientConfiguration(
                maxFrameSize: 1 << 20, additionalHeaders: headers, sniHostname: tls == nil ? nil : "localhost"),
            tlsConfiguration: tls,
            logger: testLogger
        ) { inbound, outbound, _ in
            // The listener takes the client's first choice that it serves, which is the first offered in tests.
            let chosen = String(offer.prefix { $0 != "," })
            try await run(subprotocol: chosen, inbound: inbound, outbound: outbound, configure: configure, body)
        }
    }

    /// Runs a BLIP connection over an open WebSocket for the duration of `body`, then closes it.
    package static func run(
        subprotocol: String, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter,
        configure: (BLIPConnection) async -> Void = { _ in }, _ body: (ActivePeer) async throws -> Void
    ) async throws {
        let connection = try BLIPConnection(subprotocol: subprotocol, logger: testLogger)
        await configure(connection)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await connection.run(inbound: inbound, outbound: outbound) }
            do {
                try await body(ActivePeer(connection: connection))
            } catch {
                await connection.close()
                throw error
            }
            await connection.close()
            try await group.waitForAll()
        }
    }

    /// Sends a replication request and decodes its reply.
    package func send<Reply: ReplicationMessage>(
        _ request: some ReplicationRequest, expecting: Reply.Type, isUrgent: Bool = false
    ) async throws -> Reply {
        let reply = try await connection.sendRequest(Self.message(request, isUrgent: isUrgent))
        return try Reply(properties: MessageProperties(reply.properties.pairs), body: reply.body)
    }

    /// Sends a request whose reply is empty (`rev`, `subChanges`).
    package func send(_ request: some ReplicationRequest) async throws {
        _ = try await connection.sendRequest(Self.message(request))
    }

    package static func message(_ request: some ReplicationRequest, isUrgent: Bool = false, isNoReply: Bool = false)
        -> BLIPMessage
    {
        let (properties, body) = request.encode()
        return BLIPMessage(
            kind: .request, properties: BLIPProperties(properties.pairs), body: body, isUrgent: isUrgent,
            isNoReply: isNoReply,
            isCompressed: BLIPCompressionRule.compressesRequest(profile: properties.profile, body: body))
    }

    /// The error reply a request got, or `nil` if it succeeded.
    package func errorReply(for request: some ReplicationRequest) async throws -> BLIPErrorReply? {
        do {
            _ = try await connection.sendRequest(Self.message(request))
            return nil
        } catch let error as BLIPErrorReply {
            return error
        }
    }
}

/// What a pulling peer received: `changes` batches, revisions and `norev`s.
package actor PullRecorder {
    package init() {}

    package private(set) var changeRows: [ChangeRow] = []
    package private(set) var revisions: [RevRequest] = []
    package private(set) var noRevisions: [NoRevRequest] = []
    package private(set) var caughtUpCount = 0
    package private(set) var repliesSent = 0
    /// Known ancestors (or, for a CBMobile_4 puller, versions) to answer per document; absent documents get `[]`
    /// ("send it, I have nothing").
    package var knownAncestors: [String: [WireRevision]] = [:]

    package func setKnownAncestors(_ known: [String: [RevisionID]]) {
        knownAncestors = known.mapValues { $0.map(WireRevision.tree) }
    }

    package func setKnownRevisions(_ known: [String: [WireRevision]]) {
        knownAncestors = known
    }

    /// Whether the `changes` replies say `blobs: true`, as LiteCore's do; a puller that does not gets
    /// `_attachments` stand-ins.
    private var announcesBlobs = true

    package func setAnnouncesBlobs(_ announces: Bool) {
        announcesBlobs = announces
    }

    /// Runs once, when the first `changes` batch arrives and before it is answered.
    private var beforeFirstAnswer: (@Sendable () async throws -> Void)?

    package func setBeforeFirstAnswer(_ body: @escaping @Sendable () async throws -> Void) {
        beforeFirstAnswer = body
    }

    private func takeBeforeFirstAnswer() -> (@Sendable () async throws -> Void)? {
        defer { beforeFirstAnswer = nil }
        return beforeFirstAnswer
    }

    /// Registers `changes` and `rev` handlers that answer like a LiteCore puller.
    package func install(on connection: BLIPConnection) async {
        await connection.setHandler(for: "changes") { request in
            let changes = try ChangesRequest(
                properties: MessageProperties(request.properties.pairs), body: request.body)
            if !changes.isCaughtUp, let hook = await self.takeBeforeFirstAnswer() {
                try await hook()
            }
            return await self.answer(changes, request: request)
        }
        await connection.setHandler(for: "rev") { request in
            let rev = try RevRequest(properties: MessageProperties(request.properties.pairs), body: request.body)
            await self.record(rev)
            return request.reply()
        }
        await connection.setHandler(for: "norev") { request in
            let norev = try NoRevRequest(properties: MessageProperties(request.properties.pairs), body: request.body)
            await self.record(norev)
            return request.reply()
        }
    }

    private func answer(_ changes: ChangesRequest, request: BLIPMessage) -> BLIPMessage {
        if changes.isCaughtUp {
            caughtUpCount += 1
            return request.reply()
        }
        changeRows += changes.rows
        var capabilities = ReceiverCapabilities.liteCore(includingDeltas: repliesSent == 0)
        capabilities.blobs = announcesBlobs
        let reply = ChangesReply(
            entries: changes.rows.map { .send(knownAncestors: knownAncestors[$0.docID] ?? []) },
            capabilities: capabilities)
        repliesSent += 1
        let (properties, body) = reply.encode()
        return request.reply(properties: BLIPProperties(properties.pairs), body: body, isCompressed: true)
    }

    /// Whether exactly this many revisions and caught-up markers arrived.
    package func has(revisions: Int, caughtUp: Int? = nil) -> Bool {
        self.revisions.count == revisions && (caughtUp.map { $0 == caughtUpCount } ?? true)
    }

    private func record(_ rev: RevRequest) {
        revisions.append(rev)
    }

    private func record(_ norev: NoRevRequest) {
        noRevisions.append(norev)
    }
}
