/// Couchbase Lite's own heartbeat, the default of every `heartbeat` key: a live client pings at least this
/// often, and a vanished peer is dropped within two of them.
public let couchbaseLiteHeartbeat = Duration.seconds(300)

extension SettingsTable {
    /// Below a second, pings would be a noticeable share of a slow link's traffic and a congested moment
    /// would drop healthy peers.
    static let minimumHeartbeat = Duration.seconds(1)

    /// A `heartbeat` key, read by the same rules in every section that has one (`[[listener]]`,
    /// `[[upstream]]`): a duration of at least a second, `couchbaseLiteHeartbeat` when absent, or `"off"` (`nil`:
    /// no pings).
    func heartbeat(_ key: String) throws -> Duration? {
        let heartbeat = try durationOrOff(key) ?? couchbaseLiteHeartbeat
        guard heartbeat != .zero else {
            return nil
        }
        guard heartbeat >= Self.minimumHeartbeat else {
            throw error(
                at: key,
                "must be at least \(Self.minimumHeartbeat.configurationText), or \"off\"; "
                    + "got \(heartbeat.configurationText)")
        }
        return heartbeat
    }
}
