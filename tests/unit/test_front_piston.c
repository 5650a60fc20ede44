/* test_front_piston.c - Piston v2's route set (front/piston.c) driven
 * through piston_route with a host of the test's own: the request mapped
 * onto job fields, each of our statuses mapped onto Piston's answer, each
 * of Piston's error answers, the runtimes list and the semver pick. */
#include <cjson/cJSON.h>
#include <string.h>
#include "common/common.h"
#include "common/fields.h"
#include "config/config.h"
#include "front/piston.h"
#include "front/routes.h"
#include "languages/languages.h"
#include "test.h"

/* ---- the host: a test double ------------------------------------------------ */

/* What the double was asked (the last job's fields, copied) and what it
 * answers: a result of the test's text, or a failure code. */
static struct {
    int calls;
    struct fields job;
    const char *result; /* JSON text of the result to give */
    int rc;             /* != 0: fail the call with this code */
} dbl;

static int dbl_run(void *ud, const struct fields *jobs, size_t n, cJSON **results,
                   struct llmsb_err *err)
{
    (void)ud;
    dbl.calls++;
    fields_release(&dbl.job);
    fields_init(&dbl.job, 64);
    for (size_t i = 0; i < jobs[0].n; i++)
        fields_add_copy(&dbl.job, jobs[0].v[i].name, jobs[0].v[i].name_len, jobs[0].v[i].value,
                        jobs[0].v[i].len);
    if (dbl.rc != 0)
        return llmsb_err_set(err, dbl.rc, "the double fails the call");
    for (size_t i = 0; i < n; i++)
        results[i] = cJSON_Parse(dbl.result ? dbl.result : "{\"status\": \"ok\"}");
    return 0;
}

static struct config cfg;

static const struct front_host host = {.cfg = &cfg, .run = dbl_run, .max_jobs = 1};

static const char *no_arg(const struct front_req *r, const char *name)
{
    (void)r;
    (void)name;
    return NULL;
}

/* Calls the route; a->json then holds the answer (the caller deletes). */
static int call(const char *method, const char *path, const char *body, struct front_answer *a)
{
    struct front_req r = {.method = method,
                          .path = path,
                          .body = body ? body : "",
                          .len = body ? strlen(body) : 0,
                          .arg = no_arg};
    static int configured;

    if (!configured) {
        config_defaults(&cfg);
        configured = 1;
    }
    memset(a, 0, sizeof(*a));
    fields_release(&dbl.job);
    fields_init(&dbl.job, 64);
    dbl.calls = 0;
    return piston_route(&host, &r, a);
}

static int execute(const char *body, const char *result, struct front_answer *a)
{
    dbl.result = result;
    dbl.rc = 0;
    return call("POST", "/api/v2/execute", body, a);
}

static const char *job_field(const char *name)
{
    return fields_get(&dbl.job, name, NULL);
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

static int is_null_at(const cJSON *o, const char *a, const char *b)
{
    return cJSON_IsNull(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, a), b));
}

static double num_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, a), b);
    return cJSON_IsNumber(x) ? x->valuedouble : -12345;
}

#define PY_HELLO "{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"print(1)\"}]"

/* ---- routes ------------------------------------------------------------------ */

TEST(not_our_path)
{
    struct front_answer a;
    ASSERT_EQ(call("POST", "/run_code", "{}", &a), 0);
    ASSERT(a.json == NULL && a.status == 0);
    ASSERT_EQ(call("GET", "/api/v2x/runtimes", NULL, &a), 0);
    ASSERT_EQ(call("GET", "/submissions", NULL, &a), 0);
}

TEST(runtimes_list_every_language)
{
    struct front_answer a;
    const cJSON *o;
    int cpp = 0, py = 0;

    ASSERT_EQ(call("GET", "/api/v2/runtimes", NULL, &a), 1);
    ASSERT_EQ(a.status, 200);
    ASSERT(cJSON_IsArray(a.json));
    /* a language without a row would be left out: every one has a row */
    ASSERT_EQ((size_t)cJSON_GetArraySize(a.json), languages_count);
    cJSON_ArrayForEach(o, a.json) {
        const char *lang = str_at(o, "language", NULL), *ver = str_at(o, "version", NULL);
        ASSERT(lang && ver && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, "aliases")));
        ASSERT_MSG(piston_semver_satisfies(ver, ver), lang);
        if (strcmp(lang, "python") == 0) {
            py = 1;
            ASSERT_STR(ver, "3.11.2");
            ASSERT(cJSON_GetObjectItemCaseSensitive(o, "runtime") == NULL);
        }
        if (strcmp(lang, "c++") == 0) {
            const cJSON *al = cJSON_GetObjectItemCaseSensitive(o, "aliases");
            cpp = 1;
            ASSERT_STR(cJSON_GetArrayItem(al, 0)->valuestring, "cpp");
            ASSERT_STR(str_at(o, "runtime", NULL), "gcc");
        }
    }
    ASSERT(py && cpp);
    cJSON_Delete(a.json);

    /* emkc.org's spelling and a trailing slash, as Express matches */
    ASSERT_EQ(call("GET", "/api/v2/piston/runtimes/", NULL, &a), 1);
    ASSERT_EQ(a.status, 200);
    ASSERT_EQ((size_t)cJSON_GetArraySize(a.json), languages_count);
    cJSON_Delete(a.json);
}

TEST(packages)
{
    struct front_answer a;

    ASSERT_EQ(call("GET", "/api/v2/packages", NULL, &a), 1);
    ASSERT_EQ(a.status, 200);
    ASSERT_EQ((size_t)cJSON_GetArraySize(a.json), languages_count);
    ASSERT_STR(str_at(cJSON_GetArrayItem(a.json, 0), "language_version", NULL), "3.11.2");
    ASSERT(
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(a.json, 0), "installed")));
    cJSON_Delete(a.json);
    ASSERT_EQ(call("POST", "/api/v2/packages", "{\"language\":\"bash\",\"version\":\"5\"}", &a), 1);
    ASSERT_EQ(a.status, 403);
    ASSERT_CONTAINS(str_at(a.json, "message", NULL), "cannot be installed");
    cJSON_Delete(a.json);
}

TEST(unknown_routes)
{
    struct front_answer a;

    ASSERT_EQ(call("GET", "/api/v2/execute", NULL, &a), 1);
    ASSERT_EQ(a.status, 404);
    ASSERT_CONTAINS(str_at(a.json, "message", NULL), "Cannot GET /api/v2/execute");
    cJSON_Delete(a.json);
    ASSERT_EQ(call("GET", "/api/v2/connect", NULL, &a), 1);
    ASSERT_EQ(a.status, 404);
    ASSERT_CONTAINS(str_at(a.json, "message", NULL), "WebSocket");
    cJSON_Delete(a.json);
    ASSERT_EQ(call("POST", "/api/v2", "{}", &a), 1);
    ASSERT_EQ(a.status, 404);
    cJSON_Delete(a.json);
}

/* ---- the request ------------------------------------------------------------- */

TEST(python_hello_maps_both_ways)
{
    struct front_answer a;

    ASSERT_EQ(execute(PY_HELLO "}",
                      "{\"status\":\"ok\",\"exit_code\":0,\"signal\":null,\"stdout\":\"1\\n\","
                      "\"stderr\":\"w\",\"duration_ms\":12,\"cpu_ms\":9,\"max_rss_kb\":100}",
                      &a),
              1);
    ASSERT_EQ(a.status, 200);
    ASSERT_EQ(dbl.calls, 1);
    ASSERT_STR(job_field("lang"), "python");
    ASSERT_STR(job_field("code"), "print(1)");
    ASSERT_STR(job_field("stdin"), "\n"); /* job.js adds the newline, to none too */
    ASSERT(job_field("args") == NULL && job_field("files") == NULL);
    ASSERT(job_field("timeout") == NULL && job_field("memory") == NULL);
    ASSERT_STR(str_at(a.json, "language", NULL), "python");
    ASSERT_STR(str_at(a.json, "version", NULL), "3.11.2");
    ASSERT(cJSON_GetObjectItemCaseSensitive(a.json, "compile") == NULL);
    ASSERT_STR(str_at(a.json, "run", "stdout"), "1\n");
    ASSERT_STR(str_at(a.json, "run", "stderr"), "w");
    ASSERT_STR(str_at(a.json, "run", "output"), "1\nw");
    ASSERT_EQ(num_at(a.json, "run", "code"), 0);
    ASSERT(is_null_at(a.json, "run", "signal") && is_null_at(a.json, "run", "status"));
    ASSERT(is_null_at(a.json, "run", "message"));
    ASSERT_EQ(num_at(a.json, "run", "wall_time"), 12);
    ASSERT_EQ(num_at(a.json, "run", "cpu_time"), 9);
    ASSERT_EQ(num_at(a.json, "run", "memory"), 102400);
    cJSON_Delete(a.json);
}

/* piston-client's own request: its default limits and args. */
TEST(stdin_args_limits)
{
    struct front_answer a;

    ASSERT_EQ(execute("{\"language\":\"py\",\"version\":\"3.11.2\",\"files\":[{\"name\":\"a.py\","
                      "\"content\":\"x\"}],\"stdin\":\"in\",\"args\":[\"1\",\"2\",\"3\"],"
                      "\"compile_timeout\":10000,\"run_timeout\":1500,\"compile_memory_limit\":-1,"
                      "\"run_memory_limit\":100000000,\"run_cpu_time\":500}",
                      NULL, &a),
              1);
    ASSERT_EQ(a.status, 200);
    ASSERT_STR(job_field("stdin"), "in\n");
    ASSERT_STR(job_field("args"), "[\"1\",\"2\",\"3\"]");
    ASSERT_STR(job_field("timeout"), "1.5");
    ASSERT_STR(job_field("compile_timeout"), "10");
    ASSERT_STR(job_field("memory"), "96"); /* 100 MB is 95.4 MiB: rounded up */
    cJSON_Delete(a.json);

    /* -1 (piston-client's default) asks for no memory limit: ours; 0 is
     * "not given"; a stdin that ends with a newline is kept */
    ASSERT_EQ(execute(PY_HELLO ",\"run_memory_limit\":-1,\"run_timeout\":0,\"stdin\":\"a\\n\","
                               "\"args\":[]}",
                      NULL, &a),
              1);
    ASSERT_EQ(a.status, 200);
    ASSERT(job_field("memory") == NULL && job_field("timeout") == NULL);
    ASSERT(job_field("args") == NULL);
    ASSERT_STR(job_field("stdin"), "a\n");
    cJSON_Delete(a.json);
}

TEST(files_map_onto_ours)
{
    struct front_answer a;
    cJSON *files;

    ASSERT_EQ(execute("{\"language\":\"python\",\"version\":\"*\",\"files\":["
                      "{\"name\":\"blob\",\"content\":\"aGkK\",\"encoding\":\"base64\"},"
                      "{\"name\":\"main.py\",\"content\":\"import data\"},"
                      "{\"name\":\"data.py\",\"content\":\"x = 1\"},"
                      "{\"name\":\"dir/h.bin\",\"content\":\"68690A\",\"encoding\":\"hex\"},"
                      "{\"content\":\"unnamed\"}]}",
                      NULL, &a),
              1);
    ASSERT_EQ(a.status, 200);
    /* the program is the first utf8 file, whatever comes before it */
    ASSERT_STR(job_field("code"), "import data");
    files = cJSON_Parse(job_field("files"));
    ASSERT(files);
    ASSERT_STR(str_at(files, "blob", "base64"), "aGkK");
    ASSERT_STR(str_at(files, "data.py", NULL), "x = 1");
    ASSERT_STR(str_at(files, "dir/h.bin", "base64"), "aGkK");
    ASSERT_STR(str_at(files, "file4.code", NULL), "unnamed");
    ASSERT(cJSON_GetObjectItemCaseSensitive(files, "main.py") == NULL);
    cJSON_Delete(files);
    cJSON_Delete(a.json);
}

/* A refused request: the status, Piston's {message} shape, and nothing run. */
static void expect_refusal(const char *body, int status, const char *message)
{
    struct front_answer a;

    ASSERT_EQ(execute(body, NULL, &a), 1);
    ASSERT_MSG(a.status == status, body);
    ASSERT(cJSON_IsObject(a.json) && cJSON_GetArraySize(a.json) == 1);
    ASSERT_CONTAINS(str_at(a.json, "message", NULL), message);
    ASSERT_MSG(dbl.calls == 0, body);
    cJSON_Delete(a.json);
}

TEST(pistons_own_refusals)
{
    expect_refusal("{}", 400, "language is required as a string");
    expect_refusal("{\"language\":3}", 400, "language is required as a string");
    expect_refusal("{\"language\":\"python\"}", 400, "version is required as a string");
    expect_refusal("{\"language\":\"python\",\"version\":3}", 400,
                   "version is required as a string");
    expect_refusal("{\"language\":\"python\",\"version\":\"*\"}", 400,
                   "files is required as an array");
    expect_refusal("{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"a\"},"
                   "{\"name\":\"x\"}]}",
                   400, "files[1].content is required as a string");
    expect_refusal("{\"language\":\"cobol\",\"version\":\"*\",\"files\":[]}", 400,
                   "cobol-* runtime is unknown");
    expect_refusal("{\"language\":\"python\",\"version\":\"3.10.0\",\"files\":[]}", 400,
                   "python-3.10.0 runtime is unknown");
    expect_refusal("{\"language\":\"gcc\",\"version\":\"*\",\"files\":[]}", 400,
                   "gcc-* runtime is unknown"); /* Piston's C: not ours */
    expect_refusal("{\"language\":\"python\",\"version\":\"*\",\"files\":[]}", 400,
                   "files must include at least one utf8 encoded file");
    expect_refusal("{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"YQ==\","
                   "\"encoding\":\"base64\"}]}",
                   400, "files must include at least one utf8 encoded file");
    expect_refusal(PY_HELLO ",\"run_timeout\":\"3000\"}", 400,
                   "If specified, run_timeout must be a number");
    expect_refusal(PY_HELLO ",\"run_timeout\":-5}", 400, "run_timeout must be non-negative");
    expect_refusal(PY_HELLO ",\"compile_timeout\":-5}", 400,
                   "compile_timeout must be non-negative");
    expect_refusal(PY_HELLO ",\"run_cpu_time\":true}", 400,
                   "If specified, run_cpu_time must be a number");
    expect_refusal(PY_HELLO ",\"run_timeout\":1e12}", 400,
                   "run_timeout cannot exceed the configured limit of");
    expect_refusal(PY_HELLO ",\"run_memory_limit\":1e15}", 400,
                   "run_memory_limit cannot exceed the configured limit of");
}

TEST(ceilings_are_the_configs)
{
    struct front_answer a;
    char body[256], want[96];

    snprintf(body, sizeof(body), PY_HELLO ",\"run_timeout\":%lld}",
             (long long)cfg.max.timeout_ms + 1);
    snprintf(want, sizeof(want), "run_timeout cannot exceed the configured limit of %lld",
             (long long)cfg.max.timeout_ms);
    expect_refusal(body, 400, want);
    snprintf(body, sizeof(body), PY_HELLO ",\"run_timeout\":%lld}", (long long)cfg.max.timeout_ms);
    ASSERT_EQ(execute(body, NULL, &a), 1);
    ASSERT_EQ(a.status, 200);
    cJSON_Delete(a.json);
}

TEST(our_refusals_name_the_field)
{
    expect_refusal("not json", 400, "not JSON");
    expect_refusal("[1]", 400, "not an object");
    expect_refusal(PY_HELLO ",\"stdin\":5}", 400, "stdin must be a string");
    expect_refusal(PY_HELLO ",\"args\":\"a b\"}", 400, "args must be an array of strings");
    expect_refusal(PY_HELLO ",\"args\":[\"a\",2]}", 400, "args[1] is not a string");
    expect_refusal(
        "{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"a\\u0000b\"}]}", 400,
        "NUL");
    expect_refusal("{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"a\"},"
                   "{\"name\":\"../up\",\"content\":\"b\"}]}",
                   400, "files[1].name \"../up\" must be a relative path");
    expect_refusal("{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"a\"},"
                   "{\"name\":\"/etc/passwd\",\"content\":\"b\"}]}",
                   400, "files[1].name \"/etc/passwd\"");
    expect_refusal("{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"a\"},"
                   "{\"name\":\"a/../../b\",\"content\":\"b\"}]}",
                   400, "files[1].name");
    expect_refusal("{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"a\"},"
                   "{\"content\":\"6g\",\"encoding\":\"hex\"}]}",
                   400, "files[1].content is not valid hex (at byte 1)");
    expect_refusal("{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"a\"},"
                   "{\"content\":\"abc\",\"encoding\":\"hex\"}]}",
                   400, "odd number");
    expect_refusal("{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"a\"},"
                   "{\"content\":\"!!!\",\"encoding\":\"base64\"}]}",
                   400, "files[1].content is not valid base64");
}

TEST(language_names_and_aliases)
{
    static const struct {
        const char *name, *ours, *piston;
    } cases[] = {
        {"python", "python", "python"},
        {"py3", "python", "python"},
        {"c++", "cpp", "c++"},
        {"cpp", "cpp", "c++"},
        {"g++", "cpp", "c++"},
        {"node", "javascript", "javascript"},
        {"node-js", "javascript", "javascript"},
        {"rscript", "r", "rscript"},
        {"r", "r", "rscript"},
        {"mono-cs", "csharp", "csharp"},
        {"tsc", "typescript", "typescript"},
        {"golang", "go", "go"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct front_answer a;
        char body[160];
        snprintf(body, sizeof(body),
                 "{\"language\":\"%s\",\"version\":\"*\",\"files\":[{\"content\":\"x\"}]}",
                 cases[i].name);
        ASSERT_EQ(execute(body, NULL, &a), 1);
        ASSERT_MSG(a.status == 200, cases[i].name);
        ASSERT_STR(job_field("lang"), cases[i].ours);
        ASSERT_STR(str_at(a.json, "language", NULL), cases[i].piston);
        cJSON_Delete(a.json);
    }
}

/* ---- the answer ---------------------------------------------------------------- */

/* Runs a python job whose result is result; a->json is the answer. */
static void py_result(const char *result, struct front_answer *a)
{
    execute(PY_HELLO "}", result, a);
}

TEST(runtime_error_exit)
{
    struct front_answer a;

    py_result("{\"status\":\"runtime_error\",\"exit_code\":3,\"signal\":null,\"stdout\":\"\","
              "\"stderr\":\"boom\"}",
              &a);
    ASSERT_EQ(a.status, 200);
    ASSERT_EQ(num_at(a.json, "run", "code"), 3);
    ASSERT(is_null_at(a.json, "run", "signal"));
    ASSERT_STR(str_at(a.json, "run", "status"), "RE");
    ASSERT_STR(str_at(a.json, "run", "message"), "Exited with error status 3");
    ASSERT_STR(str_at(a.json, "run", "output"), "boom");
    cJSON_Delete(a.json);
}

TEST(runtime_error_signal)
{
    struct front_answer a;

    py_result("{\"status\":\"runtime_error\",\"exit_code\":139,\"signal\":11}", &a);
    ASSERT(is_null_at(a.json, "run", "code")); /* Piston: null when a signal ended it */
    ASSERT_STR(str_at(a.json, "run", "signal"), "SIGSEGV");
    ASSERT_STR(str_at(a.json, "run", "status"), "SG");
    ASSERT_STR(str_at(a.json, "run", "message"), "Caught fatal signal 11");
    cJSON_Delete(a.json);
    py_result("{\"status\":\"runtime_error\",\"exit_code\":163,\"signal\":35}", &a);
    ASSERT_STR(str_at(a.json, "run", "signal"), "SIGRTMIN+1");
    cJSON_Delete(a.json);
}

TEST(timeout_memory_output)
{
    struct front_answer a;

    py_result("{\"status\":\"timeout\",\"exit_code\":137,\"signal\":9,\"stdout\":\"so far\"}", &a);
    ASSERT(is_null_at(a.json, "run", "code"));
    ASSERT_STR(str_at(a.json, "run", "signal"), "SIGKILL");
    ASSERT_STR(str_at(a.json, "run", "status"), "TO");
    ASSERT_STR(str_at(a.json, "run", "stdout"), "so far");
    cJSON_Delete(a.json);

    py_result("{\"status\":\"memory_limit\",\"exit_code\":137,\"signal\":9}", &a);
    ASSERT(is_null_at(a.json, "run", "code"));
    ASSERT_STR(str_at(a.json, "run", "signal"), "SIGKILL");
    ASSERT_STR(str_at(a.json, "run", "status"), "SG");
    ASSERT_CONTAINS(str_at(a.json, "run", "message"), "Memory limit exceeded");
    cJSON_Delete(a.json);

    py_result("{\"status\":\"output_limit\",\"stdout_truncated\":true,\"stderr_truncated\":false}",
              &a);
    ASSERT_STR(str_at(a.json, "run", "status"), "OL");
    ASSERT_STR(str_at(a.json, "run", "message"), "stdout length exceeded");
    ASSERT_STR(str_at(a.json, "run", "signal"), "SIGKILL");
    cJSON_Delete(a.json);
    py_result("{\"status\":\"output_limit\",\"stdout_truncated\":false,\"stderr_truncated\":true}",
              &a);
    ASSERT_STR(str_at(a.json, "run", "status"), "EL");
    ASSERT_STR(str_at(a.json, "run", "message"), "stderr length exceeded");
    cJSON_Delete(a.json);
}

TEST(internal_error_is_xx)
{
    struct front_answer a;

    py_result("{\"status\":\"internal_error\",\"error\":\"docker: engine gone\"}", &a);
    ASSERT_EQ(a.status, 200);
    ASSERT(is_null_at(a.json, "run", "code") && is_null_at(a.json, "run", "signal"));
    ASSERT_STR(str_at(a.json, "run", "status"), "XX");
    ASSERT_STR(str_at(a.json, "run", "message"), "internal_error: docker: engine gone");
    cJSON_Delete(a.json);
}

TEST(invalid_and_blocked_are_400)
{
    struct front_answer a;

    py_result("{\"status\":\"invalid\",\"error\":\"memory: 1 MB is below the minimum of 16 MB\"}",
              &a);
    ASSERT_EQ(a.status, 400);
    ASSERT_STR(str_at(a.json, "message", NULL), "memory: 1 MB is below the minimum of 16 MB");
    cJSON_Delete(a.json);
    py_result("{\"status\":\"blocked\",\"error\":\"the security policy refused this code\","
              "\"violations\":[{\"rule\":\"shell\",\"severity\":\"high\",\"policy\":\"strict\","
              "\"line\":2,\"column\":5}]}",
              &a);
    ASSERT_EQ(a.status, 400);
    ASSERT_STR(str_at(a.json, "message", NULL),
               "the security policy refused this code: shell (high) at line 2, column 5");
    cJSON_Delete(a.json);
}

#define CPP_BODY \
    "{\"language\":\"c++\",\"version\":\"12\",\"files\":[{\"content\":\"int main(){}\"}]}"

TEST(compiled_ok_has_compile_stage)
{
    struct front_answer a;

    ASSERT_EQ(execute(CPP_BODY,
                      "{\"status\":\"ok\",\"exit_code\":0,\"stdout\":\"hi\",\"compile_output\":"
                      "\"warning: x\",\"phases\":{\"compile_ms\":800,\"run_ms\":3}}",
                      &a),
              1);
    ASSERT_EQ(a.status, 200);
    ASSERT_STR(job_field("lang"), "cpp");
    ASSERT_STR(str_at(a.json, "language", NULL), "c++");
    ASSERT_STR(str_at(a.json, "version", NULL), "12.2.0");
    ASSERT_EQ(num_at(a.json, "compile", "code"), 0);
    ASSERT_STR(str_at(a.json, "compile", "stderr"), "warning: x");
    ASSERT_STR(str_at(a.json, "compile", "output"), "warning: x");
    ASSERT_EQ(num_at(a.json, "compile", "wall_time"), 800);
    ASSERT_STR(str_at(a.json, "run", "stdout"), "hi");
    ASSERT_EQ(num_at(a.json, "run", "code"), 0);
    cJSON_Delete(a.json);
}

TEST(compile_error_is_the_compile_stage)
{
    struct front_answer a;

    ASSERT_EQ(execute(CPP_BODY,
                      "{\"status\":\"compile_error\",\"exit_code\":null,\"compile_output\":"
                      "\"main.cpp:1: error\"}",
                      &a),
              1);
    ASSERT_EQ(a.status, 200);
    ASSERT_EQ(num_at(a.json, "compile", "code"), 1);
    ASSERT_STR(str_at(a.json, "compile", "status"), "RE");
    ASSERT_STR(str_at(a.json, "compile", "stderr"), "main.cpp:1: error");
    /* v2.js: a run that never started is the compile stage again */
    ASSERT_EQ(num_at(a.json, "run", "code"), 1);
    ASSERT_STR(str_at(a.json, "run", "stderr"), "main.cpp:1: error");
    cJSON_Delete(a.json);

    /* the compiler out of memory: no run step in the phases */
    ASSERT_EQ(execute(CPP_BODY,
                      "{\"status\":\"memory_limit\",\"exit_code\":null,\"compile_output\":"
                      "\"g++: killed\",\"phases\":{\"compile_ms\":900}}",
                      &a),
              1);
    ASSERT(is_null_at(a.json, "compile", "code"));
    ASSERT_STR(str_at(a.json, "compile", "signal"), "SIGKILL");
    ASSERT_STR(str_at(a.json, "compile", "status"), "SG");
    ASSERT_STR(str_at(a.json, "run", "status"), "SG");
    cJSON_Delete(a.json);

    /* the program out of memory after compiling */
    ASSERT_EQ(execute(CPP_BODY,
                      "{\"status\":\"memory_limit\",\"exit_code\":137,\"signal\":9,"
                      "\"phases\":{\"compile_ms\":900,\"run_ms\":40}}",
                      &a),
              1);
    ASSERT_EQ(num_at(a.json, "compile", "code"), 0);
    ASSERT_STR(str_at(a.json, "run", "status"), "SG");
    cJSON_Delete(a.json);
}

TEST(host_failures)
{
    struct front_answer a;

    dbl.result = NULL;
    dbl.rc = LLMSB_ERR_INTERRUPTED;
    ASSERT_EQ(call("POST", "/api/v2/execute", PY_HELLO "}", &a), 1);
    ASSERT_EQ(a.status, 503);
    ASSERT_CONTAINS(str_at(a.json, "message", NULL), "the double fails the call");
    cJSON_Delete(a.json);
    dbl.rc = LLMSB_ERR_BACKEND;
    ASSERT_EQ(call("POST", "/api/v2/execute", PY_HELLO "}", &a), 1);
    ASSERT_EQ(a.status, 500);
    cJSON_Delete(a.json);
    dbl.rc = 0;
}

/* ---- semver ---------------------------------------------------------------------- */

TEST(semver_ranges)
{
    static const struct {
        const char *version, *range;
        int want;
    } cases[] = {
        {"3.11.2", "*", 1},
        {"3.11.2", "", 1},
        {"3.11.2", "x", 1},
        {"3.11.2", "3", 1},
        {"3.11.2", "3.x", 1},
        {"3.11.2", "3.11", 1},
        {"3.11.2", "3.11.x", 1},
        {"3.11.2", "3.11.2", 1},
        {"3.11.2", "v3.11.2", 1},
        {"3.11.2", "=3.11.2", 1},
        {"3.11.2", "3.11.3", 0},
        {"3.11.2", "3.10", 0},
        {"3.11.2", "3.10.0", 0},
        {"3.11.2", "2", 0},
        {"3.11.2", ">=3.10", 1},
        {"3.11.2", ">=3.12", 0},
        {"3.11.2", ">3.11", 0},
        {"3.11.2", ">3.10", 1},
        {"3.11.2", ">3.11.1", 1},
        {"3.11.2", ">3", 0},
        {"3.11.2", "<3.11.2", 0},
        {"3.11.2", "<3.12", 1},
        {"3.11.2", "<=3.11", 1},
        {"3.11.2", "<=3.10", 0},
        {"3.11.2", "<=3", 1},
        {"3.11.2", ">= 3.10 < 4", 1},
        {"3.11.2", ">=3.10 <3.11", 0},
        {"3.11.2", "~3.11", 1},
        {"3.11.2", "~3.11.3", 0},
        {"3.11.2", "~3.10", 0},
        {"3.11.2", "~3", 1},
        {"3.11.2", "~>3.11.0", 1},
        {"3.11.2", "^3.10.0", 1},
        {"3.11.2", "^3.12", 0},
        {"3.11.2", "^2", 0},
        {"0.2.3", "^0.2", 1},
        {"0.2.3", "^0.2.4", 0},
        {"0.3.0", "^0.2.3", 0},
        {"0.0.3", "^0.0.3", 1},
        {"0.0.4", "^0.0.3", 0},
        {"0.5.0", "^0.x", 1},
        {"3.11.2", "3.10 - 3.12", 1},
        {"3.11.2", "3.0 - 3.11.1", 0},
        {"3.11.2", "3.0 - 3.11", 1},
        {"3.11.2", "2 || 3", 1},
        {"3.11.2", "1 || 2", 0},
        {"3.11.2", ">=3.11.2-rc.1", 1},
        {"3.11.2", "<3.11.2-rc.1", 0},
        {"3.11.2", "3.11.2+build.5", 1},
        {"3.11.2", "<*", 0},
        {"3.11.2", "03.11.2", 0},
        {"3.11.2", "3.11.2.1", 0},
        {"3.11.2", "latest", 0},
        {"3.11.2", "3.11.2-", 0},
        {"3.11.2", ">", 0},
        {"3.11.2", "3..2", 0},
        {"3.11.2", "99999999999999999", 0},
    };
    char longr[400];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ASSERT_MSG(piston_semver_satisfies(cases[i].version, cases[i].range) == cases[i].want,
                   cases[i].range);
    memset(longr, ' ', sizeof(longr) - 2);
    longr[sizeof(longr) - 2] = '*';
    longr[sizeof(longr) - 1] = '\0';
    ASSERT_EQ(piston_semver_satisfies("3.11.2", longr), 0); /* past 256 bytes: not read */
}

TEST_MAIN("front_piston", T(not_our_path), T(runtimes_list_every_language), T(packages),
          T(unknown_routes), T(python_hello_maps_both_ways), T(stdin_args_limits),
          T(files_map_onto_ours), T(pistons_own_refusals), T(ceilings_are_the_configs),
          T(our_refusals_name_the_field), T(language_names_and_aliases), T(runtime_error_exit),
          T(runtime_error_signal), T(timeout_memory_output), T(internal_error_is_xx),
          T(invalid_and_blocked_are_400), T(compiled_ok_has_compile_stage),
          T(compile_error_is_the_compile_stage), T(host_failures), T(semver_ranges))
