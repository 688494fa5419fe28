#ifndef EDGE_GATEWAY_CAVAHI_SHIM_H
#define EDGE_GATEWAY_CAVAHI_SHIM_H
#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-client/publish.h>
#include <avahi-common/address.h>
#include <avahi-common/alternative.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/strlst.h>
#include <avahi-common/thread-watch.h>
#include <avahi-common/timeval.h>
#include <avahi-common/watch.h>

/* The anonymous enums below import into Swift with inconsistent integer types; these give them the types
   the functions take. */
static const AvahiIfIndex CAvahi_interfaceUnspecified = AVAHI_IF_UNSPEC;
static const AvahiProtocol CAvahi_protocolUnspecified = AVAHI_PROTO_UNSPEC;
static const AvahiProtocol CAvahi_protocolIPv4 = AVAHI_PROTO_INET;
static const AvahiProtocol CAvahi_protocolIPv6 = AVAHI_PROTO_INET6;
#endif
