/* http.c - libcurl underneath the engine backends.  Every handle gets
 * CURLOPT_NOSIGNAL; response bodies land in capped buffers; hijacked
 * connections use CONNECT_ONLY and speak HTTP/1.1 by hand (Debian's libcurl
 * has no WebSocket and would offer h2 over TLS otherwise). */
#include "http.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

static int curl_ready;

static int curl_global(struct llmsb_err *err)
{
    if (!curl_ready) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
            return llmsb_err_set(err, LLMSB_ERR_SYS, "http: curl_global_init failed");
        curl_ready = 1;
    }
    return 0;
}

int http_client_init(struct http_client *c, const char *host, const char *api_prefix,
                     struct llmsb_err *err)
{
    char url[512];

    memset(c, 0, sizeof(*c));
    if (!host)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "http: no host");
    if (curl_global(err))
        return err->code;
    int is_unix = strncmp(host, "unix://", 7) == 0 || host[0] == '/';

    if (is_unix) {
        const char *path = host[0] == '/' ? host : host + 7;
        if (!*path)
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "http: empty unix socket path in \"%s\"",
                                 host);
        c->socket_path = strdup(path);
        snprintf(url, sizeof(url), "http://localhost%s", api_prefix);
    } else if (strncmp(host, "tcp://", 6) == 0 || strncmp(host, "http://", 7) == 0 ||
               strncmp(host, "https://", 8) == 0) {
        int tls = host[4] == 's';
        const char *hp = strstr(host, "://") + 3;
        size_t hl = strlen(hp); /* a path after the host is kept (a proxied API server) */
        while (hl && hp[hl - 1] == '/')
            hl--;
        if (hl == 0 || hp[0] == '/')
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "http: no host in \"%s\"", host);
        snprintf(url, sizeof(url), "%s://%.*s%s", tls ? "https" : "http", (int)hl, hp, api_prefix);
    } else {
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "http: host \"%s\" must start with unix://, tcp://, http://, "
                             "https:// or /",
                             host);
    }
    c->base_url = strdup(url);
    c->curl = curl_easy_init();
    if (!c->base_url || !c->curl || (is_unix && !c->socket_path)) {
        http_client_release(c);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "http: out of memory");
    }
    return 0;
}

static int dup_opt(char **dst, const char *src)
{
    free(*dst);
    *dst = NULL;
    return src && !(*dst = strdup(src)) ? -1 : 0;
}

int http_client_set_tls(struct http_client *c, const struct http_tls *t, struct llmsb_err *err)
{
    char *hdr = NULL;

    if (t->bearer) {
        size_t n = strlen(t->bearer) + sizeof("Authorization: Bearer ");
        if (strpbrk(t->bearer, "\r\n"))
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "http: a token with a line break");
        if ((hdr = malloc(n)) == NULL)
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "http: out of memory");
        snprintf(hdr, n, "Authorization: Bearer %s", t->bearer);
    }
    free(c->auth_header);
    c->auth_header = hdr;
    c->insecure = t->insecure;
    if (dup_opt(&c->ca_pem, t->ca_pem) || dup_opt(&c->cert_pem, t->cert_pem) ||
        dup_opt(&c->key_pem, t->key_pem))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "http: out of memory");
    return 0;
}

void http_client_release(struct http_client *c)
{
    if (c->curl)
        curl_easy_cleanup(c->curl);
    free(c->socket_path);
    free(c->base_url);
    free(c->ca_pem);
    free(c->cert_pem);
    free(c->key_pem);
    free(c->auth_header);
    memset(c, 0, sizeof(*c));
}

static void set_blob(CURL *h, CURLoption opt, char *pem)
{
    struct curl_blob b = {pem, strlen(pem), CURL_BLOB_COPY};
    curl_easy_setopt(h, opt, &b);
}

static void setup(struct http_client *c, CURL *h, const char *method, const char *path)
{
    char url[2048];

    snprintf(url, sizeof(url), "%s%s", c->base_url, path);
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    if (c->socket_path)
        curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->socket_path);
    if (c->ca_pem) { /* the cluster's CA alone, as kubectl: not the system's too */
        set_blob(h, CURLOPT_CAINFO_BLOB, c->ca_pem);
        curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
    }
    if (c->cert_pem) {
        set_blob(h, CURLOPT_SSLCERT_BLOB, c->cert_pem);
        curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    }
    if (c->key_pem) {
        set_blob(h, CURLOPT_SSLKEY_BLOB, c->key_pem);
        curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (c->insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (strcmp(method, "GET") != 0)
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    c->errbuf[0] = '\0';
}

/* Resets h for a request and returns its headers (no 100-continue, the
 * content type if any); the caller frees them with curl_slist_free_all. */
static struct curl_slist *prepare(struct http_client *c, CURL *h, const char *method,
                                  const char *path, const char *content_type)
{
    struct curl_slist *hdrs = curl_slist_append(NULL, "Expect:");
    char ct[128];

    setup(c, h, method, path);
    if (c->auth_header)
        hdrs = curl_slist_append(hdrs, c->auth_header);
    if (content_type) {
        snprintf(ct, sizeof(ct), "Content-Type: %s", content_type);
        hdrs = curl_slist_append(hdrs, ct);
    }
    return hdrs;
}

static int curl_fail(struct http_client *c, CURLcode rc, const char *method, const char *path,
                     struct llmsb_err *err)
{
    return llmsb_err_set(
        err, rc == CURLE_OPERATION_TIMEDOUT ? LLMSB_ERR_TIMEOUT : LLMSB_ERR_BACKEND,
        "%s %s via %s: %s", method, path, c->socket_path ? c->socket_path : c->base_url,
        c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc));
}

struct sink {
    struct buf *b;
    int over;
};

static size_t sink_write(char *p, size_t size, size_t nmemb, void *ud)
{
    struct sink *s = ud;
    size_t n = size * nmemb;
    if (buf_append(s->b, p, n) != 0) {
        s->over = 1;
        return 0;
    }
    return n;
}

int http_request(struct http_client *c, const char *method, const char *path,
                 const char *content_type, const char *body, size_t body_len, long *status,
                 struct buf *resp, struct llmsb_err *err)
{
    CURL *h = c->curl;
    struct curl_slist *hdrs = prepare(c, h, method, path, content_type);
    struct sink s = {resp, 0};
    CURLcode rc;

    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    } else if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
    }
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 120000L);
    buf_reset(resp);
    rc = curl_easy_perform(h);
    curl_slist_free_all(hdrs);
    if (s.over)
        return llmsb_err_set(err, LLMSB_ERR_LIMIT, "%s %s: response over %zu bytes", method, path,
                             resp->cap);
    if (rc != CURLE_OK)
        return curl_fail(c, rc, method, path, err);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    return 0;
}

struct stream_ctx {
    http_read_cb rd;
    void *rd_ud;
    http_write_cb wr;
    void *wr_ud;
    int aborted;
};

static size_t stream_read(char *dst, size_t size, size_t nmemb, void *ud)
{
    struct stream_ctx *s = ud;
    ssize_t n = s->rd(s->rd_ud, dst, size * nmemb);
    if (n < 0) {
        s->aborted = 1;
        return CURL_READFUNC_ABORT;
    }
    return (size_t)n;
}

static size_t stream_write(char *p, size_t size, size_t nmemb, void *ud)
{
    struct stream_ctx *s = ud;
    if (s->wr && s->wr(s->wr_ud, p, size * nmemb) != 0) {
        s->aborted = 1;
        return 0;
    }
    return size * nmemb;
}

int http_request_stream(struct http_client *c, const char *method, const char *path,
                        const char *content_type, http_read_cb rd, void *rd_ud, http_write_cb wr,
                        void *wr_ud, long timeout_ms, long *status, struct llmsb_err *err)
{
    CURL *h = c->curl;
    struct curl_slist *hdrs = prepare(c, h, method, path, content_type);
    struct stream_ctx s = {rd, rd_ud, wr, wr_ud, 0};
    CURLcode rc;

    if (rd) {
        hdrs = curl_slist_append(hdrs, "Transfer-Encoding: chunked");
        curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(h, CURLOPT_READFUNCTION, stream_read);
        curl_easy_setopt(h, CURLOPT_READDATA, &s);
    } else if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
    }
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, stream_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    if (timeout_ms > 0)
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    rc = curl_easy_perform(h);
    curl_slist_free_all(hdrs);
    if (s.aborted && err && err->msg[0])
        return err->code ? err->code : LLMSB_ERR_BACKEND;
    if (rc != CURLE_OK)
        return curl_fail(c, rc, method, path, err);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    return 0;
}

/* ---- hijacked connections ------------------------------------------------ */

static int wait_fd(int fd, short ev, int timeout_ms)
{
    struct pollfd p = {fd, ev, 0};
    int rc;
    do
        rc = poll(&p, 1, timeout_ms);
    while (rc < 0 && errno == EINTR);
    return rc;
}

int http_conn_send(struct http_conn *conn, const char *p, size_t n, struct llmsb_err *err)
{
    while (n > 0) {
        size_t sent = 0;
        CURLcode rc = curl_easy_send(conn->curl, p, n, &sent);
        if (rc == CURLE_AGAIN) {
            if (wait_fd(conn->fd, POLLOUT, 30000) <= 0)
                return llmsb_err_set(err, LLMSB_ERR_TIMEOUT, "stream: send stalled for 30 s");
            continue;
        }
        if (rc != CURLE_OK)
            return llmsb_err_set(err, LLMSB_ERR_BACKEND, "stream: send: %s",
                                 curl_easy_strerror(rc));
        p += sent;
        n -= sent;
    }
    return 0;
}

ssize_t http_conn_recv(struct http_conn *conn, char *p, size_t n, int timeout_ms,
                       struct llmsb_err *err)
{
    if (conn->pending.len) {
        size_t k = conn->pending.len < n ? conn->pending.len : n;
        memcpy(p, conn->pending.data, k);
        buf_consume(&conn->pending, k);
        return (ssize_t)k;
    }
    for (;;) {
        size_t got = 0;
        CURLcode rc = curl_easy_recv(conn->curl, p, n, &got);
        if (rc == CURLE_OK)
            return (ssize_t)got;
        if (rc != CURLE_AGAIN)
            return llmsb_err_set(err, LLMSB_ERR_BACKEND, "stream: recv: %s",
                                 curl_easy_strerror(rc));
        int w = wait_fd(conn->fd, POLLIN, timeout_ms);
        if (w == 0)
            return LLMSB_ERR_TIMEOUT;
        if (w < 0)
            return llmsb_err_set(err, LLMSB_ERR_SYS, "stream: poll: %s", strerror(errno));
    }
}

/* Reads the response head; keeps the surplus in conn->pending. */
static int read_head(struct http_conn *conn, struct llmsb_err *err)
{
    struct buf *head = &conn->head;
    char tmp[4096];
    char *end;

    for (;;) {
        ssize_t n = http_conn_recv(conn, tmp, sizeof(tmp), 30000, err);
        if (n <= 0)
            return n == 0 ? llmsb_err_set(err, LLMSB_ERR_BACKEND,
                                          "attach: connection closed before the response head")
                   : n == LLMSB_ERR_TIMEOUT
                       ? llmsb_err_set(err, LLMSB_ERR_TIMEOUT, "attach: no response head in 30 s")
                       : (int)n;
        if (buf_append(head, tmp, (size_t)n) != 0)
            return llmsb_err_set(err, LLMSB_ERR_PROTO, "attach: response head over 64 KiB");
        if ((end = strstr(head->data, "\r\n\r\n")) != NULL)
            break;
    }
    if (sscanf(head->data, "HTTP/1.%*c %ld", &conn->status) != 1)
        return llmsb_err_set(err, LLMSB_ERR_PROTO, "attach: malformed status line");
    size_t hl = (size_t)(end - head->data) + 4;
    buf_append(&conn->pending, head->data + hl, head->len - hl);
    head->len = hl;
    head->data[hl] = '\0';
    if (conn->status != 101 && conn->status != 200) {
        char shown[300];
        llmsb_escape(shown, sizeof(shown), conn->pending.data ? conn->pending.data : "",
                     conn->pending.len);
        return llmsb_err_set(err, conn->status == 404 ? LLMSB_ERR_NOTFOUND : LLMSB_ERR_BACKEND,
                             "attach: HTTP %ld: %s", conn->status, shown);
    }
    return 0;
}

/* Connects (TLS included), sends "METHOD path" with headers and body, and
 * reads the response head. */
static int open_raw(struct http_client *c, const char *method, const char *path,
                    const char *headers, const char *body, struct http_conn *conn,
                    struct llmsb_err *err)
{
    struct buf req;
    const char *hostpart;
    curl_socket_t fd;
    CURLcode rc;
    int ret;

    memset(conn, 0, sizeof(*conn));
    conn->fd = -1;
    buf_init(&conn->pending, 1 << 20);
    buf_init(&conn->head, 64 * 1024);
    if (!(conn->curl = curl_easy_init()))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "attach: curl_easy_init failed");
    setup(c, conn->curl, "GET", "/");
    /* the connection may outlive c (a stream keeps it): not c's buffer */
    curl_easy_setopt(conn->curl, CURLOPT_ERRORBUFFER, NULL);
    curl_easy_setopt(conn->curl, CURLOPT_CONNECT_ONLY, 1L);
    if ((rc = curl_easy_perform(conn->curl)) != CURLE_OK) {
        ret = curl_fail(c, rc, method, path, err);
        http_conn_close(conn);
        return ret;
    }
    curl_easy_getinfo(conn->curl, CURLINFO_ACTIVESOCKET, &fd);
    conn->fd = (int)fd;
    hostpart = strstr(c->base_url, "://") + 3;
    buf_init(&req, 1 << 20);
    buf_printf(&req, "%s %s%s HTTP/1.1\r\nHost: %.*s\r\n%s%s%s", method,
               strchr(hostpart, '/') ? strchr(hostpart, '/') : "", path,
               (int)strcspn(hostpart, "/"), hostpart, c->auth_header ? c->auth_header : "",
               c->auth_header ? "\r\n" : "", headers);
    if (body)
        buf_printf(&req, "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                   strlen(body), body);
    else
        buf_append_str(&req, "\r\n");
    ret = http_conn_send(conn, req.data, req.len, err);
    buf_release(&req);
    if (ret == 0)
        ret = read_head(conn, err);
    if (ret != 0)
        http_conn_close(conn);
    return ret;
}

int http_hijack(struct http_client *c, const char *method, const char *path, const char *body,
                struct http_conn *conn, struct llmsb_err *err)
{
    return open_raw(c, method, path, "Connection: Upgrade\r\nUpgrade: tcp\r\n", body ? body : "",
                    conn, err);
}

int http_upgrade(struct http_client *c, const char *path, const char *headers,
                 struct http_conn *conn, struct llmsb_err *err)
{
    return open_raw(c, "GET", path, headers, NULL, conn, err);
}

void http_conn_header(const struct http_conn *conn, const char *name, char *out, size_t outsz)
{
    const char *p = conn->head.data ? strstr(conn->head.data, "\r\n") : NULL;
    size_t nl = strlen(name);

    out[0] = '\0';
    while (p && p[2]) {
        p += 2;
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            v += strspn(v, " \t");
            size_t vl = strcspn(v, "\r\n");
            while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
                vl--;
            snprintf(out, outsz, "%.*s", (int)vl, v);
            return;
        }
        p = strstr(p, "\r\n");
    }
}

void http_conn_close(struct http_conn *conn)
{
    if (conn->curl)
        curl_easy_cleanup(conn->curl);
    conn->curl = NULL;
    conn->fd = -1;
    buf_release(&conn->pending);
    buf_release(&conn->head);
}

void http_error_message(const struct buf *resp, char *out, size_t outsz)
{
    cJSON *j = resp->len ? cJSON_ParseWithLength(resp->data, resp->len) : NULL;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "message");

    if (cJSON_IsString(m)) {
        llmsb_escape(out, outsz, m->valuestring, strlen(m->valuestring));
    } else { /* a text body, less its line end ("Client sent an HTTP request ...\n") */
        size_t n = resp->len;
        while (n && (resp->data[n - 1] == '\n' || resp->data[n - 1] == '\r'))
            n--;
        llmsb_escape(out, outsz, resp->data ? resp->data : "", n);
    }
    cJSON_Delete(j);
}

char *http_escape(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s);
    char *o = malloc(n * 3 + 1), *p = o;

    if (!o)
        return NULL;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '_' || ch == '.' || ch == '~') {
            *p++ = (char)ch;
        } else {
            *p++ = '%';
            *p++ = hex[ch >> 4];
            *p++ = hex[ch & 15];
        }
    }
    *p = '\0';
    return o;
}
