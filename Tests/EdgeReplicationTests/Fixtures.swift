import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON

/// A rev-tree revision ID `<generation>-<40 hex digits>` whose digest repeats `digit`.
func revision(_ generation: UInt32, _ digit: Character) -> RevisionID {
    try! RevisionID(generation: generation, digest: String(repeating: digit, count: 40))
}

func json(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Parses stored JSON for comparisons that must not depend on key order.
func object(_ data: Data?) throws -> JSONObject? {
    guard let data else { return nil }
    return try JSONValue(parsing: Array(data)).objectValue
}

/// Padding that makes a body big enough for a delta of one changed property to be worth sending.
let deltaFiller = String(repeating: "x", count: 400)

extension DocumentDatabase {
    /// Saves `doc` twice; the second revision differs from the first only in `count`, so it travels as a delta.
    func saveDeltaCandidate() async throws -> (first: SavedRevision, second: SavedRevision) {
        let first = try await save("doc", body: Data(#"{"filler":"\#(deltaFiller)","count":1}"#.utf8), parentRevID: nil)
        let second = try await save(
            "doc", body: Data(#"{"filler":"\#(deltaFiller)","count":2}"#.utf8), parentRevID: first.revID)
        return (first, second)
    }
}
