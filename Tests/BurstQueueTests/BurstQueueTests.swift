import BurstQueue
import Testing

@Suite("Posting in bursts")
struct BurstQueueTests {
    @Test("only the first post after a take starts a burst; a take hands over everything, in order")
    func bursts() {
        let queue = BurstQueue<Int>()
        #expect(queue.post(1))
        #expect(!queue.post(2))
        #expect(!queue.post(3))
        #expect(queue.takeAll() == [1, 2, 3])
        #expect(queue.takeAll().isEmpty)
        #expect(queue.post(4))
        #expect(queue.takeAll() == [4])
    }

    @Test("concurrent posters start one burst per take and lose nothing")
    func concurrentPosts() async {
        let queue = BurstQueue<Int>()
        let starts = await withTaskGroup(of: Bool.self) { group in
            for value in 0..<1_000 {
                group.addTask { queue.post(value) }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(starts == 1)
        #expect(Set(queue.takeAll()) == Set(0..<1_000))
    }
}
