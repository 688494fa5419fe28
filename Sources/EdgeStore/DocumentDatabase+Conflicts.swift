import Foundation
import GRDB
import SyncIdentifiers

extension DocumentDatabase {
    /// Resolves a conflict between two leaves of a document in one transaction: the branch ending
    /// at `losingLeaf` is removed up to where it forks, and `mergedBody`, if given, is saved as a new
    /// revision on top of `winningParent` (a deletion when `mergedDeleted`); without it
    /// `winningParent` itself wins. Returns the resolved revision and the document's new sequence.
    ///
    /// A replicator passes the peer's revision as `winningParent`, as Couchbase Lite does, so that
    /// the outcome descends from what the peer has and is pushed to it without a conflict.
    @discardableResult
    package func resolveConflict(
        _ docID: String, winningParent: RevisionID, losingLeaf: RevisionID, mergedBody: Data?,
        mergedDeleted: Bool = false, in collection: CollectionName = .default
    ) async throws -> SavedRevision {
        try DocumentID.validate(docID)
        return try await write { db in
            let collectionID = try self.existingCollectionID(collection, in: db)
            var storage = DocumentRevisionStorage(
                db: db, configuration: self.configuration, versionSource: self.versionSource)
            let saved = try storage.resolveConflict(
                docID: docID, collectionID: collectionID, winningParent: winningParent,
                losingLeaf: losingLeaf,
                resolved: mergedBody.map { .init(body: $0, deleted: mergedDeleted) })
            try storage.finish()
            return saved
        }
    }
}
