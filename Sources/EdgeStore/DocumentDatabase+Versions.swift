import Foundation
import GRDB
import SyncIdentifiers
import SyncJSON
import VersionVectors

/// A revision a CBMobile_4 peer sends: known by its vector, not by a rev-tree ID.
package struct VersionedRevision: Sendable {
    package var docID: String
    package var vector: HybridLogicalVector
    package var deleted: Bool
    /// The JSON body (`{}` for a plain tombstone).
    package var body: Data
    /// The receiver's scan of exactly `body`, when it made one.
    package var bodyScan: JSONBodyScan?

    package init(
        docID: String, vector: HybridLogicalVector, deleted: Bool = false, body: Data, bodyScan: JSONBodyScan? = nil
    ) {
        self.docID = docID
        self.vector = vector
        self.deleted = deleted
        self.body = body
        self.bodyScan = bodyScan
    }
}

/// A `proposeChanges` row of a CBMobile_4 peer: the document's whole vector there.
package struct ProposedVersion: Sendable {
    package var docID: String
    package var vector: HybridLogicalVector

    package init(docID: String, vector: HybridLogicalVector) {
        self.docID = docID
        self.vector = vector
    }
}

/// The verdict on a `ProposedVersion`, as Sync Gateway's `CheckProposedVersion` gives it.
package enum ProposedVersionStatus: Sendable, Equatable {
    /// Send it (status 0): the document is new here, or the proposal has seen its current revision.
    case accept
    /// This database has that version or a newer one (status 304).
    case alreadyHave
    /// Neither has seen the other's current version (status 409); `current` is this database's current version,
    /// or its revision ID while that revision is legacy.
    case conflict(current: String)
    /// The row itself is unacceptable (for instance an invalid document ID).
    case invalid(StoreError)
}

/// A document's current revision as a CBMobile_4 peer sees it.
package enum CurrentVersioning: Sendable, Equatable {
    case absent
    /// Written before the document had a vector: known by its rev-tree ID.
    case legacy(RevisionID)
    case vector(HybridLogicalVector)
}

/// How a received vector relates to a document's current revision.
enum VersionedDescent {
    /// Store it as a child of this revision (nil: the document is new here).
    case extends(RevisionID?)
    /// This database has it already, or something newer.
    case known
    /// Concurrent with the current revision, whose version (or legacy revision ID) this is.
    case conflicts(current: String)
}

extension DocumentDatabase {
    /// Decides CBMobile_4 `proposeChanges` rows by comparing vectors.
    package func checkProposedVersions(
        _ proposals: [ProposedVersion], in collection: CollectionName = .default
    ) async throws -> [ProposedVersionStatus] {
        try await read { db in
            let collectionID = try self.collectionID(collection, in: db, createIfMissing: false)
            return try proposals.map { proposal in
                do throws(StoreError) {
                    try DocumentID.validate(proposal.docID)
                } catch {
                    return .invalid(error)
                }
                let existing = try collectionID.flatMap {
                    try DocumentRevisionStorage.documentRow(db, collectionID: $0, docID: proposal.docID)
                }
                switch try Self.descent(of: proposal.vector, onto: existing, in: db) {
                case .extends: return .accept
                case .known: return .alreadyHave
                case .conflicts(let current): return .conflict(current: current)
                }
            }
        }
    }

    /// Stores revisions received from a CBMobile_4 peer, in one transaction. Each one that descends from its
    /// document's current revision becomes that revision's child in the rev tree, under a minted revision ID
    /// (generation + 1, a digest of its body), so that rev-tree peers get it too; its vector is kept beside it.
    /// One already known changes nothing; a concurrent one is refused as a conflict, since the peer resolves
    /// conflicts before it pushes (`noconflicts`). `RevisionInserter` stores them the same way, several callers'
    /// per transaction.
    package func insertVersionedRevisions(
        _ revisions: [VersionedRevision], in collection: CollectionName = .default
    ) async throws -> [ExistingRevisionResult] {
        try await insertPreparedRevisions(revisions.map(Self.prepare), in: collection, resolvingConflictsWith: nil)
    }

    /// Validation, the clock check and the body scan of a versioned revision, before and outside the transaction.
    static func prepare(_ revision: VersionedRevision) -> PreparedRevision {
        do throws(StoreError) {
            try DocumentID.validate(revision.docID)
            try refuseFarFuture(revision, now: Date())
            return .success(
                .versioned(revision, blobDigests: try blobDigests(of: revision.body, scanned: revision.bodyScan)))
        } catch {
            return .failure(error)
        }
    }

    /// Stores one prepared versioned revision inside the writer's transaction (see `insertVersionedRevisions`).
    /// Returns the outcome and the rev-tree ID the revision is stored under (nil when nothing was stored), which
    /// the sender is then known to have.
    ///
    /// A concurrent revision is refused without a `resolver`. With one (a puller's), it is stored as the child of
    /// the current revision, its vector joined with what the current one knew, so that it covers both; when the
    /// resolver keeps the local side (or a merge), that body is stored on top as a new version of this node. The
    /// outcome descends from the peer's version either way, so it goes back to the peer without a conflict.
    static func insertVersioned(
        _ revision: VersionedRevision, blobDigests digests: Set<String>, collectionID: Int64,
        resolver: ConflictResolving? = nil, storage: inout DocumentRevisionStorage, in db: GRDB.Database
    ) throws -> (ExistingRevisionResult, stored: RevisionID?) {
        let existing = try DocumentRevisionStorage.documentRow(db, collectionID: collectionID, docID: revision.docID)
        let parent: RevisionID?
        var local: ConflictingRevision?
        switch try descent(of: revision.vector, onto: existing, in: db) {
        case .known:
            return (.alreadyPresent, nil)
        case .conflicts(let current):
            guard resolver != nil, let existing else {
                return (.failed(.conflict(docID: revision.docID, currentRevID: current)), nil)
            }
            parent = existing.winningRevID
            // The local side, read before the pulled revision becomes current.
            let localBody = try DocumentRevisionStorage.body(db, docRow: existing.rowID, revID: existing.winningRevID)
            local = ConflictingRevision(
                revID: existing.winningRevID, deleted: existing.deleted, body: (localBody ?? nil) ?? Data("{}".utf8),
                vector: try DocumentRevisionStorage.vector(db, docRow: existing.rowID, revID: existing.winningRevID))
        case .extends(let extended):
            parent = extended
        }
        guard (parent?.generation ?? 0) < UInt32.max - 1 else {
            return (.failed(.invalidRevisionHistory(docID: revision.docID, reason: "generation limit reached")), nil)
        }
        var minted = ExistingRevision(
            docID: revision.docID,
            revID: RevisionID.minted(parent: parent, deleted: revision.deleted, canonicalBody: revision.body),
            history: parent.map { [$0] } ?? [], deleted: revision.deleted, body: revision.body, noConflicts: true)
        minted.vector = revision.vector
        let result = try insert(
            minted, blobDigests: digests, collectionID: collectionID, resolver: nil, storage: &storage)
        guard case .inserted(let sequence) = result else { return (result, nil) }
        guard let local, let resolver else { return (result, minted.revID) }
        let conflict = RevisionConflict(
            docID: revision.docID, local: local,
            remote: ConflictingRevision(
                revID: minted.revID, deleted: revision.deleted, body: revision.body, vector: revision.vector))
        guard let kept = DocumentRevisionStorage.ResolvedBody(resolver(conflict), of: conflict) else {
            return (.resolvedConflict(sequence: sequence, resolvedRevID: minted.revID), minted.revID)
        }
        let saved = try storage.saveResolution(
            kept, docID: revision.docID, collectionID: collectionID, on: minted.revID)
        return (.resolvedConflict(sequence: saved.sequence, resolvedRevID: saved.revID), minted.revID)
    }

    /// What this database has of each document, as a CBMobile_4 puller weighs a `changes` row: nothing, a current
    /// revision without a vector (legacy), or the current revision's vector. One read for a whole batch.
    package func currentVersioning(
        of docIDs: [String], in collection: CollectionName = .default
    ) async throws -> [CurrentVersioning] {
        guard !docIDs.isEmpty else { return [] }
        return try await read { db in
            guard let collectionID = try self.collectionID(collection, in: db, createIfMissing: false) else {
                return docIDs.map { _ in .absent }
            }
            return try docIDs.map { docID in
                guard let row = try DocumentRevisionStorage.documentRow(db, collectionID: collectionID, docID: docID)
                else { return .absent }
                guard row.version != nil,
                    let vector = try DocumentRevisionStorage.vector(db, docRow: row.rowID, revID: row.winningRevID)
                else { return .legacy(row.winningRevID) }
                return .vector(vector)
            }
        }
    }

    /// The vectors of these revisions, nil where a revision is legacy or gone: what a CBMobile_4 pusher proposes.
    /// One read for a whole batch.
    package func vectors(
        of revisions: [(docID: String, revID: RevisionID)], in collection: CollectionName = .default
    ) async throws -> [HybridLogicalVector?] {
        guard !revisions.isEmpty else { return [] }
        return try await read { db in
            guard let collectionID = try self.collectionID(collection, in: db, createIfMissing: false) else {
                return revisions.map { _ in nil }
            }
            // One statement per revision, not one for the document and one for its revision.
            let statement = try db.cachedStatement(
                sql: """
                    SELECT r.vector FROM documents d JOIN revisions r ON r.doc_row = d.id AND r.rev_id = ?
                    WHERE d.collection_id = ? AND d.doc_id = ?
                    """)
            return try revisions.map { docID, revID in
                let text = try statement.directFirstRow(
                    [.text(revID.description), .integer(collectionID), .text(docID)]
                ) { row in row.string(0) }
                return try (text ?? nil).map { try HybridLogicalVector(stored: $0, in: "revisions") }
            }
        }
    }

    /// For each document and version, the revision whose current version it is, when that revision is still stored
    /// with its body: the revisions CBMobile_4 pullers name as the ones they have, as delta bases. One read for a
    /// whole window of them.
    package func revisionIDs(
        currentVersions lookups: [(docID: String, version: Version)], in collection: CollectionName = .default
    ) async throws -> [RevisionID?] {
        guard !lookups.isEmpty else { return [] }
        return try await read { db in
            guard let collectionID = try self.collectionID(collection, in: db, createIfMissing: false) else {
                return lookups.map { _ in nil }
            }
            let statement = try db.cachedStatement(
                sql:
                    "SELECT rev_id, vector FROM revisions WHERE doc_row = ? AND body IS NOT NULL AND vector IS NOT NULL"
            )
            return try lookups.map { docID, version in
                guard
                    let document = try DocumentRevisionStorage.documentRow(db, collectionID: collectionID, docID: docID)
                else { return nil }
                var found: RevisionID?
                try statement.directRows([.integer(document.rowID)]) { row in
                    guard found == nil, let revID = row.string(0), let text = row.string(1),
                        try HybridLogicalVector(stored: text, in: "revisions").current == version
                    else { return }
                    found = try RevisionID(stored: revID, in: "revisions")
                }
                return found
            }
        }
    }

    /// How far ahead of this node's wall clock a received version may be. The clock moves past every version it
    /// takes in, so one from the far future (a peer's clock set wrong, or a hostile one) would stamp every later
    /// write here with that time and leave the counter no room; LiteCore's hybrid clock refuses such times too
    /// (`HybridClock::seenTime`).
    static let maximumClockSkew: TimeInterval = 3_600

    static func refuseFarFuture(_ revision: VersionedRevision, now: Date) throws(StoreError) {
        let limit = UInt64(max(0, now.timeIntervalSince1970 + maximumClockSkew) * 1e9)
        if let version = revision.vector.versions.first(where: { $0.timestamp > limit }) {
            throw .invalidRevisionHistory(
                docID: revision.docID,
                reason: "version \(version) is more than an hour ahead of this node's clock")
        }
    }

    /// Where `vector` stands against the document's current revision: by vector comparison when that revision has
    /// one; by its legacy revisions when the current revision is legacy, which it descends from only if the
    /// sender saw that revision (the vector's legacy part names it).
    static func descent(of vector: HybridLogicalVector, onto existing: DocumentRow?, in db: GRDB.Database) throws
        -> VersionedDescent
    {
        guard let existing else { return .extends(nil) }
        // The row's version says whether the current revision has a vector at all; only then is it read.
        guard existing.version != nil,
            let current = try DocumentRevisionStorage.vector(db, docRow: existing.rowID, revID: existing.winningRevID)
        else {
            if vector.legacy.contains(existing.winningRevID) { return .extends(existing.winningRevID) }
            return .conflicts(current: existing.winningRevID.description)
        }
        switch vector.compare(to: current) {
        case .same, .older: return .known
        case .newer: return .extends(existing.winningRevID)
        case .conflicting: return .conflicts(current: current.current.description)
        }
    }
}
