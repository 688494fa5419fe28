import Benchmark
import EdgeStore
import Foundation
import GRDB
import SyncIdentifiers

// Inserting 100,000 documents of about 1 KB, each with a 3-revision history, the way a replicator
// pulls them (EdgeStore's batched insertExistingRevisions), against raw SQLite inserts of the same
// rows into an equivalent schema with the same durability (WAL, synchronous=FULL) and batch size.
// Each iteration starts from an empty database; setup and teardown are not measured.

private let documentCount = 100_000
private let batchSize = 500

private struct Sample: Sendable {
    let docID: String
    /// Newest first: the revision, then its two ancestors.
    let revisions: [String]
    let body: Data
}

private let samples: [Sample] = (0..<documentCount).map { index in
    let docID = "doc-\(index)"
    let revisions = (1...3).reversed().map { generation in
        "\(generation)-" + String(format: "%08x%032x", generation, index)
    }
    let padding = String(repeating: "abcdefghij", count: 90)
    let body =
        #"{"type":"reading","index":\#(index),"name":"\#(docID)","tags":["a","b"],"payload":"\#(padding)"}"#
    return Sample(docID: docID, revisions: revisions, body: Data(body.utf8))
}

private func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
        "store-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

private func report(_ label: String, start: ContinuousClock.Instant) {
    let elapsed = (ContinuousClock.now - start)
    let seconds =
        Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    let line = String(
        format: "%@: %d docs in %.3f s = %.0f docs/s\n", label, documentCount, seconds,
        Double(documentCount) / seconds)
    FileHandle.standardError.write(Data(line.utf8))
}

/// The same documents as the replicator hands them to the store (revision IDs already parsed).
private let existingRevisions: [ExistingRevision] = samples.map { sample in
    ExistingRevision(
        docID: sample.docID, revID: try! RevisionID(sample.revisions[0]),
        history: sample.revisions.dropFirst().map { try! RevisionID($0) }, body: sample.body)
}

private func insertThroughStore(into database: DocumentDatabase) async throws {
    let start = ContinuousClock.now
    for batchStart in stride(from: 0, to: existingRevisions.count, by: batchSize) {
        let batch = Array(
            existingRevisions[batchStart..<min(batchStart + batchSize, existingRevisions.count)])
        let results = try await database.insertExistingRevisions(batch)
        blackHole(results)
    }
    report("EdgeStore insertExistingRevisions", start: start)
}

private func openRawDatabase(in directory: URL) async throws -> DatabasePool {
    var configuration = Configuration()
    configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    let pool = try DatabasePool(
        path: directory.appendingPathComponent("raw.sqlite3").path, configuration: configuration)
    try await pool.write { db in
        try db.execute(
            sql: """
                CREATE TABLE documents (id INTEGER PRIMARY KEY, collection_id INTEGER NOT NULL, doc_id TEXT NOT NULL,
                    sequence INTEGER NOT NULL, winning_rev_id TEXT NOT NULL, deleted INTEGER NOT NULL,
                    body_size INTEGER NOT NULL);
                CREATE UNIQUE INDEX documents_by_doc_id ON documents (collection_id, doc_id);
                CREATE UNIQUE INDEX documents_by_sequence ON documents (collection_id, sequence);
                CREATE TABLE revisions (doc_row INTEGER NOT NULL, rev_id TEXT NOT NULL, parent_rev_id TEXT,
                    deleted INTEGER NOT NULL, stored_at REAL NOT NULL, body BLOB);
                CREATE UNIQUE INDEX revisions_by_doc ON revisions (doc_row, rev_id);
                """)
    }
    return pool
}

private func insertRaw(into pool: DatabasePool) async throws {
    let start = ContinuousClock.now
    var sequence: Int64 = 0
    for batchStart in stride(from: 0, to: samples.count, by: batchSize) {
        let batch = samples[batchStart..<min(batchStart + batchSize, samples.count)]
        sequence = try await pool.write { [sequence] db in
            var sequence = sequence
            let now = Date().timeIntervalSince1970
            let insertDocument = try db.cachedStatement(
                sql: """
                    INSERT INTO documents (collection_id, doc_id, sequence, winning_rev_id, deleted, body_size)
                    VALUES (1, ?, ?, ?, 0, ?)
                    """)
            let insertRevision = try db.cachedStatement(
                sql:
                    "INSERT INTO revisions (doc_row, rev_id, parent_rev_id, deleted, stored_at, body) VALUES (?, ?, ?, 0, ?, ?)"
            )
            for sample in batch {
                sequence += 1
                try insertDocument.execute(arguments: [
                    sample.docID, sequence, sample.revisions[0], sample.body.count,
                ])
                let docRow = db.lastInsertedRowID
                for (index, revID) in sample.revisions.enumerated() {
                    let parent =
                        index + 1 < sample.revisions.count ? sample.revisions[index + 1] : nil
                    try insertRevision.execute(arguments: [
                        docRow, revID, parent, now, index == 0 ? sample.body : nil,
                    ])
                }
            }
            return sequence
        }
    }
    report("Raw SQLite (GRDB prepared statements)", start: start)
}

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal], timeUnits: .milliseconds, warmupIterations: 0,
        maxDuration: .seconds(120), maxIterations: 3)

    Benchmark(
        "EdgeStore: 100k docs x 3-rev history, batched insertExistingRevisions",
        configuration: configuration
    ) {
        benchmark in
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = existingRevisions.count  // build the inputs outside the measurement
        let database = try await DocumentStore(dataDirectory: directory).database(named: "bench")
        benchmark.startMeasurement()
        try await insertThroughStore(into: database)
        benchmark.stopMeasurement()
    }

    Benchmark("Raw SQLite: the same rows, same schema and durability", configuration: configuration)
    { benchmark in
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = samples.count
        let pool = try await openRawDatabase(in: directory)
        benchmark.startMeasurement()
        try await insertRaw(into: pool)
        benchmark.stopMeasurement()
    }
}
