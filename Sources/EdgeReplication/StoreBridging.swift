import EdgeStore
import Foundation
import ReplicationProtocol

extension StoreError {
    /// The `HTTP` error reply that reports this store failure to the peer.
    var errorReply: ErrorReply {
        switch self {
        case .conflict:
            .http(409, description)
        case .invalidDocumentID, .invalidRevisionID, .invalidRevisionHistory, .invalidJSON, .blobDigestMismatch,
            .invalidConflictResolution:
            .http(400, description)
        case .collectionNotFound, .documentNotFound, .revisionNotFound, .blobNotFound, .databaseNotFound:
            .http(404, description)
        case .localRevisionMismatch:
            .http(409, description)
        case .cancelled:
            .http(503, description)
        case .diskFull:
            // Transient for Couchbase Lite (408, 429, 502, 503, 504): it retries once space may have been freed.
            .http(503, description)
        case .invalidDatabaseName, .blobWriterClosed, .corruptDatabase, .io, .sqlite:
            .http(500, description)
        }
    }
}

extension JSONObject {
    /// The object as compact JSON bytes, the form the store keeps.
    var jsonData: Data {
        Data(JSONValue.object(self).serialized)
    }
}

/// Runs a store call for a peer's request, reporting store failures to the peer as `HTTP` errors; with
/// `counters`, failures of the store itself (storage, a full disk) are counted there by kind first.
nonisolated(nonsending) func storeCall<Result>(
    countingFailuresIn counters: ReplicationCounters? = nil, _ body: () async throws -> Result
) async throws -> Result {
    do {
        return try await body()
    } catch let error as StoreError {
        let kind = ReplicationErrorKind(storeError: error)
        if kind == .storage || kind == .diskFull { counters?.countError(kind) }
        throw error.errorReply.blipError
    }
}
