import Foundation
import Logging
import ServiceLifecycle
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
                    await pollForChanges()
                }
                await group.next()
                group.cancelAll()
            }
        }
    }

    private func pollForChanges() async {
        var seen = watches.map { $0.files.map(FileIdentity.init(path:)) }
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            for (index, watch) in watches.enumerated() {
                let current = watch.files.map(FileIdentity.init(path:))
                guard current != seen[index] else { continue }
                seen[index] = current
                await watch.reload()
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
