import Foundation
import GRDB
import SyncIdentifiers
import VersionVectors

/// One row of a changes feed: a document's latest change.
public struct Change: Sendable, Equatable {
    package let sequence: Int64
    package let docID: String
    /// The document's winning revision at that sequence.
    package let revID: RevisionID
    package let deleted: Bool
    /// Size in bytes of the winning revision's JSON body.
    package let bodySize: Int
    /// The winning revision's current version; nil while it is a legacy revision (CBMobile_4 peers then get
    /// `revID`, as LiteCore and Sync Gateway 4 send a legacy revision).
    package let version: Version?
}

/// Filters of a changes query.
public struct ChangesOptions: Sendable {
    /// Skip documents whose current revision is a tombstone.
    package var activeOnly: Bool
    /// Only report these documents (`nil` = all).
    package var docIDs: Set<String>?

    public init(activeOnly: Bool = false, docIDs: Set<String>? = nil) {
        self.activeOnly = activeOnly
        self.docIDs = docIDs
    }
}

extension DocumentDatabase {
    /// Changes of a collection after `sequence`, oldest first, at most `limit` rows. A document
    /// appears once, at the sequence of its latest change.
    public func changes(
        in collection: CollectionName = .default, since sequence: Int64, limit: Int = .max,
        options: ChangesOptions = .init()
    ) async throws -> [Change] {
        try await read { db in
            guard
                let collectionID = try self.collectionID(collection, in: db, createIfMissing: false)
            else {
                throw StoreError.collectionNotFound(collection.description)
            }
            return try Self.changes(
                db, collectionID: collectionID, since: sequence, limit: limit, options: options)
        }
    }

    /// A continuous feed of a collection's changes after `sequence`: each element is a non-empty
    /// batch of at most `batchSize` changes, oldest first. When caught up, iteration suspends until
    /// a write commits (no polling). Iteration ends when the consuming task is cancelled.
    package func changeFeed(
        in collection: CollectionName = .default, since sequence: Int64, batchSize: Int = 200,
        options: ChangesOptions = .init()
    ) -> ChangeFeed {
        ChangeFeed(
            database: self, collection: collection, since: sequence, batchSize: batchSize,
            options: options)
    }

    /// `changes(in:since:limit:options:)`, done once for all the feeds that observed the same commit and ask
    /// for the same range: after a write, every caught-up feed asks for the changes after the same sequence.
    /// Feeds filtered by document IDs read on their own.
    func sharedChanges(
        in collection: CollectionName, since sequence: Int64, limit: Int, options: ChangesOptions,
        observedGeneration: UInt64
    ) async throws -> [Change] {
        guard options.docIDs == nil else {
            return try await changes(in: collection, since: sequence, limit: limit, options: options)
        }
        let key = SharedChangesRead(
            collection: collection, since: sequence, limit: limit, activeOnly: options.activeOnly)
        return try await sharedChangesReads.value(of: key, observedGeneration: observedGeneration) {
            try await self.changes(in: collection, since: sequence, limit: limit, options: options)
        }
    }

    static func changes(
        _ db: GRDB.Database, collectionID: Int64, since sequence: Int64, limit: Int,
        options: ChangesOptions
    ) throws -> [Change] {
        var sql = """
            SELECT sequence, doc_id, winning_rev_id, deleted, body_size, version FROM documents
            WHERE collection_id = ? AND sequence > ?
            """
        var arguments: [DirectArgument] = [.integer(collectionID), .integer(sequence)]
        if options.activeOnly { sql += " AND deleted = 0" }
        if let docIDs = options.docIDs {
            guard !docIDs.isEmpty else { return [] }
            sql += " AND doc_id IN (\(docIDs.map { _ in "?" }.joined(separator: ",")))"
            arguments += docIDs.map { .text($0) }
        }
        sql += " ORDER BY sequence LIMIT ?"
        arguments.append(.integer(Int64(clamping: limit)))
        // Feeds run this after every commit: without document IDs it has two shapes, kept compiled. Read straight
        // from SQLite: through GRDB's `Row`, whose decoding is generic and not specialised here, each change cost
        // about 12,000 instructions.
        let statement = options.docIDs == nil ? try db.cachedStatement(sql: sql) : try db.makeStatement(sql: sql)
        var changes: [Change] = []
        try statement.directRows(arguments) { row in
            guard let docID = row.string(1) else {
                throw StoreError.corruptDatabase(path: "documents", reason: "a stored document ID is NULL")
            }
            changes.append(
                Change(
                    sequence: row.int64(0), docID: docID,
                    revID: try RevisionID(stored: row.string(2), in: "documents"),
                    deleted: row.bool(3), bodySize: Int(row.int64(4)),
                    version: try row.string(5).map { try Version(stored: $0, in: "documents") }))
        }
        return changes
    }
}

/// What identifies a changes query that feeds share.
struct SharedChangesRead: Hashable, Sendable {
    var collection: CollectionName
    var since: Int64
    var limit: Int
    var activeOnly: Bool
}

/// An endless sequence of change batches that wakes up when the database commits.
///
/// Every change is delivered exactly once and in sequence order, including changes committed
/// while the consumer was busy with an earlier batch: the feed resumes from the last sequence it
/// delivered, and commits are serialized, so a snapshot never shows a later commit without the
/// earlier ones.
package struct ChangeFeed: AsyncSequence, Sendable {
    package typealias Element = [Change]

    let database: DocumentDatabase
    let collection: CollectionName
    let since: Int64
    let batchSize: Int
    let options: ChangesOptions

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(feed: self, lastSequence: since)
    }

    package struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        let feed: ChangeFeed
        /// The last sequence delivered (or the starting point).
        package private(set) var lastSequence: Int64
        /// The commit generation seen before the last look at the database.
        private var observedCommits: UInt64 = 0
        /// Whether the last look came back short of `batchSize`, so saw the feed's end: until something commits
        /// after `observedCommits`, another look can only find nothing.
        private var lastLookReachedEnd = false

        init(feed: ChangeFeed, lastSequence: Int64) {
            self.feed = feed
            self.lastSequence = lastSequence
        }

        /// The next non-empty batch; `nil` once the task is cancelled.
        package mutating func next() async throws -> [Change]? {
            while !Task.isCancelled {
                do {
                    if let batch = try await nextCommitted() { return batch }
                } catch StoreError.cancelled {
                    return nil
                }
                await waitForCommit()
            }
            return nil
        }

        /// The next batch already committed, or `nil` when the feed has caught up. A consumer that must
        /// know when it has caught up (to report itself idle) calls this, then `waitForCommit()`.
        ///
        /// A feed that has just been given a short batch is caught up unless something committed since it looked:
        /// then it answers `nil` without another query. A fan-out of one write to a thousand caught-up feeds would
        /// otherwise cost each of them a second look, only to find nothing.
        package mutating func nextCommitted() async throws -> [Change]? {
            let generation = feed.database.commits.generation
            if lastLookReachedEnd && generation == observedCommits { return nil }
            observedCommits = generation
            let batch = try await feed.database.sharedChanges(
                in: feed.collection, since: lastSequence, limit: feed.batchSize, options: feed.options,
                observedGeneration: observedCommits)
            lastLookReachedEnd = batch.count < feed.batchSize
            guard let last = batch.last else { return nil }
            lastSequence = last.sequence
            return batch
        }

        /// Returns once a write committed after the last `nextCommitted()` looked, so no commit in between
        /// is missed, or as soon as the task is cancelled.
        package func waitForCommit() async {
            await feed.database.commits.waitForCommit(after: observedCommits)
        }

        /// Calls `wake` once a write committed after the last `nextCommitted()` looked, without a task waiting
        /// for it: at once if one already has, otherwise on the committing thread, so `wake` should only start
        /// work elsewhere. Returns the wake-up, to cancel, or `nil` when `wake` has already run.
        package func onCommit(_ wake: @escaping @Sendable () -> Void) -> CommitWake? {
            let notifier = feed.database.commits
            return notifier.onCommit(after: observedCommits, wake).map { CommitWake(notifier: notifier, waiterID: $0) }
        }
    }
}

/// A wake-up a change feed arranged for its next commit (`ChangeFeed.AsyncIterator.onCommit`).
package struct CommitWake: Sendable {
    let notifier: CommitNotifier
    let waiterID: UInt64

    /// Forgets the wake-up if it has not happened; it never will.
    package func cancel() {
        notifier.cancelWaiter(waiterID)
    }
}
