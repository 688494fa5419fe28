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

    @Test("Revision IDs parse, compare by generation then digest, and reject malformed strings")
    func revisionIDs() throws {
        let parsed = try RevisionID("12-00ff")
        #expect(parsed.generation == 12)
        #expect(parsed.digest == "00ff")
        #expect(parsed.description == "12-00ff")
        #expect(try RevisionID("2-aa") < RevisionID("10-00"))
        #expect(try RevisionID("3-ab") < RevisionID("3-b0"))
        for invalid in [
            "", "1", "-ab", "0-ab", "1-", "1-ABCD", "1-abc", "+1-ab", "x-ab", "1-gg",
            "4294967296-ab",
            "1-" + String(repeating: "ab", count: 38),
        ] {
            #expect(throws: StoreError.invalidRevisionID(invalid)) { try RevisionID(invalid) }
        }
    }

    @Test("Revision IDs built from their parts follow the same rules as parsed ones")
    func revisionIDsFromParts() throws {
        #expect(try RevisionID(generation: 12, digest: "00ff") == RevisionID("12-00ff"))
        let invalidParts: [(UInt32, String)] = [
            (0, "ab"), (1, ""), (1, "ABCD"), (1, "abc"), (1, "gg"), (1, String(repeating: "ab", count: 38)),
        ]
        for (generation, digest) in invalidParts {
            #expect(throws: StoreError.invalidRevisionID("\(generation)-\(digest)")) {
                try RevisionID(generation: generation, digest: digest)
            }
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
