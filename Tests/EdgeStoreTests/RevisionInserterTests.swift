import Foundation
import Testing

@testable import EdgeStore

@Suite("Group commit of received revisions")
struct RevisionInserterTests {
    @Test("Revisions arriving while the writer is busy share the next transaction")
    func concurrentRevisionsShareTransactions() async throws {
        try await withDatabase { database in
            let inserter = RevisionInserter(database: database)
            let before = database.commits.generation
            // Hold the writer so that the revisions below queue up behind it.
            let writerHeld = Task {
                try await database.write { _ in Thread.sleep(forTimeInterval: 0.3) }
            }
            try await Task.sleep(for: .milliseconds(50))
            let results = try await withThrowingTaskGroup(of: ExistingRevisionResult.self) { group in
                for index in 0..<200 {
                    group.addTask { try await inserter.insert(existing("doc-\(index)", 2, "a")) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            try await writerHeld.value
            let sequences = results.compactMap { result -> Int64? in
                if case .inserted(let sequence) = result { return sequence }
                return nil
            }
            #expect(Set(sequences) == Set(1...200))
            // The held transaction, then at most the first revision alone and the rest together.
            let transactions = database.commits.generation - before
            #expect(transactions <= 3, "200 revisions took \(transactions - 1) transactions")
            #expect(try await database.document("doc-199")?.revID == rev(2, "a"))
        }
    }

    @Test("A refused revision fails alone; the others of its transaction are stored")
    func refusalStaysPerRevision() async throws {
        try await withDatabase { database in
            let inserter = RevisionInserter(database: database)
            async let good = inserter.insert(existing("good", 1, "a"))
            async let bad = inserter.insert(existing("_reserved", 1, "a"))
            async let unparsable = inserter.insert(existing("broken", 1, "a", body: "{nope"))
            let results = try await [good, bad, unparsable]
            #expect(results[0] == .inserted(sequence: 1))
            guard case .failed(.invalidDocumentID) = results[1], case .failed(.invalidJSON) = results[2] else {
                Issue.record("bad revisions accepted: \(results)")
                return
            }
            #expect(try await database.document("good") != nil)
        }
    }

    @Test("Conflicts are resolved with the inserter's resolver")
    func resolverApplies() async throws {
        try await withDatabase { database in
            _ = try await database.insertExistingRevisions([existing("doc", 2, "a", body: #"{"side":"local"}"#)])
            let inserter = RevisionInserter(database: database, resolver: { _ in .local })
            let result = try await inserter.insert(existing("doc", 2, "b", body: #"{"side":"remote"}"#))
            guard case .resolvedConflict(_, let resolved) = result else {
                Issue.record("not resolved: \(result)")
                return
            }
            let document = try #require(try await database.document("doc"))
            #expect(document.revID == resolved)
            #expect(document.body == json(#"{"side":"local"}"#))
            #expect(try await database.leafRevisions("doc").count == 1)
        }
    }

    @Test("A batch of outgoing revisions is read with bodies and histories in request order")
    func outgoingRevisions() async throws {
        try await withDatabase { database in
            _ = try await database.insertExistingRevisions([
                existing("one", 4, "a", body: #"{"n":1}"#), existing("two", 1, "b", body: #"{"n":2}"#),
            ])
            let revisions = try await database.outgoingRevisions([
                OutgoingRevisionRequest(docID: "two", revID: rev(1, "b")),
                OutgoingRevisionRequest(docID: "one", revID: rev(4, "a"), knownRevIDs: [rev(2, "a")]),
                OutgoingRevisionRequest(docID: "one", revID: rev(4, "a"), maxHistory: 1),
                OutgoingRevisionRequest(docID: "one", revID: rev(2, "a")),
                OutgoingRevisionRequest(docID: "missing", revID: rev(1, "a")),
            ])
            #expect(
                revisions[0]
                    == OutgoingRevision(
                        revID: rev(1, "b"), deleted: false, body: json(#"{"n":2}"#), history: [],
                        vector: revisions[0]?.vector))
            #expect(revisions[0]?.vector?.current.source == database.versionSource)
            #expect(revisions[1]?.history == [rev(3, "a"), rev(2, "a")])
            #expect(revisions[1]?.body == json(#"{"n":1}"#))
            #expect(revisions[2]?.history == [rev(3, "a")])
            // A history-only ancestor has no body to send, like a document that is gone.
            #expect(revisions[3] == nil)
            #expect(revisions[4] == nil)

            let current = try await database.currentOutgoingRevision(
                replacing: OutgoingRevisionRequest(docID: "one", revID: rev(2, "a"), knownRevIDs: [rev(3, "a")]))
            #expect(current?.revID == rev(4, "a"))
            #expect(current?.history == [rev(3, "a")])
            #expect(
                try await database.currentOutgoingRevision(
                    replacing: OutgoingRevisionRequest(docID: "gone", revID: rev(1, "a"))) == nil)
        }
    }
}
