/* egress.c - the filtered network for jobs that may use one.  Docker's
 * bridge NAT lets a container reach the host and everything the host can
 * reach; these rules leave it the public internet only:
 *   DOCKER-USER: -i llmsb-egress0 -d <private|shared|link-local> -j REJECT
 *   INPUT:       -i llmsb-egress0 -j REJECT   (the host itself, any of its
 *                                              addresses: Redis, the engine)
 * and, above them, the host's own nameservers (from /etc/resolv.conf) on
 * port 53, which Docker's embedded DNS forwards to from the container's
 * namespace.  Each rule is checked (-C) before it is inserted, so this is
 * idempotent across workers and restarts.  The chain, the bridge and the
 * DNS rule come from the engine's flavor: Podman has no DOCKER-USER, and
 * netavark puts its own ACCEPTing jump at the top of FORWARD whenever it
 * finds it missing, so Podman's blocks are DROPs in the raw table's
 * PREROUTING, which no engine orders; its DNS answers on the bridge. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

static const char *const blocked_ranges[] = {
    "10.0.0.0/8",  "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10",
    "127.0.0.0/8", "0.0.0.0/8",     "224.0.0.0/4",    "240.0.0.0/4",
};

/* iptables OP CHAIN -i BRIDGE [-d DEST] [-p PROTO --dport 53] -j TARGET */
static int iptables(const char *op, const char *chain, const char *bridge, const char *dest,
                    const char *proto, const char *target, struct llmsb_err *err)
{
    char *argv[20];
    int n = 0, st = 0;
    pid_t pid;
    posix_spawn_file_actions_t fa;

    char table[16];
    const char *colon = strchr(chain, ':');

    argv[n++] = "iptables";
    argv[n++] = "-w";
    if (colon) { /* "table:CHAIN" */
        snprintf(table, sizeof(table), "%.*s", (int)(colon - chain), chain);
        argv[n++] = "-t";
        argv[n++] = table;
        chain = colon + 1;
    }
    argv[n++] = (char *)op;
    argv[n++] = (char *)chain;
    argv[n++] = "-i";
    argv[n++] = (char *)bridge;
    if (dest) {
        argv[n++] = "-d";
        argv[n++] = (char *)dest;
    }
    if (proto) {
        argv[n++] = "-p";
        argv[n++] = (char *)proto;
        argv[n++] = "--dport";
        argv[n++] = "53";
    }
    argv[n++] = "-j";
    argv[n++] = (char *)target;
    argv[n] = NULL;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawnp(&pid, "iptables", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return llmsb_err_set(err, LLMSB_ERR_SYS,
                             "egress: cannot run iptables: %s (install the "
                             "iptables package)",
                             strerror(rc));
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

static int rule(const char *chain, const char *bridge, const char *dest, const char *proto,
                const char *target, struct llmsb_err *err)
{
    int rc = iptables("-C", chain, bridge, dest, proto, target, err);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return 0; /* already there */
    if ((rc = iptables("-I", chain, bridge, dest, proto, target, err)) != 0)
        return rc < 0
                   ? rc
                   : llmsb_err_set(err, LLMSB_ERR_SYS,
                                   "egress: iptables -I %s -i %s%s%s "
                                   "-j %s failed (exit %d; the worker needs root on the "
                                   "host)",
                                   chain, bridge, dest ? " -d " : "", dest ? dest : "", target, rc);
    return 0;
}

/* ACCEPT DNS to each IPv4 nameserver of the host, inserted last so it
 * sits above the REJECTs. */
static int allow_resolvers(const struct docker_flavor *fl, struct llmsb_err *err)
{
    FILE *f = fopen("/etc/resolv.conf", "re");
    char line[256], ns[64];
    int rc = 0;

    if (!f)
        return 0;
    while (rc == 0 && fgets(line, sizeof(line), f))
        if (sscanf(line, "nameserver %63[0-9.]", ns) == 1 && strchr(ns, '.'))
            rc = rule(fl->egress_forward_chain, fl->egress_bridge, ns, "udp", "ACCEPT", err) ||
                 rule(fl->egress_forward_chain, fl->egress_bridge, ns, "tcp", "ACCEPT", err);
    fclose(f);
    return rc ? (err->code ? err->code : LLMSB_ERR_SYS) : 0;
}

static pthread_mutex_t egress_mu = PTHREAD_MUTEX_INITIALIZER;
static const struct docker_flavor *egress_ready[4]; /* the flavors whose rules are in */

int docker_egress_ensure(struct backend *b, struct llmsb_err *err)
{
    const struct docker_flavor *fl = ((struct docker *)b->priv)->fl;
    const char *fwd = fl->egress_forward_chain, *br = fl->egress_bridge;
    size_t k = 0;
    int rc = 0;

    pthread_mutex_lock(&egress_mu);
    while (k < sizeof(egress_ready) / sizeof(egress_ready[0]) && egress_ready[k] &&
           egress_ready[k] != fl)
        k++;
    if (k == sizeof(egress_ready) / sizeof(egress_ready[0]) || !egress_ready[k]) {
        rc = docker_network_ensure(b, BACKEND_EGRESS_NETWORK, br, err);
        for (size_t i = 0; rc == 0 && i < sizeof(blocked_ranges) / sizeof(blocked_ranges[0]); i++)
            rc = rule(fwd, br, blocked_ranges[i], NULL,
                      fl->egress_block_target ? fl->egress_block_target : "REJECT", err);
        if (rc == 0)
            rc = rule("INPUT", br, NULL, NULL, "REJECT", err);
        /* inserted after the REJECT, so above it */
        if (rc == 0 && fl->egress_dns_on_gateway && /* to any host address: the INPUT chain */
            (rc = rule("INPUT", br, NULL, "udp", "ACCEPT", err)) == 0)
            rc = rule("INPUT", br, NULL, "tcp", "ACCEPT", err);
        if (rc == 0)
            rc = allow_resolvers(fl, err);
        if (rc == 0 && k < sizeof(egress_ready) / sizeof(egress_ready[0]))
            egress_ready[k] = fl;
    }
    pthread_mutex_unlock(&egress_mu);
    if (rc != 0)
        llmsb_err_wrap(err, "network for jobs (%s)", BACKEND_EGRESS_NETWORK);
    return rc;
}
