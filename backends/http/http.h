/* http.h - a small HTTP/1.1 client for container engine APIs over libcurl:
 * unix sockets or tcp, plain requests with capped bodies, streamed uploads
 * and downloads, and hijacked (upgraded) raw streams for attach.  CURLcode
 * and the error buffer are translated to struct llmsb_err here, once. */
#ifndef LLMSB_HTTP_H
#define LLMSB_HTTP_H

#include <stddef.h>
#include <sys/types.h>
#include "common/common.h"

/* TLS and credentials for https hosts (PEM text, not paths). */
struct http_tls {
    const char *ca_pem; /* NULL: the system's CAs */
    const char *cert_pem, *key_pem;
    const char *bearer; /* "Authorization: Bearer <bearer>" on every request */
    int insecure;       /* skip the server certificate check */
};

struct http_client {
    char *socket_path; /* unix socket, or NULL for tcp */
    char *base_url;    /* "http://localhost/v1.41" */
    void *curl;        /* one reused easy handle (keeps the connection) */
    char *ca_pem, *cert_pem, *key_pem;
    char *auth_header;
    int insecure;
    char errbuf[256];
};

/* host: "unix:///var/run/docker.sock", "/path/to.sock", "tcp://h:p",
 * "http://h:p" or "https://h:p". */
int http_client_init(struct http_client *c, const char *host, const char *api_prefix,
                     struct llmsb_err *err);
/* Copies t into c: used by every later request. */
int http_client_set_tls(struct http_client *c, const struct http_tls *t, struct llmsb_err *err);
void http_client_release(struct http_client *c);

/* Plain request. body may be NULL. The response body goes to resp (its cap
 * bounds it; over the cap is an error). *status gets the HTTP status. */
int http_request(struct http_client *c, const char *method, const char *path,
                 const char *content_type, const char *body, size_t body_len, long *status,
                 struct buf *resp, struct llmsb_err *err);

/* Streaming request: the body is pulled from read_cb (NULL: no body) and
 * the response is pushed to write_cb as it arrives (return non-zero from
 * write_cb to abort). timeout_ms 0 = none. */
typedef ssize_t (*http_read_cb)(void *ud, char *dst, size_t max);
typedef int (*http_write_cb)(void *ud, const char *data, size_t len);
int http_request_stream(struct http_client *c, const char *method, const char *path,
                        const char *content_type, http_read_cb rd, void *rd_ud, http_write_cb wr,
                        void *wr_ud, long timeout_ms, long *status, struct llmsb_err *err);

/* A hijacked connection: after the 101/200 answer, raw bytes both ways. */
struct http_conn {
    void *curl;
    int fd;
    struct buf pending; /* bytes read past the response head */
    struct buf head;    /* the response head, for its headers */
    long status;
};

int http_hijack(struct http_client *c, const char *method, const char *path, const char *body,
                struct http_conn *conn, struct llmsb_err *err);
/* The same with the caller's upgrade headers (each ending in \r\n, e.g.
 * "Connection: Upgrade\r\nUpgrade: websocket\r\n..."); no body.  A
 * status other than 101 or 200 is an error naming it and the body. */
int http_upgrade(struct http_client *c, const char *path, const char *headers,
                 struct http_conn *conn, struct llmsb_err *err);
/* The value of header name in conn->head ("" if absent), into out. */
void http_conn_header(const struct http_conn *conn, const char *name, char *out, size_t outsz);
int http_conn_send(struct http_conn *conn, const char *p, size_t n, struct llmsb_err *err);
/* Reads what is available, waiting at most timeout_ms (-1 = forever).
 * Returns bytes read (>0), 0 on EOF, LLMSB_ERR_TIMEOUT, or an error. */
ssize_t http_conn_recv(struct http_conn *conn, char *p, size_t n, int timeout_ms,
                       struct llmsb_err *err);
void http_conn_close(struct http_conn *conn);

/* An API's error body as text, escaped into out: its JSON "message" (Docker,
 * Podman, a Kubernetes Status) or the raw body. */
void http_error_message(const struct buf *resp, char *out, size_t outsz);

/* Percent-encodes s for a query string. Returns a new string; caller frees. */
char *http_escape(const char *s);

#endif
