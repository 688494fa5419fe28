import BLIPCodec
import Testing

@Suite("Outbox scheduling and flow control")
struct OutboxTests {
    /// Decodes just the header of an outgoing frame.
    static func header(_ frame: [UInt8]) throws -> (number: UInt64, flags: UInt8) {
        var index = 0
        let number = try Varint.read(from: frame, at: &index)
        return (number, frame[index])
    }

    @Test("requests are numbered in queueing order and begin in that order")
    func numbering() throws {
        var outbox = Outbox(encoder: try BLIPFrameEncoder())
        try outbox.enqueue(.request(profile: "big", body: Array(repeating: 1, count: 40_000)))
        try outbox.enqueue(.request(profile: "normal"))
        try outbox.enqueue(.request(profile: "urgent", isUrgent: true))
        var firstSeen: [UInt64] = []
        while let frame = outbox.nextFrame() {
            let number = try Self.header(frame).number
            if !firstSeen.contains(number) {
                firstSeen.append(number)
            }
        }
        #expect(firstSeen == [1, 2, 3])
    }

    @Test("an urgent message interleaves with a big one, which drops to 4 KiB frames meanwhile")
    func urgentInterleaving() throws {
        var outbox = Outbox(encoder: try BLIPFrameEncoder())
        try outbox.enqueue(.request(profile: "big", body: Array(repeating: 7, count: 100_000)))
        _ = outbox.nextFrame()
        try outbox.enqueue(.request(profile: "urgent", body: Array(repeating: 9, count: 40_000), isUrgent: true))
        var order: [(number: UInt64, size: Int)] = []
        while let frame = outbox.nextFrame() {
            order.append((try Self.header(frame).number, frame.count))
        }
        let urgentFrames = order.enumerated().filter { $0.element.number == 2 }
        let lastUrgent = try #require(urgentFrames.last?.offset)
        // The urgent message finishes long before the big one.
        #expect(order[(lastUrgent + 1)...].allSatisfy { $0.number == 1 })
        #expect(order[(lastUrgent + 1)...].count > 3)
        // While it was waiting, the big message's frames were small.
        let bigWhileUrgent = order[..<lastUrgent].filter { $0.number == 1 }
        #expect(bigWhileUrgent.count >= 2)
        #expect(bigWhileUrgent.dropFirst().allSatisfy { $0.size <= 4_096 })
        #expect(urgentFrames.allSatisfy { $0.element.size > 4_096 || $0.offset == lastUrgent })
    }

    @Test("a message stalls at 128 000 unacknowledged bytes and resumes on ACK")
    func flowControl() throws {
        var outbox = Outbox(encoder: try BLIPFrameEncoder())
        let request = BLIPMessage(kind: .request, number: 5)
        try outbox.enqueue(request.reply(body: Array(repeating: 3, count: 1_000_000)))
        var sent = 0
        var frames = 0
        while let frame = outbox.nextFrame() {
            sent += frame.count - 2
            frames += 1
        }
        #expect(sent >= 128_000 && sent < 128_000 + 16_384)
        #expect(outbox.stalledCount == 1)
        #expect(!outbox.hasFrameReady)
        #expect(!outbox.isEmpty)
        #expect(outbox.pendingBytes > 1_000_000 - sent)

        // An ACK for something else changes nothing.
        outbox.acknowledge(BLIPAckFrame(number: 5, type: .ackRequest, byteCount: UInt64(sent)))
        #expect(outbox.nextFrame() == nil)

        outbox.acknowledge(BLIPAckFrame(number: 5, type: .ackReply, byteCount: 65_000))
        var resumed = 0
        while let frame = outbox.nextFrame() {
            resumed += frame.count - 2
        }
        #expect(resumed > 0)
        #expect(sent + resumed - 65_000 >= 128_000)
        #expect(outbox.stalledCount == 1)

        outbox.acknowledge(BLIPAckFrame(number: 5, type: .ackReply, byteCount: .max))
        while outbox.nextFrame() != nil {
            outbox.acknowledge(BLIPAckFrame(number: 5, type: .ackReply, byteCount: .max))
        }
        #expect(outbox.isEmpty)
        #expect(outbox.pendingBytes == 0)
    }

    @Test("ACKs go out before data frames")
    func acksFirst() throws {
        var outbox = Outbox(encoder: try BLIPFrameEncoder())
        try outbox.enqueue(.request(profile: "x"))
        outbox.enqueue(BLIPAckFrame(number: 1, type: .ackRequest, byteCount: 50_000))
        let first = outbox.nextFrame()
        let second = outbox.nextFrame()
        #expect(try Self.header(try #require(first)).flags == 0x34)
        #expect(try Self.header(try #require(second)).flags == 0x00)
    }

    @Test("properties that cannot be encoded are rejected")
    func encodingErrors() throws {
        var outbox = Outbox(encoder: try BLIPFrameEncoder())
        #expect(throws: BLIPEncodingError.propertyContainsNUL(key: "a")) {
            try outbox.enqueue(.request(profile: "x", properties: ["a": "b\0c"]))
        }
        let huge = String(repeating: "v", count: BLIPProperties.maxEncodedLength)
        #expect(throws: BLIPEncodingError.self) {
            try outbox.enqueue(.request(profile: "x", properties: ["big": huge]))
        }
        #expect(outbox.isEmpty)
    }
}
