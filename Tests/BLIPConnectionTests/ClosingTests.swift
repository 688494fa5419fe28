import BLIPCodec
import BLIPConnection
import NIOCore
import NIOWebSocket
import Testing

@Suite("Closing")
struct ClosingTests {
    @Test("an oversized frame closes the connection with 1002")
    func oversizedFrame() async throws {
        let configuration = {
            var configuration = BLIPConnection.Configuration()
            configuration.maxIncomingFrameSize = 64 * 1024
            return configuration
        }()
        try await LoopbackHarness.withServer(configuration: configuration, configureServer: { _ in }) { harness in
            let closeFrame = try await harness.withRawClient { inbound, outbound in
                try await outbound.write(.binary(ByteBuffer(bytes: [UInt8](repeating: 0, count: 100_000))))
                try await MisbehavingPeerTests.drain(inbound)
            }
            #expect(closeFrame?.closeCode == .protocolError)
            #expect(closeFrame?.reason == "BLIP protocol violation: frame of 100000 bytes exceeds the limit of 65536")
        }
    }

    @Test("close sends queued frames first, then the requested code; waiting requests fail", arguments: [
        (WebSocketCloseCode.permanentError, WebSocketErrorCode.unknown(4002)),
        (.transientError, .unknown(4001)),
        (.goingAway, .goingAway),
    ])
    func localClose(code: WebSocketCloseCode, expected: WebSocketErrorCode) async throws {
        try await LoopbackHarness.withServer(configureServer: { _ in }) { harness in
            let frames = SharedValue(0)
            let closeFrame = try await harness.withRawClient { inbound, _ in
                let server = try await harness.serverConnections.connection(at: 0)
                let reader = Task {
                    for try await _ in inbound {
                        frames.update { $0 += 1 }
                    }
                }
                let pending = Task { try await server.sendRequest(.request(profile: "unanswered")) }
                try await eventually { frames.value == 1 }
                try await server.sendNoReply(.request(profile: "last words", body: [UInt8](repeating: 1, count: 100_000)))
                try await server.sendNoReply(.request(profile: "really last"))
                await server.close(code, reason: "done")
                await #expect(throws: BLIPConnectionError.closedLocally(code)) { try await pending.value }
                try await reader.value
            }
            #expect(closeFrame?.closeCode == expected)
            #expect(closeFrame?.reason == "done")
            // 1 request, 7 frames of the 100 000-byte message, 1 small message.
            #expect(frames.value == 9)
        }
    }
}
