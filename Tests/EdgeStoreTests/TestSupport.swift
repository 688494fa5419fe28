import Foundation
import SyncIdentifiers
import Testing

@testable import EdgeStore

/// A fresh data directory, removed when the test ends.
func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("edgestore-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory)
}

/// A database named "db" in a fresh store.
func withDatabase<T>(
    configuration: StoreConfiguration = .init(), _ body: (DocumentDatabase) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory in
        let store = try DocumentStore(dataDirectory: directory, configuration: configuration)
        return try await body(try await store.database(named: "db"))
    }
}

func json(_ text: String) -> Data { Data(text.utf8) }

func rev(_ text: String) -> RevisionID {
    try! RevisionID(text)
}

/// A revision ID with a readable, deterministic digest: `rev(3, "a")` is `3-aaaa…` (40 digits).
func rev(_ generation: UInt32, _ digit: Character) -> RevisionID {
    try! RevisionID("\(generation)-\(String(repeating: digit, count: 40))")
}

/// The chain `generation-digit … 1-digit`, newest first.
func chain(_ generation: UInt32, _ digit: Character) -> [RevisionID] {
    (1...generation).reversed().map { rev($0, digit) }
}

/// An existing revision with its full history down to generation 1, all with the same digest digit.
func existing(
    _ docID: String, _ generation: UInt32, _ digit: Character, body: String = #"{"v":1}"#,
    deleted: Bool = false,
    noConflicts: Bool = false
) -> ExistingRevision {
    let revisions = chain(generation, digit)
    return ExistingRevision(
        docID: docID, revID: revisions[0], history: Array(revisions.dropFirst()), deleted: deleted,
        body: json(body),
        noConflicts: noConflicts)
}

/// Runs `body` and returns the `StoreError` it throws (fails the test if it does not throw one).
func storeError(_ body: () async throws -> Void) async -> StoreError? {
    do {
        try await body()
        Issue.record("expected a StoreError")
        return nil
    } catch let error as StoreError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}
