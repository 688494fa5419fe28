import EdgeStore
import Foundation

extension ActiveReplicator {
    /// Documents changed locally after the push checkpoint, within the document-ID filter: what
    /// the next push will propose, like Couchbase Lite's `pendingDocumentIds`.
    ///
    /// A document pulled from the upstream is listed too until a push has proposed it (the
    /// upstream then answers that it has it): this store does not record which peer a revision
    /// came from, which LiteCore uses to leave such documents out.
    public func pendingDocumentIDs() async throws -> Set<String> {
        let since = try await pushedSequence(for: "pendingDocumentIDs")
        let changes = try await database.changes(since: since, options: configuration.pushedChanges)
        return Set(changes.map(\.docID))
    }

    /// Whether `docID` has a local change the next push will propose (see `pendingDocumentIDs`).
    public func isDocumentPending(_ docID: String) async throws -> Bool {
        let since = try await pushedSequence(for: "isDocumentPending")
        if let filter = configuration.documentIDFilter, !filter.contains(docID) { return false }
        guard let document = try await database.document(docID) else { return false }
        return document.sequence > since
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
