import BLIPCodec
import Testing

@Suite("Streamed message bodies")
struct StreamingBodyTests {
    @Test("a streamed body is framed as it arrives, waits when empty, and ends with a final frame")
    func streamedFrames() throws {
        var outbox = Outbox(encoder: try BLIPFrameEncoder())
        let number = try outbox.enqueue(.request(profile: "upload"), streamingBody: true)
        let decoder = BLIPFrameDecoder()
        var assembler = MessageAssembler()
        var delivered: [BLIPMessage] = []
        var flags: [UInt8] = []

        func drain() throws {
            while let frame = outbox.nextFrame() {
                flags.append(try OutboxTests.header(frame).flags)
                guard case .data(let data) = try decoder.decode(frame) else { continue }
                let output = try assembler.receive(data)
                if let message = output.message {
                    delivered.append(message)
                }
                // The peer's ACKs reopen the flow-control window, as on a real connection.
                if let ack = output.ack {
                    outbox.acknowledge(ack)
                }
            }
        }

        try drain()
        #expect(flags.count == 1, "the properties go out at once")
        let idle = outbox.nextFrame() == nil
        #expect(idle, "nothing more until the stream supplies body")
        let waiting = !outbox.isEmpty
        #expect(waiting)

        let chunks = (0..<5).map { index in [UInt8](repeating: UInt8(index), count: 30_000) }
        for chunk in chunks {
            outbox.appendBody(chunk, toRequest: number)
            try drain()
        }
        #expect(delivered.isEmpty, "the message is not complete before the body is finished")
        outbox.finishBody(ofRequest: number)
        try drain()

        let drained = outbox.isEmpty
        #expect(drained)
        #expect(flags.dropLast().allSatisfy { $0 & BLIPFrameFlags.moreComing.rawValue != 0 })
        #expect(flags.last.map { $0 & BLIPFrameFlags.moreComing.rawValue } == 0)
        let message = try #require(delivered.first)
        #expect(delivered.count == 1)
        #expect(message.properties["Profile"] == "upload")
        let bodyMatches = message.body == chunks.flatMap { $0 }
        #expect(bodyMatches)
        #expect(outbox.pendingBytes == 0)
    }

    @Test("a streamed body that has sent everything still honours the flow-control window")
    func streamedFlowControl() throws {
        var outbox = Outbox(encoder: try BLIPFrameEncoder())
        let number = try outbox.enqueue(.request(profile: "upload"), streamingBody: true)
        outbox.appendBody([UInt8](repeating: 1, count: 400_000), toRequest: number)
        var sent = 0
        while let frame = outbox.nextFrame() {
            sent += frame.count
        }
        #expect(sent < 160_000, "stalled near the 128 000-byte window")
        #expect(outbox.stalledCount == 1)
        outbox.finishBody(ofRequest: number)
        let blocked = outbox.nextFrame() == nil
        #expect(blocked, "finishing does not bypass the window")
    }
}
