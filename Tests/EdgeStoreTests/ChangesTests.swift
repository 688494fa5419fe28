import Foundation
import SyncIdentifiers
import Testing

@testable import EdgeStore

@Suite("Changes feed")
struct ChangesTests {
    @Test("Changes since a sequence, oldest first, with limit, activeOnly and docIDs")
    func changesQuery() async throws {
        try await withDatabase { database in
            let a = try await database.save("a", body: json(#"{"x":"12345"}"#), parentRevID: nil)
            let b = try await database.save("b", body: json("{}"), parentRevID: nil)
            let c = try await database.save("c", body: json("{}"), parentRevID: nil)
            let deletedB = try await database.delete("b", parentRevID: b.revID)
            let a2 = try await database.save(
                "a", body: json(#"{"x":"123456"}"#), parentRevID: a.revID)

            let all = try await database.changes(since: 0)
            #expect(all.map(\.docID) == ["c", "b", "a"])
            #expect(all.map(\.sequence) == [c.sequence, deletedB.sequence, a2.sequence])
            #expect(
                all[2]
                    == Change(
                        sequence: a2.sequence, docID: "a", revID: a2.revID, deleted: false,
                        bodySize: 14, version: all[2].version))
            #expect(all[2].version?.source == database.versionSource, "a REST write gets a version of this node")
            #expect(all[1].deleted)
            #expect(all[1].bodySize == 2)

            #expect(try await database.changes(since: c.sequence).map(\.docID) == ["b", "a"])
            #expect(try await database.changes(since: 0, limit: 2).map(\.docID) == ["c", "b"])
            #expect(
                try await database.changes(since: 0, options: .init(activeOnly: true)).map(\.docID)
                    == ["c", "a"])
            #expect(
                try await database.changes(since: 0, options: .init(docIDs: ["a", "b", "zz"])).map(
                    \.docID) == ["b", "a"])
            #expect(try await database.changes(since: 0, options: .init(docIDs: [])) == [])
        }
    }

    @Test("Collections are separate keyspaces sharing one growing sequence")
    func collections() async throws {
        try await withDatabase { database in
            let orders = try CollectionName(scope: "shop", name: "orders")
            let users = try CollectionName(parsing: "users")
            try await database.createCollection(users)
            let inDefault = try await database.save(
                "doc", body: json(#"{"where":"default"}"#), parentRevID: nil)
            let inOrders = try await database.save(
                "doc", body: json(#"{"where":"orders"}"#), parentRevID: nil, in: orders)
            #expect(inOrders.sequence == inDefault.sequence + 1)
            #expect(
                try await database.document("doc", in: orders)?.body == json(#"{"where":"orders"}"#)
            )
            #expect(try await database.document("doc")?.body == json(#"{"where":"default"}"#))
            #expect(
                try await database.changes(in: orders, since: 0).map(\.sequence) == [
                    inOrders.sequence
                ])
            #expect(try await database.changes(in: users, since: 0) == [])
            #expect(try await database.collections() == [.default, users, orders])
            let missing = try CollectionName(scope: "nope", name: "nothing")
            #expect(try await database.hasCollection(missing) == false)
            let error = await storeError { _ = try await database.document("doc", in: missing) }
            #expect(error == .collectionNotFound("nope.nothing"))
        }
    }

    @Test("A consumer waiting on the feed is woken by a commit from another task")
    func liveWakeUp() async throws {
        try await withDatabase { database in
            let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
            let consumer = Task {
                var iterator = database.changeFeed(since: 0).makeAsyncIterator()
                startedContinuation.yield()
                return try await iterator.next()
            }
            var startedIterator = started.makeAsyncIterator()
            await startedIterator.next()
            // Give the consumer time to find nothing and suspend; correctness does not depend on it.
            try await Task.sleep(for: .milliseconds(50))
            let saved = try await Task.detached {
                try await database.save("late", body: json("{}"), parentRevID: nil)
            }.value
            let batch = try await consumer.value
            #expect(batch?.map(\.docID) == ["late"])
            #expect(batch?.first?.sequence == saved.sequence)
        }
    }

    @Test("nextCommitted says when the feed caught up; a commit after that look ends waitForCommit")
    func caughtUpThenCommit() async throws {
        try await withDatabase { database in
            try await database.save("first", body: json("{}"), parentRevID: nil)
            var iterator = database.changeFeed(since: 0).makeAsyncIterator()
            #expect(try await iterator.nextCommitted()?.map(\.docID) == ["first"])
            #expect(try await iterator.nextCommitted() == nil)
            // The commit lands before the wait starts: the wait must still see it, as it came after the look.
            try await database.save("second", body: json("{}"), parentRevID: nil)
            await iterator.waitForCommit()
            #expect(try await iterator.nextCommitted()?.map(\.docID) == ["second"])
        }
    }

    @Test("a feed given a short batch answers nil without another query until something commits")
    func shortBatchMeansCaughtUp() async throws {
        try await withDatabase { database in
            try await database.save("first", body: json("{}"), parentRevID: nil)
            var iterator = database.changeFeed(since: 0, batchSize: 5).makeAsyncIterator()
            #expect(try await iterator.nextCommitted()?.map(\.docID) == ["first"])
            #expect(database.sharedChangesReads.keptReads == 1)
            #expect(try await iterator.nextCommitted() == nil)
            // The query from the new last sequence would be a second kept read of this generation.
            #expect(database.sharedChangesReads.keptReads == 1)
            try await database.save("second", body: json("{}"), parentRevID: nil)
            #expect(try await iterator.nextCommitted()?.map(\.docID) == ["second"])
            #expect(try await iterator.nextCommitted() == nil)

            // A full batch says nothing of what follows it: the next call looks again.
            for index in 0..<5 {
                try await database.save("more-\(index)", body: json("{}"), parentRevID: nil)
            }
            var full = database.changeFeed(since: 0, batchSize: 7).makeAsyncIterator()
            #expect(try await full.nextCommitted()?.count == 7)
            #expect(try await full.nextCommitted() == nil)
            #expect(database.sharedChangesReads.keptReads == 2)
        }
    }

    @Test("Every change is delivered exactly once, in order, while commits race the consumer")
    func exactlyOnce() async throws {
        try await withDatabase { database in
            let total = 200
            let writer = Task.detached {
                for index in 0..<total {
                    if index % 3 == 0 {
                        _ = try await database.insertExistingRevisions([
                            existing("pulled-\(index)", 2, "a")
                        ])
                    } else {
                        try await database.save(
                            "doc-\(index)", body: json(#"{"i":\#(index)}"#), parentRevID: nil)
                    }
                }
            }
            var seen: [Change] = []
            for try await batch in database.changeFeed(since: 0, batchSize: 7) {
                #expect(batch.count <= 7)
                seen += batch
                // Simulate a slow consumer so commits land while it is busy.
                if seen.count % 21 == 0 { try await Task.sleep(for: .milliseconds(5)) }
                if seen.count >= total { break }
            }
            try await writer.value
            #expect(seen.count == total)
            #expect(seen.map(\.sequence) == Array(1...Int64(total)))
            #expect(Set(seen.map(\.docID)).count == total)
        }
    }

    @Test("Cancelling a waiting consumer ends its feed cleanly")
    func cancellation() async throws {
        try await withDatabase { database in
            try await database.save("first", body: json("{}"), parentRevID: nil)
            let (received, receivedContinuation) = AsyncStream.makeStream(of: Void.self)
            let consumer = Task {
                var batches = 0
                for try await _ in database.changeFeed(since: 0) {
                    batches += 1
                    receivedContinuation.yield()
                }
                return batches
            }
            var receivedIterator = received.makeAsyncIterator()
            await receivedIterator.next()
            // The consumer is now waiting (or about to wait) for a commit that never comes.
            consumer.cancel()
            #expect(try await consumer.value == 1)
        }
    }
}
