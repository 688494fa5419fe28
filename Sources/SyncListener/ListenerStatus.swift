/// A snapshot of one listener for health reports and the ops API.
public struct ListenerStatus: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        case starting
        case running
        case stopped
        case failed(String)
    }

    /// Connection counts of one served database.
    public struct DatabaseCounts: Sendable, Equatable {
        public var name: String
        /// Replication connections accepted since start.
        public var totalConnections: Int
        /// Replication connections open now.
        public var activeConnections: Int
    }

    public var name: String
    public var state: State
    /// The TCP port actually bound (useful with `port = 0`); `nil` until the server runs.
    public var boundPort: Int?
    public var totalConnections: Int
    public var activeConnections: Int
    /// One entry per served database, in configuration order.
    public var databases: [DatabaseCounts]
    /// What keeps the listener from serving as configured while it runs (no users, a refused users or
    /// certificate file), one line each.
    public var problems: [String] = []
    /// Users accepted with `auth = "basic"`; nil for other kinds of authentication.
    public var users: Int?
}

/// The listener's mutable state, shared between its HTTP handlers and its status readers.
actor ListenerState {
    private var status: ListenerStatus
    private var portWaiters: [CheckedContinuation<Int?, Never>] = []

    init(name: String, databases: [String]) {
        status = ListenerStatus(
            name: name, state: .starting, boundPort: nil, totalConnections: 0, activeConnections: 0,
            databases: databases.map { .init(name: $0, totalConnections: 0, activeConnections: 0) })
    }

    var snapshot: ListenerStatus { status }

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

    /// Takes one of `limit` connection slots for an accepted upgrade; false when all are taken. Checking and
    /// taking in one actor call keeps simultaneous handshakes from exceeding the limit.
    func reserveConnection(database: String, limit: Int) -> Bool {
        guard status.activeConnections < limit else { return false }
        status.totalConnections += 1
        status.activeConnections += 1
        if let index = status.databases.firstIndex(where: { $0.name == database }) {
            status.databases[index].totalConnections += 1
            status.databases[index].activeConnections += 1
        }
        return true
    }

    /// Frees the slot `reserveConnection` took, once the connection has closed.
    func releaseConnection(database: String) {
        status.activeConnections -= 1
        if let index = status.databases.firstIndex(where: { $0.name == database }) {
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
