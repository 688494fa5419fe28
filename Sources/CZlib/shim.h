#ifndef EDGE_GATEWAY_CZLIB_SHIM_H
#define EDGE_GATEWAY_CZLIB_SHIM_H
#include <zlib.h>

/* deflateInit2/inflateInit2 are macros that Swift cannot import. */
static inline int CZlib_deflateInit2(z_streamp stream, int level, int windowBits, int memLevel) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, memLevel, Z_DEFAULT_STRATEGY);
}

static inline int CZlib_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}
#endif
