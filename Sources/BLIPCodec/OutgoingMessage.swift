/// One queued outgoing message: its encoded bytes, how far they have been framed, and its flow-control state.
struct OutgoingMessage {
    struct Key: Hashable {
        var isReply: Bool
        var number: UInt64
    }

    let type: BLIPFrameType
    let number: UInt64
    let flags: BLIPFrameFlags
    let compress: Bool
    /// The bytes not yet framed start at `offset`; framed bytes are dropped from the front now and then, so
    /// that a streamed body never accumulates in memory.
    private(set) var payload: [UInt8]
    private(set) var offset = 0
    /// False while a streamed body may still grow; frames then keep the moreComing flag.
    private(set) var isBodyFinished: Bool
    private(set) var sentFinalFrame = false
    /// Frame bytes after the header, checksum included, as the peer's ACKs count them.
    private(set) var bytesSent = 0
    private(set) var bytesAcknowledged = 0

    init(message: BLIPMessage, number: UInt64, payload: [UInt8], isBodyFinished: Bool = true) {
        type = message.kind.frameType
        self.number = number
        flags = message.frameFlags
        compress = message.isCompressed
        self.payload = payload
        self.isBodyFinished = isBodyFinished
    }

    var key: Key { Key(isReply: type != .request, number: number) }
    var isUrgent: Bool { flags.contains(.urgent) }
    var hasStarted: Bool { bytesSent > 0 }
    var isComplete: Bool { sentFinalFrame }
    /// Whether a frame can be made now: unsent bytes, or a finished body whose final frame is still owed.
    var hasFrameReady: Bool { !sentFinalFrame && (offset < payload.count || isBodyFinished) }
    var remainingBytes: Int { payload.count - offset }
    var unacknowledgedBytes: Int { bytesSent - bytesAcknowledged }

    /// Encodes the next frame, of at most about `frameSize` bytes on the wire.
    mutating func nextFrame(encoder: BLIPFrameEncoder, frameSize: Int) -> [UInt8] {
        let chunkLength = encoder.maxChunkLength(
            frameSize: frameSize, number: number, compress: compress)
        let end = offset + min(chunkLength, payload.count - offset)
        var frameFlags = flags
        if end < payload.count || !isBodyFinished {
            frameFlags.insert(.moreComing)
        } else {
            sentFinalFrame = true
        }
        let frame = encoder.encodeFrame(
            number: number,
            type: type,
            flags: frameFlags,
            chunk: payload[offset..<end],
            compress: compress
        )
        offset = end
        bytesSent += frame.count - BLIPFrameEncoder.headerLength(number: number)
        // Amortized: each byte is moved at most once more on average.
        if offset >= 65_536 && offset * 2 >= payload.count {
            payload.removeFirst(offset)
            offset = 0
        }
        return frame
    }

    mutating func appendBody(_ bytes: some Collection<UInt8>) {
        precondition(!isBodyFinished, "appending to a finished message body")
        payload.append(contentsOf: bytes)
    }

    mutating func finishBody() {
        isBodyFinished = true
    }

    mutating func acknowledge(byteCount: UInt64) {
        bytesAcknowledged = max(bytesAcknowledged, Int(clamping: min(byteCount, UInt64(bytesSent))))
    }
}
