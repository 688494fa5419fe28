import EdgeStore

extension ActiveReplicator {
    /// How many sequences the database has moved past the saved push checkpoint of its default collection: the
    /// local changes the upstream may not have yet. Nil for a pull-only upstream; from the database's first
    /// sequence when nothing was saved yet.
    public func pushCheckpointLag() async throws -> Int64? {
        guard configuration.direction.pushes else { return nil }
        let saved = try await Checkpointer.savedLocalCopy(
            in: database, checkpointID: checkpointID(), logger: logger)
        let lastSequence = try await database.lastSequence()
        return max(0, lastSequence - Int64(saved?.local ?? 0))
    }
}
