/* fuzz_mcp.c - the MCP server's pure parts on one line from the client: the
 * JSON-RPC framing (mcp/jsonrpc.c) fed the input as a stream (lines, a
 * small cap so over-long lines happen), answering through the tools
 * (mcp/tools.c, its dispatch included) to /dev/null.  A call that would run a job makes its job
 * fields and job, and gets a result made up from the job (its code as
 * stdout, a status, an image, a file and a skipped one), so the answer's
 * building and the session memory run too.  A submit_jobs call maps its
 * arguments and job file as the server does (the client's scope, the
 * batch's checks) and answers with made-up results for its jobs. */
#include <stdlib.h>
#include <string.h>

#include "batch/batch.h"
#include "common/base64.h"
#include "job/job.h"
#include "mcp/jsonrpc.h"
#include "mcp/tools.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static struct config cfg;
static struct mcp_sessions sessions;
static unsigned long calls;

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

/* execute_code (closing 0) or close_session (1), as mcp/server.c maps them,
 * with a made-up result in place of running the job */
static cJSON *call(const cJSON *args, int closing)
{
    const cJSON *sess = cJSON_GetObjectItemCaseSensitive(args, "session");
    struct mcp_session *known =
        cJSON_IsString(sess) ? mcp_session_known(&sessions, sess->valuestring, calls) : NULL;
    struct mcp_call c;
    struct llmsb_err err = {0};
    struct job j;
    cJSON *r = NULL, *out;
    char id[32];

    snprintf(id, sizeof(id), "mcp-1-%lu-00000000", ++calls);
    mcp_call_init(&c);
    if (!closing)
        mcp_execute_fields(&c, args, id, calls % 2 ? "mcp-0000abcd-" : "",
                           known ? known->lang : "python", &err);
    else if (cJSON_IsString(sess))
        mcp_close_fields(&c, sess->valuestring, id, "");
    job_init(&j, &cfg);
    if (!err.msg[0] && job_from_fields(&j, &cfg, &c.f, id, &err) == 0)
        r = made_up(j.id, j.code ? j.code : "", j.code_len);
    if (r && closing)
        out = mcp_session_closed(j.session ? j.session : "");
    else
        out = r ? mcp_result_content(r)
                : mcp_call_failed(&err, calls % 2 ? "stdin ended (the client left)" : NULL);
    if (cJSON_IsString(sess))
        mcp_session_remember(&sessions, sess->valuestring, closing ? NULL : "python", calls);
    cJSON_Delete(r);
    job_release(&j);
    mcp_call_release(&c);
    return out;
}

static cJSON *execute_code(void *ud, const cJSON *args, const struct mcp_progress *progress)
{
    (void)ud;
    if (progress) /* as the server's: a notification on the call's connection */
        jsonrpc_notify(progress->rpc, "notifications/progress", cJSON_CreateObject());
    return call(args, 0);
}

static cJSON *close_session(void *ud, const cJSON *args)
{
    (void)ud;
    return call(args, 1);
}

static void said(void *ud, enum batch_say kind, const char *line)
{
    buf_printf(ud, "%d %s\n", (int)kind, line);
}

/* submit_jobs as mcp/server.c maps it, its batch checked, not run: each
 * job a made-up result under its id */
static cJSON *submit_jobs(void *ud, const cJSON *args, const struct mcp_progress *progress)
{
    const char *scope = ++calls % 2 ? "mcp-0000abcd-" : "";
    struct llmsb_err err = {0};
    struct mcp_submit s;
    struct jobfile jf;
    struct batch b;
    struct buf text;
    cJSON **results, *out;

    (void)ud, (void)progress;
    memset(&b, 0, sizeof(b));
    if (mcp_submit_args(args, (int)(calls % 4 < 2), &s, &err) != 0 ||
        jobfile_load_string(&jf, s.jobs, s.len, "jobs", &err) != 0)
        return mcp_call_failed(&err, NULL);
    buf_init(&text, MCP_SUBMIT_SAID_MAX);
    if (mcp_jobs_scope(&jf, scope, &err) == 0 &&
        batch_init(&b, &cfg, &jf,
                   &(struct batch_opts){.dedup = s.dedup, .slots = 1, .say = said, .ud = &text},
                   &err) == 0) {
        batch_check(&b, &err);
        results = calloc(b.n, sizeof(*results));
        for (size_t i = 0; results && i < b.n; i++)
            results[i] = made_up(b.jobs[i].id ? b.jobs[i].id : "", s.jobs, i % 7);
        if (text.data)
            mcp_unscope(text.data, scope);
        out = results ? mcp_submit_answer(text.data ? text.data : "", results, b.n, scope, 0)
                      : mcp_call_failed(&err, NULL);
        for (size_t i = 0; results && i < b.n; i++)
            cJSON_Delete(results[i]);
        free(results);
    } else {
        out = mcp_call_failed(&err, NULL);
    }
    batch_release(&b);
    jobfile_release(&jf);
    buf_release(&text);
    return out;
}

static void method(void *ud, struct jsonrpc *rpc, const cJSON *id, const char *name,
                   const cJSON *params)
{
    static const struct mcp_runner run = {execute_code, close_session, submit_jobs, NULL};

    (void)ud;
    mcp_method(&cfg, &run, rpc, id, name, params);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static FILE *null;
    struct jsonrpc rpc;

    if (!null) {
        config_defaults(&cfg);
        if (!(null = fopen("/dev/null", "w")))
            return 0;
    }
    /* a cap the input can pass: the over-long line's path runs too */
    jsonrpc_init(&rpc, null, 4096, method, NULL);
    jsonrpc_feed(&rpc, (const char *)data, size);
    jsonrpc_finish(&rpc);
    jsonrpc_release(&rpc);
    return 0;
}
