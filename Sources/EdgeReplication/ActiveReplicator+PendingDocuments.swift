import EdgeStore
import Foundation

extension ActiveReplicator {
    /// Documents changed locally after the push checkpoint, within the document-ID filter: what
    /// the next push will propose, like Couchbase Lite's `pendingDocumentIds`. Documents whose current revision
    /// was pulled from this upstream are left out, as the push leaves them out.
    package func pendingDocumentIDs() async throws -> Set<String> {
        let since = try await pushedSequence(for: "pendingDocumentIDs")
        return try await pendingDocuments(since: since, options: configuration.pushedChanges)
    }

    /// Whether `docID` has a local change the next push will propose (see `pendingDocumentIDs`).
    package func isDocumentPending(_ docID: String) async throws -> Bool {
        let since = try await pushedSequence(for: "isDocumentPending")
        if let filter = configuration.documentIDFilter, !filter.contains(docID) { return false }
        return try await !pendingDocuments(since: since, options: ChangesOptions(docIDs: [docID])).isEmpty
    }

    private func pendingDocuments(since: Int64, options: ChangesOptions) async throws -> Set<String> {
        let changes = try await database.changes(since: since, options: options)
        let remote = try await database.remoteDatabaseID(identifiedBy: configuration.remoteUUID)
        return Set(try await database.changesToPush(changes, to: remote).changes.map(\.docID))
    }

    /// The local sequence up to which everything was pushed: the running session's position, else
    /// the checkpoint this side saved last.
    private func pushedSequence(for operation: String) async throws -> Int64 {
        guard configuration.direction.pushes else {
            throw ActiveReplicatorError.notPushing(operation: operation)
        }
        if let activeSession {
            return Int64(clamping: await activeSession.checkpointer.current.local)
        }
        let saved = try await Checkpointer.savedLocalCopy(in: database, checkpointID: checkpointID(), logger: logger)
        return Int64(clamping: saved?.local ?? 0)
    }
}
