import Foundation
import SyncIdentifiers
import Testing

@testable import EdgeStore

@Suite("Local documents")
struct LocalDocumentTests {
    /// Every puller's feed wakes on a commit and queries; checkpoints are saved by every client every few
    /// seconds and are no change a feed could send.
    @Test("checkpoint writes do not wake change feeds; document writes do")
    func localWritesDoNotWakeFeeds() async throws {
        try await withDatabase { database in
            let before = database.commits.generation
            let rev = try await database.putLocalDocument(
                "checkpoint/a", body: json(#"{"local":1}"#), expectedRevID: nil)
            try await database.putLocalDocument("checkpoint/a", body: json(#"{"local":2}"#), expectedRevID: rev)
            try await database.deleteLocalDocument("checkpoint/a")
            #expect(database.commits.generation == before)
            try await database.save("doc", body: json(#"{"n":1}"#), parentRevID: nil)
            #expect(database.commits.generation == before + 1)
        }
    }

    @Test("Compare-and-swap revisions count up as 1-cc, 2-cc, …")
    func compareAndSwap() async throws {
        try await withDatabase { database in
            let id = "cp-xyhcuHG5W7n44wkdFnA5V1Rmn0M="
            #expect(try await database.localDocument(id) == nil)
            let body1 = json(#"{"time":1795314807,"local":1}"#)
            // An empty expected revision means "must not exist", as in setCheckpoint's rev="".
            let rev1 = try await database.putLocalDocument(id, body: body1, expectedRevID: "")
            #expect(rev1 == "1-cc")
            #expect(
                try await database.localDocument(id)
                    == LocalDocument(docID: id, revID: "1-cc", body: body1))

            let body2 = json(#"{"time":1795314808,"local":4,"remote":2}"#)
            #expect(
                try await database.putLocalDocument(id, body: body2, expectedRevID: rev1) == "2-cc")
            // Byte for byte, so getCheckpoint returns exactly what was stored.
            #expect(try await database.localDocument(id)?.body == body2)

            let stale = await storeError {
                try await database.putLocalDocument(id, body: body1, expectedRevID: rev1)
            }
            #expect(stale == .localRevisionMismatch(docID: id, expected: "1-cc", actual: "2-cc"))
            let create = await storeError {
                try await database.putLocalDocument(id, body: body1, expectedRevID: nil)
            }
            #expect(create == .localRevisionMismatch(docID: id, expected: nil, actual: "2-cc"))
            let unknown = await storeError {
                try await database.putLocalDocument("other", body: body1, expectedRevID: "1-cc")
            }
            #expect(
                unknown == .localRevisionMismatch(docID: "other", expected: "1-cc", actual: nil))
        }
    }

    @Test("Local documents are per collection, not replicated, and deletable")
    func deletion() async throws {
        try await withDatabase { database in
            let collection = try CollectionName(parsing: "scope.things")
            try await database.putLocalDocument(
                "cp", body: json("{}"), expectedRevID: nil, in: collection)
            #expect(try await database.localDocument("cp") == nil)
            #expect(try await database.changes(in: collection, since: 0) == [])
            let wrongRev = await storeError {
                try await database.deleteLocalDocument("cp", expectedRevID: "7-cc", in: collection)
            }
            #expect(
                wrongRev == .localRevisionMismatch(docID: "cp", expected: "7-cc", actual: "1-cc"))
            try await database.deleteLocalDocument("cp", expectedRevID: "1-cc", in: collection)
            #expect(try await database.localDocument("cp", in: collection) == nil)
            let missing = await storeError {
                try await database.deleteLocalDocument("cp", in: collection)
            }
            #expect(missing == .documentNotFound(docID: "cp"))
            let badBody = await storeError {
                try await database.putLocalDocument("cp", body: json("nope"), expectedRevID: nil)
            }
            #expect(badBody != nil)
        }
    }
}
