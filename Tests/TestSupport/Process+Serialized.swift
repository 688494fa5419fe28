import Foundation
import Synchronization

private let spawning = Mutex(())

extension Process {
    /// Starts the process while no other test in this bundle is starting one. The test bundle runs suites in
    /// parallel, and swift-corelibs-foundation's `Process.run()` crashed in a `memcpy` while several child
    /// processes were being started at once (the reliability suite's gateways beside the command-line tests).
    ///
    /// Serializing did not end it: the crash came back with one spawn at a time. `run()` finds the highest open
    /// descriptor by reading /proc/self/fd and copying each `dirent`'s whole 256-byte `d_name`, past the end of a
    /// short entry; with thousands of descriptors open the listing fills readdir's buffer, and an entry at its
    /// end read into unmapped memory. `scripts/dev test` therefore runs the suites that start most processes
    /// apart from the suites that hold most descriptors, and with glibc's main arena only (`MALLOC_ARENA_MAX=1`),
    /// whose top keeps 128 KiB mapped, unlike per-thread arenas, which grow a page at a time. Starting children
    /// with posix_spawn directly, without Foundation's `Process`, would end the risk.
    public func runSerialized() throws {
        try spawning.withLock { _ in try run() }
    }
}
