/* url.c - where Redis is: the URL forms (plain, TLS, ACL user, Sentinel,
 * Cluster, unix socket) and the replies that name a node (MOVED/ASK,
 * SENTINEL get-master-addr-by-name, ROLE, CLUSTER SLOTS).  Pure parsers,
 * apart from the I/O of conn.c, so they are unit-tested and fuzzed. */
#include "queue.h"
#include "queue_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The URL being parsed, redacted for messages. */
struct url_in {
    const char *url;
    char shown[300];
};

__attribute__((format(printf, 3, 4))) static int url_bad(struct url_in *u, struct llmsb_err *err,
                                                         const char *fmt, ...)
{
    char detail[200];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    return llmsb_err_set(err, LLMSB_ERR_INVALID, "redis: URL \"%s\": %s", u->shown, detail);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* s[0..len) percent-decoded into out; -1 on a bad escape, -2 too long. */
static int pct_decode(const char *s, size_t len, char *out, size_t outsz)
{
    size_t o = 0;

    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= len || hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0)
                return -1;
            c = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        }
        if (c == '\0')
            return -1;
        if (o + 1 >= outsz)
            return -2;
        out[o++] = c;
    }
    out[o] = '\0';
    return 0;
}

/* The query parameters: every name param_set takes, and the ones whose
 * values queue_url_redact shows (every other value is hidden). */
static const struct {
    const char *name;
    int shown;
} url_params[] = {
    {"ca", 1},
    {"cert", 1},
    {"key", 1},
    {"sni", 1},
    {"insecure", 1},
    {"tls", 1},
    {"wait", 1},
    {"wait_ms", 1},
    {"db", 1},
    {"sentinel_user", 1},
    {"sentinel_password", 0},
};

/* The entry of url_params for the percent-encoded name s[0..len), or -1. */
static int param_find(const char *s, size_t len)
{
    char name[32];

    if (pct_decode(s, len, name, sizeof(name)) != 0)
        return -1;
    for (size_t i = 0; i < sizeof(url_params) / sizeof(url_params[0]); i++)
        if (strcmp(name, url_params[i].name) == 0)
            return (int)i;
    return -1;
}

/* Where p (the URL after "scheme://") splits: *at the '@' ending the
 * userinfo (NULL: none), *qm the '?' opening the query (NULL: none).  A
 * password may hold '@', '/' and '?': the userinfo ends at the last '@'
 * before the first "?name=" of a parameter we take (so a sentinel_password
 * may hold '@'), and the query opens at the first '?' after it. */
static void url_split(const char *p, const char **at, const char **qm)
{
    const char *limit = p + strlen(p);

    for (const char *s = strchr(p, '?'); s; s = strchr(s + 1, '?')) {
        const char *eq = strchr(s + 1, '=');
        if (eq && !memchr(s + 1, '&', (size_t)(eq - s - 1)) &&
            param_find(s + 1, (size_t)(eq - s - 1)) >= 0) {
            limit = s;
            break;
        }
    }
    *at = NULL;
    for (const char *s = p; s < limit; s++)
        if (*s == '@')
            *at = s;
    *qm = strchr(*at ? *at + 1 : p, '?');
}

/* One part of the URL into out, decoded; what names it in errors. */
static int part_copy(struct url_in *u, const char *s, size_t len, char *out, size_t outsz,
                     const char *what, struct llmsb_err *err)
{
    int rc = pct_decode(s, len, out, outsz);

    if (rc == -1)
        return url_bad(u, err, "%s: %s", what, "a bad %-escape or a NUL byte");
    if (rc == -2) {
        char why[64];
        snprintf(why, sizeof(why), "over %zu bytes", outsz - 1);
        return url_bad(u, err, "%s is %s", what, why);
    }
    return 0;
}

/* "host", "host:port" or "[v6]:port" of len bytes into n. */
static int node_parse(struct url_in *u, const char *s, size_t len, int port_default,
                      struct queue_node *n, struct llmsb_err *err)
{
    const char *colon = NULL, *hs = s;
    size_t hl = len;
    long long v;
    char port[16];

    if (len && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (!close)
            return url_bad(u, err, "host %s: %s", "[...", "no closing ]");
        hs = s + 1;
        hl = (size_t)(close - hs);
        if (close + 1 < s + len) {
            if (close[1] != ':')
                return url_bad(u, err, "host %s: %s", "[...]", "junk after ]");
            colon = close + 1;
        }
    } else if ((colon = memchr(s, ':', len)) != NULL)
        hl = (size_t)(colon - s);
    n->port = port_default;
    if (hl >= sizeof(n->host))
        return url_bad(u, err, "%s is %s", "a host name", "over 255 bytes");
    snprintf(n->host, sizeof(n->host), "%.*s", (int)hl, hs);
    if (!colon)
        return 0;
    size_t pl = (size_t)(s + len - colon - 1);
    snprintf(port, sizeof(port), "%.*s", (int)(pl < sizeof(port) ? pl : sizeof(port) - 1),
             colon + 1);
    if (pl >= sizeof(port) || parse_ll(port, 1, 65535, &v) != 0)
        return url_bad(u, err, "port \"%s\" %s", port, "is not a number from 1 to 65535");
    n->port = (int)v;
    return 0;
}

/* The comma-separated hosts of the authority. */
static int nodes_parse(struct queue *q, struct url_in *u, const char *s, size_t len,
                       int port_default, struct llmsb_err *err)
{
    const char *end = s + len;

    if (q->mode == QUEUE_MODE_DIRECT) {
        struct queue_node n;
        if (memchr(s, ',', len))
            return url_bad(u, err, "%s %s", "several hosts",
                           "need redis-sentinel:// or redis-cluster://");
        if (node_parse(u, s, len, port_default, &n, err) != 0)
            return err->code;
        if (n.host[0])
            snprintf(q->host, sizeof(q->host), "%s", n.host);
        q->port = n.port;
        return 0;
    }
    while (s < end) {
        const char *comma = memchr(s, ',', (size_t)(end - s));
        size_t nl = comma ? (size_t)(comma - s) : (size_t)(end - s);
        if (q->nnodes >= QUEUE_NODES_MAX)
            return url_bad(u, err, "%s %s", "over 16 hosts", "(the most it takes)");
        if (node_parse(u, s, nl, port_default, &q->nodes[q->nnodes], err) != 0)
            return err->code;
        if (!q->nodes[q->nnodes].host[0])
            return url_bad(u, err, "%s %s", "a host", "is empty");
        q->nnodes++;
        s += nl + (comma ? 1 : 0);
    }
    if (q->nnodes == 0)
        return url_bad(u, err, "%s %s", "no host", "given");
    q->host[0] = '\0';
    q->port = 0;
    return 0;
}

static int num_param(struct url_in *u, const char *name, const char *v, long long min,
                     long long max, int *out, struct llmsb_err *err)
{
    long long n;
    char why[80];

    if (parse_ll(v, min, max, &n) != 0) {
        snprintf(why, sizeof(why), "\"%s\" is not a number from %lld to %lld", v, min, max);
        return url_bad(u, err, "%s: %s", name, why);
    }
    *out = (int)n;
    return 0;
}

/* One name=value of the query. */
static int param_set(struct queue *q, struct url_in *u, const char *name, const char *v,
                     struct llmsb_err *err)
{
    struct {
        const char *name;
        char *dst;
        size_t sz;
    } strs[] = {
        {"ca", q->tls.ca, sizeof(q->tls.ca)},
        {"cert", q->tls.cert, sizeof(q->tls.cert)},
        {"key", q->tls.key, sizeof(q->tls.key)},
        {"sni", q->tls.sni, sizeof(q->tls.sni)},
        {"sentinel_user", q->sentinel_user, sizeof(q->sentinel_user)},
        {"sentinel_password", q->sentinel_password, sizeof(q->sentinel_password)},
    };

    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        if (strcmp(name, strs[i].name) == 0) {
            if (strlen(v) >= strs[i].sz)
                return url_bad(u, err, "%s is %s", name, "too long");
            snprintf(strs[i].dst, strs[i].sz, "%s", v);
            return 0;
        }
    if (strcmp(name, "tls") == 0)
        return num_param(u, name, v, 0, 1, &q->tls.on, err);
    if (strcmp(name, "insecure") == 0)
        return num_param(u, name, v, 0, 1, &q->tls.insecure, err);
    if (strcmp(name, "wait") == 0)
        return num_param(u, name, v, 0, 64, &q->wait_replicas, err);
    if (strcmp(name, "wait_ms") == 0)
        return num_param(u, name, v, 1, 60000, &q->wait_ms, err);
    if (strcmp(name, "db") == 0)
        return num_param(u, name, v, 0, 1000, &q->db, err);
    return url_bad(u, err, "unknown parameter \"%s\" %s", name,
                   "(ca, cert, key, sni, insecure, tls, wait, wait_ms, db, sentinel_user, "
                   "sentinel_password)");
}

static int query_parse(struct queue *q, struct url_in *u, const char *s, struct llmsb_err *err)
{
    while (*s) {
        const char *amp = strchr(s, '&'), *end = amp ? amp : s + strlen(s);
        const char *eq = memchr(s, '=', (size_t)(end - s));
        char name[32], value[256];
        if (!eq) {
            char shown[40];
            llmsb_escape(shown, sizeof(shown), s, (size_t)(end - s));
            return url_bad(u, err, "parameter \"%s\" %s", shown, "has no =value");
        }
        if (part_copy(u, s, (size_t)(eq - s), name, sizeof(name), "a parameter name", err) ||
            part_copy(u, eq + 1, (size_t)(end - eq - 1), value, sizeof(value), "a parameter value",
                      err) ||
            param_set(q, u, name, value, err))
            return err->code;
        s = amp ? amp + 1 : end;
    }
    return 0;
}

/* The path: /db (direct), /master[/db] (sentinel), nothing (cluster). */
static int path_parse(struct queue *q, struct url_in *u, const char *s, size_t len,
                      struct llmsb_err *err)
{
    char db[16];
    const char *slash;

    if (len && s[0] == '/')
        s++, len--;
    if (q->mode == QUEUE_MODE_CLUSTER) {
        if (len)
            return url_bad(u, err, "path \"/%s\" %s", "...",
                           "is not taken: a cluster has db 0 only");
        return 0;
    }
    if (q->mode == QUEUE_MODE_SENTINEL && len) {
        slash = memchr(s, '/', len);
        size_t ml = slash ? (size_t)(slash - s) : len;
        if (ml && part_copy(u, s, ml, q->master, sizeof(q->master), "the master name", err))
            return err->code;
        s += ml, len -= ml;
        if (len)
            s++, len--;
    }
    if (!len)
        return 0;
    snprintf(db, sizeof(db), "%.*s", (int)(len < sizeof(db) ? len : sizeof(db) - 1), s);
    if (len >= sizeof(db))
        return url_bad(u, err, "db number \"%s\" %s", db, "is too long");
    return num_param(u, "db number", db, 0, 1000, &q->db, err);
}

/* user:password (or password alone: the old form) before the last '@'. */
static int userinfo_parse(struct queue *q, struct url_in *u, const char *s, size_t len,
                          struct llmsb_err *err)
{
    const char *colon = memchr(s, ':', len);

    if (colon && part_copy(u, s, (size_t)(colon - s), q->user, sizeof(q->user), "the user", err))
        return err->code;
    const char *pw = colon ? colon + 1 : s;
    return part_copy(u, pw, (size_t)(s + len - pw), q->password, sizeof(q->password),
                     "the password", err);
}

static const struct {
    const char *scheme;
    int mode, tls, port;
} url_schemes[] = {
    {"redis://", QUEUE_MODE_DIRECT, 0, 6379},
    {"rediss://", QUEUE_MODE_DIRECT, 1, 6379},
    {"redis-sentinel://", QUEUE_MODE_SENTINEL, 0, 26379},
    {"redis-cluster://", QUEUE_MODE_CLUSTER, 0, 6379},
};

static int unix_parse(struct queue *q, struct url_in *u, const char *p, struct llmsb_err *err)
{
    const char *qm = strchr(p, '?');
    size_t pl = qm ? (size_t)(qm - p) : strlen(p);

    if (part_copy(u, p, pl, q->unix_path, sizeof(q->unix_path), "the socket path", err))
        return err->code;
    if (!q->unix_path[0])
        return url_bad(u, err, "%s %s", "the socket path", "is empty");
    return qm ? query_parse(q, u, qm + 1, err) : 0;
}

/* After the parts: the checks across them. */
static int url_finish(struct queue *q, struct url_in *u, struct llmsb_err *err)
{
    if (!q->tls.on &&
        (q->tls.ca[0] || q->tls.cert[0] || q->tls.key[0] || q->tls.sni[0] || q->tls.insecure))
        return url_bad(u, err, "%s %s", "TLS parameters given",
                       "but TLS is off: use rediss:// or tls=1");
    if (q->unix_path[0] && q->tls.on)
        return url_bad(u, err, "%s %s", "TLS", "is not taken over a unix socket");
    if (!!q->tls.cert[0] != !!q->tls.key[0])
        return url_bad(u, err, "%s %s", "cert and key", "go together");
    if (q->mode == QUEUE_MODE_CLUSTER && q->db)
        return url_bad(u, err, "%s %s", "db", "is not taken: a cluster has db 0 only");
    if (q->mode != QUEUE_MODE_SENTINEL && (q->sentinel_user[0] || q->sentinel_password[0]))
        return url_bad(u, err, "%s %s", "sentinel_user/sentinel_password",
                       "need redis-sentinel://");
    if (q->wait_replicas < 0)
        q->wait_replicas = q->mode == QUEUE_MODE_SENTINEL ? 1 : 0;
    return 0;
}

int queue__url_parse(struct queue *q, const char *url, struct llmsb_err *err)
{
    struct url_in u = {url, ""};
    const char *p, *qm, *at, *slash;
    size_t i, alen;

    q->mode = QUEUE_MODE_DIRECT;
    q->port = 6379;
    q->wait_replicas = -1;
    q->wait_ms = 500;
    snprintf(q->host, sizeof(q->host), "127.0.0.1");
    snprintf(q->master, sizeof(q->master), "mymaster");
    if (!url || !*url)
        return url_finish(q, &u, err);
    queue_url_redact(url, u.shown, sizeof(u.shown));
    if (strncmp(url, "unix://", 7) == 0)
        return unix_parse(q, &u, url + 7, err) ? err->code : url_finish(q, &u, err);
    for (i = 0; i < sizeof(url_schemes) / sizeof(url_schemes[0]); i++)
        if (strncmp(url, url_schemes[i].scheme, strlen(url_schemes[i].scheme)) == 0)
            break;
    if (i == sizeof(url_schemes) / sizeof(url_schemes[0]))
        return url_bad(&u, err,
                       "must start with redis://, rediss://, redis-sentinel://, "
                       "redis-cluster:// or unix://");
    q->mode = url_schemes[i].mode;
    q->tls.on = url_schemes[i].tls;
    p = url + strlen(url_schemes[i].scheme);
    url_split(p, &at, &qm);
    alen = qm ? (size_t)(qm - p) : strlen(p);
    if (at && userinfo_parse(q, &u, p, (size_t)(at - p), err))
        return err->code;
    if (at)
        alen -= (size_t)(at + 1 - p), p = at + 1;
    slash = memchr(p, '/', alen);
    if (nodes_parse(q, &u, p, slash ? (size_t)(slash - p) : alen, url_schemes[i].port, err) ||
        (slash && path_parse(q, &u, slash, (size_t)(p + alen - slash), err)) ||
        (qm && query_parse(q, &u, qm + 1, err)))
        return err->code;
    return url_finish(q, &u, err);
}

/* Appends s[0..len) to out at *o (cut at outsz). */
static void put(char *out, size_t outsz, size_t *o, const char *s, size_t len)
{
    for (size_t i = 0; i < len && *o + 1 < outsz; i++)
        out[(*o)++] = s[i];
    out[*o < outsz ? *o : outsz - 1] = '\0';
}

int queue_url_failover(const char *url)
{
    return strncmp(url, "redis-sentinel://", 17) == 0 || strncmp(url, "redis-cluster://", 16) == 0;
}

/* One name[=value] of the query (len bytes at s) into out: the value shown
 * only for a parameter url_params shows, by its decoded name. */
static void param_redact(const char *s, size_t len, char *out, size_t outsz, size_t *o)
{
    const char *eq = memchr(s, '=', len);
    int i = param_find(s, eq ? (size_t)(eq - s) : len);

    if (i >= 0 && url_params[i].shown) {
        put(out, outsz, o, s, len);
    } else if (eq) {
        put(out, outsz, o, s, (size_t)(eq + 1 - s));
        put(out, outsz, o, "***", 3);
    } else
        put(out, outsz, o, "***", 3);
}

void queue_url_redact(const char *url, char *out, size_t outsz)
{
    const char *p = strstr(url, "://"), *qm, *at, *colon;
    size_t o = 0, alen;

    if (!outsz)
        return;
    out[0] = '\0';
    p = p ? p + 3 : url;
    url_split(p, &at, &qm);
    alen = qm ? (size_t)(qm - p) : strlen(p);
    if (at) {
        colon = memchr(p, ':', (size_t)(at - p));
        put(out, outsz, &o, url, (size_t)((colon ? colon + 1 : p) - url));
        put(out, outsz, &o, "***", 3);
        put(out, outsz, &o, at, (size_t)(p + alen - at));
    } else
        put(out, outsz, &o, url, (size_t)(p + alen - url));
    for (const char *s = qm; s && *s;) {
        const char *amp = strchr(s + 1, '&'), *end = amp ? amp : s + strlen(s);
        put(out, outsz, &o, s, 1); /* '?' or '&' */
        param_redact(s + 1, (size_t)(end - s - 1), out, outsz, &o);
        s = end;
    }
}

/* ---- the replies that name a node --------------------------------------------- */

/* CRC16-CCITT (XMODEM), the cluster's key hash. */
static unsigned crc16(const char *s, size_t len)
{
    unsigned crc = 0;

    for (size_t i = 0; i < len; i++) {
        crc ^= (unsigned)(unsigned char)s[i] << 8;
        for (int b = 0; b < 8; b++)
            crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
    return crc;
}

unsigned queue__key_slot(const char *key, size_t len)
{
    const char *open = memchr(key, '{', len), *close;

    if (open) {
        size_t rest = len - (size_t)(open - key) - 1;
        close = memchr(open + 1, '}', rest);
        if (close && close > open + 1)
            return crc16(open + 1, (size_t)(close - open - 1)) & 16383;
    }
    return crc16(key, len) & 16383;
}

int queue__redirect_parse(const char *s, size_t len, int *ask, struct queue_node *to)
{
    const char *sp, *colon = NULL, *end = s + len;
    char num[8];
    long long v;

    if (len > 6 && memcmp(s, "MOVED ", 6) == 0)
        *ask = 0, s += 6;
    else if (len > 4 && memcmp(s, "ASK ", 4) == 0)
        *ask = 1, s += 4;
    else
        return 0;
    if (!(sp = memchr(s, ' ', (size_t)(end - s))) || sp == s || sp - s >= (long)sizeof(num))
        return 0;
    snprintf(num, sizeof(num), "%.*s", (int)(sp - s), s);
    if (parse_ll(num, 0, 16383, &v) != 0)
        return 0;
    for (const char *c = sp + 1; c < end; c++)
        if (*c == ':')
            colon = c; /* the last: an IPv6 address holds some */
    if (!colon || colon - sp - 1 >= (long)sizeof(to->host) ||
        end - colon - 1 >= (long)sizeof(num) || end - colon - 1 < 1)
        return 0;
    snprintf(num, sizeof(num), "%.*s", (int)(end - colon - 1), colon + 1);
    if (parse_ll(num, 1, 65535, &v) != 0)
        return 0;
    to->port = (int)v;
    snprintf(to->host, sizeof(to->host), "%.*s", (int)(colon - sp - 1), sp + 1);
    return 1;
}

/* A host and a port reply (string or integer) into out; 0 or -1. */
static int node_from(const redisReply *h, const redisReply *p, struct queue_node *out)
{
    long long v;
    char num[16];

    if (h->type != REDIS_REPLY_STRING || h->len >= sizeof(out->host))
        return -1;
    if (p->type == REDIS_REPLY_INTEGER)
        v = p->integer;
    else if (p->type == REDIS_REPLY_STRING && p->len < sizeof(num)) {
        snprintf(num, sizeof(num), "%.*s", (int)p->len, p->str);
        if (parse_ll(num, 1, 65535, &v) != 0)
            return -1;
    } else
        return -1;
    if (v < 1 || v > 65535)
        return -1;
    snprintf(out->host, sizeof(out->host), "%.*s", (int)h->len, h->str);
    out->port = (int)v;
    return 0;
}

int queue__sentinel_addr_parse(const redisReply *r, struct queue_node *out)
{
    if (r->type == REDIS_REPLY_NIL)
        return 0;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2)
        return -1;
    return node_from(r->element[0], r->element[1], out) == 0 && out->host[0] ? 1 : -1;
}

int queue__role_parse(const redisReply *r, char *role, size_t rsz)
{
    const redisReply *e;

    if (r->type != REDIS_REPLY_ARRAY || r->elements < 1)
        return -1;
    e = r->element[0];
    if (e->type != REDIS_REPLY_STRING)
        return -1;
    llmsb_escape(role, rsz, e->str, e->len);
    return e->len == 6 && memcmp(e->str, "master", 6) == 0;
}

int queue__cluster_slots_find(const redisReply *r, unsigned slot, struct queue_node *out)
{
    if (r->type != REDIS_REPLY_ARRAY)
        return -1;
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *range = r->element[i], *node;
        if (range->type != REDIS_REPLY_ARRAY || range->elements < 3 ||
            range->element[0]->type != REDIS_REPLY_INTEGER ||
            range->element[1]->type != REDIS_REPLY_INTEGER)
            return -1;
        if ((long long)slot < range->element[0]->integer ||
            (long long)slot > range->element[1]->integer)
            continue;
        node = range->element[2];
        if (node->type != REDIS_REPLY_ARRAY || node->elements < 2)
            return -1;
        return node_from(node->element[0], node->element[1], out) == 0 ? 1 : -1;
    }
    return 0;
}
