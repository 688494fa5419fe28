import EdgeStore
import Foundation
import ReplicationProtocol
import SyncJSON

extension ActiveReplicator {
    /// How a pulled revision that conflicts with the local current revision is resolved. Whatever
    /// the policy, the outcome is saved on top of the pulled revision and the local branch is
    /// removed (see `DocumentDatabase.resolveConflict`), so the next push sends it without a
    /// conflict and both sides end with the same current revision.
    public enum ConflictResolver: String, Sendable, Hashable, CaseIterable {
        /// Couchbase Lite 3.x's default resolver (`CBLConflictResolution.default` in
        /// couchbase-lite-ios, `ConflictResolver.DEFAULT` in couchbase-lite-java): a deletion wins
        /// (the remote one if both sides deleted), then the side with the higher generation, then
        /// the higher revision ID; equal generations compare the revision ID strings, so the digest
        /// decides. Between two version vectors (CBMobile_4), Couchbase Lite 4's rule: a deletion wins, then the
        /// later current version.
        case `default`
        case localWins
        case remoteWins
        /// Combines the top-level properties of both sides; where both have a property with
        /// different values the local value is kept, as in the merge example of the Couchbase Lite
        /// documentation. A deletion on either side has no properties to combine, so the default
        /// rule decides then.
        case merge

        package func resolve(_ conflict: RevisionConflict) -> ConflictResolution {
            switch self {
            case .default:
                Self.couchbaseLiteDefault(conflict)
            case .localWins:
                .local
            case .remoteWins:
                .remote
            case .merge:
                Self.merged(conflict)
            }
        }

        private static func couchbaseLiteDefault(_ conflict: RevisionConflict) -> ConflictResolution {
            let local = conflict.local
            let remote = conflict.remote
            if remote.deleted { return .remote }
            if local.deleted { return .local }
            // Couchbase Lite 4 on version vectors: the later current version wins (the remote one on a tie).
            if let localVector = local.vector, let remoteVector = remote.vector {
                return localVector.current.timestamp > remoteVector.current.timestamp ? .local : .remote
            }
            if local.revID.generation != remote.revID.generation {
                return local.revID.generation > remote.revID.generation ? .local : .remote
            }
            return local.revID > remote.revID ? .local : .remote
        }

        private static func merged(_ conflict: RevisionConflict) -> ConflictResolution {
            guard !conflict.local.deleted, !conflict.remote.deleted,
                let local = try? JSONValue(parsing: Array(conflict.local.body)).objectValue,
                let remote = try? JSONValue(parsing: Array(conflict.remote.body)).objectValue
            else {
                return couchbaseLiteDefault(conflict)
            }
            var merged = remote
            for (key, value) in local {
                merged[key] = value
            }
            return merged == remote ? .remote : .merged(body: merged.jsonData)
        }
    }
}
