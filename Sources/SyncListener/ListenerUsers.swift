import EdgeCredentials
import Logging
import Synchronization

/// The users an `auth = "basic"` listener accepts, as last read from its users file.
///
/// The file is read whole and swapped in at once, so a request never sees half of an edit. A file that cannot
/// be read or does not parse is refused and the users read before stay in force; a missing file at the default
/// place in the data directory, or an empty file, means nobody has been added yet, and the listener refuses
/// everyone until someone is. A missing file configured elsewhere is refused like an unreadable one.
package final class ListenerUsers: Sendable {
    /// How the last read of the file went.
    package enum Condition: Sendable, Equatable {
        case loaded(count: Int)
        /// No file, or a file without `[[user]]`.
        case noUsers
        /// The file could not be used; `kept` users from an earlier read are still accepted.
        case invalid(problem: String, kept: Int)
    }

    /// What `reload()` changed, for the caller's log line.
    package enum ReloadOutcome: Sendable, Equatable {
        case unchanged
        case replaced(count: Int)
        case refused(problem: String, kept: Int)
    }

    /// The exact advice /health and the log give while nobody can sign in.
    package static let noUsersReason = "no users: add one with `edge-gateway users add NAME`"

    package let file: String
    /// Reads and checks the file; it decides what a missing file means.
    let load: @Sendable () throws -> [ListenerUser]
    private let state: Mutex<(users: [ListenerUser], condition: Condition)>

    /// Reads `file` for the first time; problems are recorded in `condition`, never thrown, so that the
    /// listener still starts and reports them.
    package init(file: String, load: @escaping @Sendable () throws -> [ListenerUser]) {
        self.file = file
        self.load = load
        state = Mutex(([], .noUsers))
        _ = reload()
    }

    package var users: [ListenerUser] {
        state.withLock { $0.users }
    }

    package var condition: Condition {
        state.withLock { $0.condition }
    }

    /// Why signing in is impaired, in one line for /health; nil while users are loaded.
    package var problem: String? {
        switch condition {
        case .loaded: nil
        case .noUsers: Self.noUsersReason
        case .invalid(let problem, let kept) where kept > 0:
            "\(problem); the \(kept) user(s) read before stay in force until it is fixed"
        case .invalid(let problem, _):
            "\(problem); nobody can sign in until it is fixed"
        }
    }

    /// Reads the file again and swaps its users in, or refuses it and keeps the current ones.
    @discardableResult
    package func reload() -> ReloadOutcome {
        let read: Result<[ListenerUser], any Error> = Result { try load() }
        return state.withLock { state in
            switch read {
            case .success(let users):
                let condition: Condition = users.isEmpty ? .noUsers : .loaded(count: users.count)
                let changed = users != state.users || condition != state.condition
                state.users = users
                state.condition = condition
                return changed ? .replaced(count: users.count) : .unchanged
            case .failure(let error):
                let problem = "users file refused: \(error)"
                state.condition = .invalid(problem: problem, kept: state.users.count)
                return .refused(problem: problem, kept: state.users.count)
            }
        }
    }

    /// Says once at start-up whether anyone can sign in.
    func logInitialCondition(to logger: Logger) {
        let metadata: Logger.Metadata = ["users_file": "\(file)"]
        switch condition {
        case .loaded(let count): logger.info("users loaded", metadata: metadata.merging(["users": "\(count)"]) { $1 })
        case .noUsers: logger.warning("\(Self.noUsersReason)", metadata: metadata)
        case .invalid: logger.error("\(problem ?? "users file refused")", metadata: metadata)
        }
    }

    /// Logs a reload that changed something.
    func log(_ outcome: ReloadOutcome, to logger: Logger) {
        let metadata: Logger.Metadata = ["users_file": "\(file)"]
        switch outcome {
        case .unchanged:
            return
        case .refused:
            logger.error("\(problem ?? "users file refused")", metadata: metadata)
        case .replaced(let count) where count == 0:
            logger.warning("\(Self.noUsersReason)", metadata: metadata)
        case .replaced(let count):
            logger.info("users loaded", metadata: metadata.merging(["users": "\(count)"]) { $1 })
        }
    }
}
