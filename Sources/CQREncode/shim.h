#ifndef EDGE_GATEWAY_CQRENCODE_SHIM_H
#define EDGE_GATEWAY_CQRENCODE_SHIM_H
#include <qrencode.h>
#endif
