/* http_check.h - the MCP HTTP transport's checks of a request's headers,
 * pure (no I/O, no libmicrohttpd) so a unit test and a fuzzer drive them:
 * Authorization's bearer token (constant time), Origin and Host against
 * DNS rebinding, Accept and Content-Type, an Mcp-Session-Id's form.
 * Every input is untrusted text from the network, possibly NULL. */
#ifndef LLMSB_MCP_HTTP_CHECK_H
#define LLMSB_MCP_HTTP_CHECK_H

#include <stddef.h>

#define MCP_TOKEN_HASH 32     /* SHA-256 */
#define MCP_SESSION_ID_LEN 32 /* ours: 16 random bytes as hex */
#define MCP_TOKEN_MIN 16      /* a token's least length */

/* hash gets the SHA-256 of token (len bytes). */
void mcp_token_hash(const char *token, size_t len, unsigned char hash[MCP_TOKEN_HASH]);
/* 1 when header is "Bearer <token>" (scheme in any case, blanks between)
 * and the token's hash is want; in constant time for tokens of any length. */
int mcp_bearer_ok(const char *header, const unsigned char want[MCP_TOKEN_HASH]);

/* 1 when host (a Host header's "name[:port]", or a URL's host) names this
 * machine's loopback: localhost, 127.0.0.0/8 or [::1]. */
int mcp_host_loopback(const char *host);
/* 1 when an Origin header may call us: absent (NULL: no browser), an
 * origin "scheme://host[:port]" whose host is loopback, or one listed
 * exactly in allowed (comma separated, may be NULL). */
int mcp_origin_ok(const char *origin, const char *allowed);

/* 1 when an Accept header takes type ("application/json"): the type
 * itself, its "type/ *" or "* / *" (without the blanks), parameters
 * ignored, unless its q is 0. */
int mcp_accepts(const char *accept, const char *type);
/* 1 when a Content-Type header is application/json (parameters allowed). */
int mcp_content_json(const char *ctype);

/* 1 when id has the form of our Mcp-Session-Id: MCP_SESSION_ID_LEN
 * lower-case hex digits. */
int mcp_session_id_ok(const char *id);
/* 1 when two ids of that form are equal, in constant time. */
int mcp_session_id_equal(const char *a, const char *b);
/* id gets a new id of that form from the kernel's RNG.  Returns 0, or a
 * negative code with err set (no random bytes: then no session). */
struct llmsb_err;
int mcp_session_id_new(char id[MCP_SESSION_ID_LEN + 1], struct llmsb_err *err);

#endif
