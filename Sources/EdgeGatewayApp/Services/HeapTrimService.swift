import CMalloc
import ServiceLifecycle

/// Hands memory the gateway has freed back to the system at a steady pace.
///
/// glibc returns freed memory to the system only from the top of its heaps; pages freed in the middle stay
/// resident. Connections come and go in bursts (a shift starts, a hundred devices sync and leave), and each one
/// allocates and frees large buffers (zlib's 384 KB deflate state, message assembly), so without this the
/// resident size ratchets up to the largest burst's fragmentation and stays there: heaptrack over a 200-client
/// connect/sync/disconnect soak showed under 2 MB still allocated at the end while the resident size had grown
/// from 164 to 279 MiB. `malloc_trim` releases every free page of every heap; it walks the free lists only,
/// which takes well under a millisecond for this process's heaps.
struct HeapTrimService: Service {
    /// Short enough that a burst's memory is back within seconds of its end, long enough to cost nothing.
    static let interval = Duration.seconds(10)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.interval)
                CMalloc_releaseFreeMemory()
            }
        }
    }
}
