#ifndef EDGE_GATEWAY_CMALLOC_SHIM_H
#define EDGE_GATEWAY_CMALLOC_SHIM_H
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/* Returns the allocator's free pages to the system where the C library can (glibc's malloc_trim); elsewhere
   the allocator already does so, or offers no call for it, and this does nothing. */
static inline void CMalloc_releaseFreeMemory(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

/* Bytes the program has allocated and not yet freed, across every arena (glibc's mallinfo2, since 2.33); -1 where
   the C library cannot tell. Beside the resident size it separates live memory from what the allocator keeps. */
static inline long long CMalloc_bytesInUse(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    return (long long)(info.uordblks + info.hblkhd);
#else
    return -1;
#endif
}

/* Caps the number of heaps (arenas) the allocator may create for its threads, where the C library has that setting
   (glibc's M_ARENA_MAX); elsewhere it does nothing. Arenas already created stay. */
static inline void CMalloc_limitArenas(int count) {
#if defined(__GLIBC__)
    mallopt(M_ARENA_MAX, count);
#endif
}
#endif
