import BLIPCodec
import BLIPConnection
import HummingbirdWSClient
import NIOCore
import NIOWebSocket
import Testing

@Suite("Misbehaving peers")
struct MisbehavingPeerTests {
    /// Spec §2.12's first frame with its last CRC byte changed.
    static let badChecksumFrame: [UInt8] = [
        0x01, 0x00, 0x24, 0x50, 0x72, 0x6F, 0x66, 0x69, 0x6C, 0x65, 0x00, 0x67, 0x65, 0x74, 0x43, 0x68, 0x65, 0x63,
        0x6B, 0x70, 0x6F, 0x69, 0x6E, 0x74, 0x00, 0x63, 0x6C, 0x69, 0x65, 0x6E, 0x74, 0x00, 0x63, 0x70, 0x2D, 0x61,
        0x62, 0x63, 0x00, 0x55, 0x75, 0x19, 0x7E,
    ]

    /// A well-formed first frame (CRC from a fresh stream) of request `number`.
    static func requestFrame(number: UInt64) -> [UInt8] {
        let encoder = try? BLIPFrameEncoder(compressionLevel: 0)
        return encoder?.encodeFrame(number: number, type: .request, flags: [], chunk: [0], compress: false) ?? []
    }

    static func drain(_ inbound: WebSocketInboundStream) async throws {
        for try await _ in inbound {}
    }

    @Test("a bad frame closes only its own connection, with 1002", arguments: [
        ("CRC", WebSocketOutboundWriter.OutboundFrame.binary(ByteBuffer(bytes: badChecksumFrame))),
        ("text", .text("hello")),
        ("truncated", .binary(ByteBuffer(bytes: [0x80, 0x80]))),
        ("varint", .binary(ByteBuffer(bytes: [0x81, 0x00, 0x00]))),
        ("out of order", .binary(ByteBuffer(bytes: requestFrame(number: 5)))),
        ("inflate", .binary(ByteBuffer(bytes: [0x01, 0x08, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00]))),
    ])
    func badFrameClosesConnection(expectedReason: String, frame: WebSocketOutboundWriter.OutboundFrame) async throws {
        try await LoopbackHarness.withServer(configureServer: RequestReplyTests.echoServer) { harness in
            try await harness.withClient { healthy in
                #expect(try await healthy.sendRequest(.request(profile: "echo", body: [1])).body == [1])
                let closeFrame = try await harness.withRawClient { inbound, outbound in
                    try await outbound.write(frame)
                    try await Self.drain(inbound)
                }
                #expect(closeFrame?.closeCode == .protocolError)
                #expect(closeFrame?.reason?.localizedCaseInsensitiveContains(expectedReason) == true, "\(closeFrame?.reason ?? "")")
                let server = try await harness.serverConnections.connection(at: 1)
                #expect(await !server.isOpen)
                // The other connection keeps working.
                #expect(try await healthy.sendRequest(.request(profile: "echo", body: [2])).body == [2])
            }
        }
    }

    @Test("a peer that never ACKs stalls each message at about 128 KB, and senders wait for queue space")
    func neverAcknowledgingPeer() async throws {
        let configuration = {
            var configuration = BLIPConnection.Configuration()
            configuration.maxQueuedBytes = 1 << 20
            return configuration
        }()
        try await LoopbackHarness.withServer(configuration: configuration, configureServer: { _ in }) { harness in
            let received = SharedValue<[UInt64: Int]>([:])
            let thirdQueued = SharedValue(false)
            _ = try await harness.withRawClient { inbound, outbound in
                let server = try await harness.serverConnections.connection(at: 0)
                let sender = Task {
                    for _ in 0..<3 {
                        try await server.sendNoReply(.request(profile: "bulk", body: [UInt8](repeating: 0x55, count: 1 << 20)))
                    }
                    thirdQueued.update { $0 = true }
                }
                let reader = Task {
                    for try await frame in inbound {
                        let bytes = Array(frame.data.readableBytesView)
                        var index = 0
                        let number = try Varint.read(from: bytes, at: &index)
                        received.update { $0[number, default: 0] += bytes.count - index - 1 }
                    }
                }
                try await eventually { await server.stalledOutgoingMessages == 2 }
                try await eventually { received.value.values.filter { $0 >= 128_000 }.count == 2 }
                // Nothing more arrives while no ACK is sent.
                let countsAtStall = received.value
                try await Task.sleep(for: .milliseconds(200))
                #expect(received.value == countsAtStall)
                #expect(await server.stalledOutgoingMessages == 2)
                let thirdWasQueued = thirdQueued.value
                #expect(!thirdWasQueued)
                #expect(await server.queuedOutgoingBytes >= 2 * (1 << 20) - 2 * (128_000 + 16_384))
                let counts = received.value
                #expect(counts.keys.sorted() == [1, 2])
                for count in counts.values {
                    #expect(count >= 128_000 && count < 128_000 + 16_384)
                }
                try await outbound.close(.normalClosure, reason: nil)
                try await reader.value
                await #expect(throws: BLIPConnectionError.self) { try await sender.value }
            }
        }
    }
}
