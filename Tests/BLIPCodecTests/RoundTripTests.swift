import EdgeGatewayTestSupport
import BLIPCodec
import Testing

/// Sends messages through an outbox and receives them with a decoder and assembler, as two peers would.
struct Pipe {
    var outbox: Outbox
    let decoder: BLIPFrameDecoder
    var assembler = MessageAssembler()
    var frames: [[UInt8]] = []

    init(
        configuration: Outbox.Configuration = Outbox.Configuration(),
        deflate: RoundTripTests.DeflateSetting = RoundTripTests.liteCoreDeflate
    ) throws {
        outbox = Outbox(
            configuration: configuration,
            encoder: try BLIPFrameEncoder(compressionLevel: deflate.level, memoryLevel: deflate.memoryLevel))
        decoder = BLIPFrameDecoder()
    }

    /// Drains the outbox into the receiver; returns the completed messages in arrival order.
    mutating func flush() throws -> [BLIPMessage] {
        var received: [BLIPMessage] = []
        while let frame = outbox.nextFrame() {
            frames.append(frame)
            if case .data(let data) = try decoder.decode(frame),
                let message = try assembler.receive(data).message
            {
                received.append(message)
            }
        }
        return received
    }
}

@Suite("Round trips")
struct RoundTripTests {
    static func text(_ length: Int, using generator: inout SplitMix64) -> [UInt8] {
        let words = ["rev", "doc", "\"sequence\":", "{", "}", "[1,2,3]", "payload", " ", "abcdef"]
        var bytes: [UInt8] = []
        while bytes.count < length {
            bytes.append(contentsOf: words.randomElement(using: &generator)!.utf8)
        }
        return Array(bytes.prefix(length))
    }

    @Test("uncompressed messages round-trip and frames are encoded exactly")
    func uncompressed() throws {
        var pipe = try Pipe()
        let message = BLIPMessage.request(
            profile: "setCheckpoint", properties: ["client": "cp-x", "rev": ""],
            body: Array("{\"local\":3}".utf8))
        try pipe.outbox.enqueue(message)
        let received = try pipe.flush()
        #expect(received.count == 1)
        #expect(received[0].properties == message.properties)
        #expect(received[0].body == message.body)
        #expect(received[0].number == 1)
        let payload = try message.encodedPayload()
        #expect(pipe.frames[0].dropFirst(2).dropLast(4).elementsEqual(payload))
    }

    struct DeflateSetting: Sendable, CustomTestStringConvertible {
        var level: Int32
        var memoryLevel: Int32

        var testDescription: String { "level \(level), memLevel \(memoryLevel)" }
    }

    static let liteCoreDeflate = DeflateSetting(level: 6, memoryLevel: 9)
    /// LiteCore's deflate settings, the gateway's (`BLIPConnection.Configuration`), and the smallest allowed.
    static let deflateSettings = [
        liteCoreDeflate, DeflateSetting(level: 1, memoryLevel: 8), DeflateSetting(level: 9, memoryLevel: 8),
    ]

    @Test(
        "compressed and uncompressed messages, large and small, share one deflate stream",
        arguments: deflateSettings)
    func mixedStream(deflate: DeflateSetting) throws {
        var generator = SplitMix64(seed: 42)
        var pipe = try Pipe(deflate: deflate)
        var sent: [BLIPMessage] = []
        for index in 0..<200 {
            let length =
                index % 25 == 0
                ? Int.random(in: 20_000...120_000, using: &generator)
                : Int.random(in: 0...3_000, using: &generator)
            var properties: BLIPProperties = ["index": String(index)]
            if index % 3 == 0 {
                properties["sequence"] = String(index * 7)
            }
            let message = BLIPMessage.request(
                profile: "rev",
                properties: properties,
                body: Self.text(length, using: &generator),
                isUrgent: index % 7 == 0,
                isCompressed: index % 2 == 0
            )
            sent.append(message)
            try pipe.outbox.enqueue(message)
        }
        let received = try pipe.flush().sorted { $0.number < $1.number }
        #expect(received.count == sent.count)
        for (message, original) in zip(received, sent) {
            #expect(message.properties == original.properties)
            #expect(message.body == original.body)
            #expect(message.isCompressed == original.isCompressed)
            #expect(message.isUrgent == original.isUrgent)
        }
        #expect(pipe.frames.allSatisfy { $0.count <= 16_384 })
    }

    @Test("incompressible data stays within the frame size", arguments: deflateSettings)
    func incompressibleFrames(deflate: DeflateSetting) throws {
        var generator = SplitMix64(seed: 7)
        var pipe = try Pipe(deflate: deflate)
        let blob = (0..<300_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let request = BLIPMessage(
            kind: .request, number: 1, properties: ["Profile": "getAttachment", "compress": "true"])
        pipe.assembler.expectReply(to: 1)
        try pipe.outbox.enqueue(request.reply(body: blob, isCompressed: true))
        // Let flow control pass: acknowledge everything as a peer would.
        var received: [BLIPMessage] = []
        while let frame = pipe.outbox.nextFrame() {
            pipe.frames.append(frame)
            guard case .data(let data) = try pipe.decoder.decode(frame) else { continue }
            let output = try pipe.assembler.receive(data)
            if let ack = output.ack {
                pipe.outbox.acknowledge(ack)
            }
            received += output.message.map { [$0] } ?? []
        }
        #expect(received.first?.body == blob)
        #expect(pipe.frames.allSatisfy { $0.count <= 16_384 })
        #expect(pipe.frames.count >= 19)
    }

    @Test("compressed output stays within its bound on a long stream of text and random bytes", arguments: deflateSettings)
    func compressedLengthBound(deflate: DeflateSetting) throws {
        var generator = SplitMix64(seed: 11)
        let deflater = try Deflater(level: deflate.level, memoryLevel: deflate.memoryLevel)
        for round in 0..<400 {
            let length = [1, 100, 1_000, 8_000, 16_000, 16_300][round % 6]
            let input =
                round % 3 == 0
                ? Self.text(length, using: &generator)
                : (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var output: [UInt8] = []
            input.withUnsafeBytes { deflater.compress($0, appendingTo: &output) }
            let bound = Deflater.maxCompressedLength(forInputLength: length)
            #expect(output.count <= bound, "round \(round): \(length) bytes became \(output.count)")
        }
    }

    @Test("memory levels that would break the compressed-length bound are refused")
    func deflateSettingsOutOfRange() {
        #expect(throws: CompressionSetupError.self) { try BLIPFrameEncoder(compressionLevel: 1, memoryLevel: 7) }
        #expect(throws: CompressionSetupError.self) { try BLIPFrameEncoder(compressionLevel: 1, memoryLevel: 10) }
    }
}
