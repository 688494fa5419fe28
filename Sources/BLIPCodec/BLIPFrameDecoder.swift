/// Decodes the frames of one incoming direction: header, inflation and CRC check.
///
/// Holds the direction's long-lived inflater and running CRC, so frames must be fed in wire order.
/// After it throws (other than `unknownFrameType`), its state no longer matches the peer's and the
/// connection must be closed.
public final class BLIPFrameDecoder {
    /// LiteCore rejects WebSocket messages above 1 MiB (spec §1.6).
    public static let defaultMaxFrameSize = 1 << 20
    /// A compressed frame may legitimately inflate past its 16 KiB wire size (20 211 bytes in the
    /// fixtures), so the cap sits far above that while still bounding one frame's output.
    public static let defaultMaxInflatedFrameSize = 4 << 20

    public let maxFrameSize: Int
    package let maxInflatedFrameSize: Int
    package let acceptsCompression: Bool
    /// Created with the first compressed frame, so a connection that never receives one (an idle
    /// continuous puller's) never holds an inflate stream.
    private var inflater: Inflater?
    private var crc = CRC32()

    /// - Parameter acceptsCompression: false rejects compressed frames instead of inflating them.
    public init(
        maxFrameSize: Int = BLIPFrameDecoder.defaultMaxFrameSize,
        maxInflatedFrameSize: Int = BLIPFrameDecoder.defaultMaxInflatedFrameSize,
        acceptsCompression: Bool = true
    ) {
        self.maxFrameSize = maxFrameSize
        self.maxInflatedFrameSize = maxInflatedFrameSize
        self.acceptsCompression = acceptsCompression
    }

    /// The running CRC-32 of everything decoded so far.
    package var checksum: UInt32 { crc.value }

    public func decode(_ frame: [UInt8]) throws(BLIPProtocolError) -> BLIPFrame {
        try decode(frame[...])
    }

    public func decode(_ frame: ArraySlice<UInt8>) throws(BLIPProtocolError) -> BLIPFrame {
        guard frame.count <= maxFrameSize else {
            throw .frameTooLarge(size: frame.count, limit: maxFrameSize)
        }
        var index = frame.startIndex
        let header = try BLIPFrameHeader(parsing: frame, index: &index)
        if header.type.isAck {
            return .ack(try decodeAck(header, frame: frame, index: index))
        }
        let trailerStart = frame.endIndex - 4
        guard trailerStart >= index else {
            throw .truncatedFrame(length: frame.count)
        }
        let body = frame[index..<trailerStart]
        let payload: [UInt8]
        if header.flags.contains(.compressed) {
            guard acceptsCompression else {
                throw .compressionNotSupported
            }
            let inflater = try existingOrNewInflater()
            var inflated: [UInt8] = []
            try inflater.inflate(body, appendingTo: &inflated, limit: maxInflatedFrameSize)
            payload = inflated
        } else {
            payload = Array(body)
        }
        crc.update(payload)
        let expected = frame[trailerStart...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard expected == crc.value else {
            throw .checksumMismatch(expected: expected, actual: crc.value)
        }
        return .data(
            BLIPDataFrame(
                number: header.number,
                type: header.type,
                flags: header.flags,
                payload: payload,
                flowControlLength: frame.endIndex - index
            )
        )
    }

    private func existingOrNewInflater() throws(BLIPProtocolError) -> Inflater {
        if let inflater { return inflater }
        do {
            let inflater = try Inflater()
            self.inflater = inflater
            return inflater
        } catch {
            throw .inflateFailed(code: error.zlibCode, reason: "the inflate stream could not be set up")
        }
    }

    private func decodeAck(
        _ header: BLIPFrameHeader,
        frame: ArraySlice<UInt8>,
        index: Int
    ) throws(BLIPProtocolError) -> BLIPAckFrame {
        var index = index
        let byteCount: UInt64
        do {
            byteCount = try Varint.read(from: frame, at: &index)
        } catch {
            throw error == .truncated
                ? .truncatedFrame(length: frame.count) : .badVarint(field: "ACK byte count", error)
        }
        guard index == frame.endIndex else {
            throw .trailingBytesInAck(count: frame.endIndex - index)
        }
        return BLIPAckFrame(number: header.number, type: header.type, byteCount: byteCount)
    }
}
