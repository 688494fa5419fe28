import BLIPCodec
import EdgeGatewayTestSupport
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
            encoder: try BLIPFrameEncoder(
                compressionLevel: deflate.level, memoryLevel: deflate.memoryLevel, windowBits: deflate.windowBits))
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
        var windowBits: Int32

        var testDescription: String { "level \(level), memLevel \(memoryLevel), windowBits \(windowBits)" }
    }

    static let liteCoreDeflate = DeflateSetting(level: 6, memoryLevel: 9, windowBits: 15)
    /// LiteCore's deflate settings, the gateway's (`BLIPConnection.Configuration`), and others allowed at the
    /// edges: the slowest level, and the smallest memory level with the full window.
    static let deflateSettings = [
        liteCoreDeflate, DeflateSetting(level: 1, memoryLevel: 6, windowBits: 13),
        DeflateSetting(level: 9, memoryLevel: 6, windowBits: 13),
        DeflateSetting(level: 1, memoryLevel: 7, windowBits: 14),
        DeflateSetting(level: 1, memoryLevel: 8, windowBits: 15),
        DeflateSetting(level: 6, memoryLevel: 6, windowBits: 15),
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

    /// Which of 402 frame-sized chunks on one stream came out longer than `Deflater.maxCompressedLength`. The
    /// first two are 16,300 random bytes each: the second starts 16,300 bytes into the window, so with a 16 KiB
    /// window its block slides out before it ends unless the block is cut short (memLevel 7), and with an
    /// 8 KiB window some block does unless they are shorter still (memLevel 6). Then come text, random bytes,
    /// and text followed by random bytes, of varied lengths.
    static func chunksOverBound(_ deflate: DeflateSetting) throws -> [String] {
        var generator = SplitMix64(seed: 11)
        let deflater = try Deflater(
            level: deflate.level, memoryLevel: deflate.memoryLevel, windowBits: deflate.windowBits)
        var over: [String] = []
        for round in 0..<402 {
            let length = round < 2 ? 16_300 : [1, 100, 1_000, 8_000, 16_000, 16_300][round % 6]
            let random = { (count: Int) in (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) } }
            let input =
                switch round < 2 ? 1 : round % 3 {
                case 0: Self.text(length, using: &generator)
                case 1: random(length)
                default: Self.text(length / 3, using: &generator) + random(length - length / 3)
                }
            var output: [UInt8] = []
            input.withUnsafeBytes { deflater.compress($0, appendingTo: &output) }
            if output.count > Deflater.maxCompressedLength(forInputLength: length, memoryLevel: deflate.memoryLevel) {
                over.append("round \(round): \(length) bytes became \(output.count)")
            }
        }
        return over
    }

    @Test(
        "compressed output stays within its bound on a long stream of text and random bytes", arguments: deflateSettings
    )
    func compressedLengthBound(deflate: DeflateSetting) throws {
        let over = try Self.chunksOverBound(deflate)
        #expect(over.isEmpty, "\(over.prefix(5))")
    }

    @Test(
        "a window too small for its memLevel's blocks does break the bound, which is why the frame encoder refuses it",
        arguments: [
            DeflateSetting(level: 1, memoryLevel: 8, windowBits: 14),
            DeflateSetting(level: 1, memoryLevel: 7, windowBits: 13),
        ])
    func smallWindowWithLargeBlocksBreaksTheBound(deflate: DeflateSetting) throws {
        #expect(!(try Self.chunksOverBound(deflate)).isEmpty)
        #expect(throws: CompressionSetupError.self) {
            try BLIPFrameEncoder(
                compressionLevel: deflate.level, memoryLevel: deflate.memoryLevel, windowBits: deflate.windowBits)
        }
    }

    @Test("memory levels and windows that would break the compressed-length bound are refused")
    func deflateSettingsOutOfRange() {
        #expect(throws: CompressionSetupError.self) { try BLIPFrameEncoder(compressionLevel: 1, memoryLevel: 5) }
        #expect(throws: CompressionSetupError.self) { try BLIPFrameEncoder(compressionLevel: 1, memoryLevel: 10) }
        #expect(throws: CompressionSetupError.self) {
            try BLIPFrameEncoder(compressionLevel: 1, memoryLevel: 6, windowBits: 12)
        }
        #expect(throws: CompressionSetupError.self) {
            try BLIPFrameEncoder(compressionLevel: 1, memoryLevel: 6, windowBits: 16)
        }
    }
}
