import Foundation
import SyncIdentifiers
import VersionVectors

/// A document's current state: its winning revision and that revision's body.
public struct Document: Sendable, Equatable {
    package let docID: String
    /// The winning revision (see `RevisionTree.winner` for the rules).
    package let revID: RevisionID
    /// Whether the winning revision is a tombstone.
    package let deleted: Bool
    /// The sequence of the document's latest change.
    package let sequence: Int64
    /// The winning revision's JSON body (`{}` for a plain tombstone).
    package let body: Data
    /// The winning revision's vector; nil while it is a legacy revision.
    package let vector: HybridLogicalVector?
}

/// One stored revision of a document.
public struct Revision: Sendable, Equatable {
    package let docID: String
    package let revID: RevisionID
    package let deleted: Bool
    /// The JSON body, or `nil` if it was dropped by the body-retention policy (or never received,
    /// for ancestors known only from a history).
    package let body: Data?
}

/// A leaf of a document's revision tree.
package struct LeafRevision: Sendable, Equatable {
    package let revID: RevisionID
    package let deleted: Bool
}

/// The outcome of a local write.
package struct SavedRevision: Sendable, Equatable {
    package let revID: RevisionID
    package let sequence: Int64
}

/// Canonical JSON (sorted keys, compact) of a document body, the input to revision ID digests.
enum CanonicalJSON {
    static func encode(_ body: Data) throws(StoreError) -> Data {
        do {
            let object = try JSONSerialization.jsonObject(with: body)
            return try JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        } catch {
            throw .invalidJSON(reason: "\(error)")
        }
    }
}
