import Foundation
import GRDB
import SyncIdentifiers
import VersionVectors

/// A revision a replicator is about to send, and how much of its history the receiver needs.
package struct OutgoingRevisionRequest: Hashable, Sendable {
    package var docID: String
    package var revID: RevisionID
    /// The history stops after the first of these (included), as `revisionHistory` does.
    package var knownRevIDs: Set<RevisionID>
    package var maxHistory: Int

    package init(docID: String, revID: RevisionID, knownRevIDs: Set<RevisionID> = [], maxHistory: Int = .max) {
        self.docID = docID
        self.revID = revID
        self.knownRevIDs = knownRevIDs
        self.maxHistory = maxHistory
    }
}

/// What goes into a `rev` message: the revision, its body, the deletion flag and the history,
/// newest first.
package struct OutgoingRevision: Sendable, Equatable {
    package let revID: RevisionID
    package let deleted: Bool
    package let body: Data
    package let history: [RevisionID]
    /// Its vector, for CBMobile_4 peers; nil for a legacy revision.
    package let vector: HybridLogicalVector?
}

extension DocumentDatabase {
    /// The revisions of a whole batch read from one snapshot, in request order; `nil` where the
    /// document, the revision or its body is gone (superseded, purged or compacted since it was
    /// listed). One read per batch instead of two per revision keeps senders off the reader pool.
    package func outgoingRevisions(
        _ requests: [OutgoingRevisionRequest], in collection: CollectionName = .default
    ) async throws -> [OutgoingRevision?] {
        for request in requests { try DocumentID.validate(request.docID) }
        return try await read { db in
            let collectionID = try self.existingCollectionID(collection, in: db)
            return try requests.map { request in
                guard
                    let row = try DocumentRevisionStorage.documentRow(
                        db, collectionID: collectionID, docID: request.docID)
                else { return nil }
                return try Self.outgoingRevision(request, of: row, in: db)
            }
        }
    }

    /// `outgoingRevisions(_:in:)` for a pull feed reading a batch ahead of its `changes` reply, done once for
    /// every feed that observed the same commit and offers the same batch (after a write, every caught-up feed
    /// offers the same one), with the commit generation the revisions are at least as new as: compare it with
    /// `hasCommitted(after:)` before sending them. `bodyBytes`, the batch's body sizes, bounds what is kept.
    package func readAheadRevisions(
        _ requests: [OutgoingRevisionRequest], in collection: CollectionName = .default, bodyBytes: Int
    ) async throws -> ReadAheadRevisions {
        let generation = commits.generation
        let key = SharedRevisionsRead(collection: collection, requests: requests)
        let revisions = try await sharedRevisionReads.value(
            of: key, observedGeneration: generation, cost: bodyBytes
        ) {
            try await self.outgoingRevisions(requests, in: collection)
        }
        return ReadAheadRevisions(generation: generation, revisions: revisions)
    }

    /// Whether a write that can add a change has committed in this process since `generation` was observed.
    package func hasCommitted(after generation: UInt64) -> Bool {
        commits.generation > generation
    }

    /// The document's current revision in place of `request.revID`, for a receiver that asked for
    /// replacements of revisions that are gone (`sendReplacementRevs`); `nil` once the document is.
    package func currentOutgoingRevision(
        replacing request: OutgoingRevisionRequest, in collection: CollectionName = .default
    ) async throws -> OutgoingRevision? {
        try DocumentID.validate(request.docID)
        return try await read { db in
            guard let row = try self.documentRow(request.docID, in: collection, db: db) else { return nil }
            var current = request
            current.revID = row.winningRevID
            return try Self.outgoingRevision(current, of: row, in: db)
        }
    }

    private static func outgoingRevision(
        _ request: OutgoingRevisionRequest, of row: DocumentRow, in db: GRDB.Database
    ) throws -> OutgoingRevision? {
        let tree = try DocumentRevisionStorage.tree(db, docRow: row.rowID)
        guard let node = tree[request.revID], node.hasBody,
            let body = try DocumentRevisionStorage.body(db, docRow: row.rowID, revID: request.revID) ?? nil
        else { return nil }
        return OutgoingRevision(
            revID: request.revID, deleted: node.deleted, body: body,
            history: tree.history(of: request.revID, stoppingAt: request.knownRevIDs, maxCount: request.maxHistory),
            vector: try DocumentRevisionStorage.vector(db, docRow: row.rowID, revID: request.revID))
    }
}

/// A batch's revisions read ahead for a puller, in the order requested; `generation` is the commit generation
/// they are at least as new as.
package struct ReadAheadRevisions: Sendable {
    package let generation: UInt64
    package let revisions: [OutgoingRevision?]
}

/// What identifies a read-ahead that pull feeds share.
struct SharedRevisionsRead: Hashable, Sendable {
    var collection: CollectionName
    var requests: [OutgoingRevisionRequest]
}
