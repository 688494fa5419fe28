import Foundation
import ReplicationProtocol

/// A rev-tree revision ID `<generation>-<40 hex digits>` whose digest repeats `digit`.
func revision(_ generation: UInt32, _ digit: Character) -> WireRevisionID {
    try! WireRevisionID(generation: generation, digest: String(repeating: digit, count: 40))
}

func json(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Parses stored JSON for comparisons that must not depend on key order.
func object(_ data: Data?) throws -> JSONObject? {
    guard let data else { return nil }
    return try JSONValue(parsing: Array(data)).objectValue
}
