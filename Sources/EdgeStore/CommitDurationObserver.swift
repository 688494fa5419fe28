import Synchronization

/// Hands the duration of every committed write transaction to one handler, set by whoever measures them.
///
/// Transactions already batch many revisions, so one lock per commit costs nothing the writer would notice.
package final class CommitDurationObserver: Sendable {
    /// The handler sits in a class so that the lock holds a reference, not a closure: a closure passed `inout`
    /// through `Mutex.withLock`'s generic parameter is re-wrapped in two reabstraction thunks on every access and
    /// written back, so each commit lengthened the chain the next one called through, until the stack overflowed
    /// (a 200,000-call loop did on an 8 MiB stack; `CommitDurationObserverTests`).
    private final class Handler: Sendable {
        let call: @Sendable (Duration) -> Void
        init(_ call: @escaping @Sendable (Duration) -> Void) { self.call = call }
    }

    private let handler = Mutex<Handler?>(nil)

    package init() {}

    /// Replaces the handler; nil stops reporting.
    package func observe(_ handler: (@Sendable (Duration) -> Void)?) {
        let boxed = handler.map(Handler.init)
        self.handler.withLock { $0 = boxed }
    }

    func record(_ duration: Duration) {
        handler.withLock { $0 }?.call(duration)
    }
}
