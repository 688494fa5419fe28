/// The `Profile` of a replication request (spec §3).
public enum Profile: String, Sendable, Hashable, CaseIterable {
    case getCollections
    case getCheckpoint
    case setCheckpoint
    case subChanges
    case unsubChanges
    case changes
    case proposeChanges
    case rev
    case norev
    case getAttachment
    case proveAttachment
    /// Connected-client profiles (spec §3.11); not used by replication itself.
    case getRev
    case putRev
    /// SG accepts an empty `PING` request from cbl-js as a heartbeat.
    case ping = "PING"

    /// Whether messages of this profile carry a `collection` index on a collection-aware connection.
    package var isCollectionSpecific: Bool {
        switch self {
        case .getCheckpoint, .setCheckpoint, .subChanges, .unsubChanges, .changes, .proposeChanges, .rev, .norev,
            .getAttachment, .proveAttachment:
            true
        case .getCollections, .getRev, .putRev, .ping:
            false
        }
    }
}
