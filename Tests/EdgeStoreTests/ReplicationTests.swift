import Foundation
import Testing

@testable import EdgeStore

@Suite("Replicator support")
struct ReplicationTests {
    @Test("Existing revisions are inserted in batches with per-document results")
    func batchedInsert() async throws {
        try await withDatabase { database in
            let batch = (0..<300).map { existing("doc-\($0)", 3, "a", body: #"{"i":\#($0)}"#) }
                + [existing("_bad", 1, "a"), existing("bad-json", 1, "a", body: "{nope}")]
            let results = try await database.insertExistingRevisions(batch)
            #expect(results.count == 302)
            let sequences = results.prefix(300).compactMap { result -> Int64? in
                if case .inserted(let sequence) = result { return sequence }
                return nil
            }
            #expect(sequences == Array(1...300))
            #expect(results[300] == .failed(.invalidDocumentID("_bad", reason: "must not start with '_' (reserved prefix)")))
            guard case .failed(.invalidJSON) = results[301] else {
                Issue.record("bad JSON accepted: \(results[301])")
                return
            }
            let document = try #require(try await database.document("doc-7"))
            #expect(document.revID == rev(3, "a"))
            #expect(document.body == json(#"{"i":7}"#))
            #expect(try await database.revisionHistory("doc-7", revID: rev(3, "a")) == [rev(2, "a"), rev(1, "a")])
            // History-only ancestors have no body.
            #expect(try await database.revision("doc-7", revID: rev(2, "a"))?.body == nil)

            // Re-inserting is a no-op; extending the chain grafts onto the known ancestor.
            let again = try await database.insertExistingRevisions([existing("doc-7", 3, "a"), existing("doc-7", 4, "a")])
            #expect(again == [.alreadyPresent, .inserted(sequence: 301)])
            #expect(try await database.leafRevisions("doc-7").map(\.revID) == [rev(4, "a")])
        }
    }

    @Test("A history grafting onto another branch creates a conflict; noConflicts refuses it")
    func conflictBranches() async throws {
        try await withDatabase { database in
            _ = try await database.insertExistingRevisions([existing("doc", 3, "a")])
            let fork = ExistingRevision(docID: "doc", revID: rev(3, "b"), history: [rev(2, "b"), rev(1, "a")], body: json("{}"))
            var refused = fork
            refused.noConflicts = true
            let results = try await database.insertExistingRevisions([refused])
            #expect(results == [.failed(.conflict(docID: "doc", currentRevID: rev(3, "a").description))])
            #expect(try await database.leafRevisions("doc").count == 1)

            _ = try await database.insertExistingRevisions([fork])
            #expect(try await database.leafRevisions("doc").map(\.revID) == [rev(3, "b"), rev(3, "a")])
            #expect(try await database.revisionHistory("doc", revID: rev(3, "b")) == [rev(2, "b"), rev(1, "a")])

            // An unrelated history (no common ancestor) is a new root branch.
            _ = try await database.insertExistingRevisions([existing("doc", 2, "c")])
            #expect(try await database.leafRevisions("doc").count == 3)

            // noConflicts accepts extending a leaf.
            let extend = try await database.insertExistingRevisions([existing("doc", 4, "a", noConflicts: true)])
            #expect(extend == [.inserted(sequence: try await database.lastSequence())])
        }
    }

    @Test("Histories must descend one generation at a time")
    func invalidHistory() async throws {
        try await withDatabase { database in
            let gap = ExistingRevision(docID: "doc", revID: rev(3, "a"), history: [rev(1, "a")], body: json("{}"))
            let results = try await database.insertExistingRevisions([gap])
            guard case .failed(.invalidRevisionHistory(docID: "doc", _)) = results.first else {
                Issue.record("accepted a history with a gap: \(results)")
                return
            }
        }
    }

    @Test("Revision history stops at a known revision or a maximum count")
    func truncatedHistory() async throws {
        try await withDatabase { database in
            _ = try await database.insertExistingRevisions([existing("doc", 6, "a")])
            let full = try await database.revisionHistory("doc", revID: rev(6, "a"))
            #expect(full == Array(chain(5, "a")))
            let known = try await database.revisionHistory("doc", revID: rev(6, "a"), stoppingAt: [rev(3, "a"), rev(1, "a")])
            #expect(known == [rev(5, "a"), rev(4, "a"), rev(3, "a")])
            #expect(try await database.revisionHistory("doc", revID: rev(6, "a"), maxCount: 2) == [rev(5, "a"), rev(4, "a")])
            let missing = await storeError { _ = try await database.revisionHistory("doc", revID: rev(9, "a")) }
            #expect(missing == .revisionNotFound(docID: "doc", revID: rev(9, "a").description))
            let noDoc = await storeError { _ = try await database.revisionHistory("none", revID: rev(1, "a")) }
            #expect(noDoc == .documentNotFound(docID: "none"))
        }
    }

    @Test("Revision diffs report missing revisions and possible ancestors")
    func revisionDiffs() async throws {
        try await withDatabase { database in
            _ = try await database.insertExistingRevisions([existing("doc", 3, "a"), existing("doc", 2, "b")])
            let diffs = try await database.revisionDiffs([
                RevisionQuery(docID: "doc", revIDs: [rev(4, "a")]),
                RevisionQuery(docID: "doc", revIDs: [rev(3, "a")]),
                RevisionQuery(docID: "new", revIDs: [rev(1, "e")]),
                RevisionQuery(docID: "doc", revIDs: [rev(2, "c")]),
                RevisionQuery(docID: "_bad", revIDs: [rev(1, "e")]),
            ])
            let first = try diffs[0].get()
            #expect(first.missing == [rev(4, "a")])
            // Current revision first, then the others by descending revision ID.
            #expect(first.possibleAncestors == [rev(3, "a"), rev(2, "b"), rev(2, "a"), rev(1, "b"), rev(1, "a")])
            #expect(try diffs[1].get() == RevisionDiff(docID: "doc", missing: [], possibleAncestors: []))
            #expect(try diffs[2].get() == RevisionDiff(docID: "new", missing: [rev(1, "e")], possibleAncestors: []))
            #expect(try diffs[3].get().possibleAncestors == [rev(1, "b"), rev(1, "a")])
            #expect(throws: StoreError.self) { try diffs[4].get() }

            let bodiesOnly = try await database.revisionDiffs(
                [RevisionQuery(docID: "doc", revIDs: [rev(4, "a")])], maxAncestors: 10, ancestorsWithBodiesOnly: true)
            #expect(try bodiesOnly[0].get().possibleAncestors == [rev(3, "a"), rev(2, "b")])
            let limited = try await database.revisionDiffs([RevisionQuery(docID: "doc", revIDs: [rev(4, "a")])], maxAncestors: 2)
            #expect(try limited[0].get().possibleAncestors == [rev(3, "a"), rev(2, "b")])
        }
    }

    @Test("proposeChanges rows get 0, 304 or 409 as Couchbase decides them")
    func proposedChanges() async throws {
        try await withDatabase { database in
            _ = try await database.insertExistingRevisions([existing("live", 2, "a"), existing("gone", 2, "a", body: "{}", deleted: true)])
            let statuses = try await database.checkProposedChanges([
                ProposedChange(docID: "new", revID: rev(1, "a"), parentRevID: nil),
                ProposedChange(docID: "live", revID: rev(2, "a"), parentRevID: rev(1, "a")),
                ProposedChange(docID: "live", revID: rev(3, "a"), parentRevID: rev(2, "a")),
                ProposedChange(docID: "live", revID: rev(3, "b"), parentRevID: rev(2, "b")),
                ProposedChange(docID: "live", revID: rev(1, "c"), parentRevID: nil),
                ProposedChange(docID: "gone", revID: rev(1, "c"), parentRevID: nil),
                ProposedChange(docID: "_bad", revID: rev(1, "c"), parentRevID: nil),
            ])
            #expect(statuses.prefix(6).map(\.statusCode) == [0, 304, 0, 409, 409, 0])
            #expect(statuses[3] == .conflict(currentRevID: rev(2, "a")))
            #expect(statuses[6].statusCode == 400)
        }
    }
}
