/* net.c - listen addresses: "HOST:PORT", ":PORT", "[V6]:PORT" (and
 * "PORT" where a setting allows it) split, checked and resolved. */
#include "common/net.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int addr_split(const char *addr, char *host, size_t hsz, char *port, size_t psz)
{
    const char *colon = strrchr(addr, ':');
    const char *h = addr;
    size_t hl;

    if (!colon || !colon[1] || strlen(colon + 1) >= psz)
        return -1;
    hl = (size_t)(colon - addr);
    if (hl >= 2 && addr[0] == '[' && addr[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl >= hsz)
        return -1;
    snprintf(host, hsz, "%.*s", (int)hl, h);
    snprintf(port, psz, "%s", colon + 1);
    return 0;
}

int addr_resolve_listen(const char *what, const char *addr, int bare_port, long long min_port,
                        struct addrinfo **out, struct llmsb_err *err)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
    char host[256], port[16];
    long long pn;
    int rc;

    if (bare_port && strchr(addr, ':') == NULL) {
        snprintf(host, sizeof(host), "127.0.0.1");
        snprintf(port, sizeof(port), "%.15s", addr);
    } else if (addr_split(addr, host, sizeof(host), port, sizeof(port)) != 0) {
        port[0] = '\0';
    }
    if (parse_ll(port, min_port, 65535, &pn) != 0)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s \"%s\": not %sHOST:PORT, :PORT or [V6]:PORT with a port from %lld "
                             "to 65535",
                             what, addr, bare_port ? "PORT, " : "", min_port);
    hints.ai_family = host[0] ? AF_UNSPEC : AF_INET;
    if ((rc = getaddrinfo(host[0] ? host : NULL, port, &hints, out)) != 0)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s \"%s\": %s", what, addr, gai_strerror(rc));
    return 0;
}
