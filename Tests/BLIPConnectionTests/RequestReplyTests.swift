import BLIPCodec
import BLIPConnection
import Testing

@Suite("BLIP over a loopback WebSocket")
struct RequestReplyTests {
    static func echoServer(_ connection: BLIPConnection) async {
        await connection.setHandler(for: "echo") { request in
            request.reply(properties: ["index": request.properties["index"] ?? ""], body: request.body)
        }
        await connection.setHandler(for: "fail") { _ in
            throw BLIPErrorReply(domain: "HTTP", code: 409, message: "conflict")
        }
    }

    @Test("10 000 concurrent requests get their own replies")
    func manyRequests() async throws {
        try await LoopbackHarness.withServer(configureServer: Self.echoServer) { harness in
            try await harness.withClient { client in
                #expect(client.subprotocol == "BLIP_3+CBMobile_3")
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<10_000 {
                        group.addTask {
                            let body = Array("payload \(index)".utf8)
                            let reply = try await client.sendRequest(
                                .request(
                                    profile: "echo", properties: ["index": String(index)], body: body,
                                    isCompressed: index.isMultiple(of: 2))
                            )
                            #expect(reply.kind == .reply)
                            #expect(reply.properties["index"] == String(index))
                            #expect(reply.body == body)
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }

    @Test("unknown profiles get BLIP/404; handler errors become error replies")
    func errorReplies() async throws {
        try await LoopbackHarness.withServer(configureServer: Self.echoServer) { harness in
            try await harness.withClient { client in
                await #expect(
                    throws: BLIPErrorReply(domain: "BLIP", code: 404, message: "no handler for message")
                ) {
                    try await client.sendRequest(.request(profile: "noSuchProfile"))
                }
                await #expect(throws: BLIPErrorReply(domain: "HTTP", code: 409, message: "conflict")) {
                    try await client.sendRequest(.request(profile: "fail"))
                }
                // The connection carries on after error replies.
                let reply = try await client.sendRequest(.request(profile: "echo", body: [1, 2, 3]))
                #expect(reply.body == [1, 2, 3])
            }
        }
    }

    @Test("a batch of 5 000 requests gets every reply and error reply, in the order of the requests")
    func batchOfRequests() async throws {
        try await LoopbackHarness.withServer(configureServer: Self.echoServer) { harness in
            try await harness.withClient { client in
                let requests = (0..<5_000).map { index in
                    BLIPMessage.request(
                        profile: index.isMultiple(of: 7) ? "fail" : "echo", properties: ["index": String(index)],
                        body: Array("payload \(index)".utf8), isCompressed: index.isMultiple(of: 2))
                }
                let outcomes = try await client.sendRequests(requests)
                #expect(outcomes.count == requests.count)
                for (index, outcome) in outcomes.enumerated() {
                    switch outcome {
                    case .success(let reply):
                        #expect(!index.isMultiple(of: 7))
                        #expect(reply.properties["index"] == String(index))
                        #expect(reply.body == Array("payload \(index)".utf8))
                    case .failure(let error):
                        #expect(index.isMultiple(of: 7))
                        #expect(error == BLIPErrorReply(domain: "HTTP", code: 409, message: "conflict"))
                    }
                }
                #expect(try await client.sendRequests([]).isEmpty)
            }
        }
    }

    @Test("a batch whose connection closes before every reply came fails as a whole")
    func batchOnClosingConnection() async throws {
        try await LoopbackHarness.withServer(configureServer: { connection in
            await connection.setHandler(for: "hang") { request in
                try await Task.sleep(for: .seconds(60))
                return request.reply()
            }
            await Self.echoServer(connection)
        }) { harness in
            try await harness.withClient { client in
                let batch = Task {
                    try await client.sendRequests([.request(profile: "echo"), .request(profile: "hang")])
                }
                try await Task.sleep(for: .milliseconds(200))
                await client.close(.goingAway, reason: "leaving")
                await #expect(throws: BLIPConnectionError.closedLocally(.goingAway)) { try await batch.value }
            }
        }
    }

    @Test("both sides can send requests on one connection")
    func bidirectional() async throws {
        try await LoopbackHarness.withServer(configureServer: Self.echoServer) { harness in
            try await harness.withClient(configure: Self.echoServer) { client in
                let server = try await harness.serverConnections.connection(at: 0)
                async let fromServer = server.sendRequest(
                    .request(profile: "echo", body: Array("down".utf8)))
                async let fromClient = client.sendRequest(.request(profile: "echo", body: Array("up".utf8)))
                #expect(try await fromServer.body == Array("down".utf8))
                #expect(try await fromClient.body == Array("up".utf8))
            }
        }
    }
}
