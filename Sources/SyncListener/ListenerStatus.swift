import EdgeReplication
import Foundation

/// A snapshot of one listener for health reports and the ops API.
public struct ListenerStatus: Sendable, Equatable {
    package enum State: Sendable, Equatable {
        case starting
        case running
        case stopped
        case failed(String)
    }

    /// Connection counts of one served database.
    package struct DatabaseCounts: Sendable, Equatable {
        package var name: String
        /// Replication connections accepted since start.
        package var totalConnections: Int
        /// Replication connections open now.
        package var activeConnections: Int
    }

    /// One open replication connection. It names the user but carries no credential.
    package struct Connection: Sendable, Equatable {
        /// The client's address and port as this side sees them (`[…]` around IPv6).
        package var peer: String
        /// The authenticated user; nil when the listener has no users (`auth = "none"` or client certificates).
        package var user: String?
        package var database: String
        /// The client's `User-Agent` (Couchbase Lite names its version and platform there).
        package var userAgent: String?
        /// The subprotocol chosen, which says whether revisions travel as version vectors (CBMobile_4).
        package var subprotocol: String
        /// When the upgrade was accepted.
        package var since: Date
        /// Revisions the client pushed and this side stored.
        package var documentsPushed: Int
        /// Revisions the client pulled and acknowledged.
        package var documentsPulled: Int
    }

    package var name: String
    package var state: State
    /// The TCP port actually bound (useful with `port = 0`); `nil` until the server runs.
    package var boundPort: Int?
    package var totalConnections: Int
    package var activeConnections: Int
    /// One entry per served database, in configuration order.
    package var databases: [DatabaseCounts]
    /// Open connections, oldest first.
    package var connections: [Connection] = []
    /// Revisions pushed by clients since start, over open and closed connections.
    package var documentsPushed = 0
    /// Revisions pulled by clients since start, over open and closed connections.
    package var documentsPulled = 0
    /// What keeps the listener from serving as configured while it runs (no users, a refused users or
    /// certificate file), one line each.
    package var problems: [String] = []
    /// Users accepted with `auth = "basic"`; nil for other kinds of authentication.
    package var users: Int?
    /// Replication upgrades refused since start, by the HTTP status they were answered with.
    package var refusedUpgrades: [Int: Int] = [:]
    /// Clients turned away for want of a common protocol since start, by reason.
    package var turnedAwayCounts: [TurnedAwayClient.Reason: Int] = [:]
    /// The last few of them, newest last.
    package var turnedAway: [TurnedAwayClient] = []
}

/// Who holds an accepted connection, recorded when its upgrade is accepted.
struct ConnectionRecord: Sendable {
    var peer: String
    var user: String?
    var database: String
    var userAgent: String?
    var subprotocol: String
    var since: Date
    var counters: ReplicationCounters
}

/// The listener's mutable state, shared between its HTTP handlers and its status readers.
actor ListenerState {
    private var status: ListenerStatus
    private var portWaiters: [CheckedContinuation<Int?, Never>] = []
    private var openConnections: [Int: ConnectionRecord] = [:]
    private var nextConnectionID = 0
    /// Every connection's counters add up here.
    let totals: ReplicationCounters
    /// Every connection's counters add up in its database's, which add up in `totals`.
    let databaseTotals: [String: ReplicationCounters]
    private var refusedUpgrades: [Int: Int] = [:]
    private var turnedAwayCounts: [TurnedAwayClient.Reason: Int] = [:]
    private var turnedAway: [TurnedAwayClient] = []

    init(name: String, databases: [String]) {
        let totals = ReplicationCounters()
        self.totals = totals
        databaseTotals = Dictionary(
            databases.map { ($0, ReplicationCounters(aggregatingInto: totals)) },
            uniquingKeysWith: { first, _ in first })
        status = ListenerStatus(
            name: name, state: .starting, boundPort: nil, totalConnections: 0, activeConnections: 0,
            databases: databases.map { .init(name: $0, totalConnections: 0, activeConnections: 0) })
    }

    var snapshot: ListenerStatus {
        var snapshot = status
        snapshot.connections = openConnections.sorted { $0.key < $1.key }.map { _, record in
            ListenerStatus.Connection(
                peer: record.peer, user: record.user, database: record.database, userAgent: record.userAgent,
                subprotocol: record.subprotocol, since: record.since,
                documentsPushed: record.counters.documentsPushed, documentsPulled: record.counters.documentsPulled)
        }
        snapshot.documentsPushed = totals.documentsPushed
        snapshot.documentsPulled = totals.documentsPulled
        snapshot.refusedUpgrades = refusedUpgrades
        snapshot.turnedAwayCounts = turnedAwayCounts
        snapshot.turnedAway = turnedAway
        return snapshot
    }

    func countRefusedUpgrade(status: Int) {
        refusedUpgrades[status, default: 0] += 1
    }

    func recordTurnedAway(_ client: TurnedAwayClient) {
        turnedAwayCounts[client.reason, default: 0] += 1
        turnedAway.append(client)
        if turnedAway.count > TurnedAwayClient.kept { turnedAway.removeFirst(turnedAway.count - TurnedAwayClient.kept) }
    }

    var activeConnections: Int { status.activeConnections }

    func serverStarted(port: Int?) {
        status.state = .running
        status.boundPort = port
        resumePortWaiters()
    }

    func serverEnded(failure: (any Error)?) {
        status.state = failure.map { .failed(String(describing: $0)) } ?? .stopped
        resumePortWaiters()
    }

    /// The bound port, waiting for the server to start; `nil` if it ended without binding.
    func boundPort() async -> Int? {
        switch status.state {
        case .starting:
            return await withCheckedContinuation { portWaiters.append($0) }
        case .running, .stopped, .failed:
            return status.boundPort
        }
    }

    /// Takes one of `limit` connection slots for an accepted upgrade; nil when all are taken, else the ID to
    /// release it with. Checking and taking in one actor call keeps simultaneous handshakes from exceeding the
    /// limit.
    func reserveConnection(_ record: ConnectionRecord, limit: Int) -> Int? {
        guard status.activeConnections < limit else { return nil }
        status.totalConnections += 1
        status.activeConnections += 1
        if let index = status.databases.firstIndex(where: { $0.name == record.database }) {
            status.databases[index].totalConnections += 1
            status.databases[index].activeConnections += 1
        }
        let id = nextConnectionID
        nextConnectionID += 1
        openConnections[id] = record
        return id
    }

    /// Frees the slot `reserveConnection` took, once the connection has closed.
    func releaseConnection(id: Int) {
        guard let record = openConnections.removeValue(forKey: id) else { return }
        status.activeConnections -= 1
        if let index = status.databases.firstIndex(where: { $0.name == record.database }) {
            status.databases[index].activeConnections -= 1
        }
    }

    private func resumePortWaiters() {
        let waiters = portWaiters
        portWaiters.removeAll()
        for waiter in waiters {
            waiter.resume(returning: status.boundPort)
        }
    }
}
