import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Picks up the files an operator changes while the gateway runs (users files, certificate files, the trust
/// store): each file's identity is polled, and SIGHUP (`docker compose kill -s HUP gateway`) re-reads all of
/// them at once. Polling rather than inotify, because a bind-mounted or replaced file (rename over it, as
/// `edge-gateway users add` does) keeps working the same way, and a second is quick enough for a person.
struct FileReloadService: Service {
    /// Files that are re-read together by one action.
    struct Watch: Sendable {
        var files: [String]
        var reload: @Sendable () async -> Void
    }

    let watches: [Watch]
    let interval: Duration
    let logger: Logger

    func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        let (changes, changed) = AsyncStream.makeStream(of: Int.self)
        let polling = pollForChanges(reportingTo: changed)
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await _ in hangups {
                        logger.info("SIGHUP: reloading users, certificate and trust files")
                        for watch in watches {
                            await watch.reload()
                        }
                    }
                }
                group.addTask {
                    for await index in changes {
                        await watches[index].reload()
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }
        polling?.cancel()
        changed.finish()
    }

    /// Looks at the files on a NIO event loop and reports the index of each watch whose files changed. A task that
    /// sleeps would wake a libdispatch worker every second, and libdispatch retires a worker only after 5 s without
    /// work, so the workers a burst of connections started would stay longer (RELIABILITY.md, "Soak"). A few `stat`
    /// calls are cheap enough for an event loop.
    private func pollForChanges(reportingTo changed: AsyncStream<Int>.Continuation) -> RepeatedTask? {
        guard !watches.isEmpty else { return nil }
        let watches = self.watches
        let seen = Mutex(watches.map { $0.files.map(FileIdentity.init(path:)) })
        let delay = TimeAmount(interval)
        return MultiThreadedEventLoopGroup.singleton.any().scheduleRepeatedTask(initialDelay: delay, delay: delay) {
            _ in
            for (index, watch) in watches.enumerated() {
                let current = watch.files.map(FileIdentity.init(path:))
                let isChanged = seen.withLock { seen in
                    defer { seen[index] = current }
                    return current != seen[index]
                }
                if isChanged {
                    changed.yield(index)
                }
            }
        }
    }
}

/// What changes when a file is edited in place or replaced: inode, size, modification and change times.
/// All nil for a file that does not exist.
struct FileIdentity: Equatable, Sendable {
    var device: UInt64?
    var inode: UInt64?
    var size: Int64?
    var modifiedNanoseconds: Int64?
    var changedNanoseconds: Int64?

    init(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modifiedNanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        changedNanoseconds = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
    }
}
