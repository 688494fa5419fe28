/// Schedules the frames of all outgoing messages of one connection.
///
/// Follows LiteCore's policy (spec §2.8–2.9): one frame per turn, round robin; urgent messages are placed
/// after the last urgent one with one normal message in between, but never ahead of a message that has
/// not started; normal frames shrink to `reducedFrameSize` while an urgent message waits; a message with
/// `flowControlWindow` or more unacknowledged bytes sits out until the peer's ACK arrives.
public struct Outbox {
    public struct Configuration: Sendable, Hashable {
        /// LiteCore's frame size (spec §2.8).
        public var maxFrameSize = 16_384
        /// LiteCore's frame size for a normal message while an urgent one waits.
        package var reducedFrameSize = 4_096
        /// LiteCore stops sending a message at this many unacknowledged bytes (spec §2.9).
        package var flowControlWindow = 128_000

        public init() {}
    }

    public let configuration: Configuration
    private let encoder: BLIPFrameEncoder
    private var ready = MessageQueue()
    private var stalled: [OutgoingMessage.Key: OutgoingMessage] = [:]
    /// Streamed messages that have sent everything they were given so far and wait for more body.
    private var starved: [OutgoingMessage.Key: OutgoingMessage] = [:]
    private var acks: [BLIPAckFrame] = []
    private var nextRequestNumber: UInt64 = 1
    /// Message bytes queued but not yet framed.
    package private(set) var pendingBytes = 0

    public init(configuration: Configuration = Configuration(), encoder: BLIPFrameEncoder) {
        self.configuration = configuration
        self.encoder = encoder
    }

    /// True when nothing waits to be sent, stalled messages included.
    public var isEmpty: Bool { ready.isEmpty && stalled.isEmpty && starved.isEmpty && acks.isEmpty }

    /// Whether the encoder holds a deflate stream.
    package var holdsCompressionState: Bool { encoder.holdsCompressionState }

    /// Frees the encoder's deflate stream when nothing waits to be sent (`BLIPFrameEncoder.releaseCompressionState`);
    /// returns whether a stream was freed.
    package func releaseCompressionStateIfIdle() -> Bool {
        guard isEmpty, encoder.holdsCompressionState else { return false }
        encoder.releaseCompressionState()
        return true
    }

    /// True when `nextFrame()` would return a frame.
    package var hasFrameReady: Bool { !ready.isEmpty || !acks.isEmpty }

    /// The number of messages waiting for an ACK before they may continue.
    package var stalledCount: Int { stalled.count }

    /// Queues a message; a request gets the next request number, which is returned.
    ///
    /// Request numbers are assigned in queueing order and the scheduler never starts a message ahead of
    /// an earlier unstarted one, so requests begin on the wire in number order.
    ///
    /// With `streamingBody`, `message.body` is only the start of the body: more comes through
    /// `appendBody(_:toRequest:)` and the message ends with `finishBody(ofRequest:)`. Its frames carry the
    /// moreComing flag until then, so the peer assembles one message however long the body runs.
    @discardableResult
    public mutating func enqueue(
        _ message: BLIPMessage,
        streamingBody: Bool = false
    ) throws(BLIPEncodingError) -> UInt64 {
        let payload = try message.encodedPayload()
        let number: UInt64
        if message.kind == .request {
            number = nextRequestNumber
            nextRequestNumber += 1
        } else {
            number = message.number
        }
        let outgoing = OutgoingMessage(
            message: message, number: number, payload: payload, isBodyFinished: !streamingBody)
        pendingBytes += payload.count
        schedule(outgoing)
        return number
    }

    /// Adds body bytes to a request queued with `streamingBody`.
    package mutating func appendBody(_ bytes: [UInt8], toRequest number: UInt64) {
        guard !bytes.isEmpty else { return }
        pendingBytes += bytes.count
        updateStreamed(OutgoingMessage.Key(isReply: false, number: number)) { $0.appendBody(bytes) }
    }

    /// Ends the body of a request queued with `streamingBody`; its final frame follows.
    package mutating func finishBody(ofRequest number: UInt64) {
        updateStreamed(OutgoingMessage.Key(isReply: false, number: number)) { $0.finishBody() }
    }

    private mutating func updateStreamed(_ key: OutgoingMessage.Key, _ change: (inout OutgoingMessage) -> Void) {
        if var message = starved.removeValue(forKey: key) {
            change(&message)
            schedule(message)
        } else if var message = stalled[key] {
            change(&message)
            stalled[key] = message
        } else if let position = ready.firstPosition(where: { $0.key == key }) {
            ready.update(at: position, change)
        }
    }

    /// Queues an ACK; ACKs go out before any data frame.
    public mutating func enqueue(_ ack: BLIPAckFrame) {
        acks.append(ack)
    }

    /// Applies the peer's ACK; a stalled message resumes once its unacknowledged bytes drop below the window.
    ///
    /// ACKs for messages no longer in flight are ignored (spec §2.11).
    public mutating func acknowledge(_ ack: BLIPAckFrame) {
        let key = OutgoingMessage.Key(isReply: ack.type == .ackReply, number: ack.number)
        if var message = stalled[key] {
            message.acknowledge(byteCount: ack.byteCount)
            if message.unacknowledgedBytes < configuration.flowControlWindow {
                stalled[key] = nil
                park(message)
            } else {
                stalled[key] = message
            }
        } else if var message = starved[key] {
            message.acknowledge(byteCount: ack.byteCount)
            starved[key] = message
        } else if let position = ready.firstPosition(where: { $0.key == key }) {
            ready.update(at: position) { $0.acknowledge(byteCount: ack.byteCount) }
        }
    }

    /// The next frame to write, or nil when nothing can be sent until more messages or ACKs arrive.
    public mutating func nextFrame() -> [UInt8]? {
        if !acks.isEmpty {
            return acks.removeFirst().encoded
        }
        guard var message = ready.popFirst() else { return nil }
        let urgentWaiting = !message.isUrgent && ready.urgentCount > 0
        let frameSize = urgentWaiting ? configuration.reducedFrameSize : configuration.maxFrameSize
        let before = message.remainingBytes
        let frame = message.nextFrame(encoder: encoder, frameSize: frameSize)
        pendingBytes -= before - message.remainingBytes
        if !message.isComplete {
            if message.unacknowledgedBytes >= configuration.flowControlWindow {
                stalled[message.key] = message
            } else {
                park(message)
            }
        }
        return frame
    }

    /// Back into the run queue, or aside until its stream supplies more body.
    private mutating func park(_ message: OutgoingMessage) {
        if message.hasFrameReady {
            schedule(message)
        } else {
            starved[message.key] = message
        }
    }

    private mutating func schedule(_ message: OutgoingMessage) {
        guard message.isUrgent else {
            ready.append(message)
            return
        }
        var position =
            ready.urgentCount == 0 ? 0 : (ready.lastPosition(where: \.isUrgent).map { $0 + 1 } ?? 0)
        if position < ready.count {
            position += 1
        }
        if let lastUnstarted = ready.lastPosition(where: { !$0.hasStarted }) {
            position = max(position, lastUnstarted + 1)
        }
        ready.insert(message, at: position)
    }
}
