import Foundation
import SyncIdentifiers
import Testing

@testable import EdgeStore

@Suite("Revision trees")
struct RevisionTreeTests {
    @Test("Local saves build a chain and check the parent")
    func localSaves() async throws {
        try await withDatabase { database in
            let first = try await database.save("doc", body: json(#"{"n":1}"#), parentRevID: nil)
            #expect(first.revID.generation == 1)
            let second = try await database.save(
                "doc", body: json(#"{"n":2}"#), parentRevID: first.revID)
            #expect(second.revID.generation == 2)
            #expect(second.sequence > first.sequence)

            let document = try #require(try await database.document("doc"))
            #expect(document.revID == second.revID)
            #expect(document.body == json(#"{"n":2}"#))
            #expect(document.deleted == false)
            #expect(try await database.revisionHistory("doc", revID: second.revID) == [first.revID])

            // Saving on a stale parent, or without a parent on a live document, is a conflict.
            let stale = await storeError {
                try await database.save("doc", body: json("{}"), parentRevID: first.revID)
            }
            #expect(stale == .conflict(docID: "doc", currentRevID: second.revID.description))
            let noParent = await storeError {
                try await database.save("doc", body: json("{}"), parentRevID: nil)
            }
            #expect(noParent == .conflict(docID: "doc", currentRevID: second.revID.description))
            let unknown = await storeError {
                try await database.save("doc", body: json("{}"), parentRevID: rev(2, "f"))
            }
            #expect(unknown == .conflict(docID: "doc", currentRevID: second.revID.description))
        }
    }

    @Test("Identical edits produce identical revision IDs")
    func deterministicRevisionIDs() async throws {
        try await withDatabase { database in
            let a = try await database.save(
                "a", body: json(#"{"x":1,"y":[true,null]}"#), parentRevID: nil)
            let b = try await database.save(
                "b", body: json(#"{ "y" : [true, null], "x" : 1 }"#), parentRevID: nil)
            #expect(a.revID == b.revID)
        }
    }

    @Test("Bad JSON bodies are rejected")
    func badJSON() async throws {
        try await withDatabase { database throws in
            for body in ["", "[]", "42", "{", #"{"a":}"#, #"{"a":1,}"#, "{} {}", #"{"a":"\x"}"#] {
                let error = await storeError {
                    try await database.save("doc", body: json(body), parentRevID: nil)
                }
                guard case .invalidJSON = error else {
                    Issue.record("body \(body) gave \(String(describing: error))")
                    continue
                }
            }
            #expect(try await database.document("doc") == nil)
        }
    }

    @Test("Winner: live beats deleted, then higher generation, then greater digest")
    func winnerRules() async throws {
        try await withDatabase { database in
            // Two branches of equal generation: the greater digest wins.
            _ = try await database.insertExistingRevisions([
                existing("doc", 2, "a"), existing("doc", 2, "b"),
            ])
            #expect(try await database.document("doc")?.revID == rev(2, "b"))
            #expect(
                try await database.leafRevisions("doc").map(\.revID) == [rev(2, "b"), rev(2, "a")])

            // A higher generation wins over a greater digest.
            _ = try await database.insertExistingRevisions([existing("doc", 3, "a")])
            #expect(try await database.document("doc")?.revID == rev(3, "a"))

            // Deleting the winning branch makes the live branch win, even with a lower generation.
            try await database.delete("doc", parentRevID: rev(3, "a"))
            let document = try #require(try await database.document("doc"))
            #expect(document.revID == rev(2, "b"))
            #expect(document.deleted == false)
            let leaves = try await database.leafRevisions("doc")
            #expect(leaves.count == 2)
            #expect(leaves.first == LeafRevision(revID: rev(2, "b"), deleted: false))
            #expect(leaves.last?.deleted == true)
        }
    }

    @Test("A conflicting branch can be resolved by deleting the losing leaf")
    func resolveConflict() async throws {
        try await withDatabase { database in
            _ = try await database.insertExistingRevisions([
                existing("doc", 2, "a"), existing("doc", 2, "b"),
            ])
            let resolved = try await database.delete("doc", parentRevID: rev(2, "a"))
            #expect(resolved.revID.generation == 3)
            #expect(try await database.document("doc")?.revID == rev(2, "b"))
            // Saving on top of the winner now works; the tombstoned branch stays a (deleted) leaf.
            let next = try await database.save(
                "doc", body: json(#"{"merged":true}"#), parentRevID: rev(2, "b"))
            #expect(try await database.document("doc")?.revID == next.revID)
        }
    }

    @Test("Trees are pruned to the configured depth and stay consistent")
    func pruning() async throws {
        try await withDatabase(configuration: .init(maxRevisionTreeDepth: 5)) { database in
            var parent: RevisionID?
            var revisions: [RevisionID] = []
            for index in 1...12 {
                let saved = try await database.save(
                    "doc", body: json(#"{"n":\#(index)}"#), parentRevID: parent)
                parent = saved.revID
                revisions.append(saved.revID)
            }
            let history = try await database.revisionHistory("doc", revID: revisions[11])
            #expect(history == Array(revisions[7...10].reversed()))
            #expect(try await database.revision("doc", revID: revisions[6]) == nil)
            #expect(try await database.revision("doc", revID: revisions[7]) != nil)
            // The oldest survivor is now a root, so its history is empty.
            #expect(try await database.revisionHistory("doc", revID: revisions[7]) == [])

            // A long pulled history is cut to the same depth.
            _ = try await database.insertExistingRevisions([existing("pulled", 30, "c")])
            let pulledHistory = try await database.revisionHistory("pulled", revID: rev(30, "c"))
            #expect(pulledHistory == Array(chain(29, "c").prefix(4)))
        }
    }

    @Test("Pruning keeps every branch's own ancestors")
    func pruningBranches() async throws {
        try await withDatabase(configuration: .init(maxRevisionTreeDepth: 3)) { database in
            // Branch "b" forks from 2-a and grows; branch "a" stays short.
            let trunk = chain(2, "a")
            let branch = ExistingRevision(
                docID: "doc", revID: rev(6, "b"),
                history: [rev(5, "b"), rev(4, "b"), rev(3, "b")] + trunk, body: json("{}"))
            _ = try await database.insertExistingRevisions([existing("doc", 3, "a"), branch])
            #expect(
                try await database.leafRevisions("doc").map(\.revID) == [rev(6, "b"), rev(3, "a")])
            #expect(try await database.revisionHistory("doc", revID: rev(3, "a")) == trunk)
            #expect(
                try await database.revisionHistory("doc", revID: rev(6, "b")) == [
                    rev(5, "b"), rev(4, "b"),
                ])
        }
    }
}
