/// A decoded frame that carries message data (MSG, RPY or ERR).
public struct BLIPDataFrame: Sendable, Hashable {
    package var number: UInt64
    package var type: BLIPFrameType
    package var flags: BLIPFrameFlags
    /// The frame's message bytes, inflated if the frame was compressed.
    package var payload: [UInt8]
    /// The bytes after the frame header as sent, checksum included: what flow control counts (spec §2.9).
    package var flowControlLength: Int

    package init(
        number: UInt64, type: BLIPFrameType, flags: BLIPFrameFlags, payload: [UInt8],
        flowControlLength: Int
    ) {
        self.number = number
        self.type = type
        self.flags = flags
        self.payload = payload
        self.flowControlLength = flowControlLength
    }
}

/// A decoded ACK frame: the peer has received `byteCount` bytes of one of our messages.
public struct BLIPAckFrame: Sendable, Hashable {
    /// The number of the acknowledged message.
    public var number: UInt64
    /// `.ackRequest` acknowledges one of our requests, `.ackReply` one of our replies.
    public var type: BLIPFrameType
    public var byteCount: UInt64

    public init(number: UInt64, type: BLIPFrameType, byteCount: UInt64) {
        self.number = number
        self.type = type
        self.byteCount = byteCount
    }

    /// The encoded frame: `varint(number) ‖ flags ‖ varint(byteCount)`, no checksum.
    ///
    /// ACKs are sent urgent and noReply (flags `0x34`/`0x35`), as LiteCore does.
    package var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(2 * Varint.maxLength + 1)
        Varint.append(number, to: &bytes)
        bytes.append(BLIPFrameFlags([.urgent, .noReply]).byte(for: type))
        Varint.append(byteCount, to: &bytes)
        return bytes
    }
}

/// One decoded BLIP frame.
public enum BLIPFrame: Sendable, Hashable {
    case data(BLIPDataFrame)
    case ack(BLIPAckFrame)
}

/// The message number and flags that begin every frame.
struct BLIPFrameHeader {
    var number: UInt64
    var type: BLIPFrameType
    var flags: BLIPFrameFlags

    /// Parses the header and leaves `index` at the first byte after it.
    init(parsing frame: ArraySlice<UInt8>, index: inout Int) throws(BLIPProtocolError) {
        guard !frame.isEmpty else {
            throw .emptyFrame
        }
        do {
            number = try Varint.read(from: frame, at: &index)
        } catch {
            throw error == .truncated
                ? .truncatedFrame(length: frame.count) : .badVarint(field: "message number", error)
        }
        let rawFlags: UInt64
        do {
            rawFlags = try Varint.read(from: frame, at: &index)
        } catch {
            throw error == .truncated
                ? .truncatedFrame(length: frame.count) : .badVarint(field: "frame flags", error)
        }
        // Bit 0x80 is reserved; unknown bits are ignored (spec §2.3), but nothing beyond a byte is defined.
        guard rawFlags <= 0xFF else {
            throw .invalidFlags(rawFlags)
        }
        let typeBits = UInt8(rawFlags) & BLIPFrameFlags.typeMask
        guard let type = BLIPFrameType(rawValue: typeBits) else {
            throw .unknownFrameType(typeBits)
        }
        self.type = type
        flags = BLIPFrameFlags(rawValue: UInt8(rawFlags)).intersection([
            .compressed, .urgent, .noReply, .moreComing,
        ])
    }
}
