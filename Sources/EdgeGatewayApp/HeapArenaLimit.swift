import CMalloc
import Foundation

/// Keeps glibc's allocator to a few heaps, so that memory one thread frees is there for the next thread's
/// allocation rather than resident in another heap.
///
/// glibc gives threads up to eight heaps (arenas) per core under contention, and memory freed in one heap is
/// reused only by the threads on that heap. The gateway's threads (NIO's event loops, the task pool, SQLite's
/// queues) each take memory in turn, so every heap fills to its own peak. Over a 50,000-document push and pull,
/// two heaps instead of sixteen lowered the peak resident size from 92–100 MiB to 81–89 MiB; gateway CPU per fan-out
/// delivery moved within its run-to-run spread (BENCHMARKS.md).
///
/// A process-wide setting, so the `serve` command applies it once, before the application starts its threads.
package enum HeapArenaLimit {
    /// One heap per core of the 2-core machines the gateway is sized for.
    package static let arenas: Int32 = 2

    /// Applies the limit, unless the operator chose one through glibc's own environment (`MALLOC_ARENA_MAX`, or
    /// `arena_max` in `GLIBC_TUNABLES`), which then stands.
    package static func apply(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard !isChosenByOperator(environment) else { return }
        CMalloc_limitArenas(arenas)
    }

    package static func isChosenByOperator(_ environment: [String: String]) -> Bool {
        environment["MALLOC_ARENA_MAX"] != nil || environment["GLIBC_TUNABLES"]?.contains("arena_max") == true
    }
}
