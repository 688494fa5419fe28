import BLIPConnection
import EdgeReplication
import Logging
import Synchronization

/// The logger of every replication connection to one database over one subprotocol, tagged with both once and shared.
///
/// A logger given metadata of its own holds a metadata dictionary of its own (about 340 bytes); tagged per connection,
/// the BLIP connection's and the session's cost a listener of 10,000 idle clients some 7 MB.
final class ConnectionLoggers: Sendable {
    private struct Key: Hashable {
        var database: String
        var subprotocol: String
    }

    private let base: Logger
    private let tagged = Mutex<[Key: Logger]>([:])

    init(base: Logger) {
        self.base = base
    }

    func logger(database: String, subprotocol: String) -> Logger {
        let key = Key(database: database, subprotocol: subprotocol)
        return tagged.withLock { tagged in
            if let logger = tagged[key] { return logger }
            let logger = PassiveReplicationSession.logger(
                BLIPConnection.logger(base, taggedWith: subprotocol), taggedWith: database)
            tagged[key] = logger
            return logger
        }
    }
}
