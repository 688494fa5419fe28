import BLIPCodec
import Testing

/// The vectors of spec §2.12.
@Suite("Spec test vectors")
struct TestVectorTests {
    static let getCheckpoint: [UInt8] = [
        0x01, 0x00, 0x24, 0x50, 0x72, 0x6F, 0x66, 0x69, 0x6C, 0x65, 0x00, 0x67, 0x65, 0x74, 0x43, 0x68,
        0x65, 0x63,
        0x6B, 0x70, 0x6F, 0x69, 0x6E, 0x74, 0x00, 0x63, 0x6C, 0x69, 0x65, 0x6E, 0x74, 0x00, 0x63, 0x70,
        0x2D, 0x61,
        0x62, 0x63, 0x00, 0x55, 0x75, 0x19, 0x7F,
    ]
    static let notFound: [UInt8] = [
        0x01, 0x02, 0x21, 0x45, 0x72, 0x72, 0x6F, 0x72, 0x2D, 0x44, 0x6F, 0x6D, 0x61, 0x69, 0x6E, 0x00,
        0x48, 0x54,
        0x54, 0x50, 0x00, 0x45, 0x72, 0x72, 0x6F, 0x72, 0x2D, 0x43, 0x6F, 0x64, 0x65, 0x00, 0x34, 0x30,
        0x34, 0x00,
        0x6E, 0x6F, 0x74, 0x20, 0x66, 0x6F, 0x75, 0x6E, 0x64, 0x4C, 0x72, 0x8B, 0xDF,
    ]
    static let compressedReply: [UInt8] = [
        0x02, 0x09, 0x62, 0x88, 0x8E, 0x05, 0x00, 0x53, 0x7D, 0x53, 0x15,
    ]

    @Test("client request #1 getCheckpoint encodes and decodes exactly")
    func getCheckpointRequest() throws {
        let encoder = try BLIPFrameEncoder()
        var outbox = Outbox(encoder: encoder)
        let number = try outbox.enqueue(
            .request(profile: "getCheckpoint", properties: ["client": "cp-abc"]))
        #expect(number == 1)
        #expect(outbox.nextFrame() == Self.getCheckpoint)

        let decoder = BLIPFrameDecoder()
        var assembler = MessageAssembler()
        guard case .data(let frame) = try decoder.decode(Self.getCheckpoint) else {
            Issue.record("not a data frame")
            return
        }
        let message = try #require(try assembler.receive(frame).message)
        #expect(message.profile == "getCheckpoint")
        #expect(message.properties["client"] == "cp-abc")
        #expect(decoder.checksum == 0x5575_197F)
    }

    @Test("server error reply then compressed reply, CRC chained")
    func serverDirection() throws {
        let decoder = BLIPFrameDecoder()
        var assembler = MessageAssembler()
        assembler.expectReply(to: 1)
        assembler.expectReply(to: 2)

        guard case .data(let errorFrame) = try decoder.decode(Self.notFound) else {
            Issue.record("not a data frame")
            return
        }
        let error = try #require(try assembler.receive(errorFrame).message)
        #expect(error.errorReply == BLIPErrorReply(domain: "HTTP", code: 404, message: "not found"))

        guard case .data(let replyFrame) = try decoder.decode(Self.compressedReply) else {
            Issue.record("not a data frame")
            return
        }
        #expect(replyFrame.payload == [0x00, 0x5B, 0x5D])
        let reply = try #require(try assembler.receive(replyFrame).message)
        #expect(reply.kind == .reply && reply.number == 2 && reply.body == Array("[]".utf8))
        #expect(decoder.checksum == 0x537D_5315)
    }

    @Test("the error reply re-encodes byte for byte; the compressed one round-trips")
    func serverDirectionEncoding() throws {
        let encoder = try BLIPFrameEncoder()
        var outbox = Outbox(encoder: encoder)
        let request = BLIPMessage(kind: .request, number: 1)
        try outbox.enqueue(
            request.errorReply(BLIPErrorReply(domain: "HTTP", code: 404, message: "not found")))
        #expect(outbox.nextFrame() == Self.notFound)
        try outbox.enqueue(
            BLIPMessage(kind: .reply, number: 2, body: Array("[]".utf8), isCompressed: true))
        let next = outbox.nextFrame()
        let frame = try #require(next)
        #expect(frame.prefix(2) == [0x02, 0x09])
        #expect(frame.suffix(4) == [0x53, 0x7D, 0x53, 0x15])
    }

    @Test("ACK of 65 536 bytes of request #7")
    func ack() throws {
        let ack = BLIPAckFrame(number: 7, type: .ackRequest, byteCount: 65_536)
        #expect(ack.encoded == [0x07, 0x34, 0x80, 0x80, 0x04])
        #expect(try BLIPFrameDecoder().decode(ack.encoded) == .ack(ack))
    }
}
