import BLIPCodec
import Testing

@Suite("Frame decoder errors")
struct DecoderErrorTests {
    static func frame(number: UInt64 = 1, payload: [UInt8]) throws -> [UInt8] {
        let encoder = try BLIPFrameEncoder(compressionLevel: 0)
        return encoder.encodeFrame(
            number: number,
            type: .request,
            flags: [],
            chunk: payload[...],
            compress: false
        )
    }

    @Test("empty, truncated and malformed headers")
    func headers() throws {
        let decoder = BLIPFrameDecoder()
        #expect(throws: BLIPProtocolError.emptyFrame) { try decoder.decode([]) }
        #expect(throws: BLIPProtocolError.truncatedFrame(length: 1)) { try decoder.decode([0x80]) }
        #expect(throws: BLIPProtocolError.truncatedFrame(length: 1)) { try decoder.decode([0x01]) }
        #expect(throws: BLIPProtocolError.truncatedFrame(length: 5)) {
            try decoder.decode([0x01, 0x00, 0x00, 0x00, 0x00])
        }
        #expect(throws: BLIPProtocolError.badVarint(field: "message number", .overlong)) {
            try decoder.decode([0x81, 0x00, 0x00])
        }
        #expect(throws: BLIPProtocolError.badVarint(field: "message number", .overflow)) {
            try decoder.decode(Array(repeating: 0xFF, count: 11))
        }
        #expect(throws: BLIPProtocolError.invalidFlags(0x100)) {
            try decoder.decode([0x01, 0x80, 0x02, 0, 0, 0, 0])
        }
        #expect(throws: BLIPProtocolError.truncatedFrame(length: 2)) {
            try decoder.decode([0x01, 0x34])
        }
        #expect(throws: BLIPProtocolError.trailingBytesInAck(count: 1)) {
            try decoder.decode([0x01, 0x34, 0x05, 0x00])
        }
        #expect(throws: BLIPProtocolError.badVarint(field: "ACK byte count", .overlong)) {
            try decoder.decode([0x01, 0x35, 0x85, 0x00])
        }
    }

    @Test("an unknown frame type leaves the decoder's state intact")
    func unknownType() throws {
        let decoder = BLIPFrameDecoder()
        #expect(throws: BLIPProtocolError.unknownFrameType(3)) {
            try decoder.decode([0x01, 0x03, 0x00, 0, 0, 0, 0])
        }
        #expect(throws: BLIPProtocolError.unknownFrameType(7)) {
            try decoder.decode([0x01, 0x7F, 0x00])
        }
        let frame = try Self.frame(payload: [0x00])
        #expect(throws: Never.self) { try decoder.decode(frame) }
    }

    @Test("a CRC mismatch names both values")
    func checksum() throws {
        var frame = try Self.frame(payload: [0x00, 0x41])
        let good = BLIPFrameDecoder()
        _ = try good.decode(frame)
        let actual = good.checksum
        frame[frame.count - 1] ^= 0x01
        #expect(throws: BLIPProtocolError.checksumMismatch(expected: actual ^ 0x01, actual: actual)) {
            try BLIPFrameDecoder().decode(frame)
        }
    }

    @Test("bad deflate data is an inflate failure")
    func inflateFailure() throws {
        let decoder = BLIPFrameDecoder()
        #expect {
            try decoder.decode([0x01, 0x08, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0])
        } throws: { error in
            guard case .inflateFailed = error as? BLIPProtocolError else { return false }
            return true
        }
    }

    @Test("a deflate bomb stops at the inflated-size cap")
    func deflateBomb() throws {
        let encoder = try BLIPFrameEncoder()
        let zeros = [UInt8](repeating: 0, count: 5_000_000)
        let frame = encoder.encodeFrame(
            number: 1, type: .request, flags: [], chunk: zeros[...], compress: true)
        #expect(frame.count < 10_000)
        let decoder = BLIPFrameDecoder(maxInflatedFrameSize: 1 << 20)
        #expect(throws: BLIPProtocolError.inflatedFrameTooLarge(limit: 1 << 20)) {
            try decoder.decode(frame)
        }
        // The same frame under a cap it fits.
        #expect(throws: Never.self) {
            try BLIPFrameDecoder(maxInflatedFrameSize: 5_000_000).decode(frame)
        }
    }

    @Test("frame size limit and disabled compression")
    func limits() throws {
        let frame = try Self.frame(payload: [UInt8](repeating: 0, count: 100))
        #expect(throws: BLIPProtocolError.frameTooLarge(size: frame.count, limit: 64)) {
            try BLIPFrameDecoder(maxFrameSize: 64).decode(frame)
        }
        #expect(throws: BLIPProtocolError.compressionNotSupported) {
            try BLIPFrameDecoder(acceptsCompression: false).decode([0x01, 0x08, 0x02, 0x00, 0, 0, 0, 0])
        }
    }
}

@Suite("Message assembler")
struct MessageAssemblerTests {
    static func data(
        _ number: UInt64, _ type: BLIPFrameType, _ flags: BLIPFrameFlags = [], payload: [UInt8] = [0]
    ) -> BLIPDataFrame {
        BLIPDataFrame(
            number: number, type: type, flags: flags, payload: payload,
            flowControlLength: payload.count + 4)
    }

    @Test("request numbers must follow each other")
    func requestOrder() throws {
        var assembler = MessageAssembler()
        #expect(throws: BLIPProtocolError.outOfOrderRequest(number: 2, expected: 1)) {
            try assembler.receive(Self.data(2, .request))
        }
        #expect(try assembler.receive(Self.data(1, .request)).message?.number == 1)
        #expect(throws: BLIPProtocolError.outOfOrderRequest(number: 1, expected: 2)) {
            try assembler.receive(Self.data(1, .request))
        }
        // Frames of a started message continue it, whatever came in between.
        #expect(try assembler.receive(Self.data(2, .request, .moreComing)).message == nil)
        #expect(try assembler.receive(Self.data(3, .request)).message?.number == 3)
        let completed = try assembler.receive(Self.data(2, .request, payload: [0x41]))
        #expect(completed.message?.body == [0x41])
    }

    @Test("replies must answer a request that awaits one, once")
    func replies() throws {
        var assembler = MessageAssembler()
        #expect(throws: BLIPProtocolError.unexpectedReply(number: 1)) {
            try assembler.receive(Self.data(1, .reply))
        }
        assembler.expectReply(to: 1)
        assembler.expectReply(to: 2)
        #expect(assembler.pendingReplyCount == 2)
        #expect(try assembler.receive(Self.data(2, .error)).message?.kind == .error)
        #expect(throws: BLIPProtocolError.unexpectedReply(number: 2)) {
            try assembler.receive(Self.data(2, .reply))
        }
        #expect(try assembler.receive(Self.data(1, .reply, .moreComing)).message == nil)
        #expect(assembler.pendingReplyCount == 1)
        #expect(try assembler.receive(Self.data(1, .reply)).message?.kind == .reply)
        #expect(assembler.pendingReplyCount == 0)
    }

    @Test("messages larger than the cap are rejected")
    func sizeCap() throws {
        var assembler = MessageAssembler(maxMessageSize: 1_000)
        let chunk = [UInt8](repeating: 0, count: 600)
        _ = try assembler.receive(Self.data(1, .request, .moreComing, payload: chunk))
        #expect(assembler.bufferedBytes == 600)
        #expect(throws: BLIPProtocolError.messageTooLarge(size: 1_200, limit: 1_000)) {
            try assembler.receive(Self.data(1, .request, payload: chunk))
        }
    }

    @Test("ACKs every 50 000 bytes of an unfinished message, with the running total")
    func acks() throws {
        var assembler = MessageAssembler()
        let chunk = [UInt8](repeating: 0, count: 16_373)
        var acks: [BLIPAckFrame] = []
        _ = try assembler.receive(Self.data(1, .request, .moreComing, payload: [0] + chunk.dropFirst()))
        for _ in 0..<10 {
            if let ack = try assembler.receive(Self.data(1, .request, .moreComing, payload: chunk)).ack {
                acks.append(ack)
            }
        }
        #expect(
            acks == [
                BLIPAckFrame(number: 1, type: .ackRequest, byteCount: 65_508),
                BLIPAckFrame(number: 1, type: .ackRequest, byteCount: 131_016),
            ])
        #expect(try assembler.receive(Self.data(1, .request, payload: chunk)).ack == nil)
    }

    @Test("malformed properties")
    func properties() throws {
        var assembler = MessageAssembler()
        #expect(
            throws: BLIPProtocolError.malformedProperties("length 5 exceeds the 1 bytes of the message")
        ) {
            try assembler.receive(Self.data(1, .request, payload: [5, 0x41]))
        }
        #expect(throws: BLIPProtocolError.malformedProperties("block does not end with NUL")) {
            try assembler.receive(Self.data(2, .request, payload: [2, 0x41, 0x42]))
        }
        #expect(throws: BLIPProtocolError.malformedProperties("key \"A\" has no value")) {
            try assembler.receive(Self.data(3, .request, payload: [2, 0x41, 0x00]))
        }
        #expect(throws: BLIPProtocolError.malformedProperties("string at offset 0 is not valid UTF-8")) {
            try assembler.receive(Self.data(4, .request, payload: [4, 0xFF, 0x00, 0x41, 0x00]))
        }
        #expect(throws: BLIPProtocolError.badVarint(field: "properties length", .truncated)) {
            try assembler.receive(Self.data(5, .request, payload: []))
        }
        // Each string is checked on its own: an ASCII key does not let a broken value through.
        #expect(throws: BLIPProtocolError.malformedProperties("string at offset 2 is not valid UTF-8")) {
            try assembler.receive(Self.data(6, .request, payload: [4, 0x41, 0x00, 0xC3, 0x00]))
        }
        let accented = try assembler.receive(Self.data(7, .request, payload: [5, 0x41, 0x00, 0xC3, 0xA9, 0x00]))
        #expect(accented.message?.properties["A"] == "é")
    }
}
