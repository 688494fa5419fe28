import Foundation
import GRDB
import SyncIdentifiers

extension DocumentDatabase {
    /// Deletes blobs that no stored revision body references, and abandoned temporary files.
    ///
    /// Blobs written less than `gracePeriod` ago are kept: a replicator downloads a revision's
    /// blobs before it inserts the revision, so a fresh blob may be unreferenced for a moment.
    /// Runs inside a write transaction so no revision can start referencing a blob being deleted.
    /// Returns the number of blobs deleted.
    @discardableResult
    package func collectGarbageBlobs(gracePeriod: Duration = .seconds(3600)) async throws -> Int {
        let cutoff = Date(timeIntervalSinceNow: -gracePeriod.timeInterval)
        return try await write { db in
            let referenced = Set(
                try String.fetchAll(db, sql: "SELECT DISTINCT digest FROM revision_blobs"))
            var removed = 0
            for blob in try self.blobs.storedBlobs()
            where !referenced.contains(blob.digest.description) && blob.modified < cutoff {
                try self.blobs.remove(blob.digest)
                removed += 1
            }
            for url in self.blobs.abandonedTemporaryFiles(olderThan: cutoff) {
                try? FileManager.default.removeItem(at: url)
            }
            return removed
        }
    }

    /// Whether any stored revision body references the blob.
    package func isBlobReferenced(_ digest: BlobDigest) async throws -> Bool {
        try await read { db in
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM revision_blobs WHERE digest = ?)",
                arguments: [digest.description]) ?? false
        }
    }

    /// Drops non-leaf revision bodies that have outlived the body-retention policy's `maxAge` as of
    /// `date` (distance limits are applied on every write already). Returns the number dropped.
    @discardableResult
    package func dropExpiredRevisionBodies(asOf date: Date = Date()) async throws -> Int {
        guard let maxAge = configuration.bodyRetention.maxAge else { return 0 }
        let cutoff = date.timeIntervalSince1970 - maxAge.timeInterval
        return try await write { db in
            let storage = DocumentRevisionStorage(
                db: db, configuration: self.configuration, versionSource: self.versionSource, now: date)
            let docRows = try Int64.fetchAll(
                db,
                sql:
                    "SELECT DISTINCT doc_row FROM revisions WHERE body IS NOT NULL AND stored_at < ?",
                arguments: [cutoff])
            var dropped = 0
            for docRow in docRows { dropped += try storage.applyBodyRetention(docRow: docRow) }
            return dropped
        }
    }
}
