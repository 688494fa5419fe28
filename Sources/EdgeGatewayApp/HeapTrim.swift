import CMalloc

/// Hands memory the gateway has freed back to the system at a steady pace.
///
/// glibc returns freed memory to the system only from the top of its heaps; pages freed in the middle stay
/// resident. Connections come and go in bursts (a shift starts, a hundred devices sync and leave), and each one
/// allocates and frees large buffers (zlib's 384 KB deflate state, message assembly), so without this the
/// resident size ratchets up to the largest burst's fragmentation and stays there: heaptrack over a 200-client
/// connect/sync/disconnect soak showed under 2 MB still allocated at the end while the resident size had grown
/// from 164 to 279 MiB (RELIABILITY.md, Load).
///
/// A process-wide concern, so the `serve` command runs it once for the process, not `buildApplication`: trimming
/// takes each heap's lock while it walks the free lists, which costs nothing in the gateway's own heap but stalled
/// a test process hosting a hundred in-process gateways, each trimming its gigabytes of heap.
package enum HeapTrim {
    /// Short enough that a burst's memory is back within seconds of its end, long enough to cost nothing.
    package static let interval = Duration.seconds(10)

    /// Trims every `interval` until the calling task is cancelled.
    package static func run() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            CMalloc_releaseFreeMemory()
        }
    }
}
