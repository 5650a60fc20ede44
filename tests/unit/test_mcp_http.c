/* test_mcp_http.c - the MCP HTTP transport's pure parts: the header checks
 * of mcp/http_check.c (bearer tokens, loopback hosts and origins, Accept
 * and Content-Type, session ids) and the framing's writer (mcp/jsonrpc.c),
 * which tells a notification from an answer so HTTP can stream it. */
#include "test.h"

#include "mcp/http_check.h"
#include "mcp/jsonrpc.h"

TEST(bearer_token)
{
    unsigned char want[MCP_TOKEN_HASH];
    static const struct {
        const char *header;
        int ok;
    } rows[] = {
        {"Bearer 0123456789abcdef", 1},
        {"bearer 0123456789abcdef", 1},
        {"BEARER \t0123456789abcdef ", 1},
        {"  Bearer 0123456789abcdef", 1},
        {"Bearer 0123456789abcdeF", 0},
        {"Bearer 0123456789abcde", 0},
        {"Bearer 0123456789abcdef0", 0},
        {"Bearer0123456789abcdef", 0},
        {"Basic 0123456789abcdef", 0},
        {"Bearer ", 0},
        {"Bearer", 0},
        {"", 0},
        {"0123456789abcdef", 0},
        {"Bearer 0123456789 abcdef", 0},
    };

    mcp_token_hash("0123456789abcdef", 16, want);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        ASSERT_MSG(mcp_bearer_ok(rows[i].header, want) == rows[i].ok, rows[i].header);
    ASSERT(!mcp_bearer_ok(NULL, want));
}

TEST(loopback_hosts_and_origins)
{
    static const char *const yes[] = {"localhost", "localhost:8808", "LocalHost:1",
                                      "127.0.0.1", "127.0.0.1:80",   "127.1.2.3:9",
                                      "[::1]",     "[::1]:8808",     "::1"};
    static const char *const no[] = {"evil.example.com",   "evil.example.com:8808",
                                     "localhost.evil.com", "128.0.0.1",
                                     "127.0.0.1.evil.com", "10.0.0.1:80",
                                     "[::2]:80",           "[::1]x",
                                     "localhost:",         "localhost:8a",
                                     "localhost:123456",   "",
                                     "127.0.0.1:80:90",    "[::1"};

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        ASSERT_MSG(mcp_host_loopback(yes[i]), yes[i]);
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        ASSERT_MSG(!mcp_host_loopback(no[i]), no[i]);
    ASSERT(!mcp_host_loopback(NULL));
    ASSERT(mcp_origin_ok(NULL, NULL)); /* no Origin: no browser */
    ASSERT(mcp_origin_ok("http://localhost:3000", NULL));
    ASSERT(mcp_origin_ok("https://127.0.0.1", NULL));
    ASSERT(mcp_origin_ok("http://[::1]:80", NULL));
    ASSERT(!mcp_origin_ok("http://evil.example.com", NULL));
    ASSERT(!mcp_origin_ok("http://localhost.evil.com", NULL));
    ASSERT(!mcp_origin_ok("http://localhost/x", NULL));
    ASSERT(!mcp_origin_ok("null", NULL));
    ASSERT(!mcp_origin_ok("file://localhost", NULL));
    ASSERT(!mcp_origin_ok("localhost", NULL));
    ASSERT(mcp_origin_ok("https://app.example.com", "https://a.example,https://app.example.com"));
    ASSERT(!mcp_origin_ok("https://app.example.co", "https://app.example.com"));
    ASSERT(!mcp_origin_ok("https://app.example.com:443", "https://app.example.com"));
    ASSERT(!mcp_origin_ok("", ",,"));
}

TEST(media_types)
{
    ASSERT(mcp_accepts("application/json, text/event-stream", "application/json"));
    ASSERT(mcp_accepts("application/json, text/event-stream", "text/event-stream"));
    ASSERT(mcp_accepts("text/event-stream,application/json;q=0.9", "application/json"));
    ASSERT(mcp_accepts("*/*", "text/event-stream"));
    ASSERT(mcp_accepts("text/*", "text/event-stream"));
    ASSERT(mcp_accepts("APPLICATION/JSON", "application/json"));
    ASSERT(!mcp_accepts("application/json", "text/event-stream"));
    ASSERT(!mcp_accepts("application/json;q=0, text/event-stream", "application/json"));
    ASSERT(!mcp_accepts("application/json; q=0.000", "application/json"));
    ASSERT(mcp_accepts("application/json; q=0.5", "application/json"));
    ASSERT(!mcp_accepts("application/jsonx", "application/json"));
    ASSERT(!mcp_accepts("application/*x", "application/json"));
    ASSERT(!mcp_accepts("", "application/json"));
    ASSERT(!mcp_accepts(NULL, "application/json"));
    ASSERT(mcp_content_json("application/json"));
    ASSERT(mcp_content_json("application/json; charset=utf-8"));
    ASSERT(mcp_content_json("Application/JSON"));
    ASSERT(!mcp_content_json("application/jsonp"));
    ASSERT(!mcp_content_json("text/plain"));
    ASSERT(!mcp_content_json(NULL));
}

TEST(session_ids)
{
    char a[MCP_SESSION_ID_LEN + 1], b[MCP_SESSION_ID_LEN + 1];

    ASSERT_EQ(mcp_session_id_new(a, NULL), 0);
    ASSERT_EQ(mcp_session_id_new(b, NULL), 0);
    ASSERT(mcp_session_id_ok(a));
    ASSERT(strcmp(a, b) != 0);
    ASSERT(mcp_session_id_equal(a, a));
    ASSERT(!mcp_session_id_equal(a, b));
    ASSERT(!mcp_session_id_ok("0123456789abcdef0123456789abcde"));   /* 31 */
    ASSERT(!mcp_session_id_ok("0123456789abcdef0123456789abcdef0")); /* 33 */
    ASSERT(!mcp_session_id_ok("0123456789ABCDEF0123456789abcdef"));
    ASSERT(!mcp_session_id_ok("0123456789abcdef0123456789abcde "));
    ASSERT(!mcp_session_id_ok(""));
    ASSERT(!mcp_session_id_ok(NULL));
}

/* ---- the writer ---------------------------------------------------------------- */

struct seen {
    char text[512];
    char kinds[8];
    int n;
};

static void record(void *wud, enum jsonrpc_out kind, const char *text, size_t len)
{
    struct seen *s = wud;
    size_t at = strlen(s->text);

    snprintf(s->text + at, sizeof(s->text) - at, "%.*s|", (int)len, text);
    if (s->n < 7)
        s->kinds[s->n++] = kind == JSONRPC_OUT_NOTIFICATION ? 'N' : 'A';
}

/* A method that notifies before it answers, as a call with progress does. */
static void notifying(void *ud, struct jsonrpc *rpc, const cJSON *id, const char *method,
                      const cJSON *params)
{
    (void)ud;
    (void)params;
    jsonrpc_notify(rpc, "notifications/progress", cJSON_CreateObject());
    jsonrpc_reply(rpc, id, cJSON_CreateString(method));
}

TEST(writer_tells_notifications_from_answers)
{
    struct jsonrpc rpc;
    struct seen s = {{0}, {0}, 0};
    const char *body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}\n{\"jsonrpc\":\"2.0\"}";

    jsonrpc_init(&rpc, NULL, 4096, notifying, NULL);
    jsonrpc_set_writer(&rpc, record, &s);
    /* a body is one message: a newline in it does not split it */
    jsonrpc_message(&rpc, body, strlen(body));
    ASSERT_STR(s.kinds, "A");
    ASSERT_CONTAINS(s.text, "\"code\":-32700");
    memset(&s, 0, sizeof(s));
    body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}";
    jsonrpc_message(&rpc, body, strlen(body));
    ASSERT_STR(s.kinds, "NA");
    ASSERT_STR(s.text, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}|"
                       "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"x\"}|");
    memset(&s, 0, sizeof(s));
    body = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"},{\"jsonrpc\":\"2.0\",\"id\":2,"
           "\"method\":\"b\"}]";
    jsonrpc_message(&rpc, body, strlen(body)); /* a batch: notifications, then one array */
    ASSERT_STR(s.kinds, "NNA");
    ASSERT_CONTAINS(s.text, "|[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"a\"},");
    jsonrpc_release(&rpc);
}

TEST_MAIN("mcp_http", T(bearer_token), T(loopback_hosts_and_origins), T(media_types),
          T(session_ids), T(writer_tells_notifications_from_answers))
