import Foundation
import SyncIdentifiers
import Testing

@testable import EdgeStore

@Suite("Revision body retention")
struct BodyRetentionTests {
    private func saveChain(_ database: DocumentDatabase, count: Int) async throws -> [RevisionID] {
        var revisions: [RevisionID] = []
        for index in 0..<count {
            let saved = try await database.save(
                "doc", body: json(#"{"n":\#(index)}"#), parentRevID: revisions.last)
            revisions.append(saved.revID)
        }
        return revisions
    }

    @Test("Bodies of the last N ancestors are kept, older ones dropped")
    func byCount() async throws {
        try await withDatabase(configuration: .init(bodyRetention: .init(maxAncestorDistance: 2))) {
            database in
            let revisions = try await saveChain(database, count: 6)
            var bodies: [Data?] = []
            for revID in revisions {
                bodies.append(try await database.revision("doc", revID: revID)?.body)
            }
            #expect(bodies.map { $0 != nil } == [false, false, false, true, true, true])
            #expect(bodies[3] == json(#"{"n":3}"#))
            // Metadata of bodiless revisions stays in the tree.
            #expect(try await database.revisionHistory("doc", revID: revisions[5]).count == 5)
        }
    }

    @Test("Bodies older than the maximum age are dropped; leaves always keep theirs")
    func byAge() async throws {
        let retention = RevisionBodyRetention(maxAncestorDistance: nil, maxAge: .seconds(600))
        try await withDatabase(configuration: .init(bodyRetention: retention)) { database in
            let revisions = try await saveChain(database, count: 3)
            #expect(try await database.dropExpiredRevisionBodies() == 0)
            #expect(
                try await database.dropExpiredRevisionBodies(asOf: Date(timeIntervalSinceNow: 3600))
                    == 2)
            #expect(try await database.revision("doc", revID: revisions[1])?.body == nil)
            #expect(
                try await database.revision("doc", revID: revisions[2])?.body == json(#"{"n":2}"#))
            #expect(try await database.document("doc")?.body == json(#"{"n":2}"#))
        }
    }

    @Test("Without limits every body is kept")
    func unlimited() async throws {
        try await withDatabase(configuration: .init(bodyRetention: .init(maxAncestorDistance: nil))) { database in
            let revisions = try await saveChain(database, count: 5)
            for revID in revisions {
                #expect(try await database.revision("doc", revID: revID)?.body != nil)
            }
        }
    }
}
