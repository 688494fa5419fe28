import BLIPCodec
import BLIPConnection
import Benchmark
import Hummingbird
import HummingbirdWSClient
import HummingbirdWebSocket
import Logging

// Codec throughput in MB/s = message size / wall-clock time per operation (see BENCHMARKS-blip.md).
let mebibyte = 1 << 20

/// Compressible JSON-like text, closer to replication traffic than random bytes.
func sampleBody(size: Int) -> [UInt8] {
    var state: UInt64 = 0x1234_5678
    var bytes: [UInt8] = []
    bytes.reserveCapacity(size)
    let words = [
        #"{"type":"doc","#, #""payload":"#, "abcdefghij", #""index":"#, "1234", "},", "[", "]",
    ]
    while bytes.count < size {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        bytes.append(contentsOf: words[Int(state >> 33) % words.count].utf8)
    }
    return Array(bytes.prefix(size))
}

/// Frames `body` as one message through an outbox and decodes it back, ACKing like a peer.
func codecRoundTrip(_ body: [UInt8], compressed: Bool) throws -> Int {
    var outbox = Outbox(encoder: try BLIPFrameEncoder())
    let decoder = BLIPFrameDecoder()
    var assembler = MessageAssembler()
    try outbox.enqueue(.request(profile: "rev", body: body, isCompressed: compressed))
    var received = 0
    while let frame = outbox.nextFrame() {
        guard case .data(let data) = try decoder.decode(frame) else { continue }
        let output = try assembler.receive(data)
        if let ack = output.ack {
            outbox.acknowledge(BLIPAckFrame(number: ack.number, type: ack.type, byteCount: ack.byteCount))
        }
        received += output.message?.body.count ?? 0
    }
    return received
}

/// A sensor reading of about 1 kB, as an app would store it: numbers, short strings and a line of text,
/// varied per document so that the shared deflate stream cannot just repeat the previous message.
func sampleDocument(_ index: Int) -> [UInt8] {
    var state = UInt64(index) &* 0x9E37_79B9_7F4A_7C15 &+ 1
    func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state >> 33
    }
    let values = (0..<30).map { _ in String(Double(next() % 1_000_000) / 1_000) }.joined(separator: ",")
    let letters = Array("abcdefghijklmnopqrstuvwxyz     ")
    let note = String((0..<200).map { _ in letters[Int(next()) % letters.count] })
    let json = """
        {"n":\(index),"type":"reading","sensor":"s-\(next() % 500)","ts":\(1_700_000_000 + index),\
        "site":"factory-\(index % 7)","values":[\(values)],"note":"\(note)"}
        """
    return Array(json.utf8)
}

/// Frames each of `bodies` as a compressed `rev` through one outbox (one shared deflate stream at `level`)
/// and decodes it back; returns the frame bytes that crossed.
func codecRoundTrip(_ bodies: [[UInt8]], level: Int32) throws -> Int {
    var outbox = Outbox(encoder: try BLIPFrameEncoder(compressionLevel: level))
    let decoder = BLIPFrameDecoder()
    var assembler = MessageAssembler()
    var frameBytes = 0
    for body in bodies {
        try outbox.enqueue(.request(profile: "rev", body: body, isCompressed: true))
        while let frame = outbox.nextFrame() {
            frameBytes += frame.count
            if case .data(let data) = try decoder.decode(frame) {
                blackHole(try assembler.receive(data))
            }
        }
    }
    return frameBytes
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(5))

    let body = sampleBody(size: 8 * mebibyte)
    for compressed in [false, true] {
        Benchmark("Codec encode+decode, 8 MiB message, \(compressed ? "compressed" : "uncompressed")") {
            benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try codecRoundTrip(body, compressed: compressed))
            }
        }
    }

    let small = sampleBody(size: 1_000)
    let documents = (0..<1_000).map(sampleDocument)
    let frameBytesPerDocument = BenchmarkMetric.custom("Frame bytes per document", useScalingFactor: false)
    // Level 6 is LiteCore's, level 1 the connection's default (BLIPConnection.Configuration).
    for level: Int32 in [6, 1] {
        Benchmark("Codec encode+decode, 1 000 messages of 1 kB, compressed at level \(level)") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try codecRoundTrip([[UInt8]](repeating: small, count: 1_000), level: level))
            }
        }
        Benchmark(
            "Codec encode+decode, 1 000 JSON documents of about 1 kB, compressed at level \(level)",
            configuration: .init(metrics: [.wallClock, .throughput, frameBytesPerDocument])
        ) { benchmark in
            for _ in benchmark.scaledIterations {
                let bytes = try codecRoundTrip(documents, level: level)
                benchmark.measurement(frameBytesPerDocument, bytes / documents.count)
            }
        }
    }

    Benchmark(
        "Loopback round trips (1 op = 1 000 concurrent requests)",
        configuration: .init(maxDuration: .seconds(10))
    ) { benchmark in
        let pair = try await LoopbackPair.start()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<1_000 {
                    group.addTask {
                        blackHole(try await pair.client.sendRequest(.request(profile: "echo", body: small)))
                    }
                }
                try await group.waitForAll()
            }
        }
        benchmark.stopMeasurement()
        try await pair.stop()
    }
}

/// A Hummingbird BLIP echo server on 127.0.0.1 and one client connected to it.
struct LoopbackPair: Sendable {
    let client: BLIPConnection
    private let stopSignal: AsyncStream<Void>.Continuation
    private let task: Task<Void, any Error>

    static let logger = {
        var logger = Logger(label: "blip-benchmark")
        logger.logLevel = .critical
        return logger
    }()

    static func start() async throws -> LoopbackPair {
        let (clients, clientSink) = AsyncStream.makeStream(of: BLIPConnection.self)
        let (stop, stopSink) = AsyncStream.makeStream(of: Void.self)
        let task = Task {
            try await run { client in
                clientSink.yield(client)
                for await _ in stop {}
            }
        }
        var iterator = clients.makeAsyncIterator()
        guard let client = await iterator.next() else {
            try await task.value
            throw CancellationError()
        }
        return LoopbackPair(client: client, stopSignal: stopSink, task: task)
    }

    func stop() async throws {
        stopSignal.finish()
        try await task.value
    }

    private static func run(_ body: @escaping @Sendable (BLIPConnection) async throws -> Void) async throws {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.ws("/blip") { _, _ in
            .upgrade([.secWebSocketProtocol: "BLIP_3+CBMobile_3"])
        } onUpgrade: { inbound, outbound, _ in
            let connection = try BLIPConnection(subprotocol: "BLIP_3+CBMobile_3", logger: logger)
            await connection.setHandler(for: "echo") { request in request.reply(body: request.body) }
            try await connection.run(inbound: inbound, outbound: outbound)
        }
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: Router(),
            server: .http1WebSocketUpgrade(
                webSocketRouter: router,
                configuration: .init(ws: .init(maxFrameSize: 1 << 20, autoPing: .disabled))
            ),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portSink.yield(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { return }
            try await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)/blip",
                configuration: .init(
                    maxFrameSize: 1 << 20,
                    additionalHeaders: [.secWebSocketProtocol: "BLIP_3+CBMobile_3"]
                ),
                logger: logger
            ) { inbound, outbound, _ in
                let client = try BLIPConnection(subprotocol: "BLIP_3+CBMobile_3", logger: logger)
                try await withThrowingTaskGroup(of: Void.self) { connectionGroup in
                    connectionGroup.addTask { try await client.run(inbound: inbound, outbound: outbound) }
                    try await body(client)
                    await client.close()
                    try await connectionGroup.waitForAll()
                }
            }
            group.cancelAll()
        }
    }
}
