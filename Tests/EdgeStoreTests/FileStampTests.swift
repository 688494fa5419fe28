import Foundation
import Testing

@testable import EdgeStore

@Suite("Database file stamps")
struct FileStampTests {
    @Test("a commit changes the stamp, also one that wakes no change feed; reads and idle time do not")
    func stampFollowsCommits() async throws {
        try await withDatabase { database in
            _ = try await database.save("a", body: json(#"{"n":1}"#), parentRevID: nil)
            let before = database.fileStamp()
            #expect(before.writeAheadLog != nil)
            _ = try await database.changes(since: 0)
            try await Task.sleep(for: .milliseconds(20))
            #expect(database.fileStamp() == before)

            _ = try await database.save("b", body: json(#"{"n":2}"#), parentRevID: nil)
            let afterOwnCommit = database.fileStamp()
            #expect(afterOwnCommit != before)

            // A commit that wakes no change feed, as another process's does not.
            let generation = database.commits.generation
            try await database.putLocalDocument("checkpoint", body: json("{}"), expectedRevID: nil)
            #expect(database.commits.generation == generation)
            #expect(database.fileStamp() != afterOwnCommit)
        }
    }
}
