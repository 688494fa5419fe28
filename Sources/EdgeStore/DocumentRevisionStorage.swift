import Foundation
import GRDB
import SyncIdentifiers
import VersionVectors

/// A document's row: where its current revision and latest sequence are kept.
struct DocumentRow: Sendable {
    let rowID: Int64
    let sequence: Int64
    let winningRevID: RevisionID
    let deleted: Bool
    let bodySize: Int
    /// The winning revision's current version; nil while it is a legacy revision.
    let version: Version?
}

/// A revision about to be added to a document's tree. Ancestors grafted from a history have no body.
struct PendingRevision {
    let node: RevisionNode
    let body: Data?
    let blobDigests: Set<String>
    let versioning: Versioning

    /// Where a new revision's hybrid logical vector comes from.
    enum Versioning {
        /// None: an ancestor grafted from a rev-tree history, known only by its revision ID.
        case legacy
        /// A CBMobile_4 peer wrote it: its vector, which keeps what the stored one knew beyond it.
        case received(HybridLogicalVector)
        /// Written here, by a rev-tree peer or the REST API: a new version of this node over the nearest
        /// ancestor's vector, once, when it is stored (Sync Gateway 4 does the same for its 3.x clients).
        case minted
    }
}

/// SQL access to documents and revision trees. Reads work in any transaction; the mutating
/// methods run inside one write transaction and allocate sequences for it.
struct DocumentRevisionStorage {
    let db: GRDB.Database
    let configuration: StoreConfiguration
    /// Seconds since 1970, one timestamp for the whole transaction.
    let now: Double
    /// The source of the versions minted here.
    let versionSource: SourceID
    private var lastSequence: Int64?
    private var clock: HybridLogicalClock?

    init(db: GRDB.Database, configuration: StoreConfiguration, versionSource: SourceID, now: Date = Date()) {
        self.db = db
        self.configuration = configuration
        self.versionSource = versionSource
        self.now = now.timeIntervalSince1970
    }

    // MARK: - Reading

    static func documentRow(_ db: GRDB.Database, collectionID: Int64, docID: String) throws
        -> DocumentRow?
    {
        let statement = try db.cachedStatement(
            sql: """
                SELECT id, sequence, winning_rev_id, deleted, body_size, version FROM documents
                WHERE collection_id = ? AND doc_id = ?
                """)
        return try statement.directFirstRow([.integer(collectionID), .text(docID)]) { row in
            DocumentRow(
                rowID: row.int64(0), sequence: row.int64(1),
                winningRevID: try RevisionID(stored: row.string(2), in: "documents"), deleted: row.bool(3),
                bodySize: Int(row.int64(4)), version: try row.string(5).map { try Version(stored: $0, in: "documents") }
            )
        }
    }

    /// A revision's vector; nil for a legacy revision or one not in the tree.
    static func vector(_ db: GRDB.Database, docRow: Int64, revID: RevisionID) throws -> HybridLogicalVector? {
        let statement = try db.cachedStatement(sql: "SELECT vector FROM revisions WHERE doc_row = ? AND rev_id = ?")
        let text = try statement.directFirstRow([.integer(docRow), .text(revID.description)]) { row in row.string(0) }
        return try (text ?? nil).map { try HybridLogicalVector(stored: $0, in: "revisions") }
    }

    static func tree(_ db: GRDB.Database, docRow: Int64) throws -> RevisionTree {
        let statement = try db.cachedStatement(
            sql: """
                SELECT rev_id, parent_rev_id, deleted, stored_at, body IS NOT NULL FROM revisions
                WHERE doc_row = ?
                """)
        var nodes: [RevisionNode] = []
        try statement.directRows([.integer(docRow)]) { row in
            nodes.append(
                RevisionNode(
                    revID: try RevisionID(stored: row.string(0), in: "revisions"),
                    parent: try row.string(1).map { try RevisionID(stored: $0, in: "revisions") },
                    deleted: row.bool(2), hasBody: row.bool(4), storedAt: row.double(3)))
        }
        return RevisionTree(nodes: nodes)
    }

    /// The stored body of a revision: `nil` if the revision is unknown, `.some(nil)` if its body was dropped.
    static func body(_ db: GRDB.Database, docRow: Int64, revID: RevisionID) throws -> Data?? {
        let statement = try db.cachedStatement(
            sql: "SELECT body FROM revisions WHERE doc_row = ? AND rev_id = ?")
        return try statement.directFirstRow([.integer(docRow), .text(revID.description)]) { row in row.data(0) }
    }

    // MARK: - Writing

    /// The next sequence of this database. Sequences only grow, across all collections, and are
    /// never reused, even after a purge, because the counter lives apart from the documents.
    mutating func nextSequence() throws -> Int64 {
        let next = try (lastSequence ?? DocumentDatabase.readLastSequence(db)) + 1
        lastSequence = next
        return next
    }

    /// Persists the sequence counter and the clock; call once before the transaction commits.
    func finish() throws {
        if let lastSequence { try DocumentDatabase.writeLastSequence(db, lastSequence) }
        if let clock { try DocumentDatabase.writeClock(db, clock) }
    }

    /// A new version of this node, later than every version issued or received before.
    private mutating func nextVersion() throws -> Version {
        var clock = try self.clock ?? DocumentDatabase.readClock(db)
        let timestamp = clock.next(wallClockNanoseconds: UInt64(max(0, now) * 1e9))
        self.clock = clock
        return Version(timestamp: timestamp, source: versionSource)
    }

    /// Takes in a received vector's times, so that a version minted later here is newer than all of them.
    private mutating func observe(_ vector: HybridLogicalVector) throws {
        var clock = try self.clock ?? DocumentDatabase.readClock(db)
        for version in vector.versions { clock.observe(version.timestamp) }
        self.clock = clock
    }

    /// The vectors of the revisions being added: received ones joined with what the nearest stored vector knew,
    /// minted ones written over it, each with its old previous versions pruned. `tree` already holds them.
    private mutating func vectors(
        of newRevisions: [PendingRevision], tree: RevisionTree, docRow: Int64?
    ) throws -> [RevisionID: HybridLogicalVector] {
        var vectors: [RevisionID: HybridLogicalVector] = [:]
        let pruneBefore = UInt64(max(0, now - configuration.previousVersionRetention.timeInterval) * 1e9)
        // Ancestors first: a new revision's parent may itself be new.
        for revision in newRevisions.reversed() {
            let parent = revision.node.parent
            let vector: HybridLogicalVector
            switch revision.versioning {
            case .legacy:
                continue
            case .received(let received):
                try observe(received)
                let inherited = try nearestVector(from: parent, tree: tree, known: vectors, docRow: docRow)
                vector = inherited?.accepting(received) ?? received
            case .minted:
                let version = try nextVersion()
                if let inherited = try nearestVector(from: parent, tree: tree, known: vectors, docRow: docRow) {
                    vector = inherited.adding(version)
                } else {
                    vector = HybridLogicalVector(first: version, after: parent)
                }
            }
            vectors[revision.node.revID] = vector.pruningPreviousVersions(olderThan: pruneBefore)
        }
        return vectors
    }

    /// The vector of `revID` or of its nearest ancestor that has one.
    private func nearestVector(
        from revID: RevisionID?, tree: RevisionTree, known: [RevisionID: HybridLogicalVector], docRow: Int64?
    ) throws -> HybridLogicalVector? {
        var cursor = revID
        while let current = cursor {
            if let vector = known[current] { return vector }
            if let docRow, let vector = try Self.vector(db, docRow: docRow, revID: current) { return vector }
            cursor = tree[current]?.parent
        }
        return nil
    }

    /// Adds revisions to a document's tree, prunes it, applies body retention, and updates the
    /// document row with the new winner and a new sequence, which it returns.
    mutating func store(
        docID: String, collectionID: Int64, existing: DocumentRow?, tree: RevisionTree,
        adding newRevisions: [PendingRevision]
    ) throws -> Int64 {
        var tree = tree
        var pendingByID: [RevisionID: PendingRevision] = [:]
        for revision in newRevisions {
            tree.insert(revision.node)
            pendingByID[revision.node.revID] = revision
        }
        let pruning = tree.prune(maxDepth: configuration.maxRevisionTreeDepth)
        let droppedBodies = tree.bodiesToDrop(retention: configuration.bodyRetention, now: now)
        for revID in droppedBodies { tree.dropBody(of: revID) }
        guard let winner = tree.winner else {
            throw StoreError.corruptDatabase(
                path: "revisions", reason: "document '\(docID)' has no leaf revision")
        }

        let sequence = try nextSequence()
        let bodySize = try winnerBodySize(winner, pending: pendingByID, existing: existing)
        let vectors = try vectors(of: newRevisions, tree: tree, docRow: existing?.rowID)
        let winnerVersion = try winningVersion(winner, vectors: vectors, existing: existing)
        let docRow: Int64
        if let existing {
            docRow = existing.rowID
            try db.cachedStatement(
                sql: """
                    UPDATE documents SET sequence = ?, winning_rev_id = ?, deleted = ?, body_size = ?, version = ?
                    WHERE id = ?
                    """
            ).directExecute([
                .integer(sequence), .text(winner.revID.description), .bool(winner.deleted), .integer(Int64(bodySize)),
                .text(winnerVersion?.description), .integer(docRow),
            ])
        } else {
            try db.cachedStatement(
                sql: """
                    INSERT INTO documents (collection_id, doc_id, sequence, winning_rev_id, deleted, body_size, version)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """
            ).directExecute([
                .integer(collectionID), .text(docID), .integer(sequence), .text(winner.revID.description),
                .bool(winner.deleted), .integer(Int64(bodySize)), .text(winnerVersion?.description),
            ])
            docRow = db.lastInsertedRowID
        }

        let insertRevision = try db.cachedStatement(
            sql: """
                INSERT INTO revisions (doc_row, rev_id, parent_rev_id, deleted, stored_at, body, vector)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
        for revision in newRevisions {
            // Pruning may already have removed the oldest grafted ancestors, or re-rooted a survivor.
            guard let node = tree[revision.node.revID] else { continue }
            let body = node.hasBody ? revision.body : nil
            let vector = vectors[node.revID]
            try insertRevision.directExecute([
                .integer(docRow), .text(node.revID.description), .text(node.parent?.description), .bool(node.deleted),
                .real(now), .blob(body), .text(vector?.description),
            ])
            if body != nil {
                try insertBlobReferences(revision.blobDigests, docRow: docRow, revID: node.revID)
            }
        }
        for revID in pruning.removed where pendingByID[revID] == nil {
            try db.cachedStatement(sql: "DELETE FROM revisions WHERE doc_row = ? AND rev_id = ?")
                .execute(arguments: [docRow, revID.description])
            try deleteBlobReferences(docRow: docRow, revID: revID)
        }
        for revID in pruning.newRoots where pendingByID[revID] == nil {
            try db.cachedStatement(
                sql: "UPDATE revisions SET parent_rev_id = NULL WHERE doc_row = ? AND rev_id = ?"
            )
            .execute(arguments: [docRow, revID.description])
        }
        for revID in droppedBodies where pendingByID[revID] == nil {
            try db.cachedStatement(
                sql: "UPDATE revisions SET body = NULL WHERE doc_row = ? AND rev_id = ?"
            )
            .execute(arguments: [docRow, revID.description])
            try deleteBlobReferences(docRow: docRow, revID: revID)
        }
        return sequence
    }

    /// Drops bodies of one document's revisions that the retention policy no longer allows.
    /// Does not assign a new sequence: the document's current revision is unchanged.
    func applyBodyRetention(docRow: Int64) throws -> Int {
        var tree = try Self.tree(db, docRow: docRow)
        let dropped = tree.bodiesToDrop(retention: configuration.bodyRetention, now: now)
        for revID in dropped {
            tree.dropBody(of: revID)
            try db.cachedStatement(
                sql: "UPDATE revisions SET body = NULL WHERE doc_row = ? AND rev_id = ?"
            )
            .execute(arguments: [docRow, revID.description])
            try deleteBlobReferences(docRow: docRow, revID: revID)
        }
        return dropped.count
    }

    /// Removes a document, its whole tree and its blob references. The sequence counter is untouched.
    func purge(docRow: Int64) throws {
        try db.cachedStatement(sql: "DELETE FROM remote_revisions WHERE doc_row = ?").execute(
            arguments: [docRow])
        try db.cachedStatement(sql: "DELETE FROM revision_blobs WHERE doc_row = ?").execute(
            arguments: [docRow])
        try db.cachedStatement(sql: "DELETE FROM revisions WHERE doc_row = ?").execute(arguments: [
            docRow
        ])
        try db.cachedStatement(sql: "DELETE FROM documents WHERE id = ?").execute(arguments: [
            docRow
        ])
    }

    private func winningVersion(
        _ winner: RevisionNode, vectors: [RevisionID: HybridLogicalVector], existing: DocumentRow?
    ) throws -> Version? {
        if let vector = vectors[winner.revID] { return vector.current }
        guard let existing else { return nil }
        if existing.winningRevID == winner.revID { return existing.version }
        return try Self.vector(db, docRow: existing.rowID, revID: winner.revID)?.current
    }

    private func winnerBodySize(
        _ winner: RevisionNode, pending: [RevisionID: PendingRevision], existing: DocumentRow?
    ) throws -> Int {
        if let revision = pending[winner.revID] { return revision.body?.count ?? 0 }
        if let existing, existing.winningRevID == winner.revID { return existing.bodySize }
        guard let existing else { return 0 }
        let body = try Self.body(db, docRow: existing.rowID, revID: winner.revID)
        return (body ?? nil)?.count ?? 0
    }

    private func insertBlobReferences(_ digests: Set<String>, docRow: Int64, revID: RevisionID)
        throws
    {
        guard !digests.isEmpty else { return }
        let statement = try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO revision_blobs (doc_row, rev_id, digest) VALUES (?, ?, ?)")
        for digest in digests {
            try statement.directExecute([.integer(docRow), .text(revID.description), .text(digest)])
        }
    }

    func deleteBlobReferences(docRow: Int64, revID: RevisionID) throws {
        try db.cachedStatement(sql: "DELETE FROM revision_blobs WHERE doc_row = ? AND rev_id = ?")
            .execute(arguments: [docRow, revID.description])
    }
}
