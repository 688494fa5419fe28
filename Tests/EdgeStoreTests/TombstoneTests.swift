import Foundation
import Testing

@testable import EdgeStore

@Suite("Tombstones and purge")
struct TombstoneTests {
    @Test("Deleting creates a tombstone with an empty body that can be revived")
    func tombstones() async throws {
        try await withDatabase { database in
            let created = try await database.save("doc", body: json(#"{"a":1}"#), parentRevID: nil)
            let deleted = try await database.delete("doc", parentRevID: created.revID)
            #expect(deleted.revID.generation == 2)
            let tombstone = try #require(try await database.document("doc"))
            #expect(tombstone.deleted)
            #expect(tombstone.body == json("{}"))
            #expect(try await database.revision("doc", revID: deleted.revID)?.deleted == true)

            // Deleting again is refused; saving without a parent revives the document on the tombstone.
            let again = await storeError { try await database.delete("doc", parentRevID: deleted.revID) }
            #expect(again == .documentNotFound(docID: "doc"))
            let revived = try await database.save("doc", body: json(#"{"a":2}"#), parentRevID: nil)
            #expect(revived.revID.generation == 3)
            #expect(try await database.revisionHistory("doc", revID: revived.revID) == [deleted.revID, created.revID])
            #expect(try await database.document("doc")?.deleted == false)
        }
    }

    @Test("Pulled tombstones are stored as deleted revisions")
    func pulledTombstone() async throws {
        try await withDatabase { database in
            let results = try await database.insertExistingRevisions([existing("doc", 2, "d", body: "{}", deleted: true)])
            guard case .inserted = results.first else {
                Issue.record("not inserted: \(results)")
                return
            }
            let document = try #require(try await database.document("doc"))
            #expect(document.deleted)
            #expect(document.revID == rev(2, "d"))
        }
    }

    @Test("Purge removes the document entirely and never reuses its sequence")
    func purge() async throws {
        try await withDatabase { database in
            let first = try await database.save("doc", body: json(#"{"a":1}"#), parentRevID: nil)
            try await database.purge("doc")
            #expect(try await database.document("doc") == nil)
            #expect(try await database.leafRevisions("doc") == [])
            #expect(try await database.changes(since: 0) == [])
            let missing = await storeError { try await database.purge("doc") }
            #expect(missing == .documentNotFound(docID: "doc"))

            // A recreated document starts a new tree with a new, higher sequence.
            let recreated = try await database.save("doc", body: json(#"{"a":1}"#), parentRevID: nil)
            #expect(recreated.revID == first.revID)
            #expect(recreated.sequence > first.sequence)
            #expect(try await database.lastSequence() == recreated.sequence)
        }
    }
}
