/* net.h - listen addresses of the host side's servers (the worker's
 * metrics, MCP over HTTP): split and resolved the same way for both.
 * Apart from common.h so the static agent neither links getaddrinfo nor
 * sees it. */
#ifndef LLMSB_NET_H
#define LLMSB_NET_H

#include <netdb.h>
#include <stddef.h>
#include "common/common.h"

/* A listen address "HOST:PORT", ":PORT" or "[V6]:PORT" as host (""
 * for none, V6 unbracketed) and port text (unchecked).  Returns 0 or -1. */
int addr_split(const char *addr, char *host, size_t hsz, char *port, size_t psz);
/* Resolves a listen address for a passive TCP socket: "HOST:PORT",
 * ":PORT" (every IPv4 address), "[V6]:PORT", and with bare_port "PORT"
 * alone (loopback's), the port in [min_port, 65535].  *out is the caller's
 * to freeaddrinfo; an error names the setting what and the address. */
int addr_resolve_listen(const char *what, const char *addr, int bare_port, long long min_port,
                        struct addrinfo **out, struct llmsb_err *err);

#endif
