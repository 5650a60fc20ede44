/* fuzz_mcp_http.c - the MCP HTTP transport's header checks
 * (mcp/http_check.c) on any text a client may send: Authorization,
 * Host, Origin (and an allow list), Accept, Content-Type, Mcp-Session-Id.
 * Each must return without a fault, and what it accepts must hold: a
 * loopback origin's host is loopback, an accepted session id is 32 hex. */
#include "mcp/http_check.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static unsigned char want[MCP_TOKEN_HASH];
    char *s = malloc(size + 1), *half;

    if (!s)
        return 0;
    if (!want[0])
        mcp_token_hash("0123456789abcdef", 16, want);
    memcpy(s, data, size);
    s[size] = '\0';
    (void)mcp_bearer_ok(s, want);
    (void)mcp_host_loopback(s);
    (void)mcp_content_json(s);
    (void)mcp_accepts(s, "application/json");
    (void)mcp_accepts(s, "text/event-stream");
    if (mcp_session_id_ok(s) && strspn(s, "0123456789abcdef") != MCP_SESSION_ID_LEN)
        __builtin_trap();
    /* the input's first part an origin, its rest the allow list */
    half = s + strlen(s) / 2;
    if (mcp_origin_ok(s, NULL) && strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0)
        __builtin_trap();
    if (*half) {
        char c = *half;
        *half = '\0';
        (void)mcp_origin_ok(s, half + 1);
        *half = c;
    }
    free(s);
    return 0;
}
