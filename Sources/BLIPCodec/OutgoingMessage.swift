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
    let payload: [UInt8]
    private(set) var offset = 0
    /// Frame bytes after the header, checksum included, as the peer's ACKs count them.
    private(set) var bytesSent = 0
    private(set) var bytesAcknowledged = 0

    init(message: BLIPMessage, number: UInt64, payload: [UInt8]) {
        type = message.kind.frameType
        self.number = number
        flags = message.frameFlags
        compress = message.isCompressed
        self.payload = payload
    }

    var key: Key { Key(isReply: type != .request, number: number) }
    var isUrgent: Bool { flags.contains(.urgent) }
    var hasStarted: Bool { bytesSent > 0 }
    var isComplete: Bool { offset == payload.count && hasStarted }
    var remainingBytes: Int { payload.count - offset }
    var unacknowledgedBytes: Int { bytesSent - bytesAcknowledged }

    /// Encodes the next frame, of at most about `frameSize` bytes on the wire.
    mutating func nextFrame(encoder: BLIPFrameEncoder, frameSize: Int) -> [UInt8] {
        let chunkLength = encoder.maxChunkLength(frameSize: frameSize, number: number, compress: compress)
        let end = offset + min(chunkLength, payload.count - offset)
        var frameFlags = flags
        if end < payload.count {
            frameFlags.insert(.moreComing)
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
        return frame
    }

    mutating func acknowledge(byteCount: UInt64) {
        bytesAcknowledged = max(bytesAcknowledged, Int(clamping: min(byteCount, UInt64(bytesSent))))
    }
}
