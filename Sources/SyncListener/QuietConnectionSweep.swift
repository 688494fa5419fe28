import BLIPConnection
import Synchronization

/// The listener's open replication connections, swept at a steady interval so that those that have gone quiet
/// give back their deflate streams (`BLIPConnection.releaseCompressionStateIfQuiet`).
///
/// One sweep for the whole listener, rather than a timer per connection: an idle connection's memory is what this
/// saves, and a task per connection would cost more than the stream.
final class QuietConnectionSweep: Sendable {
    /// A connection quiet for one to two intervals is swept: long enough that a device syncing steadily keeps its
    /// stream, short enough that a fleet's memory is back soon after a burst of updates.
    static let interval = Duration.seconds(30)

    private let connections = Mutex<[ObjectIdentifier: BLIPConnection]>([:])

    func add(_ connection: BLIPConnection) {
        connections.withLock { $0[ObjectIdentifier(connection)] = connection }
    }

    func remove(_ connection: BLIPConnection) {
        _ = connections.withLock { $0.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    /// One pass over the open connections; returns how many deflate streams were freed.
    @discardableResult
    func sweep() async -> Int {
        let open = connections.withLock { Array($0.values) }
        var freed = 0
        for connection in open where await connection.releaseCompressionStateIfQuiet() {
            freed += 1
        }
        return freed
    }

    /// Sweeps every `interval` until the calling task is cancelled.
    func run() async {
        while true {
            do {
                try await Task.sleep(for: Self.interval)
            } catch {
                return
            }
            await sweep()
        }
    }
}
