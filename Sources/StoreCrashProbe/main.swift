import EdgeStore
import Foundation
import SyncIdentifiers

// Writes documents to the store at the given data directory until it is killed, printing each
// document ID on its own line only after the write that stored it has returned (committed).
// Kill-safety tests SIGKILL it mid-write and check that every printed document survived.
// Usage: StoreCrashProbe <data-directory>

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: StoreCrashProbe <data-directory>\n".utf8))
    exit(64)
}

/// Prints with a direct write(2): nothing sits in a stdio buffer when the process is killed.
func acknowledge(_ docID: String) {
    FileHandle.standardOutput.write(Data("\(docID)\n".utf8))
}

do {
    let store = try DocumentStore(
        dataDirectory: URL(fileURLWithPath: arguments[1], isDirectory: true))
    let database = try await store.database(named: "probe")
    let padding = String(repeating: "x", count: 512)
    var round = 0
    while true {
        // Alternate the local save path and the replicator's batched path.
        let saved = "local-\(round)"
        try await database.save(
            saved, body: Data(#"{"round":\#(round),"padding":"\#(padding)"}"#.utf8),
            parentRevID: nil)
        acknowledge(saved)

        let batch = (0..<5).map { index in
            ExistingRevision(
                docID: "pulled-\(round)-\(index)",
                revID: try! RevisionID("2-\(String(format: "%040x", round * 5 + index))"),
                history: [try! RevisionID("1-\(String(format: "%040x", round * 5 + index))")],
                body: Data(#"{"round":\#(round),"index":\#(index),"padding":"\#(padding)"}"#.utf8))
        }
        let results = try await database.insertExistingRevisions(batch)
        for (revision, result) in zip(batch, results) {
            guard case .inserted = result else {
                FileHandle.standardError.write(
                    Data("unexpected result for \(revision.docID): \(result)\n".utf8))
                exit(1)
            }
            acknowledge(revision.docID)
        }
        round += 1
    }
} catch {
    FileHandle.standardError.write(Data("StoreCrashProbe failed: \(error)\n".utf8))
    exit(1)
}
