import EdgeStore
import ReplicationProtocol
import SyncJSON

extension ActiveReplicator {
    /// How many sequences the database has moved past the saved push checkpoint of its default collection: the
    /// local changes the upstream may not have yet. Nil for a pull-only upstream; from the database's first
    /// sequence when nothing was saved yet.
    package func pushCheckpointLag() async throws -> Int64? {
        guard configuration.direction.pushes else { return nil }
        let saved = try await Checkpointer.savedLocalCopy(
            in: database, checkpointID: checkpointID(), logger: logger)
        let lastSequence = try await database.lastSequence()
        return max(0, lastSequence - Int64(saved?.local ?? 0))
    }

    /// How many sequences the upstream's changes feed has announced past the saved pull checkpoint of the
    /// default collection: the remote changes not yet pulled for good. Nil for a push-only upstream, and until
    /// the feed has sent a row; numeric sequences only (LiteCore's integers, Sync Gateway's `"123"` or compound
    /// `"low:seq"` strings, read by their last part).
    package func pullCheckpointLag() async throws -> Int64? {
        guard configuration.direction.pulls, let newest = newestRemoteSequence else { return nil }
        let saved = try await Checkpointer.savedLocalCopy(
            in: database, checkpointID: checkpointID(), logger: logger)
        let pulled = saved?.remote.flatMap(Self.numericSequence) ?? 0
        return Int64(clamping: newest > pulled ? newest - pulled : 0)
    }

    /// Remembers the newest sequence a `changes` message of the default collection announced.
    func noteRemoteSequences(_ sequences: [JSONValue]) {
        guard let newest = sequences.compactMap(Self.numericSequence).max() else { return }
        newestRemoteSequence = max(newestRemoteSequence ?? 0, newest)
    }

    static func numericSequence(_ sequence: JSONValue) -> UInt64? {
        switch sequence {
        case .number(let number): UInt64(number.text)
        case .string(let text): text.split(separator: ":").last.flatMap { UInt64($0) }
        default: nil
        }
    }
}
