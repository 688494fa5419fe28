extension StoreError {
    /// The HTTP status that reports this failure to a peer, the one mapping that both the replication protocol
    /// (`HTTP` error replies) and the REST API answer with.
    package var httpStatus: Int {
        switch self {
        case .invalidDocumentID, .invalidRevisionID, .invalidRevisionHistory, .invalidJSON, .blobDigestMismatch,
            .invalidConflictResolution:
            400
        case .invalidDatabaseName, .databaseNotFound, .collectionNotFound, .documentNotFound, .revisionNotFound,
            .blobNotFound:
            // A name that breaks the rules names no database, as Sync Gateway answers it.
            404
        case .conflict, .localRevisionMismatch:
            409
        case .cancelled, .diskFull:
            // Transient for Couchbase Lite (408, 429, 502, 503, 504) and for REST clients: a retry may succeed
            // once space is freed or the gateway is no longer stopping.
            503
        case .blobWriterClosed, .corruptDatabase, .io, .sqlite:
            500
        }
    }
}
