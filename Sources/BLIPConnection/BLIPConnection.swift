import BLIPCodec
import BurstQueue
import HummingbirdWebSocket
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// Answers one request; return `request.reply(...)`, or throw a `BLIPErrorReply` to send an error reply.
public typealias BLIPRequestHandler = @Sendable (BLIPMessage) async throws -> BLIPMessage

/// Answers one request as `BLIPRequestHandler` does, with the request's turn among those of its profile.
public typealias BLIPOrderedRequestHandler = @Sendable (BLIPMessage, BLIPArrivalTurn) async throws -> BLIPMessage

/// Answers one request as `BLIPOrderedRequestHandler` does, but through `BLIPPendingReply`, which it may hand on to
/// work that answers after the handler has returned.
public typealias BLIPDeferringRequestHandler =
    @Sendable (BLIPMessage, BLIPArrivalTurn, BLIPPendingReply) async throws -> Void

/// A BLIP 3 connection over a WebSocket, server- or client-side.
///
/// Create it, register handlers, then call `run(inbound:outbound:)` from the WebSocket handler closure;
/// `run` returns when the socket closes. Requests can be sent from any task while it runs.
public actor BLIPConnection {
    public struct Configuration: Sendable {
        /// Frame sizes and the flow-control window of outgoing messages.
        public var outbox = Outbox.Configuration()
        /// The largest incoming WebSocket message (one BLIP frame); LiteCore's limit is 1 MiB.
        package var maxIncomingFrameSize = BLIPFrameDecoder.defaultMaxFrameSize
        /// The most bytes one incoming compressed frame may inflate to.
        package var maxInflatedFrameSize = BLIPFrameDecoder.defaultMaxInflatedFrameSize
        /// The largest incoming message.
        package var maxIncomingMessageSize = MessageAssembler.defaultMaxMessageSize
        /// Outgoing bytes queued but not yet framed at which `sendRequest`/`sendNoReply` wait.
        package var maxQueuedBytes = 4 << 20
        /// zlib level for outgoing compressed messages; 0 never compresses.
        ///
        /// LiteCore deflates at level 6. Level 1 is ours: on 1 KB JSON documents it spends about 40 % of
        /// level 6's CPU time for about 5 % more bytes (BENCHMARKS.md), and a gateway is short of CPU, not of
        /// LAN bandwidth. The peer's inflater reads any level.
        public var compressionLevel: Int32 = 1
        /// zlib memLevel of the outgoing deflate stream, 6–9 (`Deflater.boundsFrames` says which go with which
        /// window).
        ///
        /// LiteCore uses 9, whose hash table is 128 KiB (zeroed when the stream is set up) and whose pending
        /// buffer is 128 KiB. At 6 they are 16 KiB each. On a listener every connection that receives documents
        /// keeps its stream for good, so with 1,000 of them this is most of the gateway's memory
        /// (RELIABILITY.md, "Load").
        package var compressionMemoryLevel: Int32 = 6
        /// log2 of the outgoing deflate window, 13–15.
        ///
        /// LiteCore uses 15. An 8 KiB window holds 32 KiB per stream (the window twice over and its chain
        /// table) instead of 128 KiB, all of it touched once a connection has sent 16 KiB. Replication
        /// messages repeat their keys within a message and their neighbours, so little is lost (0.5 % more
        /// bytes on 1 KB documents); the peer's 32 KiB inflater reads the stream unchanged.
        package var compressionWindowBits: Int32 = 13

        public init() {}
    }

    enum State {
        case idle
        case running
        /// Sending what is ready, then the close frame.
        case closing(WebSocketCloseCode, reason: String?)
        case closed(BLIPConnectionError)
    }

    /// The negotiated `Sec-WebSocket-Protocol`, e.g. `BLIP_3+CBMobile_3`.
    public nonisolated let subprotocol: String
    public nonisolated let configuration: Configuration
    nonisolated let logger: Logger

    var state = State.idle
    var outbox: Outbox
    let decoder: BLIPFrameDecoder
    var assembler: MessageAssembler
    /// Read by every incoming request's task without a hop onto this actor.
    let handlers = NIOLockedValueBox<[String: RegisteredHandler]>([:])
    /// Replies of finished handlers on their way to the outbox; see `post(_:)`.
    let postedReplies = BurstQueue<BLIPMessage>()
    var pendingReplies: [UInt64: ReplyWaiter] = [:]
    var queueSpaceWaiters: [CheckedContinuation<Void, any Error>] = []
    /// Whether a writer task is running; see `wakeWriter()`.
    var isWriterRunning = false
    var writer: (any BLIPFrameWriter)?
    /// Whether a frame went out since the last `releaseCompressionStateIfQuiet()`.
    var sentSinceQuietCheck = false

    public init(
        subprotocol: String,
        configuration: Configuration = Configuration(),
        logger: Logger
    ) throws(CompressionSetupError) {
        self.subprotocol = subprotocol
        self.configuration = configuration
        self.logger = Self.logger(logger, taggedWith: subprotocol)
        outbox = Outbox(
            configuration: configuration.outbox,
            encoder: try BLIPFrameEncoder(
                compressionLevel: configuration.compressionLevel, memoryLevel: configuration.compressionMemoryLevel,
                windowBits: configuration.compressionWindowBits)
        )
        decoder = BLIPFrameDecoder(
            maxFrameSize: configuration.maxIncomingFrameSize,
            maxInflatedFrameSize: configuration.maxInflatedFrameSize
        )
        assembler = MessageAssembler(maxMessageSize: configuration.maxIncomingMessageSize)
    }

    /// `logger` with the subprotocol in its metadata, as a connection logs; one that has it already is returned as it
    /// is, so that many connections can share one logger (each copy given metadata of its own holds a dictionary of
    /// its own, about 340 bytes).
    public static func logger(_ logger: Logger, taggedWith subprotocol: String) -> Logger {
        guard logger[metadataKey: "blip.subprotocol"] != .string(subprotocol) else { return logger }
        var logger = logger
        logger[metadataKey: "blip.subprotocol"] = .string(subprotocol)
        return logger
    }

    /// Runs the connection until the WebSocket closes; returns why it ended.
    ///
    /// Rethrows WebSocket-level errors from `inbound` so that the WebSocket layer closes with its own code.
    @discardableResult
    public nonisolated func run(
        inbound: WebSocketInboundStream,
        outbound: WebSocketOutboundWriter
    ) async throws -> BLIPConnectionError {
        try await run(writer: WebSocketFrameWriter(outbound: outbound)) { receive in
            try await self.readLoop(inbound, receive: receive)
        }
    }

    /// Runs the connection over a channel of whole BLIP frames other than a WebSocket: `incoming` yields the
    /// peer's frames and ends when the peer is gone; `writer` carries this side's. Returns why it ended.
    @discardableResult
    public nonisolated func run(
        incoming: AsyncStream<[UInt8]>,
        writer: some BLIPFrameWriter
    ) async throws -> BLIPConnectionError {
        try await run(writer: writer) { receive in
            for await frame in incoming {
                guard await receive(frame) else { return }
            }
        }
    }

    /// Runs the connection with `reading` feeding it the peer's frames through the function it is given, which
    /// returns false once the connection has failed or closed. Incoming requests are handed to their handlers
    /// there, in the reading task, so that no task of its own waits for them.
    nonisolated func run(
        writer: some BLIPFrameWriter,
        reading: @Sendable (_ receive: ([UInt8]) async -> Bool) async throws -> Void
    ) async throws -> BLIPConnectionError {
        try await start(writer: writer)
        var readError: (any Error)?
        await withDiscardingTaskGroup { group in
            func receiveAndDispatch(_ frame: [UInt8]) async -> Bool {
                switch await self.receive(frame) {
                case .closed:
                    return false
                case .received(nil):
                    return true
                case .received(let request?):
                    dispatch(request, into: &group)
                    return true
                }
            }
            do {
                try await reading(receiveAndDispatch)
            } catch {
                readError = error
            }
            await finish(.closedByPeer)
            group.cancelAll()
        }
        if let readError {
            throw readError
        }
        return await closeReason
    }

    /// True while requests can be sent.
    package var isOpen: Bool {
        if case .running = state { return true }
        return false
    }

    /// Outgoing message bytes not yet framed, stalled messages included.
    package var queuedOutgoingBytes: Int { outbox.pendingBytes }

    /// Outgoing messages waiting for the peer's ACK before they may continue.
    package var stalledOutgoingMessages: Int { outbox.stalledCount }

    var closeReason: BLIPConnectionError {
        if case .closed(let reason) = state { return reason }
        return .closedByPeer
    }

    private func start(writer: some BLIPFrameWriter) throws(BLIPConnectionError) {
        guard case .idle = state else {
            throw .alreadyStarted
        }
        state = .running
        self.writer = writer
        // Messages queued before `run` go out now.
        wakeWriter()
    }

    /// Reads WebSocket messages (reassembling fragmented ones) and feeds them to the BLIP decoder.
    private nonisolated func readLoop(
        _ inbound: WebSocketInboundStream, receive: ([UInt8]) async -> Bool
    ) async throws {
        var reassembly = WebSocketMessageReassembly(maxMessageSize: configuration.maxIncomingFrameSize)
        for try await frame in inbound {
            let opcode: WebSocketMessageReassembly.DataOpcode =
                switch frame.opcode {
                case .text: .text
                case .binary: .binary
                case .continuation: .continuation
                }
            let message: [UInt8]?
            do {
                message = try reassembly.append(opcode, fin: frame.fin, data: frame.data)
            } catch {
                await fail(error)
                return
            }
            if let message {
                guard await receive(message) else { return }
            }
        }
    }
}
