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
#endif
