import BLIPCodec
import Testing

@testable import BLIPConnection

@Suite("The writer runs only while there is something to write")
struct IdleWriterTests {
    @Test("an idle connection holds no writer, and the next message starts one")
    func writerEndsWhenIdle() async throws {
        try await LoopbackHarness.withServer(configureServer: RequestReplyTests.echoServer) { harness in
            try await harness.withClient { client in
                let server = try await harness.serverConnections.connection(at: 0)
                for round in 0..<3 {
                    let reply = try await client.sendRequest(.request(profile: "echo", body: [UInt8(round)]))
                    #expect(reply.body == [UInt8(round)])
                    try await eventually {
                        let clientWriting = await client.isWriterRunning
                        let serverWriting = await server.isWriterRunning
                        return !clientWriting && !serverWriting
                    }
                }
            }
        }
    }
}
