/* test_front_judge0.c - the Judge0 CE route set (front/judge0.c) driven
 * through judge0_route with a host of the test's own: the job fields a
 * submission becomes, each of our results as Judge0's submission (every
 * status id), Base64 both ways, fields=, batches, tokens, every error
 * shape, and the language ids. */
#include "test.h"

#include <archive.h>
#include <archive_entry.h>
#include <cjson/cJSON.h>

#include "common/base64.h"
#include "config/config.h"
#include "front/routes.h"
#include "languages/languages.h"

/* ---- the host: a test double ---- */

/* A test double of front_host: records the jobs it is asked to run or
 * start (copies), answers run with the result the test set, and lookup
 * with the state and result the test set for one id. */
#define FAKE_JOBS 32
static struct fake {
    struct fields jobs[FAKE_JOBS];
    size_t njobs;
    int run_calls, start_calls;
    char callback[256];
    front_render_fn render;
    const char *run_result; /* JSON text run answers with ("id" filled in) */
    int start_rc;           /* what start returns */
    char lookup_id[FRONT_ID_MAX];
    enum front_state lookup_state;
    const char *lookup_result;
    unsigned counter;
} fk;

static void fake_record(const struct fields *jobs, size_t n)
{
    for (size_t i = 0; i < n && fk.njobs < FAKE_JOBS; i++) {
        struct fields *f = &fk.jobs[fk.njobs++];
        fields_init(f, 64);
        for (size_t k = 0; k < jobs[i].n; k++)
            fields_add_copy(f, jobs[i].v[k].name, jobs[i].v[k].name_len, jobs[i].v[k].value,
                            jobs[i].v[k].len);
    }
}

/* A result object from JSON text, with the job's id and meta as the host
 * copies them. */
static cJSON *fake_result(const char *text, const struct fields *job)
{
    cJSON *r = cJSON_Parse(text);
    const char *id = job ? fields_get(job, "id", NULL) : NULL;
    const char *meta = job ? fields_get(job, "meta", NULL) : NULL;

    if (r && id && !cJSON_GetObjectItem(r, "id"))
        cJSON_AddStringToObject(r, "id", id);
    if (r && meta)
        cJSON_AddItemToObject(r, "meta", cJSON_Parse(meta));
    return r;
}

static int fake_run(void *ud, const struct fields *jobs, size_t n, cJSON **results,
                    struct llmsb_err *err)
{
    (void)ud;
    (void)err;
    fk.run_calls++;
    fake_record(jobs, n);
    for (size_t i = 0; i < n; i++)
        results[i] = fake_result(fk.run_result, &jobs[i]);
    return 0;
}

static int fake_start(void *ud, const struct fields *jobs, size_t n, const char *callback,
                      front_render_fn render, void *rud, void (*rud_free)(void *),
                      struct llmsb_err *err)
{
    (void)ud;
    (void)rud;
    (void)rud_free;
    fk.start_calls++;
    if (fk.start_rc)
        return llmsb_err_set(err, fk.start_rc, "callback: \"%s\" is not on the allowlist",
                             callback ? callback : "");
    fake_record(jobs, n);
    snprintf(fk.callback, sizeof(fk.callback), "%s", callback ? callback : "");
    fk.render = render;
    return 0;
}

static enum front_state fake_lookup(void *ud, const char *id, cJSON **result)
{
    (void)ud;
    *result = NULL;
    if (strcmp(id, fk.lookup_id) != 0)
        return FRONT_UNKNOWN;
    if (fk.lookup_state == FRONT_DONE)
        *result = fake_result(fk.lookup_result, NULL);
    return fk.lookup_state;
}

static int fake_random_hex(void *ud, char *buf, size_t bufsz, size_t n, struct llmsb_err *err)
{
    (void)ud;
    (void)err;
    for (size_t i = 0; i < 2 * n && i + 1 < bufsz; i++)
        buf[i] = "0123456789abcdef"[(fk.counter + i * 7) % 16];
    buf[2 * n < bufsz ? 2 * n : bufsz - 1] = '\0';
    fk.counter++;
    return 0;
}

static struct config cfg;
static struct front_host host = {&cfg, fake_run, fake_start, fake_lookup, fake_random_hex,
                                 0,    0,        NULL};

static void fake_reset(void)
{
    for (size_t i = 0; i < fk.njobs; i++)
        fields_release(&fk.jobs[i]);
    memset(&fk, 0, sizeof(fk));
    fk.run_result =
        "{\"status\": \"ok\", \"exit_code\": 0, \"stdout\": \"hi\\n\", \"stderr\": \"\","
        " \"compile_output\": \"\", \"duration_ms\": 5, \"cpu_ms\": 2,"
        " \"max_rss_kb\": 9000, \"queued_at\": 1700000000123,"
        " \"finished_at\": 1700000001000}";
    config_defaults(&cfg);
    cfg.defaults.timeout_ms = 10000;
    cfg.max.timeout_ms = 60000;
    cfg.max.memory_mb = 2048;
    cfg.max.pids = 256;
    cfg.allow_network = 0;
    host.max_jobs = 0;
}

/* ---- requests ---- */

struct treq {
    struct front_req r;
    const char *args[8][2];
};

static const char *treq_arg(const struct front_req *r, const char *name)
{
    const struct treq *t = (const struct treq *)r;
    for (size_t i = 0; i < 8 && t->args[i][0]; i++)
        if (strcmp(t->args[i][0], name) == 0)
            return t->args[i][1];
    return NULL;
}

/* Sends method path?query (query as "k=v&k=v", no escapes) with body;
 * returns the answer's status, a->json its body. */
static int call(const char *method, const char *path, const char *query, const char *body,
                struct front_answer *a)
{
    static char qbuf[1024];
    struct treq t = {{method, path, body ? body : "", body ? strlen(body) : 0, treq_arg, NULL},
                     {{0}}};
    size_t n = 0;

    snprintf(qbuf, sizeof(qbuf), "%s", query ? query : "");
    for (char *p = qbuf; *p && n < 8; n++) {
        char *amp = strchr(p, '&'), *eq;
        if (amp)
            *amp = '\0';
        eq = strchr(p, '=');
        if (eq)
            *eq = '\0';
        t.args[n][0] = p;
        t.args[n][1] = eq ? eq + 1 : "";
        p = amp ? amp + 1 : p + strlen(p);
    }
    cJSON_Delete(a->json);
    memset(a, 0, sizeof(*a));
    if (!judge0_route(&host, &t.r, a))
        return 0;
    if (getenv("J0_DEBUG")) {
        char *txt = cJSON_PrintUnformatted(a->json);
        fprintf(stderr, "%s %s -> %d %s\n", method, path, a->status, txt ? txt : "");
        free(txt);
    }
    return a->status;
}

static const char *jstr(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int jnull(const cJSON *o, const char *name)
{
    return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, name));
}

static double jnum(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static int status_id(const cJSON *o)
{
    return (int)jnum(cJSON_GetObjectItemCaseSensitive(o, "status"), "id");
}

/* The first message of a 422 body's field. */
static const char *err422(const cJSON *o, const char *field)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, field);
    return cJSON_IsArray(l) && cJSON_IsString(l->child) ? l->child->valuestring : NULL;
}

static const char *job(size_t i, const char *name)
{
    return i < fk.njobs ? fields_get(&fk.jobs[i], name, NULL) : NULL;
}

#define PY "{\"language_id\": 71, \"source_code\": \"print('hi')\"}"

/* ---- tests ---- */

TEST(create_wait_accepted)
{
    struct front_answer a = {0};

    fake_reset();
    ASSERT_EQ(call("POST", "/submissions", "wait=true", PY, &a), 201);
    ASSERT_EQ(fk.run_calls, 1);
    ASSERT_STR(job(0, "lang"), "python");
    ASSERT_STR(job(0, "code"), "print('hi')");
    ASSERT(strncmp(job(0, "id"), "judge0-", 7) == 0);
    ASSERT(job(0, "expect_stdout") == NULL && job(0, "timeout") == NULL);
    ASSERT_EQ(status_id(a.json), 3);
    ASSERT_STR(jstr(cJSON_GetObjectItem(a.json, "status"), "description"), "Accepted");
    ASSERT_STR(jstr(a.json, "stdout"), "hi\n");
    ASSERT_STR(jstr(a.json, "time"), "0.002");
    ASSERT_EQ(jnum(a.json, "memory"), 9000);
    ASSERT(jnull(a.json, "stderr") && jnull(a.json, "compile_output") && jnull(a.json, "message"));
    ASSERT_EQ(strlen(jstr(a.json, "token")), 36);
    ASSERT_STR(job(0, "id") + 7, jstr(a.json, "token"));
    ASSERT_EQ(jstr(a.json, "token")[14], '4'); /* a version 4 UUID */
    ASSERT_EQ(cJSON_GetArraySize(a.json), 8);  /* the default fields */
    cJSON_Delete(a.json);
    fake_reset();
}

/* Each of our results as Judge0's status id and message. */
TEST(status_ids)
{
    static const struct {
        const char *result;
        int id;
        const char *message;
    } rows[] = {
        {"{\"status\": \"ok\", \"exit_code\": 0}", 3, NULL},
        {"{\"status\": \"ok\", \"exit_code\": 0, \"passed\": true}", 3, NULL},
        {"{\"status\": \"ok\", \"exit_code\": 0, \"passed\": false}", 4, NULL},
        {"{\"status\": \"timeout\", \"exit_code\": 137, \"signal\": 9}", 5, "Time limit exceeded"},
        {"{\"status\": \"compile_error\", \"compile_output\": \"e\"}", 6, NULL},
        {"{\"status\": \"runtime_error\", \"exit_code\": 139, \"signal\": 11}", 7,
         "Caught fatal signal 11"},
        {"{\"status\": \"runtime_error\", \"exit_code\": 153, \"signal\": 25}", 8, NULL},
        {"{\"status\": \"runtime_error\", \"exit_code\": 136, \"signal\": 8}", 9, NULL},
        {"{\"status\": \"runtime_error\", \"exit_code\": 134, \"signal\": 6}", 10, NULL},
        {"{\"status\": \"runtime_error\", \"exit_code\": 3}", 11, "Exited with error status 3"},
        {"{\"status\": \"runtime_error\", \"exit_code\": 143, \"signal\": 15}", 12,
         "Caught fatal signal 15"},
        {"{\"status\": \"internal_error\", \"error\": \"docker: down\"}", 13, "docker: down"},
        {"{\"status\": \"install_error\"}", 13, "install_error"},
        {"{\"status\": \"memory_limit\", \"exit_code\": 137, \"signal\": 9}", 15,
         "Memory limit exceeded"},
        {"{\"status\": \"output_limit\", \"exit_code\": 137}", 16, NULL},
        {"{\"status\": \"blocked\", \"error\": \"rule os.system\"}", 17, "rule os.system"},
    };
    struct front_answer a = {0};

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        fake_reset();
        fk.run_result = rows[i].result;
        ASSERT_MSG(call("POST", "/submissions", "wait=true&fields=*", PY, &a) == 201,
                   rows[i].result);
        ASSERT_MSG(status_id(a.json) == rows[i].id, rows[i].result);
        ASSERT_MSG(jnum(a.json, "status_id") == rows[i].id, rows[i].result);
        if (rows[i].message)
            ASSERT_MSG(jstr(a.json, "message") &&
                           strcmp(jstr(a.json, "message"), rows[i].message) == 0,
                       rows[i].result);
    }
    /* a signal: exit_code 0 and exit_signal N, as isolate_job.rb */
    ASSERT_EQ(jnum(a.json, "exit_code"), -1); /* blocked: never ran: null */
    fake_reset();
    fk.run_result = rows[5].result;
    call("POST", "/submissions", "wait=true&fields=exit_code,exit_signal", PY, &a);
    ASSERT_EQ(jnum(a.json, "exit_code"), 0);
    ASSERT_EQ(jnum(a.json, "exit_signal"), 11);
    fk.run_result = rows[9].result;
    call("POST", "/submissions", "wait=true&fields=exit_code,exit_signal", PY, &a);
    ASSERT_EQ(jnum(a.json, "exit_code"), 3);
    ASSERT(jnull(a.json, "exit_signal"));
    fk.run_result = rows[4].result;
    call("POST", "/submissions", "wait=true&fields=compile_output,exit_code", PY, &a);
    ASSERT_STR(jstr(a.json, "compile_output"), "e");
    ASSERT(jnull(a.json, "exit_code"));
    cJSON_Delete(a.json);
    fake_reset();
}

/* expected_output: compared by the job, trailing_whitespace (isolate_job.rb's strip). */
TEST(expected_output)
{
    struct front_answer a = {0};

    fake_reset();
    fk.run_result =
        "{\"status\": \"ok\", \"exit_code\": 0, \"passed\": false, \"stdout\": \"1\\n\"}";
    ASSERT_EQ(
        call("POST", "/submissions", "wait=true",
             "{\"language_id\": 71, \"source_code\": \"print(1)\", \"expected_output\": \"2\"}",
             &a),
        201);
    ASSERT_STR(job(0, "expect_stdout"), "2");
    ASSERT_STR(job(0, "compare"), "trailing_whitespace");
    ASSERT_EQ(status_id(a.json), 4);
    ASSERT_STR(jstr(cJSON_GetObjectItem(a.json, "status"), "description"), "Wrong Answer");
    cJSON_Delete(a.json);
    fake_reset();
}

TEST(base64_both_ways)
{
    struct front_answer a = {0};
    const cJSON *st;

    fake_reset();
    /* print('hi') / "x" / "hi" */
    ASSERT_EQ(
        call("POST", "/submissions", "wait=true&base64_encoded=true&fields=*",
             "{\"language_id\": 71, \"source_code\": \"cHJpbnQoJ2hpJyk=\", \"stdin\": \"eA==\","
             " \"expected_output\": \"aGk=\"}",
             &a),
        201);
    ASSERT_STR(job(0, "code"), "print('hi')");
    ASSERT_STR(job(0, "stdin"), "x");
    ASSERT_STR(job(0, "expect_stdout"), "hi");
    ASSERT_STR(jstr(a.json, "stdout"), "aGkK");
    ASSERT_STR(jstr(a.json, "source_code"), "cHJpbnQoJ2hpJyk=");
    ASSERT_STR(jstr(a.json, "stdin"), "eA==");
    ASSERT(jnull(a.json, "stderr"));
    st = cJSON_GetObjectItem(a.json, "language");
    ASSERT_EQ(jnum(st, "id"), 71);
    ASSERT_STR(jstr(st, "name"), "Python (3.11.2)");
    /* plain again: the kept texts come back as text */
    ASSERT_EQ(
        call("POST", "/submissions", "wait=true&fields=source_code,stdout,language_id", PY, &a),
        201);
    ASSERT_STR(jstr(a.json, "source_code"), "print('hi')");
    ASSERT_STR(jstr(a.json, "stdout"), "hi\n");
    ASSERT_EQ(jnum(a.json, "language_id"), 71);
    /* not Base64 */
    ASSERT_EQ(call("POST", "/submissions", "base64_encoded=true",
                   "{\"language_id\": 71, \"source_code\": \"!!!\"}", &a),
              422);
    ASSERT_CONTAINS(err422(a.json, "source_code"), "Base64");
    cJSON_Delete(a.json);
    fake_reset();
}

TEST(fields_arg)
{
    struct front_answer a = {0};

    fake_reset();
    ASSERT_EQ(call("POST", "/submissions", "wait=true&fields=stdout,status", PY, &a), 201);
    ASSERT_EQ(cJSON_GetArraySize(a.json), 2);
    ASSERT_STR(jstr(a.json, "stdout"), "hi\n");
    ASSERT_EQ(status_id(a.json), 3);
    ASSERT_EQ(call("POST", "/submissions", "wait=true&fields=*", PY, &a), 201);
    ASSERT_EQ(cJSON_GetArraySize(a.json), 40);
    ASSERT_STR(jstr(a.json, "created_at"), "2023-11-14T22:13:20.123Z");
    ASSERT_STR(jstr(a.json, "wall_time"), "0.005");
    ASSERT_EQ(jnum(a.json, "cpu_time_limit"), 10); /* our default applies */
    ASSERT_EQ(call("POST", "/submissions", "wait=true&fields=stdout,bogus,x", PY, &a), 400);
    ASSERT_STR(jstr(a.json, "error"), "invalid fields: [bogus, x]");
    ASSERT_EQ(fk.run_calls, 2);
    cJSON_Delete(a.json);
    fake_reset();
}

TEST(async_and_lookup)
{
    struct front_answer a = {0};
    char path[128], id[FRONT_ID_MAX];

    fake_reset();
    ASSERT_EQ(call("POST", "/submissions", NULL, PY, &a), 201);
    ASSERT_EQ(fk.start_calls, 1);
    ASSERT_EQ(fk.run_calls, 0);
    ASSERT_EQ(cJSON_GetArraySize(a.json), 1);
    snprintf(path, sizeof(path), "/submissions/%s", jstr(a.json, "token"));
    snprintf(id, sizeof(id), "judge0-%s", jstr(a.json, "token"));
    ASSERT_STR(job(0, "id"), id);
    snprintf(fk.lookup_id, sizeof(fk.lookup_id), "%s", id);

    fk.lookup_state = FRONT_QUEUED;
    ASSERT_EQ(call("GET", path, NULL, NULL, &a), 200);
    ASSERT_EQ(status_id(a.json), 1);
    ASSERT(jnull(a.json, "stdout") && jnull(a.json, "time"));
    fk.lookup_state = FRONT_RUNNING;
    ASSERT_EQ(call("GET", path, NULL, NULL, &a), 200);
    ASSERT_EQ(status_id(a.json), 2);
    fk.lookup_state = FRONT_DONE;
    fk.lookup_result = "{\"status\": \"ok\", \"exit_code\": 0, \"stdout\": \"hi\\n\","
                       " \"meta\": {\"language_id\": 71}}";
    ASSERT_EQ(call("GET", path, "base64_encoded=true&fields=stdout,status,language", NULL, &a),
              200);
    ASSERT_EQ(status_id(a.json), 3);
    ASSERT_STR(jstr(a.json, "stdout"), "aGkK");
    ASSERT_STR(jstr(cJSON_GetObjectItem(a.json, "language"), "name"), "Python (3.11.2)");
    fk.lookup_state = FRONT_UNKNOWN;
    ASSERT_EQ(call("GET", path, NULL, NULL, &a), 404);
    ASSERT_STR(jstr(a.json, "error"), "Not Found");
    ASSERT_EQ(call("GET", "/submissions/not-a-token", NULL, NULL, &a), 404);
    ASSERT_EQ(call("DELETE", path, NULL, NULL, &a), 400);
    ASSERT_STR(jstr(a.json, "error"), "delete not allowed");
    ASSERT_EQ(call("GET", "/submissions", NULL, NULL, &a), 400);
    cJSON_Delete(a.json);
    fake_reset();
}

TEST(callback)
{
    struct front_answer a = {0};
    cJSON *r, *body;

    fake_reset();
    ASSERT_EQ(call("POST", "/submissions", NULL,
                   "{\"language_id\": 71, \"source_code\": \"print(1)\","
                   " \"callback_url\": \"http://127.0.0.1:9/cb\"}",
                   &a),
              201);
    ASSERT_STR(fk.callback, "http://127.0.0.1:9/cb");
    ASSERT(fk.render != NULL);
    r = fake_result("{\"status\": \"ok\", \"exit_code\": 0, \"stdout\": \"1\\n\"}", &fk.jobs[0]);
    body = fk.render(r, NULL);
    ASSERT_STR(jstr(body, "token"), jstr(a.json, "token"));
    ASSERT_STR(jstr(body, "stdout"), "MQo="); /* Base64, as call_callback sends it */
    ASSERT_EQ(status_id(body), 3);
    ASSERT_EQ(cJSON_GetArraySize(body), 8);
    cJSON_Delete(body);
    cJSON_Delete(r);
    /* refused by the host's allowlist: Judge0's 422 shape on callback_url */
    fk.start_rc = LLMSB_ERR_INVALID;
    ASSERT_EQ(call("POST", "/submissions", NULL,
                   "{\"language_id\": 71, \"source_code\": \"1\", \"callback_url\": \"http://x/\"}",
                   &a),
              422);
    ASSERT_CONTAINS(err422(a.json, "callback_url"), "allowlist");
    /* wait=true with a callback: refused */
    fk.start_rc = 0;
    ASSERT_EQ(call("POST", "/submissions", "wait=true",
                   "{\"language_id\": 71, \"source_code\": \"1\", \"callback_url\": \"http://x/\"}",
                   &a),
              400);
    cJSON_Delete(a.json);
    fake_reset();
}

TEST(batch_create)
{
    struct front_answer a = {0};
    char body[8192];
    size_t n = 0;

    fake_reset();
    ASSERT_EQ(call("POST", "/submissions/batch", NULL,
                   "{\"submissions\": [" PY ", " PY ", {\"source_code\": \"x\"}]}", &a),
              201);
    ASSERT_EQ(cJSON_GetArraySize(a.json), 3);
    ASSERT_EQ(strlen(jstr(cJSON_GetArrayItem(a.json, 0), "token")), 36);
    ASSERT_EQ(strlen(jstr(cJSON_GetArrayItem(a.json, 1), "token")), 36);
    ASSERT_STR(err422(cJSON_GetArrayItem(a.json, 2), "language_id"), "can't be blank");
    ASSERT_EQ(fk.njobs, 2);
    ASSERT(strcmp(job(0, "id"), job(1, "id")) != 0);
    ASSERT_EQ(call("POST", "/submissions/batch", NULL, "{\"submissions\": [{}]}", &a), 422);
    ASSERT_EQ(call("POST", "/submissions/batch", NULL, "{\"submissions\": []}", &a), 400);
    ASSERT_STR(jstr(a.json, "error"), "there should be at least one submission in a batch");
    n += (size_t)snprintf(body, sizeof(body), "{\"submissions\": [");
    for (int i = 0; i < 21; i++)
        n += (size_t)snprintf(body + n, sizeof(body) - n, "%s%s", i ? "," : "", PY);
    snprintf(body + n, sizeof(body) - n, "]}");
    ASSERT_EQ(call("POST", "/submissions/batch", NULL, body, &a), 400);
    ASSERT_STR(jstr(a.json, "error"),
               "number of submissions in a batch should be less than or equal to 20");
    host.max_jobs = 2; /* the host's cap, when smaller */
    ASSERT_EQ(
        call("POST", "/submissions/batch", NULL, "{\"submissions\": [" PY ", " PY ", " PY "]}", &a),
        400);
    ASSERT_CONTAINS(jstr(a.json, "error"), "less than or equal to 2");
    cJSON_Delete(a.json);
    fake_reset();
}

TEST(batch_show)
{
    struct front_answer a = {0};
    const char *known = "00000000-0000-4000-8000-000000000000";
    char q[256];

    fake_reset();
    snprintf(fk.lookup_id, sizeof(fk.lookup_id), "judge0-%s", known);
    fk.lookup_state = FRONT_DONE;
    fk.lookup_result = "{\"status\": \"runtime_error\", \"exit_code\": 3}";
    snprintf(q, sizeof(q), "tokens=%s,11111111-1111-4111-8111-111111111111,bad&fields=status,token",
             known);
    ASSERT_EQ(call("GET", "/submissions/batch", q, NULL, &a), 200);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(a.json, "submissions")), 3);
    ASSERT_EQ(status_id(cJSON_GetArrayItem(cJSON_GetObjectItem(a.json, "submissions"), 0)), 11);
    ASSERT_STR(jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(a.json, "submissions"), 0), "token"),
               known);
    ASSERT(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItem(a.json, "submissions"), 1)));
    ASSERT(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItem(a.json, "submissions"), 2)));
    ASSERT_EQ(call("GET", "/submissions/batch", NULL, NULL, &a), 400);
    ASSERT_STR(jstr(a.json, "error"), "there should be at least one submission in a batch");
    cJSON_Delete(a.json);
    fake_reset();
}

/* Each refusal in Judge0's 422 shape: {"field": ["message"]}. */
TEST(validation_errors)
{
    static const struct {
        const char *body, *field, *message;
    } rows[] = {
        {"{\"source_code\": \"x\"}", "language_id", "can't be blank"},
        {"{\"source_code\": \"x\", \"language_id\": 150000}", "language_id",
         "language with id 150000 doesn't exist"},
        {"{\"language_id\": 71}", "source_code", "can't be blank"},
        {"{\"language_id\": 71, \"source_code\": \"  \"}", "source_code", "can't be blank"},
        {"{\"language_id\": 71, \"source_code\": \"x\", \"compiler_options\": \"-O2\"}",
         "compiler_options", "setting compiler options is only allowed for compiled languages"},
        {"{\"language_id\": 62, \"source_code\": \"x\", \"compiler_options\": \"-O2\"}",
         "compiler_options", "setting compiler options is only allowed for C++ (GCC 12.2.0)"},
        {"{\"language_id\": 71, \"source_code\": \"x\", \"cpu_time_limit\": 1000}",
         "cpu_time_limit", "must be less than or equal to 60"},
        {"{\"language_id\": 71, \"source_code\": \"x\", \"wall_time_limit\": 0.5}",
         "wall_time_limit", "must be greater than or equal to 1"},
        {"{\"language_id\": 71, \"source_code\": \"x\", \"memory_limit\": 100}", "memory_limit",
         "must be greater than or equal to 2048"},
        {"{\"language_id\": 71, \"source_code\": \"x\", \"memory_limit\": \"lots\"}",
         "memory_limit", "is not a number"},
        {"{\"language_id\": 71, \"source_code\": \"x\", \"number_of_runs\": 2}", "number_of_runs",
         "must be less than or equal to 1"},
        {"{\"language_id\": 71, \"source_code\": \"x\", \"max_processes_and_or_threads\": 0}",
         "max_processes_and_or_threads", "must be greater than 0"},
        {"{\"language_id\": 71, \"source_code\": \"x\", \"redirect_stderr_to_stdout\": true}",
         "redirect_stderr_to_stdout",
         "this option cannot be enabled (stdout and stderr are kept apart here)"},
        {"{\"language_id\": 71, \"source_code\": \"x\", \"enable_network\": true}",
         "enable_network", "enabling network is not allowed"},
        {"{\"language_id\": 71, \"source_code\": \"x\", \"additional_files\": \"!\"}",
         "additional_files", "is not a Base64-encoded zip archive"},
        {"{\"language_id\": 71, \"source_code\": \"x\","
         " \"enable_per_process_and_thread_time_limit\": true}",
         "enable_per_process_and_thread_time_limit", "this option cannot be enabled"},
    };
    struct front_answer a = {0};

    fake_reset();
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        ASSERT_MSG(call("POST", "/submissions", "wait=true", rows[i].body, &a) == 422,
                   rows[i].body);
        ASSERT_MSG(err422(a.json, rows[i].field) &&
                       strcmp(err422(a.json, rows[i].field), rows[i].message) == 0,
                   rows[i].body);
    }
    ASSERT_EQ(fk.run_calls + fk.start_calls, 0);
    ASSERT_EQ(call("POST", "/submissions", NULL, "not json", &a), 400);
    ASSERT(jstr(a.json, "error") != NULL);
    cJSON_Delete(a.json);
    fake_reset();
}

/* The limits, flags and arguments as our fields. */
TEST(mapping)
{
    struct front_answer a = {0};

    fake_reset();
    ASSERT_EQ(call("POST", "/submissions", "wait=true",
                   "{\"language_id\": 54, \"source_code\": \"int main(){}\","
                   " \"compiler_options\": \" -O0  -DX=1 \", \"command_line_arguments\": \"a  b\","
                   " \"cpu_time_limit\": 2, \"wall_time_limit\": \"5.5\", \"memory_limit\": 128000,"
                   " \"max_processes_and_or_threads\": 30, \"stdin\": \"in\"}",
                   &a),
              201);
    ASSERT_STR(job(0, "lang"), "cpp");
    ASSERT_STR(job(0, "compile_flags"), "[\"-O0\",\"-DX=1\"]");
    ASSERT_STR(job(0, "args"), "[\"a\",\"b\"]");
    ASSERT_STR(job(0, "timeout"), "5.5");
    ASSERT_STR(job(0, "memory"), "125");
    ASSERT_STR(job(0, "pids"), "30");
    ASSERT_STR(job(0, "stdin"), "in");
    ASSERT_CONTAINS(job(0, "meta"), "\"language_id\":54");
    /* the host refuses a flag: Judge0's 422 on the field it came from */
    fk.run_result =
        "{\"status\": \"invalid\", \"error\": \"compile_flags: \\\"-I/x\\\" names a path\"}";
    ASSERT_EQ(call("POST", "/submissions", "wait=true",
                   "{\"language_id\": 54, \"source_code\": \"x\", \"compiler_options\": \"-I/x\"}",
                   &a),
              422);
    ASSERT_CONTAINS(err422(a.json, "compiler_options"), "names a path");
    /* async, the same refusal shows as our status 18 */
    fk.lookup_state = FRONT_DONE;
    fk.lookup_result = fk.run_result;
    snprintf(fk.lookup_id, sizeof(fk.lookup_id), "judge0-00000000-0000-4000-8000-000000000000");
    ASSERT_EQ(call("GET", "/submissions/00000000-0000-4000-8000-000000000000",
                   "fields=status,message", NULL, &a),
              200);
    ASSERT_EQ(status_id(a.json), 18);
    ASSERT_CONTAINS(jstr(a.json, "message"), "names a path");
    /* the network, where the config allows it */
    cfg.allow_network = 1;
    fk.run_result = "{\"status\": \"ok\", \"exit_code\": 0}";
    ASSERT_EQ(call("POST", "/submissions", "wait=true",
                   "{\"language_id\": 71, \"source_code\": \"x\", \"enable_network\": true}", &a),
              201);
    ASSERT_STR(job(2, "network"), "true");
    cJSON_Delete(a.json);
    fake_reset();
}

/* A zip archive of entries {path, data (NULL: a directory; "->X": a
 * symbolic link to X), size} as Base64 (new; caller frees). */
struct zent {
    const char *path, *data;
    size_t size;
};
static char *zip_b64(const struct zent *e, size_t n)
{
    static char mem[1 << 20];
    size_t used = 0;
    struct archive *a = archive_write_new();
    char *big = calloc(1, 11u << 20);

    archive_write_set_format_zip(a);
    archive_write_open_memory(a, mem, sizeof(mem), &used);
    for (size_t i = 0; i < n; i++) {
        struct archive_entry *en = archive_entry_new();
        const char *d = e[i].data;
        size_t len = d ? (e[i].size ? e[i].size : strlen(d)) : 0;
        archive_entry_set_pathname(en, e[i].path);
        if (!d) {
            archive_entry_set_filetype(en, AE_IFDIR);
        } else if (strncmp(d, "->", 2) == 0) {
            archive_entry_set_filetype(en, AE_IFLNK);
            archive_entry_set_symlink(en, d + 2);
            len = 0;
        } else {
            archive_entry_set_filetype(en, AE_IFREG);
        }
        archive_entry_set_perm(en, 0644);
        archive_entry_set_size(en, (la_int64_t)len);
        archive_write_header(a, en);
        if (len)
            archive_write_data(a, e[i].size ? big : d, len);
        archive_entry_free(en);
    }
    archive_write_close(a);
    archive_write_free(a);
    free(big);
    return base64_encode(mem, used, NULL);
}

/* additional_files: the zip's files as our files, bounded as Judge0's unzip. */
TEST(additional_files)
{
    static const struct zent good[] = {{"dir/", NULL, 0},
                                       {"dir/data.txt", "42\n", 0},
                                       {"main.py", "print('replaced')", 0},
                                       {"lib.py", "X = 1", 0}};
    static const struct zent dotdot[] = {{"../x", "no", 0}};
    static const struct zent link[] = {{"l", "->/etc/passwd", 0}};
    static const struct zent big[] = {{"zeros", "", (10u << 20) + 1}};
    struct front_answer a = {0};
    char body[4096], *z;
    cJSON *files;

    fake_reset();
    z = zip_b64(good, 4);
    snprintf(body, sizeof(body),
             "{\"language_id\": 71, \"source_code\": \"print(1)\", \"additional_files\": \"%s\"}",
             z);
    free(z);
    ASSERT_EQ(call("POST", "/submissions", "wait=true", body, &a), 201);
    files = cJSON_Parse(job(0, "files"));
    ASSERT(files != NULL);
    ASSERT_EQ(cJSON_GetArraySize(files), 2); /* the dir and main.py left out */
    ASSERT_STR(jstr(cJSON_GetObjectItem(files, "dir/data.txt"), "base64"), "NDIK");
    ASSERT(cJSON_GetObjectItem(files, "lib.py") != NULL);
    cJSON_Delete(files);

    const struct {
        const struct zent *e;
        const char *why;
    } bad[] = {{dotdot, "is not a relative path"},
               {link, "is not a regular file"},
               {big, "more than 10240 KB"}};
    for (size_t i = 0; i < 3; i++) {
        size_t cap;
        char *big_body;
        int st;
        z = zip_b64(bad[i].e, 1);
        cap = strlen(z) + 128;
        big_body = malloc(cap);
        snprintf(big_body, cap,
                 "{\"language_id\": 71, \"source_code\": \"1\", \"additional_files\": \"%s\"}", z);
        free(z);
        st = call("POST", "/submissions", "wait=true", big_body, &a);
        free(big_body);
        ASSERT_MSG(st == 422, bad[i].why);
        ASSERT_CONTAINS(err422(a.json, "additional_files"), bad[i].why);
    }
    ASSERT_EQ(
        call("POST", "/submissions", "wait=true",
             "{\"language_id\": 71, \"source_code\": \"1\", \"additional_files\": \"aGVsbG8=\"}",
             &a),
        422);
    ASSERT_CONTAINS(err422(a.json, "additional_files"), "zip");
    cJSON_Delete(a.json);
    fake_reset();
}

TEST(languages)
{
    static const int ce_ids[] = {71, 54, 62, 63, 60, 72, 80, 73, 74, 68,
                                 46, 51, 61, 65, 64, 85, 81, 86, 57, 56};
    struct front_answer a = {0};
    const cJSON *l;
    int found;

    fake_reset();
    ASSERT_EQ(call("GET", "/languages", NULL, NULL, &a), 200);
    /* every language of ours has an id */
    ASSERT_EQ((size_t)cJSON_GetArraySize(a.json), languages_count);
    for (size_t i = 0; i < sizeof(ce_ids) / sizeof(ce_ids[0]); i++) {
        found = 0;
        cJSON_ArrayForEach(l, a.json)
            found |= jnum(l, "id") == ce_ids[i];
        ASSERT_MSG(found, "a Judge0 CE id");
    }
    ASSERT_STR(jstr(cJSON_GetArrayItem(a.json, 0), "name"), "Bash (5.2.15)");
    ASSERT_EQ(call("GET", "/languages/71", NULL, NULL, &a), 200);
    ASSERT_STR(jstr(a.json, "name"), "Python (3.11.2)");
    ASSERT_STR(jstr(a.json, "source_file"), "main.py");
    ASSERT(jnull(a.json, "compile_cmd"));
    ASSERT(jstr(a.json, "run_cmd") != NULL);
    ASSERT_EQ(call("GET", "/languages/54", NULL, NULL, &a), 200);
    ASSERT_CONTAINS(jstr(a.json, "compile_cmd"), "main.cpp");
    ASSERT_EQ(call("GET", "/languages/1001", NULL, NULL, &a), 200);
    ASSERT_STR(jstr(a.json, "name"), "Ada (GNAT 12.2)");
    ASSERT_EQ(call("GET", "/languages/70", NULL, NULL, &a), 404);
    ASSERT_EQ(call("GET", "/languages/7x", NULL, NULL, &a), 404);
    ASSERT_EQ(call("GET", "/languages/all", NULL, NULL, &a), 200);
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(a.json, 0), "is_archived")));
    cJSON_Delete(a.json);
    fake_reset();
}

TEST(statuses_about_config)
{
    struct front_answer a = {0};

    fake_reset();
    ASSERT_EQ(call("GET", "/statuses", NULL, NULL, &a), 200);
    ASSERT_EQ(cJSON_GetArraySize(a.json), 18);
    ASSERT_STR(jstr(cJSON_GetArrayItem(a.json, 0), "description"), "In Queue");
    ASSERT_STR(jstr(cJSON_GetArrayItem(a.json, 13), "description"), "Exec Format Error");
    ASSERT_STR(jstr(cJSON_GetArrayItem(a.json, 14), "description"), "Memory Limit Exceeded");
    ASSERT_EQ(jnum(cJSON_GetArrayItem(a.json, 14), "id"), 15);
    ASSERT_EQ(call("GET", "/about", NULL, NULL, &a), 200);
    ASSERT(jstr(a.json, "version") != NULL);
    ASSERT_EQ(call("GET", "/config_info", NULL, NULL, &a), 200);
    ASSERT_EQ(jnum(a.json, "max_submission_batch_size"), 20);
    ASSERT_EQ(jnum(a.json, "max_cpu_time_limit"), 60);
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(a.json, "enable_wait_result")));
    ASSERT_EQ(call("GET", "/run_code", NULL, NULL, &a), 0); /* not ours */
    ASSERT_EQ(call("GET", "/submissionsx", NULL, NULL, &a), 0);
    ASSERT_EQ(call("POST", "/statuses", NULL, NULL, &a), 404);
    cJSON_Delete(a.json);
    fake_reset();
}

TEST_MAIN("front_judge0", T(create_wait_accepted), T(status_ids), T(expected_output),
          T(base64_both_ways), T(fields_arg), T(async_and_lookup), T(callback), T(batch_create),
          T(batch_show), T(validation_errors), T(mapping), T(additional_files), T(languages),
          T(statuses_about_config))
