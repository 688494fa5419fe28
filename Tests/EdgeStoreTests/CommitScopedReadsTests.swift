import Foundation
import Synchronization
import Testing

@testable import EdgeStore

@Suite("Reads shared per commit")
struct CommitScopedReadsTests {
    /// Counts how often the shared read really ran.
    final class ReadCounter: Sendable {
        let count = Atomic(0)

        func read(_ value: Int) -> @Sendable () async throws -> Int {
            { [self] in
                count.add(1, ordering: .relaxed)
                return value
            }
        }

        var reads: Int { count.load(ordering: .relaxed) }
    }

    struct ReadFailed: Error {}

    @Test("callers that observed the same generation share one read; a newer generation reads again")
    func sharedWithinGeneration() async throws {
        let reads = CommitScopedReads<String, Int>(maximumReads: 8)
        let counter = ReadCounter()
        let values = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask { try await reads.value(of: "changes", observedGeneration: 1, read: counter.read(7)) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(values == Array(repeating: 7, count: 50))
        #expect(counter.reads == 1)

        #expect(try await reads.value(of: "other", observedGeneration: 1, read: counter.read(8)) == 8)
        #expect(counter.reads == 2)
        #expect(try await reads.value(of: "changes", observedGeneration: 2, read: counter.read(9)) == 9)
        #expect(counter.reads == 3)
        #expect(reads.keptReads == 1)
    }

    @Test("a caller with an outdated generation reads on its own and keeps nothing")
    func outdatedGeneration() async throws {
        let reads = CommitScopedReads<String, Int>(maximumReads: 8)
        let counter = ReadCounter()
        _ = try await reads.value(of: "changes", observedGeneration: 5, read: counter.read(1))
        #expect(try await reads.value(of: "changes", observedGeneration: 4, read: counter.read(2)) == 2)
        #expect(try await reads.value(of: "changes", observedGeneration: 4, read: counter.read(3)) == 3)
        #expect(try await reads.value(of: "changes", observedGeneration: 5, read: counter.read(4)) == 1)
        #expect(counter.reads == 3)
    }

    @Test("beyond the read or cost limit callers read on their own")
    func limits() async throws {
        let reads = CommitScopedReads<Int, Int>(maximumReads: 2, maximumCost: 100)
        let counter = ReadCounter()
        _ = try await reads.value(of: 1, observedGeneration: 1, cost: 60, read: counter.read(1))
        _ = try await reads.value(of: 2, observedGeneration: 1, cost: 60, read: counter.read(2))
        #expect(reads.keptReads == 1)
        _ = try await reads.value(of: 3, observedGeneration: 1, cost: 40, read: counter.read(3))
        _ = try await reads.value(of: 4, observedGeneration: 1, read: counter.read(4))
        #expect(reads.keptReads == 2)
        _ = try await reads.value(of: 4, observedGeneration: 1, read: counter.read(4))
        #expect(counter.reads == 5)
    }

    @Test("a failed read is not kept: the next caller reads again")
    func failureNotKept() async throws {
        let reads = CommitScopedReads<String, Int>(maximumReads: 8)
        await #expect(throws: ReadFailed.self) {
            try await reads.value(of: "changes", observedGeneration: 1) { throw ReadFailed() }
        }
        #expect(reads.keptReads == 0)
        #expect(try await reads.value(of: "changes", observedGeneration: 1) { 3 } == 3)
    }

    @Test("feeds that share their changes queries still see every commit, in order, exactly once")
    func feedsSeeEveryCommit() async throws {
        try await withDatabase { database in
            let writes = 60
            let feeds = 40
            try await withThrowingTaskGroup(of: [Int64].self) { group in
                for _ in 0..<feeds {
                    group.addTask {
                        var iterator = database.changeFeed(since: 0, batchSize: 7).makeAsyncIterator()
                        var sequences: [Int64] = []
                        while sequences.count < writes, let batch = try await iterator.next() {
                            sequences += batch.map(\.sequence)
                        }
                        return sequences
                    }
                }
                for index in 0..<writes {
                    try await database.save("doc-\(index)", body: json(#"{"n":\#(index)}"#), parentRevID: nil)
                    if index % 3 == 0 { await Task.yield() }
                }
                for try await sequences in group {
                    #expect(sequences == Array(1...Int64(writes)))
                }
            }
            #expect(database.sharedChangesReads.keptReads <= 64)
        }
    }

    @Test("revisions read ahead are shared per commit and tell whether anything committed since")
    func readAhead() async throws {
        try await withDatabase { database in
            let rev = try await database.save("doc", body: json(#"{"n":1}"#), parentRevID: nil).revID
            let request = OutgoingRevisionRequest(docID: "doc", revID: rev, maxHistory: 20)
            let first = try await database.readAheadRevisions([request], bodyBytes: 7)
            let second = try await database.readAheadRevisions([request], bodyBytes: 7)
            #expect(first.generation == second.generation)
            #expect(first.revisions == second.revisions)
            #expect(first.revisions.first??.body == json(#"{"n":1}"#))
            #expect(database.sharedRevisionReads.keptReads == 1)
            #expect(!database.hasCommitted(after: first.generation))
            try await database.putLocalDocument("checkpoint", body: json("{}"), expectedRevID: nil)
            #expect(!database.hasCommitted(after: first.generation))
            let next = try await database.save("doc", body: json(#"{"n":2}"#), parentRevID: rev).revID
            #expect(database.hasCommitted(after: first.generation))
            let third = try await database.readAheadRevisions(
                [OutgoingRevisionRequest(docID: "doc", revID: next, maxHistory: 20)], bodyBytes: 7)
            #expect(third.generation > first.generation)
            #expect(third.revisions.first??.revID == next)
            #expect(third.revisions.first??.history == [rev])
        }
    }
}
