import EdgeReplication

extension SyncListener {
    /// Replication counts of each served database since start, over open and closed connections.
    package var databaseReplicationCounters: [String: ReplicationCounters] { state.databaseTotals }
}
