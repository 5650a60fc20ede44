/* test_mcp.c - the MCP server's pure parts: the JSON-RPC framing
 * (mcp/jsonrpc.c) driven from strings, and the tools (mcp/tools.c):
 * arguments as job fields and their errors, the initialize reply, a
 * result as content, the sessions' languages, submit_jobs' arguments, its
 * job file in the client's scope and its answer.  No engine, no Redis. */
#include "test.h"

#include "config/jobfile.h"
#include "job/job.h"
#include "mcp/jsonrpc.h"
#include "mcp/tools.h"

static struct config cfg;

/* execute_code as the tests run it: its arguments back as text */
static cJSON *echo_call(void *ud, const cJSON *args)
{
    cJSON *content = cJSON_CreateArray(), *t = cJSON_CreateObject();
    char *text = cJSON_PrintUnformatted(args);

    (void)ud;
    cJSON_AddStringToObject(t, "type", "text");
    cJSON_AddStringToObject(t, "text", text ? text : "none");
    cJSON_AddItemToArray(content, t);
    free(text);
    return mcp_tool_result(content, 0);
}

/* execute_code as the tests run it: one progress notification when the
 * client asked for progress (carrying its token), then echo_call. */
static cJSON *echo_execute(void *ud, const cJSON *args, const struct mcp_progress *progress)
{
    if (progress) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddItemToObject(p, "progressToken", cJSON_Duplicate(progress->token, 1));
        jsonrpc_notify(progress->rpc, "notifications/progress", p);
    }
    return echo_call(ud, args);
}

/* The methods of these tests: MCP's, with echo_call running the calls. */
static void method(void *ud, struct jsonrpc *rpc, const cJSON *id, const char *name,
                   const cJSON *params)
{
    static const struct mcp_runner run = {echo_execute, echo_call, echo_execute, NULL};

    (void)ud;
    mcp_method(&cfg, &run, rpc, id, name, params);
}

/* Feeds input (then its end) to a framing capped at cap, in pieces of
 * chunk bytes as reads would bring it; returns the replies, one per line
 * (caller frees). */
static char *converse_chunked(const char *input, size_t cap, size_t chunk)
{
    struct jsonrpc rpc;
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);

    jsonrpc_init(&rpc, f, cap, method, NULL);
    for (size_t k = 0, n_in = strlen(input); k < n_in; k += chunk)
        jsonrpc_feed(&rpc, input + k, n_in - k < chunk ? n_in - k : chunk);
    jsonrpc_finish(&rpc);
    jsonrpc_release(&rpc);
    fclose(f);
    return out;
}

static char *converse(const char *input, size_t cap)
{
    return converse_chunked(input, cap, 65536);
}

TEST(initialize_reply)
{
    char *out = converse("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"initialize\","
                         "\"params\":{\"protocolVersion\":\"2024-11-05\"}}\n",
                         1024);
    cJSON *r = cJSON_Parse(out), *res = cJSON_GetObjectItem(r, "result");

    ASSERT(res != NULL);
    ASSERT_EQ(cJSON_GetObjectItem(r, "id")->valueint, 6);
    ASSERT_STR(cJSON_GetObjectItem(res, "protocolVersion")->valuestring, "2024-11-05");
    ASSERT_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "serverInfo"), "name")->valuestring,
               "llm-sandbox");
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(res, "capabilities"), "tools"), "listChanged")));
    cJSON_Delete(r);
    free(out);
    /* a version we do not speak: our newest */
    out = converse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                   "\"params\":{\"protocolVersion\":\"1999-01-01\"}}",
                   1024);
    ASSERT_CONTAINS(out, "\"protocolVersion\":\"2025-06-18\"");
    free(out);
}

TEST(framing_lines_batches_errors)
{
    char *out = converse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\n"
                         "[{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"},"
                         "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
                         "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"nope\"}]\n"
                         "not json\n"
                         "{\"jsonrpc\":\"1.0\",\"id\":4,\"method\":\"ping\"}\n"
                         "[]\n"
                         "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"ping\",\"params\":1}\n"
                         "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\","
                         "\"params\":{\"a\":\"x\\u0000\"}}\n",
                         1024);

    ASSERT_STR(out, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"
                    "[{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}},{\"jsonrpc\":\"2.0\",\"id\":3,"
                    "\"error\":{\"code\":-32601,\"message\":\"Method not found: nope\"}}]\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":"
                    "\"Parse error: not JSON\"}}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32600,\"message\":"
                    "\"Invalid Request: a JSON-RPC 2.0 object is expected\"}}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":"
                    "\"Invalid Request: an empty batch\"}}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"error\":{\"code\":-32602,\"message\":"
                    "\"Invalid params: an object is expected\"}}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32602,\"message\":"
                    "\"Invalid params: a string holds a NUL character (\\\\u0000), which no "
                    "argument may\"}}\n");
    free(out);
}

TEST(tools_call_dispatch)
{
    char *out = converse(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"execute_code\",\"arguments\":{\"code\":\"1\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"rm\\n\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{}}\n",
        1024);

    ASSERT_STR(out, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\","
                    "\"text\":\"{\\\"code\\\":\\\"1\\\"}\"}],\"isError\":false}}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32602,\"message\":"
                    "\"Unknown tool: rm\\\\n (tools: execute_code, submit_jobs, close_session, "
                    "get_supported_languages, get_language_details)\"}}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32602,\"message\":"
                    "\"Invalid params: name (the tool's) is required\"}}\n");
    free(out);
}

/* A progressToken in params._meta (a string or a number) reaches
 * execute_code, whose notification goes out before the call's answer; a
 * null one is no request for progress; any other, or a string over
 * MCP_PROGRESS_TOKEN_MAX bytes (each notification repeats it), is a
 * JSON-RPC error naming it, and nothing runs. */
TEST(tools_call_progress_token)
{
    char in[2048], tok[MCP_PROGRESS_TOKEN_MAX + 2];
    char *out = converse(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"execute_code\",\"arguments\":{\"code\":\"1\"},\"_meta\":{\"progressToken\":7}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"execute_code\",\"arguments\":{},\"_meta\":{\"progressToken\":null}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"execute_code\",\"arguments\":{},\"_meta\":{\"progressToken\":{}}}}\n",
        1024);

    ASSERT_STR(out, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
                    "{\"progressToken\":7}}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\","
                    "\"text\":\"{\\\"code\\\":\\\"1\\\"}\"}],\"isError\":false}}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\","
                    "\"text\":\"{}\"}],\"isError\":false}}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32602,\"message\":"
                    "\"Invalid params: _meta.progressToken: a string or a number is expected (got "
                    "an object)\"}}\n");
    free(out);
    memset(tok, 'k', sizeof(tok) - 1);
    tok[sizeof(tok) - 1] = '\0'; /* one byte over */
    snprintf(in, sizeof(in),
             "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
             "\"execute_code\",\"arguments\":{},\"_meta\":{\"progressToken\":\"%s\"}}}\n"
             "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
             "\"execute_code\",\"arguments\":{},\"_meta\":{\"progressToken\":\"%s\"}}}\n",
             tok, tok + 1);
    out = converse(in, sizeof(in));
    ASSERT_CONTAINS(out, "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32602,\"message\":"
                         "\"Invalid params: _meta.progressToken: a string of 257 bytes, over the "
                         "256 byte cap (every progress notification repeats it)\"}}\n"
                         "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"");
    ASSERT_CONTAINS(out, "\"id\":5,\"result\"");
    free(out);
}

TEST(over_long_line_refused_and_skipped)
{
    char input[400];
    char *out;

    memset(input, 'x', 200);
    snprintf(input + 200, sizeof(input) - 200,
             "\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
    out = converse_chunked(input, 64, 50); /* the line over several reads */
    ASSERT_STR(out, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":"
                    "\"Invalid Request: a message over 64 bytes\"}}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n");
    free(out);
}

/* execute_code's arguments (JSON text) as fields of job "mcp-1", scope
 * "mcp-abc-"; 0 or the error. */
static int fields_of(const char *args_json, struct mcp_call *c, struct llmsb_err *err)
{
    cJSON *args = cJSON_Parse(args_json);
    int rc;

    mcp_call_init(c);
    rc = mcp_execute_fields(c, args, "mcp-1", "mcp-abc-", "python", err);
    if (rc == 0) {
        struct job j;
        job_init(&j, &cfg);
        rc = job_from_fields(&j, &cfg, &c->f, "mcp-1", err);
        if (rc == 0) {
            snprintf(err->msg, sizeof(err->msg), "%s|%s|%lld|%s|%s", j.id, j.lang->name,
                     (long long)j.limits.timeout_ms, j.session ? j.session : "-", j.code);
        }
        job_release(&j);
    }
    cJSON_Delete(args);
    return rc;
}

TEST(execute_code_call_as_job)
{
    struct mcp_call c;
    struct llmsb_err err = {0};
    size_t n;

    /* err.msg: the job's id, language, timeout, session and code, or why not */
    fields_of("{\"code\":\"puts 1\",\"language\":\"ruby\",\"timeout\":2.5,"
              "\"artifacts\":[\"*.csv\"],\"session\":\"s1\"}",
              &c, &err);
    ASSERT_STR(err.msg, "mcp-1|ruby|2500|mcp-abc-s1|puts 1");
    ASSERT_STR(fields_get(&c.f, "timeout", &n), "2.5");
    ASSERT_STR(fields_get(&c.f, "artifacts", &n), "[\"*.csv\"]");
    mcp_call_release(&c);
    /* without a language: the default given (a session's, or python) */
    err.msg[0] = '\0';
    fields_of("{\"code\":\"print(1)\"}", &c, &err);
    ASSERT_STR(err.msg, "mcp-1|python|10000|-|print(1)");
    mcp_call_release(&c);
}

TEST(bad_argument_names_it)
{
    static const struct {
        const char *args, *msg;
    } rows[] = {
        {"{\"code\":\"x\",\"timeout\":\"soon\"}", "timeout: a number of seconds is expected"},
        {"{\"language\":\"python\"}", "code: required, a string"},
        {"{\"code\":\"x\",\"colour\":1}",
         "colour: unknown argument (execute_code takes code, language, libraries, timeout, "
         "artifacts, session)"},
        {"{\"code\":\"x\",\"libraries\":[1]}", "libraries: every item must be a string"},
        {"{\"code\":\"x\",\"session\":7}", "session: a string (the session's id) is expected"},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct mcp_call c;
        struct llmsb_err err = {0};
        cJSON *out;
        ASSERT_MSG(fields_of(rows[i].args, &c, &err) == LLMSB_ERR_INVALID, rows[i].args);
        ASSERT_STR(err.msg, rows[i].msg);
        out = mcp_call_failed(&err, NULL);
        ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(out, "isError")));
        ASSERT_CONTAINS(
            cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(out, "content"), 0), "text")
                ->valuestring,
            "invalid: ");
        cJSON_Delete(out);
        mcp_call_release(&c);
    }
}

TEST(result_as_content)
{
    cJSON *r = cJSON_Parse("{\"id\":\"j1\",\"status\":\"runtime_error\",\"stdout\":\"hi\\n\","
                           "\"stderr\":\"boom\",\"exit_code\":1,\"duration_ms\":12,"
                           "\"artifacts\":[{\"name\":\"p.png\",\"mime\":\"image/png\","
                           "\"base64\":\"AA==\"},{\"name\":\"d.csv\",\"mime\":\"text/csv\","
                           "\"base64\":\"AA==\"},{\"name\":\"big\",\"skipped\":\"too big\"}]}");
    cJSON *out = mcp_result_content(r), *c = cJSON_GetObjectItem(out, "content");
    char *text = cJSON_PrintUnformatted(c);

    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(out, "isError")));
    ASSERT_STR(text, "[{\"type\":\"text\",\"text\":\"hi\\n\"},"
                     "{\"type\":\"text\",\"text\":\"stderr:\\nboom\"},"
                     "{\"type\":\"text\",\"text\":\"status: runtime_error, exit code 1, 12 ms\"},"
                     "{\"type\":\"image\",\"data\":\"AA==\",\"mimeType\":\"image/png\"},"
                     "{\"type\":\"resource\",\"resource\":{\"uri\":\"sandbox://j1/d.csv\","
                     "\"mimeType\":\"text/csv\",\"blob\":\"AA==\"}},"
                     "{\"type\":\"text\",\"text\":\"file big not returned: too big\"}]");
    free(text);
    cJSON_Delete(out);
    cJSON_Delete(r);
}

TEST(sessions_remember_their_language)
{
    static struct mcp_sessions ss;
    char sid[32];

    mcp_session_remember(&ss, "a", "ruby", 1);
    ASSERT_STR(mcp_session_known(&ss, "a", 2)->lang, "ruby");
    ASSERT(mcp_session_known(&ss, "b", 2) == NULL);
    mcp_session_remember(&ss, "a", NULL, 3); /* closed */
    ASSERT(mcp_session_known(&ss, "a", 3) == NULL);
    /* full: the one used least recently is forgotten */
    for (unsigned long i = 0; i < MCP_SESSIONS_KEPT; i++) {
        snprintf(sid, sizeof(sid), "s%lu", i);
        mcp_session_remember(&ss, sid, "r", 10 + i);
    }
    ASSERT(mcp_session_known(&ss, "s0", 1000) != NULL); /* s1 is now the oldest */
    mcp_session_remember(&ss, "new", "python", 1001);
    ASSERT(mcp_session_known(&ss, "s1", 1002) == NULL);
    ASSERT(mcp_session_known(&ss, "s0", 1002) != NULL);
    ASSERT_STR(mcp_session_known(&ss, "new", 1002)->lang, "python");
}

/* submit_jobs' arguments as text: its fields, or why not. */
static int submit_args_of(const char *json, int queue, struct mcp_submit *s, struct llmsb_err *err)
{
    cJSON *args = cJSON_Parse(json);
    int rc = mcp_submit_args(args, queue, s, err);

    cJSON_Delete(args);
    return rc;
}

TEST(submit_jobs_arguments_name_the_field)
{
    static const struct {
        const char *args;
        int queue;
        const char *msg;
    } rows[] = {
        {"{}", 1, "jobs: required, a string (the job file: JSON Lines or YAML)"},
        {"{\"jobs\":\"x\",\"dedupe\":true}", 1,
         "dedupe: unknown argument (submit_jobs takes jobs, dedup, recheck_timeouts, wait, "
         "existing, allow_invalid)"},
        {"{\"jobs\":\"x\",\"dedup\":\"yes\"}", 1, "dedup: true or false is expected"},
        {"{\"jobs\":\"x\",\"existing\":\"keep\"}", 1,
         "existing: \"keep\" is not one of \"refuse\", \"rerun\", \"reuse\""},
        {"{\"jobs\":\"x\",\"existing\":\"reuse\"}", 0,
         "existing: \"reuse\" needs a server started with --queue (in process no result "
         "outlives its call)"},
        {"{\"jobs\":\"x\",\"wait\":false}", 0,
         "wait: false needs a server started with --queue (in process the jobs run within the "
         "call)"},
        {"[1]", 1, "arguments: an object is expected"},
    };
    struct mcp_submit s;
    struct llmsb_err err = {0};

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        ASSERT_MSG(submit_args_of(rows[i].args, rows[i].queue, &s, &err) == LLMSB_ERR_INVALID,
                   rows[i].args);
        ASSERT_STR(err.msg, rows[i].msg);
    }
    /* the defaults, and each one given (null is absent) */
    ASSERT_EQ(submit_args_of("{\"jobs\":\"a\\nb\",\"dedup\":null}", 0, &s, &err), 0);
    ASSERT(s.dedup && !s.recheck && s.wait && !s.allow_invalid && s.existing == 0);
    ASSERT_EQ(s.len, 3);
    ASSERT_EQ(submit_args_of("{\"jobs\":\"x\",\"dedup\":false,\"recheck_timeouts\":true,"
                             "\"wait\":false,\"existing\":\"reuse\",\"allow_invalid\":true}",
                             1, &s, &err),
              0);
    ASSERT(!s.dedup && s.recheck && !s.wait && s.allow_invalid && s.existing == 2);
}

TEST(submit_jobs_file_in_the_clients_scope)
{
    const char *text = "{\"id\":\"a\",\"lang\":\"python\",\"code\":\"1\",\"session\":\"s\"}\n"
                       "{\"lang\":\"python\",\"code\":\"2\",\"id\":\"\"}\n"
                       "{\"id\":7,\"lang\":\"python\",\"code\":\"3\"}\n";
    struct jobfile jf;
    struct llmsb_err err = {0};
    struct buf many;

    ASSERT_EQ(jobfile_load_string(&jf, text, strlen(text), "jobs", &err), 0);
    ASSERT_EQ(mcp_jobs_scope(&jf, "mcp-00ff-", &err), 0);
    ASSERT_STR(cJSON_GetObjectItem(jf.jobs[0], "id")->valuestring, "mcp-00ff-a");
    ASSERT_STR(cJSON_GetObjectItem(jf.jobs[0], "session")->valuestring, "mcp-00ff-s");
    ASSERT_STR(cJSON_GetObjectItem(jf.jobs[1], "id")->valuestring, ""); /* the batch gives one */
    ASSERT_STR(cJSON_GetObjectItem(jf.jobs[2], "id")->valuestring, "mcp-00ff-7");
    jobfile_release(&jf);
    /* no scope (stdio in process): the file as it is */
    ASSERT_EQ(jobfile_load_string(&jf, text, strlen(text), "jobs", &err), 0);
    ASSERT_EQ(mcp_jobs_scope(&jf, "", &err), 0);
    ASSERT_STR(cJSON_GetObjectItem(jf.jobs[0], "id")->valuestring, "a");
    jobfile_release(&jf);
    /* what only a batch writes, named at its line */
    text = "{\"id\":\"a\",\"lang\":\"python\",\"code\":\"1\"}\n"
           "{\"id\":\"b\",\"lang\":\"python\",\"code\":\"1\",\"copies\":[{\"id\":\"c\"}]}\n";
    ASSERT_EQ(jobfile_load_string(&jf, text, strlen(text), "jobs", &err), 0);
    ASSERT_EQ(mcp_jobs_scope(&jf, "mcp-00ff-", &err), LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg, "jobs:2: copies: written by the batch itself (dedup, recheck_timeouts), "
                        "not by a job");
    jobfile_release(&jf);
    /* one job past the cap */
    buf_init(&many, 0);
    for (int i = 0; i <= MCP_SUBMIT_MAX_JOBS; i++)
        buf_printf(&many, "{\"lang\":\"python\",\"code\":\"%d\"}\n", i);
    ASSERT_EQ(jobfile_load_string(&jf, many.data, many.len, "jobs", &err), 0);
    buf_release(&many);
    ASSERT_EQ(mcp_jobs_scope(&jf, "", &err), LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg, "jobs: 1001 jobs, over the 1000 one call takes (split the file)");
    jobfile_release(&jf);
}

TEST(submit_jobs_answer_in_the_clients_names)
{
    char text[] = "jobs:1: id \"mcp-00ff-a\" already has a result (ok)\nmcp-00ff-";
    cJSON *results[3], *out, *content;
    char *big = malloc(MCP_SUBMIT_RESULTS_MAX / 2 + 1);
    char *ids[] = {"mcp-00ff-a", "1700000000000-0"};
    const char *lines;

    mcp_unscope(text, "mcp-00ff-");
    ASSERT_STR(text, "jobs:1: id \"a\" already has a result (ok)\n");
    ASSERT(big != NULL);
    memset(big, 'x', MCP_SUBMIT_RESULTS_MAX / 2);
    big[MCP_SUBMIT_RESULTS_MAX / 2] = '\0';
    /* the second big result would take the lines past the cap: short */
    for (int i = 0; i < 3; i++) {
        results[i] = cJSON_CreateObject();
        cJSON_AddStringToObject(results[i], "id", i ? "mcp-00ff-b" : "mcp-00ff-a");
        cJSON_AddStringToObject(results[i], "status", "ok");
        cJSON_AddStringToObject(results[i], "stdout", i == 2 ? "small" : big);
        if (i)
            cJSON_AddStringToObject(results[i], "copy_of", "mcp-00ff-a");
    }
    free(big);
    out = mcp_submit_answer("summary", results, 3, "mcp-00ff-", 0);
    content = cJSON_GetObjectItem(out, "content");
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(out, "isError")));
    ASSERT_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(content, 0), "text")->valuestring, "summary");
    lines = cJSON_GetObjectItem(cJSON_GetArrayItem(content, 1), "text")->valuestring;
    ASSERT(strncmp(lines, "{\"id\":\"a\",\"status\":\"ok\",\"stdout\":\"xxx", 36) == 0);
    ASSERT_CONTAINS(lines, "\n{\"id\":\"b\",\"status\":\"ok\",\"copy_of\":\"a\",\"omitted\":\"its "
                           "output and the rest: the answer's results reached 4 MiB\"}\n");
    ASSERT_CONTAINS(lines, "\n{\"id\":\"b\",\"status\":\"ok\",\"stdout\":\"small\",\"copy_of\":"
                           "\"a\"}\n");
    ASSERT(strlen(lines) < MCP_SUBMIT_RESULTS_MAX + 4096);
    ASSERT(!strstr(lines, "mcp-00ff-"));
    cJSON_Delete(out);
    for (int i = 0; i < 3; i++)
        cJSON_Delete(results[i]);
    out = mcp_submit_sent("sent", ids, 2, "mcp-00ff-");
    content = cJSON_GetObjectItem(out, "content");
    ASSERT_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(content, 1), "text")->valuestring,
               "[\"a\",\"1700000000000-0\"]");
    cJSON_Delete(out);
}

static void setup(void) __attribute__((constructor));
static void setup(void)
{
    config_defaults(&cfg);
}

TEST_MAIN("mcp", T(initialize_reply), T(framing_lines_batches_errors), T(tools_call_dispatch),
          T(tools_call_progress_token), T(over_long_line_refused_and_skipped),
          T(execute_code_call_as_job), T(bad_argument_names_it), T(result_as_content),
          T(sessions_remember_their_language), T(submit_jobs_arguments_name_the_field),
          T(submit_jobs_file_in_the_clients_scope), T(submit_jobs_answer_in_the_clients_names))
