import BLIPCodec
import EdgeGatewayTestSupport
import Testing

@Suite("Freeing the deflate stream between messages")
struct QuietCompressionTests {
    @Test("the receiver's one inflate stream reads what a fresh deflate stream sends; the CRC runs on")
    func freshStreamContinuesTheConnection() throws {
        var pipe = try Pipe()
        var generator = SplitMix64(seed: 31)
        for round in 0..<4 {
            // Longer than a frame, so that each message is several sync-flushed frames.
            let body = RoundTripTests.text(40_000, using: &generator)
            try pipe.outbox.enqueue(
                .request(profile: "rev", properties: ["round": "\(round)"], body: body, isCompressed: true))
            let received = try pipe.flush()
            #expect(received.map(\.body) == [body])
            #expect(pipe.outbox.holdsCompressionState)
            #expect(pipe.outbox.releaseCompressionStateIfIdle())
            #expect(!pipe.outbox.holdsCompressionState)
        }
    }

    @Test("a stream is not freed while a message waits to be sent")
    func keptWhileSending() throws {
        var pipe = try Pipe()
        try pipe.outbox.enqueue(
            .request(profile: "rev", body: Array(repeating: UInt8(ascii: "x"), count: 40_000), isCompressed: true))
        _ = pipe.outbox.nextFrame()
        #expect(pipe.outbox.holdsCompressionState)
        #expect(!pipe.outbox.releaseCompressionStateIfIdle())
        #expect(pipe.outbox.holdsCompressionState)
    }
}
