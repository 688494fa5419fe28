import BLIPCodec
import BLIPConnection
import EdgeGatewayTestSupport
import Testing

@Suite("Large messages over a loopback WebSocket")
struct LargeMessageTests {
    /// Replies with the size and CRC-32 of what arrived, so the big body need not travel back.
    static func digestServer(_ connection: BLIPConnection) async {
        await connection.setHandler(for: "digest") { request in
            var crc = CRC32()
            crc.update(request.body)
            return request.reply(properties: [
                "length": String(request.body.count), "crc": String(crc.value),
            ])
        }
        await connection.setHandler(for: "ping") { request in
            request.reply(body: request.body)
        }
    }

    @Test("a 10 MB body streamed in chunks arrives as one message without being queued whole")
    func streamedBody() async throws {
        let chunkCount = 160
        let chunkSize = 65_536
        let chunk: @Sendable (Int) -> [UInt8] = { index in
            [UInt8](repeating: UInt8(truncatingIfNeeded: index &* 31), count: chunkSize)
        }
        var expected = CRC32()
        for index in 0..<chunkCount { expected.update(chunk(index)) }
        let expectedCRC = expected.value
        let configuration = {
            var configuration = BLIPConnection.Configuration()
            configuration.maxQueuedBytes = 1 << 20
            return configuration
        }()
        let largestQueue = SharedValue(0)

        try await LoopbackHarness.withServer(configureServer: Self.digestServer) { harness in
            try await harness.withClient(configuration: configuration) { client in
                let body = AsyncStream<[UInt8]> { continuation in
                    Task {
                        for index in 0..<chunkCount {
                            let queued = await client.queuedOutgoingBytes
                            largestQueue.update { $0 = max($0, queued) }
                            continuation.yield(chunk(index))
                            await Task.yield()
                        }
                        continuation.finish()
                    }
                }
                let reply = try await client.sendRequest(.request(profile: "digest"), streamingBody: body)
                #expect(reply.properties["length"] == String(chunkCount * chunkSize))
                #expect(reply.properties["crc"] == String(expectedCRC))
            }
        }
        #expect(largestQueue.value <= (1 << 20) + chunkSize, "never more than the queue limit plus one chunk")
    }

    @Test("a 10 MB request arrives intact while urgent requests are answered in between")
    func bigBodyWithUrgentTraffic() async throws {
        var generator = SplitMix64(seed: 99)
        let big = (0..<10_000_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var expected = CRC32()
        expected.update(big)
        let expectedCRC = expected.value
        let configuration = {
            var configuration = BLIPConnection.Configuration()
            configuration.maxQueuedBytes = 32 << 20
            return configuration
        }()

        try await LoopbackHarness.withServer(configureServer: Self.digestServer) { harness in
            try await harness.withClient(configuration: configuration) { client in
                let bigDone = SharedValue(false)
                let urgentBeforeBig = SharedValue(0)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        let reply = try await client.sendRequest(.request(profile: "digest", body: big))
                        bigDone.update { $0 = true }
                        #expect(reply.properties["length"] == "10000000")
                        #expect(reply.properties["crc"] == String(expectedCRC))
                    }
                    group.addTask {
                        try await eventually { await client.queuedOutgoingBytes < 10_000_000 }
                        for index in 0..<20 {
                            let body = Array("urgent \(index)".utf8)
                            let reply = try await client.sendRequest(
                                .request(profile: "ping", body: body, isUrgent: true))
                            #expect(reply.body == body && reply.isUrgent)
                            if !bigDone.value {
                                urgentBeforeBig.update { $0 += 1 }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let answeredDuringBig = urgentBeforeBig.value
                #expect(answeredDuringBig >= 10)
            }
        }
    }
}
