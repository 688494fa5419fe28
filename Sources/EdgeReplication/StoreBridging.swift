import EdgeStore
import Foundation
import ReplicationProtocol
import SyncJSON

extension StoreError {
    /// The `HTTP` error reply that reports this store failure to the peer.
    var errorReply: ErrorReply {
        .http(httpStatus, description)
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
    } catch {
        throw peerFacingError(error, countingFailuresIn: counters)
    }
}

/// What a store call's `error` reports to the peer, as `storeCall` does: a store failure as an `HTTP` error,
/// counted in `counters` when the store itself failed; any other error as it is.
func peerFacingError(_ error: any Error, countingFailuresIn counters: ReplicationCounters?) -> any Error {
    guard let error = error as? StoreError else { return error }
    let kind = ReplicationErrorKind(storeError: error)
    if kind == .storage || kind == .diskFull { counters?.countError(kind) }
    return error.errorReply.blipError
}
