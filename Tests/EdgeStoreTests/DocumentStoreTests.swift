import Foundation
import Testing

@testable import EdgeStore

@Suite("Document store")
struct DocumentStoreTests {
    @Test("Several databases under one data directory, each with a persistent UUID")
    func databases() async throws {
        try await withTemporaryDirectory { directory in
            let firstUUID: UUID
            do {
                let store = try DocumentStore(dataDirectory: directory)
                let alpha = try await store.database(named: "alpha")
                let beta = try await store.database(named: "beta")
                #expect(alpha !== beta)
                #expect(try await store.database(named: "alpha") === alpha)
                #expect(alpha.uuid != beta.uuid)
                firstUUID = alpha.uuid
                try await alpha.save("doc", body: json(#"{"in":"alpha"}"#), parentRevID: nil)
                #expect(try await beta.document("doc") == nil)
                #expect(try await store.databaseNames() == ["alpha", "beta"])
                #expect(alpha.path == directory.appendingPathComponent("databases/alpha.sqlite3").path)
                #expect(try await alpha.integrityCheck() == ["ok"])
                let mode = try await alpha.pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
                #expect(mode == "wal")
            }
            let reopened = try await DocumentStore(dataDirectory: directory).database(named: "alpha", createIfMissing: false)
            #expect(reopened.uuid == firstUUID)
            #expect(try await reopened.document("doc")?.body == json(#"{"in":"alpha"}"#))
        }
    }

    @Test("Invalid and missing database names give clear errors")
    func namingErrors() async throws {
        try await withTemporaryDirectory { directory in
            let store = try DocumentStore(dataDirectory: directory)
            let invalid = await storeError { _ = try await store.database(named: "../escape") }
            #expect(invalid == .invalidDatabaseName("../escape", reason: "must start with a lowercase letter"))
            let missing = await storeError { _ = try await store.database(named: "ghost", createIfMissing: false) }
            #expect(missing == .databaseNotFound("ghost"))
        }
    }

    @Test("A file that is not a database is reported as corrupt")
    func corruptFile() async throws {
        try await withTemporaryDirectory { directory in
            let databases = directory.appendingPathComponent("databases", isDirectory: true)
            try FileManager.default.createDirectory(at: databases, withIntermediateDirectories: true)
            try Data(repeating: 0x5A, count: 8192).write(to: databases.appendingPathComponent("broken.sqlite3"))
            let store = try DocumentStore(dataDirectory: directory)
            let error = await storeError { _ = try await store.database(named: "broken") }
            guard case .corruptDatabase = error else {
                Issue.record("expected corruptDatabase, got \(String(describing: error))")
                return
            }
        }
    }
}
