import Foundation
import SyncIdentifiers
import Testing

@testable import EdgeStore

@Suite("Identifiers")
struct IdentifierTests {
    @Test("Document IDs follow Couchbase Lite's rules")
    func documentIDs() throws {
        try DocumentID.validate("doc-1")
        try DocumentID.validate("ünïcödé/with spaces:and.punctuation")
        try DocumentID.validate(String(repeating: "a", count: 250))
        for invalid in [
            "", "_design/x", "_sync:doc", String(repeating: "a", count: 251), "tab\there",
            "nul\u{0}", "del\u{7F}",
        ] {
            #expect(throws: StoreError.self) { try DocumentID.validate(invalid) }
        }
        // 125 two-byte characters are 250 bytes; one more byte is too many.
        try DocumentID.validate(String(repeating: "é", count: 125))
        #expect(throws: StoreError.self) {
            try DocumentID.validate(String(repeating: "é", count: 125) + "a")
        }
    }

    @Test("Invalid document IDs are rejected with a clear error by every API")
    func documentIDErrors() async throws {
        try await withDatabase { database in
            let error = await storeError {
                try await database.save("_bad", body: json("{}"), parentRevID: nil)
            }
            #expect(
                error
                    == .invalidDocumentID(
                        "_bad", reason: "must not start with '_' (reserved prefix)"))
            #expect(error?.description.contains("_bad") == true)
            let results = try await database.insertExistingRevisions([existing("", 1, "a")])
            #expect(results == [.failed(.invalidDocumentID("", reason: "must not be empty"))])
        }
    }

    @Test("A _revisions history becomes a chain of revision IDs, refused as the store's error when one is invalid")
    func revisionChains() throws {
        #expect(try RevisionID.chain(start: 3, digests: ["cc", "bb"]) == [rev("3-cc"), rev("2-bb")])
        let refusals: [(start: Int, digests: [String], error: InvalidRevisionID)] = [
            (1, ["bb", "aa"], InvalidRevisionID(text: "0-aa", reason: .generationBelowOne)),
            (-1, ["aa"], InvalidRevisionID(text: "-1-aa", reason: .generationBelowOne)),
            (Int(UInt32.max) + 1, ["aa"], InvalidRevisionID(text: "4294967296-aa", reason: .generationTooLarge)),
            (2, ["bb", "AA"], InvalidRevisionID(text: "1-AA", reason: .digestNotLowercaseHex)),
        ]
        for refusal in refusals {
            #expect(throws: StoreError.invalidRevisionID(refusal.error)) {
                try RevisionID.chain(start: refusal.start, digests: refusal.digests)
            }
        }
        #expect(
            StoreError.invalidRevisionID(refusals[0].error).description
                == "invalid revision ID '0-aa': the generation must be at least 1")
    }

    @Test("The store keeps and reads back the longest digests LiteCore allows beside each generation")
    func longestRevisionIDs() async throws {
        try await withDatabase { database in
            let revisions = [
                // Refused by the store's former flat limit of 37 bytes.
                ("small", try RevisionID(generation: 1, digest: String(repeating: "ab", count: 41))),
                ("two-byte-varint", try RevisionID(generation: 128, digest: String(repeating: "cd", count: 40))),
                // The longest ID the former rules let the store write; reading it back relies on
                // RevisionID(stored:in:) accepting everything they did.
                ("largest", try RevisionID(generation: .max, digest: String(repeating: "ef", count: 37))),
            ]
            let results = try await database.insertExistingRevisions(
                revisions.map { ExistingRevision(docID: $0.0, revID: $0.1, history: [], body: json("{}")) })
            #expect(results == [.inserted(sequence: 1), .inserted(sequence: 2), .inserted(sequence: 3)])
            for (docID, revID) in revisions {
                #expect(try await database.document(docID)?.revID == revID)
                #expect(try await database.revisionHistory(docID, revID: revID) == [])
            }
            #expect(try await database.changes(since: 0).map(\.revID) == revisions.map(\.1))
            #expect(
                try await database.documents(range: DocumentRange()).map(\.revID).sorted()
                    == revisions.map(\.1).sorted())
        }
    }

    @Test("Minted revision IDs follow Couchbase Lite's digest layout over canonical JSON")
    func mintedRevisionIDs() throws {
        let parent = try RevisionID("1-b885d40d765a9a76dcb89573db0a291e082d077c")
        let minted = RevisionID.minted(parent: parent, deleted: true, canonicalBody: json("{}"))
        // SHA-1( 0x2A ‖ "1-b885…" ‖ 0x01 ‖ "{}" ), computed independently with Python's hashlib.
        // (With the Fleece body `70 00` instead of `{}` the same layout gives CBL's 2-1b5c18c5….)
        #expect(minted.description == "2-3342695bdc925e5ac178ffa228e84dfaba952ef0")
        #expect(
            minted == RevisionID.minted(parent: parent, deleted: true, canonicalBody: json("{}")))
        #expect(
            minted != RevisionID.minted(parent: parent, deleted: false, canonicalBody: json("{}")))
        #expect(
            RevisionID.minted(parent: nil, deleted: false, canonicalBody: json("{}")).generation
                == 1)
    }

    @Test("Database names are validated")
    func databaseNames() throws {
        try DocumentStore.validateDatabaseName("db")
        try DocumentStore.validateDatabaseName("travel-sample_2")
        for invalid in [
            "", "Upper", "1db", "a/b", "../x", "a.b", String(repeating: "a", count: 101),
        ] {
            #expect(throws: StoreError.self) { try DocumentStore.validateDatabaseName(invalid) }
        }
    }
}
