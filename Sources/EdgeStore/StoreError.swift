import SyncIdentifiers

/// Every failure the document store reports.
public enum StoreError: Error, Equatable, Sendable {
    /// A database name does not follow the naming rules.
    case invalidDatabaseName(String, reason: String)
    /// A document ID does not follow Couchbase Lite's rules.
    case invalidDocumentID(String, reason: String)
    /// An entry of a `_revisions` history does not make a valid revision ID.
    case invalidRevisionID(InvalidRevisionID)
    /// A revision history is not a chain of generations descending by one.
    case invalidRevisionHistory(docID: String, reason: String)
    /// A document body is not a JSON object.
    case invalidJSON(reason: String)
    /// The write would create a conflicting branch, or its parent is not a current leaf.
    case conflict(docID: String, currentRevID: String?)
    /// A conflict resolution names revisions that cannot be resolved against each other.
    case invalidConflictResolution(docID: String, reason: String)
    /// The database does not exist.
    case databaseNotFound(String)
    /// The collection does not exist.
    case collectionNotFound(String)
    /// The document does not exist (or was purged).
    case documentNotFound(docID: String)
    /// The document exists but not the requested revision.
    case revisionNotFound(docID: String, revID: String)
    /// A local document's compare-and-swap revision did not match.
    case localRevisionMismatch(docID: String, expected: String?, actual: String?)
    /// Blob content does not hash to the digest it was announced with; nothing was stored.
    case blobDigestMismatch(expected: String, actual: String)
    /// No blob with this digest is stored.
    case blobNotFound(digest: String)
    /// A blob writer was used after it was finished or cancelled.
    case blobWriterClosed
    /// The database file is damaged or not a database.
    case corruptDatabase(path: String, reason: String)
    /// A file-system operation failed.
    case io(path: String, reason: String)
    /// The file system has no space left for a write; nothing of the refused write was kept.
    case diskFull(path: String)
    /// SQLite reported an error the store does not classify further.
    case sqlite(code: Int32, message: String)
    /// The calling task was cancelled before the operation ran.
    case cancelled
}

extension StoreError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidDatabaseName(let name, let reason):
            return "invalid database name '\(name)': \(reason)"
        case .invalidDocumentID(let docID, let reason):
            return "invalid document ID '\(docID)': \(reason)"
        case .invalidRevisionID(let error):
            return error.description
        case .invalidRevisionHistory(let docID, let reason):
            return "invalid revision history for document '\(docID)': \(reason)"
        case .invalidJSON(let reason):
            return "invalid document body: \(reason)"
        case .conflict(let docID, let currentRevID):
            return "conflict on document '\(docID)' (current revision: \(currentRevID ?? "none"))"
        case .invalidConflictResolution(let docID, let reason):
            return "cannot resolve the conflict of document '\(docID)': \(reason)"
        case .databaseNotFound(let name):
            return "database '\(name)' does not exist"
        case .collectionNotFound(let name):
            return "collection '\(name)' does not exist"
        case .documentNotFound(let docID):
            return "document '\(docID)' not found"
        case .revisionNotFound(let docID, let revID):
            return "revision '\(revID)' of document '\(docID)' not found"
        case .localRevisionMismatch(let docID, let expected, let actual):
            return
                "local document '\(docID)': expected revision \(expected ?? "none"), found \(actual ?? "none")"
        case .blobDigestMismatch(let expected, let actual):
            return "blob content digest \(actual) does not match expected \(expected)"
        case .blobNotFound(let digest):
            return "blob \(digest) not found"
        case .blobWriterClosed:
            return "blob writer already finished or cancelled"
        case .corruptDatabase(let path, let reason):
            return "database file \(path) is corrupt: \(reason)"
        case .io(let path, let reason):
            return "I/O error on \(path): \(reason)"
        case .diskFull(let path):
            return "disk full: no space left to write \(path)"
        case .sqlite(let code, let message):
            return "SQLite error \(code): \(message)"
        case .cancelled:
            return "operation cancelled"
        }
    }
}
