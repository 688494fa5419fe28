import Foundation
import Synchronization
import Testing

@testable import EdgeStore

/// `doc` with the common ancestor 1-a, a local branch 2-a (the current revision) and a pulled
/// branch 2-b, stored without resolution.
private func conflictedDocument(in database: DocumentDatabase) async throws {
    _ = try await database.insertExistingRevisions([
        existing("doc", 2, "a", body: #"{"side":"local"}"#)
    ])
    let pulled = ExistingRevision(
        docID: "doc", revID: rev(2, "b"), history: [rev(1, "a")], body: json(#"{"side":"remote"}"#))
    _ = try await database.insertExistingRevisions([pulled])
    #expect(try await database.leafRevisions("doc").count == 2)
}

@Suite("Conflict resolution")
struct ConflictResolutionTests {
    @Test("a merged body becomes a child of the winning leaf and the losing branch is removed")
    func mergedRevision() async throws {
        try await withDatabase { database in
            try await conflictedDocument(in: database)
            let saved = try await database.resolveConflict(
                "doc", winningParent: rev(2, "b"), losingLeaf: rev(2, "a"),
                mergedBody: json(#"{"side":"both"}"#))
            #expect(saved.revID.generation == 3)
            #expect(saved.sequence == (try await database.lastSequence()))
            #expect(try await database.leafRevisions("doc") == [LeafRevision(revID: saved.revID, deleted: false)])
            #expect(try await database.revisionHistory("doc", revID: saved.revID) == [rev(2, "b"), rev(1, "a")])
            #expect(try await database.revision("doc", revID: rev(2, "a")) == nil)
            let current = try #require(try await database.document("doc"))
            #expect(current.revID == saved.revID)
            #expect(current.body == json(#"{"side":"both"}"#))
            #expect(current.sequence == saved.sequence)
        }
    }

    @Test("without a merged body the winning leaf itself becomes current")
    func winnerAsIs() async throws {
        try await withDatabase { database in
            try await conflictedDocument(in: database)
            let before = try await database.lastSequence()
            let saved = try await database.resolveConflict(
                "doc", winningParent: rev(2, "b"), losingLeaf: rev(2, "a"), mergedBody: nil)
            #expect(saved.revID == rev(2, "b"))
            #expect(saved.sequence == before + 1, "the changed winner is a new change to replicate")
            #expect(try await database.leafRevisions("doc").map(\.revID) == [rev(2, "b")])
            #expect(try await database.document("doc")?.body == json(#"{"side":"remote"}"#))
            #expect(try await database.revision("doc", revID: rev(1, "a")) != nil, "the shared ancestor stays")
        }
    }

    @Test("a deleted merged revision deletes the document")
    func deletedResolution() async throws {
        try await withDatabase { database in
            try await conflictedDocument(in: database)
            let saved = try await database.resolveConflict(
                "doc", winningParent: rev(2, "b"), losingLeaf: rev(2, "a"), mergedBody: json("{}"),
                mergedDeleted: true)
            let current = try #require(try await database.document("doc"))
            #expect(current.deleted)
            #expect(current.revID == saved.revID)
            #expect(try await database.leafRevisions("doc").count == 1)
        }
    }

    @Test("resolving revisions that are not two distinct leaves is refused with a specific error")
    func invalidResolutions() async throws {
        try await withDatabase { database in
            try await conflictedDocument(in: database)
            let notLeaf = await storeError {
                try await database.resolveConflict(
                    "doc", winningParent: rev(1, "a"), losingLeaf: rev(2, "a"), mergedBody: nil)
            }
            guard case .invalidConflictResolution(docID: "doc", let reason)? = notLeaf else {
                Issue.record("unexpected error \(String(describing: notLeaf))")
                return
            }
            #expect(reason.contains("not a leaf"))
            let same = await storeError {
                try await database.resolveConflict(
                    "doc", winningParent: rev(2, "a"), losingLeaf: rev(2, "a"), mergedBody: nil)
            }
            guard case .invalidConflictResolution? = same else {
                Issue.record("unexpected error \(String(describing: same))")
                return
            }
            let unknown = await storeError {
                try await database.resolveConflict(
                    "doc", winningParent: rev(2, "c"), losingLeaf: rev(2, "a"), mergedBody: nil)
            }
            #expect(unknown == .revisionNotFound(docID: "doc", revID: rev(2, "c").description))
            let missing = await storeError {
                try await database.resolveConflict(
                    "nothing", winningParent: rev(2, "b"), losingLeaf: rev(2, "a"), mergedBody: nil)
            }
            #expect(missing == .documentNotFound(docID: "nothing"))
            let badBody = await storeError {
                try await database.resolveConflict(
                    "doc", winningParent: rev(2, "b"), losingLeaf: rev(2, "a"), mergedBody: json("{nope"))
            }
            guard case .invalidJSON? = badBody else {
                Issue.record("unexpected error \(String(describing: badBody))")
                return
            }
            #expect(try await database.leafRevisions("doc").count == 2, "refused resolutions change nothing")
        }
    }

    @Test("a conflicting pulled revision is resolved in the same transaction as its insertion")
    func resolvedOnInsert() async throws {
        try await withDatabase { database in
            _ = try await database.insertExistingRevisions([
                existing("doc", 2, "a", body: #"{"side":"local","a":1}"#)
            ])
            let seen = ConflictLog()
            let pulled = ExistingRevision(
                docID: "doc", revID: rev(2, "b"), history: [rev(1, "a")], body: json(#"{"side":"remote"}"#))
            let results = try await database.insertExistingRevisions([pulled]) { conflict in
                seen.record(conflict)
                return .local
            }
            let conflict = try #require(seen.conflicts.first)
            #expect(seen.conflicts.count == 1)
            #expect(
                conflict.local
                    == ConflictingRevision(revID: rev(2, "a"), deleted: false, body: json(#"{"side":"local","a":1}"#)))
            #expect(
                conflict.remote
                    == ConflictingRevision(revID: rev(2, "b"), deleted: false, body: json(#"{"side":"remote"}"#)))
            guard case .resolvedConflict(let sequence, let resolvedRevID)? = results.first else {
                Issue.record("not resolved: \(results)")
                return
            }
            #expect(sequence == (try await database.lastSequence()))
            #expect(try await database.leafRevisions("doc").map(\.revID) == [resolvedRevID])
            #expect(try await database.revisionHistory("doc", revID: resolvedRevID) == [rev(2, "b"), rev(1, "a")])
            #expect(try await database.document("doc")?.body == json(#"{"side":"local","a":1}"#))
        }
    }

    @Test("a resolver preferring a local deletion puts a tombstone on top of the pulled revision")
    func localDeletionWins() async throws {
        try await withDatabase { database in
            _ = try await database.insertExistingRevisions([existing("doc", 1, "a")])
            try await database.delete("doc", parentRevID: rev(1, "a"))
            let pulled = ExistingRevision(
                docID: "doc", revID: rev(2, "b"), history: [rev(1, "a")], body: json(#"{"edited":true}"#))
            let results = try await database.insertExistingRevisions([pulled]) { _ in .local }
            guard case .resolvedConflict(_, let resolvedRevID)? = results.first else {
                Issue.record("not resolved: \(results)")
                return
            }
            let current = try #require(try await database.document("doc"))
            #expect(current.deleted)
            #expect(current.revID == resolvedRevID)
            #expect(try await database.revisionHistory("doc", revID: resolvedRevID) == [rev(2, "b"), rev(1, "a")])
        }
    }

    @Test("revisions extending the current one, or following a deletion, are no conflicts")
    func noConflicts() async throws {
        try await withDatabase { database in
            let seen = ConflictLog()
            let resolver: ConflictResolving = { conflict in
                seen.record(conflict)
                return .remote
            }
            _ = try await database.insertExistingRevisions([existing("doc", 2, "a")], resolvingConflictsWith: resolver)
            let extended = try await database.insertExistingRevisions(
                [existing("doc", 4, "a")], resolvingConflictsWith: resolver)
            guard case .inserted? = extended.first else {
                Issue.record("extending was treated as a conflict: \(extended)")
                return
            }
            _ = try await database.insertExistingRevisions(
                [existing("gone", 2, "a", deleted: true)], resolvingConflictsWith: resolver)
            let revived = try await database.insertExistingRevisions(
                [existing("gone", 1, "c")], resolvingConflictsWith: resolver)
            guard case .inserted? = revived.first else {
                Issue.record("a new history after a deletion was treated as a conflict: \(revived)")
                return
            }
            #expect(seen.conflicts.isEmpty)
        }
    }

    @Test("an unrelated history for a live document is a conflict")
    func unrelatedHistory() async throws {
        try await withDatabase { database in
            _ = try await database.insertExistingRevisions([existing("doc", 2, "a")])
            let results = try await database.insertExistingRevisions([existing("doc", 1, "c")]) { _ in .remote }
            #expect(
                results == [.resolvedConflict(sequence: try await database.lastSequence(), resolvedRevID: rev(1, "c"))])
            #expect(try await database.leafRevisions("doc").map(\.revID) == [rev(1, "c")])
            #expect(
                try await database.revision("doc", revID: rev(1, "a")) == nil, "the unrelated local history is removed")
        }
    }
}

/// Collects the conflicts a resolver was asked about.
private final class ConflictLog: Sendable {
    private let recorded = Mutex<[RevisionConflict]>([])

    func record(_ conflict: RevisionConflict) {
        recorded.withLock { $0.append(conflict) }
    }

    var conflicts: [RevisionConflict] {
        recorded.withLock { $0 }
    }
}
