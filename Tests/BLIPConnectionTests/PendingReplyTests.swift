import BLIPCodec
import BLIPConnection
import EdgeGatewayTestSupport
import Synchronization
import Testing

/// Handlers that answer after they have returned, through `BLIPPendingReply`, as the listener's `rev` does once
/// the group commit has made its revision durable.
@Suite("Replies given after the handler returned")
struct PendingReplyTests {
    @Test("replies given later, in any order, reach their own requests", .timeLimit(.minutes(1)))
    func laterReplies() async throws {
        let kept = Mutex<[(index: String, reply: BLIPPendingReply)]>([])
        try await LoopbackHarness.withServer(configureServer: { connection in
            await connection.setHandler(
                for: "later",
                deferringReplies: { request, turn, reply in
                    turn.perform { kept.withLock { $0.append((request.properties["index"] ?? "", reply)) } }
                })
        }) { harness in
            try await harness.withClient { client in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<20 {
                        group.addTask {
                            let answer = try await client.sendRequest(
                                .request(profile: "later", properties: ["index": String(index)]))
                            #expect(answer.kind == .reply)
                            #expect(answer.properties["answered"] == String(index))
                        }
                    }
                    // Every handler has returned once its reply is kept; none is answered before all 20 are.
                    try await eventually("all 20 handlers to keep their reply") { kept.withLock { $0.count } == 20 }
                    for (index, reply) in kept.withLock({ $0 }).reversed() {
                        reply.send(BLIPMessage.request(profile: "ignored").reply(properties: ["answered": index]))
                    }
                    try await group.waitForAll()
                }
            }
        }
    }

    @Test("a throw before answering, a reply dropped unanswered and a second answer", .timeLimit(.minutes(1)))
    func failures() async throws {
        try await LoopbackHarness.withServer(configureServer: { connection in
            await connection.setHandler(
                for: "refuse",
                deferringReplies: { _, _, _ in
                    throw BLIPErrorReply(domain: "HTTP", code: 400, message: "refused before queueing")
                })
            await connection.setHandler(for: "drop", deferringReplies: { _, _, _ in })
            await connection.setHandler(
                for: "twice",
                deferringReplies: { request, _, reply in
                    reply.send(request.reply(properties: ["which": "first"]))
                    reply.send(request.reply(properties: ["which": "second"]))
                    reply.fail(BLIPErrorReply(domain: "HTTP", code: 500, message: "third"))
                })
        }) { harness in
            try await harness.withClient { client in
                await #expect(throws: BLIPErrorReply(domain: "HTTP", code: 400, message: "refused before queueing")) {
                    try await client.sendRequest(.request(profile: "refuse"))
                }
                // A peer must never wait for a reply that cannot come.
                await #expect(throws: BLIPErrorReply(domain: "BLIP", code: 501, message: "handler failed")) {
                    try await client.sendRequest(.request(profile: "drop"))
                }
                for _ in 0..<3 {
                    let answer = try await client.sendRequest(.request(profile: "twice"))
                    #expect(answer.properties["which"] == "first")
                }
                // A second reply to one request would have been a protocol error that closes the connection.
                #expect(await client.isOpen)
            }
        }
    }
}
