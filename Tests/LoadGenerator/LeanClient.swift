import BLIPCodec
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON
import Synchronization

/// One device as the gateway sees it, without a store, so that a thousand cost far less than the gateway serving
/// them: a continuous push-and-pull connection in Couchbase Lite 3.x's legacy mode (`subChanges`, `changes`,
/// `rev`, `proposeChanges`) that asks for every revision offered but its own and those it has, answers each `rev`
/// at once from memory and records its arrival. Its own writes go up with `proposeChanges` and `rev`. Every
/// frame is handled on the one event loop all clients share (`LeanBLIPHandler`), with no task or thread hop per
/// message. After a lost connection it reconnects as Couchbase Lite does and asks for the feed from the start,
/// declining what it has.
final class LeanClient: Sendable {
    let name: String
    private let host: String
    private let port: Int
    private let path: String
    /// How often the client pings the gateway, as Couchbase Lite's heartbeat does.
    fileprivate let heartbeat: TimeAmount
    private let tracker: FanOutTracker
    private let state = Mutex(State())
    private let loop = Mutex<Task<Void, Never>?>(nil)

    private struct State {
        /// The open connection, once its `subChanges` was accepted.
        var channel: (any Channel)?
        /// Whether the feed has caught up once: the fleet is measured from when every client has.
        var caughtUp = false
        /// Every document received or written here.
        var documents: Set<String> = []
    }

    /// All clients share one event loop: their sockets are the harness, not the system under test.
    static let eventLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    init(index: Int, url: String, heartbeat: Duration, tracker: FanOutTracker) throws {
        guard let components = URLComponents(string: url), let host = components.host, let port = components.port
        else { throw LeanClientError.badURL(url) }
        name = "c\(index)"
        self.host = host
        self.port = port
        path = components.path + "/_blipsync"
        self.heartbeat = .nanoseconds(Int64(heartbeat.components.seconds) * 1_000_000_000)
        self.tracker = tracker
    }

    func start() {
        let task = Task {
            while !Task.isCancelled {
                if let channel = try? await connect() {
                    try? await channel.closeFuture.get()
                }
                state.withLock { $0.channel = nil }
                // Couchbase Lite's first retry waits about a second; jitter keeps a refused fleet from returning
                // in step.
                try? await Task.sleep(for: .milliseconds(Int.random(in: 500...1500)))
            }
        }
        loop.withLock { $0 = task }
    }

    func stop() async {
        let (task, channel) = (loop.withLock { $0 }, state.withLock { $0.channel })
        task?.cancel()
        try? await channel?.close()
        await task?.value
    }

    var isIdle: Bool { state.withLock { $0.channel != nil && $0.caughtUp } }

    var documentCount: Int { state.withLock { $0.documents.count } }

    private func connect() async throws -> any Channel {
        let (host, port, path) = (self.host, self.port, self.path)
        return try await ClientBootstrap(group: Self.eventLoop)
            .channelInitializer { channel in
                let request = UpgradeRequestHandler(host: "\(host):\(port)", path: path)
                let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: 1 << 20) { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(LeanBLIPHandler(client: self))
                    }
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(
                        withClientUpgrade: (
                            upgraders: [upgrader],
                            completionHandler: { context in
                                context.pipeline.syncOperations.removeHandler(request, promise: nil)
                            }
                        ))
                    try channel.pipeline.syncOperations.addHandler(request)
                }
            }
            .connect(host: host, port: port).get()
    }

    /// Called on the event loop once the gateway accepted the subscription.
    fileprivate func subscribed(_ channel: any Channel) {
        state.withLock { $0.channel = channel }
    }

    /// Asks for every offered revision but this client's own and those it has; a caught-up batch marks it idle.
    fileprivate func answerChanges(_ request: BLIPMessage) throws -> BLIPMessage {
        let changes = try ChangesRequest(properties: MessageProperties(request.properties.pairs), body: request.body)
        let ownPrefix = "\(name)-"
        let entries = state.withLock { state in
            if changes.isCaughtUp { state.caughtUp = true }
            return changes.rows.map { row -> ChangesReply.Entry in
                row.flags.offersRevision && !row.docID.hasPrefix(ownPrefix) && !state.documents.contains(row.docID)
                    ? .send(knownAncestors: []) : .skip
            }
        }
        let (properties, body) = ChangesReply(entries: entries, capabilities: ReceiverCapabilities(blobs: true))
            .encode()
        return request.reply(properties: BLIPProperties(properties.pairs), body: body)
    }

    fileprivate func receiveRevision(_ request: BLIPMessage) -> BLIPMessage {
        let now = ContinuousClock.now
        if let docID = request.properties["id"], state.withLock({ $0.documents.insert(docID).inserted }) {
            tracker.arrived(docID, at: now)
        }
        return request.reply()
    }

    /// Writes `count` documents of this client's own, the first after a random part of one interval.
    func writeAll(count: Int, interval: Duration) async throws {
        func pause(_ fraction: ClosedRange<Double>) async throws {
            guard interval > .zero else { return }
            try await Task.sleep(for: interval * Double.random(in: fraction))
        }
        try await pause(0...1)
        for index in 0..<count {
            if index > 0 { try await pause(0.5...1.5) }
            let docID = "\(name)-\(index)"
            state.withLock { _ = $0.documents.insert(docID) }
            tracker.wrote(docID)
            try await push(docID, body: Array(#"{"writer":"\#(name)","n":\#(index)}"#.utf8), sequence: index + 1)
        }
    }

    /// Proposes a new document and sends it once accepted, again over the next connection if this one is lost.
    private func push(_ docID: String, body: [UInt8], sequence: Int) async throws {
        let revisionID = RevisionID(generation: 1, digestBytes: (0..<20).map { _ in UInt8.random(in: 0...255) })
        let (proposalProperties, proposalBody) = ProposeChangesRequest(
            rows: [ProposedChange(docID: docID, revisionID: revisionID, bodySize: body.count)]
        ).encode()
        let proposal = BLIPMessage(properties: BLIPProperties(proposalProperties.pairs), body: proposalBody)
        let (revProperties, revBody) = RevRequest(
            docID: docID, revision: .tree(revisionID), sequence: .integer(sequence), noConflicts: true, body: body
        ).encode()
        let revision = BLIPMessage(properties: BLIPProperties(revProperties.pairs), body: revBody)
        while true {
            try Task.checkCancellation()
            guard let channel = state.withLock({ $0.channel }) else {
                try await Task.sleep(for: .milliseconds(100))
                continue
            }
            do {
                let answer = try await LeanBLIPHandler.send(proposal, on: channel)
                let reply = try ProposeChangesReply(
                    properties: MessageProperties(answer.properties.pairs), body: answer.body)
                guard reply.status(at: 0) == .accepted else {
                    throw LeanClientError.refused(docID, reply.status(at: 0).code)
                }
                _ = try await LeanBLIPHandler.send(revision, on: channel)
                return
            } catch let error as LeanClientError {
                throw error
            } catch {
                // The connection was lost mid-push: the next one proposes the document again.
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }
}

enum LeanClientError: Error, CustomStringConvertible {
    case badURL(String)
    case refused(String, Int)
    case peerError(BLIPMessage)
    case connectionLost

    var description: String {
        switch self {
        case .badURL(let url): "not a ws://host:port/db URL: \(url)"
        case .refused(let docID, let status): "the gateway refused \(docID): status \(status)"
        case .peerError(let reply): "the gateway answered with an error: \(reply.properties.pairs)"
        case .connectionLost: "the connection was lost"
        }
    }
}

/// Sends the WebSocket upgrade request (the upgrader adds its own headers) as Couchbase Lite 3.x does.
private final class UpgradeRequestHandler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    let host: String
    let path: String

    init(host: String, path: String) {
        self.host = host
        self.path = path
    }

    func channelActive(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: host)
        headers.add(name: "User-Agent", value: "EdgeGateway-LoadGenerator (CouchbaseLite/3.2.4 legacy mode)")
        headers.add(name: "Sec-WebSocket-Protocol", value: ReplicationSubprotocol.cbMobile3.rawValue)
        headers.add(name: "Content-Length", value: "0")
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A refused upgrade: the connection is closed and retried.
        context.close(promise: nil)
    }
}

/// The BLIP side of one lean client, entirely on its channel's event loop: frames are decoded, requests
/// answered and replies matched to their callbacks as they arrive. It sends uncompressed frames, so it keeps no
/// deflate stream.
private final class LeanBLIPHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let client: LeanClient
    private let decoder = BLIPFrameDecoder()
    private var assembler = MessageAssembler()
    private let encoder = try! BLIPFrameEncoder(compressionLevel: 0)
    private var nextNumber: UInt64 = 1
    private var awaiting: [UInt64: (Result<BLIPMessage, any Error>) -> Void] = [:]
    private var context: ChannelHandlerContext?
    private var heartbeat: RepeatedTask?
    /// LiteCore's frame size (spec §2.8).
    private static let frameSize = 16 * 1024

    init(client: LeanClient) {
        self.client = client
    }

    /// Sends `request` on `channel`'s handler and returns the reply.
    static func send(_ request: BLIPMessage, on channel: any Channel) async throws -> BLIPMessage {
        try await withCheckedThrowingContinuation { continuation in
            channel.eventLoop.execute {
                do {
                    let handler = try channel.pipeline.syncOperations.handler(type: LeanBLIPHandler.self)
                    handler.send(request) { continuation.resume(with: $0) }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // Cancelled when the channel goes inactive, which ends the cycle it holds.
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        heartbeat = context.eventLoop.scheduleRepeatedTask(
            initialDelay: client.heartbeat, delay: client.heartbeat
        ) { _ in
            guard let context = handler.value.context else { return }
            let ping = WebSocketFrame(fin: true, opcode: .ping, maskKey: .random(), data: ByteBuffer())
            context.writeAndFlush(NIOAny(ping), promise: nil)
        }
        let (properties, body) = SubChangesRequest(continuous: true, batchSize: 200, versioning: .revisionTrees)
            .encode()
        let channel = context.channel
        send(BLIPMessage(properties: BLIPProperties(properties.pairs), body: body)) { [client] result in
            if case .success = result { client.subscribed(channel) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        let callbacks = awaiting.values
        awaiting = [:]
        for callback in callbacks { callback(.failure(LeanClientError.connectionLost)) }
        heartbeat?.cancel()
        self.context = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .binary:
            do {
                try receive(Array(frame.unmaskedData.readableBytesView))
            } catch {
                context.close(promise: nil)
            }
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            context.close(promise: nil)
        default:
            break
        }
    }

    private func receive(_ bytes: [UInt8]) throws {
        guard case .data(let data) = try decoder.decode(bytes) else { return }
        let output = try assembler.receive(data)
        if let ack = output.ack {
            write([ack.encoded])
        }
        guard let message = output.message else { return }
        switch message.kind {
        case .request:
            let reply =
                switch message.profile {
                case Profile.changes.rawValue: try client.answerChanges(message)
                case Profile.rev.rawValue: client.receiveRevision(message)
                default: message.reply()
                }
            if !message.isNoReply {
                write(frames(of: reply, number: message.number, type: .reply))
            }
        case .reply:
            awaiting.removeValue(forKey: message.number)?(.success(message))
        case .error:
            awaiting.removeValue(forKey: message.number)?(.failure(LeanClientError.peerError(message)))
        }
    }

    private func send(_ request: BLIPMessage, then callback: @escaping (Result<BLIPMessage, any Error>) -> Void) {
        guard context != nil else {
            callback(.failure(LeanClientError.connectionLost))
            return
        }
        let number = nextNumber
        nextNumber += 1
        assembler.expectReply(to: number)
        awaiting[number] = callback
        write(frames(of: request, number: number, type: .request))
    }

    private func frames(of message: BLIPMessage, number: UInt64, type: BLIPFrameType) -> [[UInt8]] {
        guard let payload = try? message.encodedPayload() else { return [] }
        var flags: BLIPFrameFlags = []
        if message.isUrgent { flags.insert(.urgent) }
        let chunkLength = encoder.maxChunkLength(frameSize: Self.frameSize, number: number, compress: false)
        var frames: [[UInt8]] = []
        var start = 0
        repeat {
            let end = min(payload.count, start + chunkLength)
            var frameFlags = flags
            if end < payload.count { frameFlags.insert(.moreComing) }
            frames.append(
                encoder.encodeFrame(
                    number: number, type: type, flags: frameFlags, chunk: payload[start..<end], compress: false))
            start = end
        } while start < payload.count
        return frames
    }

    private func write(_ frames: [[UInt8]]) {
        guard let context else { return }
        for frame in frames {
            let webSocketFrame = WebSocketFrame(
                fin: true, opcode: .binary, maskKey: .random(), data: context.channel.allocator.buffer(bytes: frame))
            context.write(wrapOutboundOut(webSocketFrame), promise: nil)
        }
        context.flush()
    }
}
