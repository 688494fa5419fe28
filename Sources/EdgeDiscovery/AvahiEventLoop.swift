import CAvahi

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// avahi's threaded poll: its own thread runs the D-Bus traffic and every avahi callback, so no event loop of
/// ours ever blocks on the daemon.
///
/// avahi runs each callback on that thread with the poll's lock held; code on any other thread must take the
/// lock (`withLock`) before it touches an avahi object. That lock is what makes the objects built on this loop
/// safe to share, hence `@unchecked Sendable`.
final class AvahiEventLoop: @unchecked Sendable {
    private let poll: OpaquePointer
    private var running = false

    init() throws(DiscoveryError) {
        guard let poll = avahi_threaded_poll_new() else { throw .eventLoopUnavailable }
        self.poll = poll
    }

    deinit {
        // Stops the thread first if it still runs.
        avahi_threaded_poll_free(poll)
    }

    /// The poll API that clients, groups and browsers are created with.
    var api: UnsafePointer<AvahiPoll> {
        avahi_threaded_poll_get(poll)
    }

    /// Starts the thread. Called once, before any other thread shares the loop.
    func start() throws(DiscoveryError) {
        guard avahi_threaded_poll_start(poll) == 0 else { throw .eventLoopUnavailable }
        running = true
    }

    /// Stops the thread and waits for it: afterwards no callback runs and the avahi objects may be freed without
    /// the lock. Never call it from a callback.
    func stop() {
        guard running else { return }
        running = false
        avahi_threaded_poll_stop(poll)
    }

    /// Runs `body` with the loop's lock held. Never call it from a callback: avahi's lock is not recursive.
    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        return try body()
    }

    /// Calls `callback` with `userdata` on the loop's thread after `delay`; the timer must be freed with
    /// `cancelTimer` (also after it fired) and the userdata must outlive it.
    func scheduleTimer(
        after delay: Duration,
        userdata: UnsafeMutableRawPointer,
        callback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void
    ) -> OpaquePointer? {
        var deadline = timeval()
        let milliseconds = delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000
        avahi_elapse_time(&deadline, UInt32(clamping: milliseconds), 0)
        return api.pointee.timeout_new(api, &deadline, callback, userdata)
    }

    func cancelTimer(_ timer: OpaquePointer) {
        api.pointee.timeout_free(timer)
    }
}
