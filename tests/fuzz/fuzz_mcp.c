/* fuzz_mcp.c - the MCP server's messages (mcp/server.c, built in here with
 * MCP_FUZZ): the input is one line from the client, parsed and answered
 * as `llm-sandbox mcp` does (answers to /dev/null).  A tool call that
 * would run a job gets a result made up from the job (its code as stdout,
 * a status, an image, a file and a skipped one), so the answer's building
 * runs too. */
#define MCP_FUZZ 1
#include "mcp/server.c"
#include "common/base64.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* what mcp/server.c takes from the rest of the CLI */
int cli_global_opt(struct cli_globals *g, int argc, char **argv, int *i)
{
    (void)g, (void)argc, (void)argv, (void)i;
    return 0;
}
int cli_config_finish(struct cli_globals *g)
{
    (void)g;
    return 0;
}
void cli_signals(void)
{
}
void cli_error(const char *fmt, ...)
{
    (void)fmt;
}
cJSON *cli_fetch_result(struct queue *q, const char *id)
{
    (void)q, (void)id;
    return NULL;
}
int cli_result_final(const cJSON *r)
{
    return r != NULL;
}

static cJSON *made_up(const char *id, const char *code, size_t len)
{
    static const char *const statuses[] = {"ok",      "runtime_error", "blocked",
                                           "timeout", "session_lost",  "nonsense"};
    cJSON *r = cJSON_CreateObject(), *arts = cJSON_CreateArray(), *a, *v;
    size_t n = len < 300 ? len : 300, blen = 0;
    char *b64 = base64_encode(code, n, &blen);

    cJSON_AddStringToObject(r, "id", id);
    cJSON_AddStringToObject(r, "status", statuses[len % 6]);
    cJSON_AddStringToObject(r, "stdout", code);
    cJSON_AddStringToObject(r, "stderr", len % 2 ? code : "");
    cJSON_AddStringToObject(r, "compile_output", len % 3 ? "" : code);
    cJSON_AddNumberToObject(r, "exit_code", (double)(len % 256));
    cJSON_AddNumberToObject(r, "duration_ms", (double)len);
    cJSON_AddStringToObject(r, "error", len % 4 ? "" : code);
    v = cJSON_AddArrayToObject(r, "violations");
    if (len % 5 == 0) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "line", 2);
        cJSON_AddStringToObject(x, "rule", code);
        cJSON_AddItemToArray(v, x);
    }
    for (int k = 0; k < 3; k++) {
        a = cJSON_CreateObject();
        cJSON_AddStringToObject(a, "name", k == 0 ? "plot-001.png" : code);
        if (k < 2) {
            cJSON_AddStringToObject(a, "mime", k == 0 ? "image/png" : "text/csv");
            cJSON_AddStringToObject(a, "base64", b64 ? b64 : "");
        } else {
            cJSON_AddStringToObject(a, "skipped", code);
        }
        cJSON_AddItemToArray(arts, a);
    }
    cJSON_AddItemToObject(r, "artifacts", arts);
    free(b64);
    return r;
}

static cJSON *run_here(struct mcp *m, const struct job *j, struct llmsb_err *err)
{
    (void)m, (void)err;
    return made_up(j->id, j->code, j->code_len);
}

static cJSON *run_queued(struct mcp *m, const struct fields *f, const char *id,
                         struct llmsb_err *err)
{
    size_t n = 0;
    const char *code = fields_get(f, "code", &n);
    (void)m, (void)err;
    return made_up(id, code ? code : "", n);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static struct cli_globals g;
    static struct mcp m;
    static int ready;

    if (!ready) {
        config_defaults(&g.cfg);
        m.g = &g;
        if (!freopen("/dev/null", "w", stdout))
            return 0;
        ready = 1;
    }
    m.queue_mode = size % 2;
    handle_line(&m, (const char *)data, size);
    return 0;
}
