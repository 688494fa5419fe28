import BLIPCodec
import BLIPConnection
import EdgeStore
import ReplicationProtocol
import UpstreamDialer

/// What went wrong in replication, for `ReplicationCounters` and the `kind` label of the metrics' error counts.
/// Each kind is counted where that failure happens, once per failure.
package enum ReplicationErrorKind: String, CaseIterable, Sendable {
    /// Credentials or certificates refused: a listener refusing an upgrade's credentials (401), an upstream
    /// answering 401 or 403, an upstream certificate not trusted or a TLS handshake that failed.
    case auth
    /// A peer broke the replication protocol: undecodable frames or messages, replies that make no sense.
    case `protocol`
    /// The peer answered one of this side's requests with an error status.
    case peerRefused = "peer_refused"
    /// The local store failed to read or write (SQLite, I/O, a corrupt file).
    case storage
    /// The local store refused a write because its disk is full.
    case diskFull = "disk_full"
    /// The connection could not be made, dropped, or timed out.
    case network
    /// A revision conflicted with the receiver's current one (also `conflicts`).
    case conflict
    /// A revision offered by its sender and then reported unavailable (`norev`, or a `rev` with an error).
    case missingRevision = "missing_revision"
    /// A revision the receiver refused for another reason than a conflict (also `revisions_rejected`).
    case rejectedRevision = "rejected_revision"
    /// A failure none of the above describes.
    case other

    /// The kind of an error that stopped an upstream's run or a listener's connection, or failed a store call.
    package init(classifying error: any Error) {
        switch error {
        case let error as StoreError:
            self.init(storeError: error)
        case let error as UpstreamDialError:
            switch error {
            case .serverCertificateRejected, .tlsHandshakeFailed: self = .auth
            case .upgradeRefused(_, let status, _, _, _) where status == 401 || status == 403: self = .auth
            case .unreachable, .handshakeIncomplete, .upgradeRefused: self = .network
            case .invalidURL, .subprotocolRejected: self = .protocol
            }
        case let error as ActiveReplicatorError:
            switch error {
            case .connectionLost: self = .network
            case .invalidReply, .invalidRemoteURL, .collectionNotFound, .notPushing, .incompatibleProtocol:
                self = .protocol
            case .peerRefused(_, _, let code, _) where code == 401 || code == 403: self = .auth
            case .peerRefused: self = .peerRefused
            case .storeFailed: self = .storage
            }
        case let error as BLIPConnectionError:
            switch error {
            case .protocolViolation, .textMessageReceived, .unexpectedWebSocketFrame: self = .protocol
            case .closedByPeer, .closedLocally, .writeFailed: self = .network
            case .alreadyStarted, .encodingFailed: self = .other
            }
        case is ProtocolError, is BLIPProtocolError:
            self = .protocol
        case is BLIPErrorReply:
            self = .peerRefused
        default:
            self = .other
        }
    }

    init(storeError: StoreError) {
        switch storeError {
        case .diskFull: self = .diskFull
        case .conflict, .localRevisionMismatch: self = .conflict
        case .blobWriterClosed, .corruptDatabase, .io, .sqlite: self = .storage
        // A store call cut short by shutdown, or a database name the configuration let through: not the disk's doing.
        case .cancelled, .invalidDatabaseName: self = .other
        case .invalidDocumentID, .invalidRevisionID, .invalidRevisionHistory, .invalidJSON, .blobDigestMismatch,
            .invalidConflictResolution, .collectionNotFound, .documentNotFound, .revisionNotFound, .blobNotFound,
            .databaseNotFound:
            self = .rejectedRevision
        }
    }
}
