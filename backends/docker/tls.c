/* tls.c - a remote Docker engine over TLS, configured as the docker CLI
 * configures it: DOCKER_TLS_VERIFY (any non-empty value, "0" included)
 * turns TLS on and checks the daemon's certificate against ca.pem;
 * DOCKER_TLS alone turns TLS on without that check; DOCKER_CERT_PATH
 * (default $DOCKER_CONFIG, else ~/.docker) holds ca.pem, cert.pem and
 * key.pem, where a missing cert.pem or key.pem means no client
 * certificate.  DOCKER_CERT_PATH alone turns nothing on.  The config keys
 * backend.tls_verify and backend.cert_path, when set, win over the
 * environment.  Only tcp:// hosts speak TLS (dockerd's unix sockets never
 * do).  The decision is pure (unit-tested); the files are read here once
 * and handed to the HTTP client as PEM text, so every connection (plain
 * requests, streamed builds, hijacked attach streams) uses the same TLS. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PEM_CAP ((size_t)1 << 20)
#define DOCKER_PORT 2375
#define DOCKER_TLS_PORT 2376

void docker_tls_decide(const struct docker_tls_env *e, struct docker_tls *t)
{
    int set = e->tls_verify_cfg && *e->tls_verify_cfg;

    memset(t, 0, sizeof(*t));
    if (set) {
        t->on = 1;
        t->verify = strcmp(e->tls_verify_cfg, "true") == 0;
        snprintf(t->why, sizeof(t->why), "backend.tls_verify: %s", e->tls_verify_cfg);
    } else if (e->tls_verify && *e->tls_verify) {
        t->on = t->verify = 1;
        snprintf(t->why, sizeof(t->why), "DOCKER_TLS_VERIFY=%.40s", e->tls_verify);
    } else if (e->tls && *e->tls) {
        t->on = 1;
        snprintf(t->why, sizeof(t->why), "DOCKER_TLS=%.40s", e->tls);
    }
    if (e->cert_path_cfg && *e->cert_path_cfg) {
        snprintf(t->dir, sizeof(t->dir), "%s", e->cert_path_cfg);
        snprintf(t->dir_from, sizeof(t->dir_from), "backend.cert_path=%.*s",
                 (int)sizeof(t->dir_from) - 20, t->dir);
    } else if (e->cert_path && *e->cert_path) {
        snprintf(t->dir, sizeof(t->dir), "%s", e->cert_path);
        snprintf(t->dir_from, sizeof(t->dir_from), "DOCKER_CERT_PATH=%.*s",
                 (int)sizeof(t->dir_from) - 20, t->dir);
    } else if (e->docker_config && *e->docker_config) {
        snprintf(t->dir, sizeof(t->dir), "%s", e->docker_config);
        snprintf(t->dir_from, sizeof(t->dir_from), "DOCKER_CERT_PATH unset, DOCKER_CONFIG=%.*s",
                 (int)sizeof(t->dir_from) - 40, t->dir);
    } else {
        snprintf(t->dir, sizeof(t->dir), "%s/.docker", e->home && *e->home ? e->home : "");
        snprintf(t->dir_from, sizeof(t->dir_from), "DOCKER_CERT_PATH unset, default %.*s",
                 (int)sizeof(t->dir_from) - 40, t->dir);
    }
}

void docker_tls_from_env(const struct backend_opts *o, int read_env, struct docker_tls *t)
{
    struct docker_tls_env e = {o->tls_verify, o->cert_path, NULL, NULL, NULL, NULL, NULL};

    if (read_env) {
        e.tls_verify = getenv("DOCKER_TLS_VERIFY");
        e.tls = getenv("DOCKER_TLS");
        e.cert_path = getenv("DOCKER_CERT_PATH");
        e.docker_config = getenv("DOCKER_CONFIG");
    }
    e.home = getenv("HOME");
    docker_tls_decide(&e, t);
}

int docker_tls_url(const char *host, int tls, char *out, size_t outsz, struct llmsb_err *err)
{
    const char *hp, *slash, *colon;
    size_t auth;

    if (strncmp(host, "tcp://", 6) != 0) {
        if (snprintf(out, outsz, "%s", host) >= (int)outsz)
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "host \"%.60s...\" is too long", host);
        return 0;
    }
    hp = host + 6;
    slash = strchr(hp, '/');
    auth = slash ? (size_t)(slash - hp) : strlen(hp);
    /* a port after the host, past an IPv6 literal's brackets */
    colon = memchr(hp, ']', auth) ? memchr(hp, ']', auth) : hp;
    colon = memchr(colon, ':', auth - (size_t)(colon - hp));
    if (snprintf(out, outsz, "%s://%.*s", tls ? "https" : "tcp", (int)auth, hp) >= (int)outsz ||
        (!colon && llmsb_append(out, outsz, ":%d", tls ? DOCKER_TLS_PORT : DOCKER_PORT) != 0) ||
        (slash && llmsb_append(out, outsz, "%s", slash) != 0))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "host \"%.60s...\" is too long", host);
    return 0;
}

/* Reads dir/name into *out (a new string, caller frees).  A file that does
 * not exist is 0 with *out NULL when optional; every other failure is an
 * error naming where the directory came from, the file and why. */
static int read_pem(const struct docker_tls *t, const char *name, int optional, char **out,
                    struct llmsb_err *err)
{
    char path[600];
    struct buf b;
    struct stat st;
    int fd, rc = 0;
    ssize_t n;

    *out = NULL;
    snprintf(path, sizeof(path), "%s/%s", t->dir, name);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        if (errno == ENOENT && optional)
            return 0;
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "TLS (%s): %s: %s: %s", t->why, t->dir_from,
                             name, strerror(errno));
    }
    buf_init(&b, PEM_CAP);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "TLS (%s): %s: %s: not a regular file", t->why,
                           t->dir_from, name);
        goto out;
    }
    for (;;) {
        char chunk[4096];
        if ((n = read(fd, chunk, sizeof(chunk))) < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (buf_append(&b, chunk, (size_t)n) != 0) {
            rc = llmsb_err_set(err, LLMSB_ERR_LIMIT, "TLS (%s): %s: %s: over %zu bytes", t->why,
                               t->dir_from, name, PEM_CAP);
            goto out;
        }
    }
    if (n < 0)
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "TLS (%s): %s: %s: %s", t->why, t->dir_from,
                           name, strerror(errno));
    else if (b.len == 0 || !strstr(b.data, "-----BEGIN "))
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "TLS (%s): %s: %s: not a PEM file", t->why,
                           t->dir_from, name);
    else
        *out = b.data; /* the buf's storage, NUL-terminated */
out:
    close(fd);
    if (!*out)
        buf_release(&b);
    return rc;
}

int docker_tls_apply(const struct docker_tls *t, struct http_client *c, char *note, size_t notesz,
                     struct llmsb_err *err)
{
    char *ca = NULL, *cert = NULL, *key = NULL;
    int rc;

    /* as the CLI: ca.pem only when the daemon is checked; the client
     * certificate whenever both of its files are there */
    if ((t->verify && (rc = read_pem(t, "ca.pem", 0, &ca, err)) != 0) ||
        (rc = read_pem(t, "cert.pem", 1, &cert, err)) != 0 ||
        (rc = read_pem(t, "key.pem", 1, &key, err)) != 0)
        goto out;
    if (!cert != !key) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "TLS (%s): %s: %s without %s", t->why,
                           t->dir_from, cert ? "cert.pem" : "key.pem",
                           cert ? "key.pem" : "cert.pem");
        goto out;
    }
    struct http_tls h = {ca, cert, key, NULL, !t->verify};
    if ((rc = http_client_set_tls(c, &h, err)) != 0)
        goto out;
    llmsb_fmt(note, notesz, "TLS (%s): %s, %s, in %s", t->why,
              t->verify ? "the daemon checked against ca.pem" : "the daemon not checked",
              cert ? "client certificate cert.pem" : "no client certificate (no cert.pem)",
              t->dir_from);
out:
    free(ca);
    free(cert);
    free(key);
    return rc;
}
