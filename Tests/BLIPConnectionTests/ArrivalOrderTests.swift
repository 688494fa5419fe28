import BLIPCodec
import BLIPConnection
import Synchronization
import Testing

@Suite("Handlers that take one step in arrival order")
struct ArrivalOrderTests {
    @Test("requests reach their ordered step in arrival order, whatever each did first, and failures do not block")
    func orderedStep() async throws {
        let steps = Mutex<[Int]>([])
        try await LoopbackHarness.withServer(configureServer: { connection in
            await connection.setHandler(
                for: "store",
                inArrivalOrder: { request, turn in
                    let index = Int(request.properties["index"] ?? "") ?? -1
                    // The first requests take longest before their ordered step, as a `rev` fetching a blob does.
                    try await Task.sleep(for: .milliseconds(max(0, 30 - 3 * index)))
                    if index.isMultiple(of: 5) {
                        throw BLIPErrorReply(domain: "HTTP", code: 400, message: "refused before its turn")
                    }
                    turn.perform { steps.withLock { $0.append(index) } }
                    return request.reply()
                })
        }) { harness in
            try await harness.withClient { client in
                let requests = (0..<40).map { index in
                    BLIPMessage.request(profile: "store", properties: ["index": String(index)])
                }
                let outcomes = try await client.sendRequests(requests)
                #expect(outcomes.count == 40)
            }
        }
        #expect(steps.withLock { $0 } == (0..<40).filter { !$0.isMultiple(of: 5) })
    }

    @Test(
        "a handler that returns without performing its step does not hold up the next request",
        .timeLimit(.minutes(1)))
    func turnEndedByTheConnection() async throws {
        try await LoopbackHarness.withServer(configureServer: { connection in
            await connection.setHandler(
                for: "store",
                inArrivalOrder: { request, turn in
                    if request.properties["skip"] == nil {
                        await withCheckedContinuation { performed in turn.perform { performed.resume() } }
                    }
                    return request.reply()
                })
        }) { harness in
            try await harness.withClient { client in
                _ = try await client.sendRequest(.request(profile: "store", properties: ["skip": "1"]))
                for _ in 0..<3 {
                    _ = try await client.sendRequest(.request(profile: "store"))
                }
            }
        }
    }
}
