import Synchronization

/// Hands the duration of every committed write transaction to one handler, set by whoever measures them.
///
/// Transactions already batch many revisions, so one lock per commit costs nothing the writer would notice.
public final class CommitDurationObserver: Sendable {
    private let handler = Mutex<(@Sendable (Duration) -> Void)?>(nil)

    public init() {}

    /// Replaces the handler; nil stops reporting.
    public func observe(_ handler: (@Sendable (Duration) -> Void)?) {
        self.handler.withLock { $0 = handler }
    }

    func record(_ duration: Duration) {
        handler.withLock { $0 }?(duration)
    }
}
