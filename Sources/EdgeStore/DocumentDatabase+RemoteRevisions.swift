import Foundation
import GRDB
import SyncIdentifiers

/// A peer database this one replicates with as the active side, as numbered in this database.
package struct RemoteDatabaseID: Sendable, Hashable, CustomStringConvertible {
    let rawValue: Int64

    package var description: String { String(rawValue) }
}

// Which revision each remote database is known to have, so that a revision pulled from a remote is not proposed
// back to it. LiteCore keeps the same per remote (its "remote ancestor" of a document) and its pusher skips a
// document whose current revision is the remote's; without it every pulled revision went back upstream as a
// `proposeChanges` row, and one that the upstream had meanwhile replaced came back as a conflict.
extension DocumentDatabase {
    /// The number of the remote database that `identity` names (the identity its checkpoints are keyed by),
    /// assigned at its first use.
    package func remoteDatabaseID(identifiedBy identity: String) async throws -> RemoteDatabaseID {
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

    /// `changes` less those `remote` has nothing to learn from, and the revisions it is known to have of the
    /// documents they name: what a push to `remote` proposes, and on top of what.
    ///
    /// A change is left out when its revision is the one `remote` sent, and also when a later sequence of the same
    /// document carries a revision `remote` sent: a pull that landed after the batch was read replaced it, and
    /// proposing the older revision would only make `remote` answer with a conflict. LiteCore's pusher likewise
    /// decides on the document's current revision, not the one the change feed named.
    package func changesToPush(
        _ changes: [Change], to remote: RemoteDatabaseID, in collection: CollectionName = .default
    ) async throws -> (changes: [Change], knownToRemote: [String: RevisionID]) {
        guard !changes.isEmpty else { return (changes, [:]) }
        let docIDs = changes.map(\.docID)
        let (known, supersededByKnown) = try await read { db -> ([String: RevisionID], Set<String>) in
            guard let collectionID = try self.collectionID(collection, in: db, createIfMissing: false) else {
                return ([:], [])
            }
            let statement = try db.cachedStatement(
                sql: """
                    SELECT r.rev_id, d.sequence, d.winning_rev_id = r.rev_id
                    FROM remote_revisions r JOIN documents d ON d.id = r.doc_row
                    WHERE r.remote_id = ? AND d.collection_id = ? AND d.doc_id = ?
                    """)
            var known: [String: RevisionID] = [:]
            var currentSequenceOfKnown: [String: Int64] = [:]
            for docID in docIDs where known[docID] == nil {
                let row = try statement.directFirstRow(
                    [.integer(remote.rawValue), .integer(collectionID), .text(docID)]
                ) { row in (row.string(0), row.int64(1), row.int64(2)) }
                guard let (text, sequence, isCurrent) = row, let text else { continue }
                known[docID] = try RevisionID(stored: text, in: "remote_revisions")
                if isCurrent == 1 { currentSequenceOfKnown[docID] = sequence }
            }
            let superseded = Set(
                changes.filter { change in
                    currentSequenceOfKnown[change.docID].map { $0 > change.sequence } ?? false
                }.map(\.docID))
            return (known, superseded)
        }
        guard !known.isEmpty else { return (changes, known) }
        let toPush = changes.filter { change in
            known[change.docID] != change.revID && !supersededByKnown.contains(change.docID)
        }
        return (toPush, known)
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
