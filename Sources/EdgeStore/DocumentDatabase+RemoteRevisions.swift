import Foundation
import GRDB

/// A peer database this one replicates with as the active side, as numbered in this database.
public struct RemoteDatabaseID: Sendable, Hashable, CustomStringConvertible {
    let rawValue: Int64

    public var description: String { String(rawValue) }
}

// Which revision each remote database is known to have, so that a revision pulled from a remote is not proposed
// back to it. LiteCore keeps the same per remote (its "remote ancestor" of a document) and its pusher skips a
// document whose current revision is the remote's; without it every pulled revision went back upstream as a
// `proposeChanges` row, and one that the upstream had meanwhile replaced came back as a conflict.
extension DocumentDatabase {
    /// The number of the remote database that `identity` names (the identity its checkpoints are keyed by),
    /// assigned at its first use.
    public func remoteDatabaseID(identifiedBy identity: String) async throws -> RemoteDatabaseID {
        // Read first: every connection of a replicator asks, and a full disk must not stop one that needs no write.
        let known = try await read { db in
            try Int64.fetchOne(db, sql: "SELECT id FROM remote_databases WHERE identity = ?", arguments: [identity])
        }
        if let known { return RemoteDatabaseID(rawValue: known) }
        return try await write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO remote_databases (identity) VALUES (?)", arguments: [identity])
            guard
                let id = try Int64.fetchOne(
                    db, sql: "SELECT id FROM remote_databases WHERE identity = ?", arguments: [identity])
            else {
                throw StoreError.corruptDatabase(path: "remote_databases", reason: "no row for '\(identity)'")
            }
            return RemoteDatabaseID(rawValue: id)
        }
    }

    /// The revision `remote` is known to have of each of `docIDs` that it sent here. A change whose revision is
    /// that one has nothing to push to `remote`; a later revision descending from it can be pushed on top of it.
    public func revisionsKnownToRemote(
        _ remote: RemoteDatabaseID, of docIDs: [String], in collection: CollectionName = .default
    ) async throws -> [String: RevisionID] {
        guard !docIDs.isEmpty else { return [:] }
        return try await read { db in
            guard let collectionID = try self.collectionID(collection, in: db, createIfMissing: false) else {
                return [:]
            }
            let statement = try db.cachedStatement(
                sql: """
                    SELECT r.rev_id FROM remote_revisions r JOIN documents d ON d.id = r.doc_row
                    WHERE r.remote_id = ? AND d.collection_id = ? AND d.doc_id = ?
                    """)
            var known: [String: RevisionID] = [:]
            for docID in docIDs {
                let stored = try statement.directFirstRow(
                    [.integer(remote.rawValue), .integer(collectionID), .text(docID)]
                ) { row in row.string(0) }
                guard let text = stored.flatMap({ $0 }) else { continue }
                guard let revID = try? RevisionID(text) else {
                    throw StoreError.corruptDatabase(
                        path: "remote_revisions", reason: "stored revision ID '\(text)' is malformed")
                }
                known[docID] = revID
            }
            return known
        }
    }

    /// `changes` less those whose revision `remote` is known to have (it sent them here), and the revisions it is
    /// known to have of the documents they name: what a push to `remote` proposes, and on top of what.
    public func changesToPush(
        _ changes: [Change], to remote: RemoteDatabaseID, in collection: CollectionName = .default
    ) async throws -> (changes: [Change], knownToRemote: [String: RevisionID]) {
        let known = try await revisionsKnownToRemote(remote, of: changes.map(\.docID), in: collection)
        return (known.isEmpty ? changes : changes.filter { known[$0.docID] != $0.revID }, known)
    }

    /// Records, inside the transaction that stored it, that `remote` has `revID` of a document.
    static func recordRevision(
        _ revID: RevisionID, ofDocument docID: String, collectionID: Int64, onRemote remote: RemoteDatabaseID,
        in db: GRDB.Database
    ) throws {
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO remote_revisions (remote_id, doc_row, rev_id)
                SELECT ?, id, ? FROM documents WHERE collection_id = ? AND doc_id = ?
                """
        ).directExecute([.integer(remote.rawValue), .text(revID.description), .integer(collectionID), .text(docID)])
    }
}
