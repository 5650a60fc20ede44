/* test_front_fusion.c - SandboxFusion's route set (front/fusion.c) driven
 * with a host of the test's own: each request's job fields as the host got
 * them, each status of ours as SandboxFusion's answer, every error shape
 * (FastAPI's 422, SandboxError, 405, 503), files and fetch_files both
 * ways, and every language id of SandboxFusion's literal. */
#include "test.h"

#include <cjson/cJSON.h>
#include "front/routes.h"

/* ---- a test double of the host ------------------------------------------ */

/* The host of these tests: records the fields of the job it is asked to
 * run (as a JSON object of text) and answers with the result given. */
struct fake_host {
    cJSON *job;         /* the last job run, or NULL */
    int calls;          /* how many times run was called */
    const char *result; /* JSON text of the result to give */
    int fail;           /* a negative code: run fails with it */
};

static struct fake_host fake;

static int fake_run(void *ud, const struct fields *jobs, size_t n, cJSON **results,
                    struct llmsb_err *err)
{
    struct fake_host *f = ud;

    f->calls++;
    cJSON_Delete(f->job);
    f->job = cJSON_CreateObject();
    for (size_t i = 0; i < jobs[0].n; i++)
        cJSON_AddStringToObject(f->job, jobs[0].v[i].name, jobs[0].v[i].value);
    if (f->fail)
        return llmsb_err_set(err, f->fail, "the server is stopping");
    for (size_t i = 0; i < n; i++)
        results[i] = cJSON_Parse(f->result);
    return 0;
}

static const char *no_arg(const struct front_req *r, const char *name)
{
    (void)r;
    (void)name;
    return NULL;
}

/* Answers method path with body (NULL: none) through fusion_route, the
 * host answering result; returns the answer's body (caller deletes), its
 * status in *status and fusion_route's return in *mine. */
static cJSON *call_full(const char *method, const char *path, const char *body, const char *result,
                        int *status, int *mine)
{
    struct front_host h = {0};
    struct front_req r = {method, path, body ? body : "", body ? strlen(body) : 0, no_arg, NULL};
    struct front_answer a = {0};

    cJSON_Delete(fake.job);
    fake.job = NULL;
    fake.calls = 0;
    fake.result = result;
    h.run = fake_run;
    h.ud = &fake;
    h.max_jobs = 1;
    *mine = fusion_route(&h, &r, &a);
    *status = a.status;
    return a.json;
}

static cJSON *run_code(const char *body, const char *result, int *status)
{
    int mine;
    return call_full("POST", "/run_code", body, result, status, &mine);
}

/* The job's field name as the host got it, or NULL. */
static const char *job_field(const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(fake.job, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *str_at(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num_at(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : -12345;
}

static int null_at(const cJSON *o, const char *name)
{
    return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, name));
}

static const cJSON *obj_at(const cJSON *o, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(o, name);
}

/* The first error of a 422's detail. */
static const cJSON *first_detail(const cJSON *a)
{
    return cJSON_GetArrayItem(obj_at(a, "detail"), 0);
}

/* loc of an error as text: "body.code", "body.files.a" */
static void loc_text(const cJSON *e, char *out, size_t outsz)
{
    const cJSON *p;

    out[0] = '\0';
    cJSON_ArrayForEach(p, obj_at(e, "loc")) {
        size_t n = strlen(out);
        if (cJSON_IsString(p))
            snprintf(out + n, outsz - n, "%s%s", n ? "." : "", p->valuestring);
        else
            snprintf(out + n, outsz - n, "%s%d", n ? "." : "", p->valueint);
    }
}

#define OK_PY \
    "{\"status\":\"ok\",\"exit_code\":0,\"stdout\":\"hi\\n\",\"stderr\":\"\",\"duration_ms\":12}"

/* ---- pings and paths ---------------------------------------------------- */

TEST(ping_answers_pong)
{
    int status, mine;
    cJSON *a = call_full("GET", "/v1/ping", NULL, NULL, &status, &mine);

    ASSERT_EQ(mine, 1);
    ASSERT_EQ(status, 200);
    ASSERT(cJSON_IsString(a));
    ASSERT_STR(a->valuestring, "pong");
    cJSON_Delete(a);
    a = call_full("POST", "/v1/ping", NULL, NULL, &status, &mine);
    ASSERT_EQ(mine, 1);
    ASSERT_EQ(status, 405);
    ASSERT_STR(str_at(a, "detail"), "Method Not Allowed");
    cJSON_Delete(a);
}

TEST(other_paths_are_not_ours)
{
    int status = 0, mine;
    cJSON *a = call_full("POST", "/submit", "{}", NULL, &status, &mine);

    ASSERT_EQ(mine, 0); /* the online-judge API is not served */
    ASSERT(a == NULL);
    a = call_full("POST", "/api/v2/execute", "{}", NULL, &status, &mine);
    ASSERT_EQ(mine, 0);
    a = call_full("GET", "/run_code", NULL, NULL, &status, &mine);
    ASSERT_EQ(mine, 1);
    ASSERT_EQ(status, 405);
    ASSERT_EQ(fake.calls, 0);
    cJSON_Delete(a);
}

/* ---- the request as a job ----------------------------------------------- */

TEST(python_hello_maps_both_ways)
{
    int status;
    cJSON *a = run_code("{\"code\":\"print('hi')\",\"language\":\"python\"}", OK_PY, &status);
    const cJSON *run;

    ASSERT_EQ(status, 200);
    ASSERT_STR(job_field("lang"), "python");
    ASSERT_STR(job_field("code"), "print('hi')");
    ASSERT_STR(job_field("timeout"), "10");       /* RunCodeRequest's default */
    ASSERT(job_field("compile_timeout") == NULL); /* ours when not given */
    ASSERT_STR(job_field("plots"), "false");
    ASSERT(job_field("memory") == NULL);
    ASSERT(job_field("stdin") == NULL);
    ASSERT(job_field("files") == NULL);
    ASSERT(job_field("artifacts") == NULL);
    ASSERT(job_field("link_flags") == NULL);
    ASSERT_STR(str_at(a, "status"), "Success");
    ASSERT_STR(str_at(a, "message"), "");
    ASSERT(null_at(a, "compile_result")); /* an interpreted language */
    ASSERT(null_at(a, "executor_pod_name"));
    ASSERT(cJSON_IsObject(obj_at(a, "files")) && obj_at(a, "files")->child == NULL);
    run = obj_at(a, "run_result");
    ASSERT_STR(str_at(run, "status"), "Finished");
    ASSERT_EQ(num_at(run, "return_code"), 0);
    ASSERT_STR(str_at(run, "stdout"), "hi\n");
    ASSERT_STR(str_at(run, "stderr"), "");
    ASSERT(num_at(run, "execution_time") > 0.0119 && num_at(run, "execution_time") < 0.0121);
    cJSON_Delete(a);
}

TEST(limits_and_stdin_map)
{
    int status;
    cJSON *a = run_code("{\"code\":\"x\",\"language\":\"python\",\"stdin\":\"1 2\\n\","
                        "\"run_timeout\":2.5,\"compile_timeout\":\"3\",\"memory_limit_MB\":256}",
                        OK_PY, &status);

    ASSERT_EQ(status, 200);
    ASSERT_STR(job_field("stdin"), "1 2\n");
    ASSERT_STR(job_field("timeout"), "2.5");
    ASSERT_STR(job_field("compile_timeout"), "3"); /* a numeric string, as pydantic's lax mode */
    ASSERT_STR(job_field("memory"), "256");
    cJSON_Delete(a);
    a = run_code("{\"code\":\"x\",\"language\":\"python\",\"run_timeout\":0.2}", OK_PY, &status);
    ASSERT_STR(job_field("timeout"), "0.2"); /* as written, not 0.20000000000000001 */
    cJSON_Delete(a);
    /* -1 (the default) and 0 are no limit in base.py: ours then */
    a = run_code("{\"code\":\"x\",\"language\":\"python\",\"memory_limit_MB\":-1,\"stdin\":null}",
                 OK_PY, &status);
    ASSERT(job_field("memory") == NULL);
    ASSERT(job_field("stdin") == NULL);
    cJSON_Delete(a);
    a = run_code("{\"code\":\"x\",\"language\":\"python\",\"memory_limit_MB\":\"128\"}", OK_PY,
                 &status);
    ASSERT_STR(job_field("memory"), "128");
    cJSON_Delete(a);
    a = run_code("{\"code\":\"x\",\"language\":\"python\",\"memory_limit_MB\":0}", OK_PY, &status);
    ASSERT(job_field("memory") == NULL);
    cJSON_Delete(a);
}

TEST(executor_pod_name_is_the_worker)
{
    int status;
    cJSON *a = run_code("{\"code\":\"x\",\"language\":\"python\"}",
                        "{\"status\":\"ok\",\"exit_code\":0,\"worker\":\"w1\"}", &status);

    ASSERT_STR(str_at(a, "executor_pod_name"), "w1");
    cJSON_Delete(a);
    a = run_code("{\"code\":\"x\",\"language\":\"python\"}",
                 "{\"status\":\"invalid\",\"worker\":\"\"}", &status);
    ASSERT(null_at(a, "executor_pod_name"));
    cJSON_Delete(a);
}

/* ---- each status of ours ------------------------------------------------- */

TEST(cpp_has_a_compile_result)
{
    int status;
    cJSON *a = run_code("{\"code\":\"int main(){}\",\"language\":\"cpp\"}",
                        "{\"status\":\"ok\",\"exit_code\":0,\"stdout\":\"hello\\n\","
                        "\"compile_output\":\"warning: x\",\"duration_ms\":3,"
                        "\"phases\":{\"compile_ms\":1500,\"run_ms\":4}}",
                        &status);
    const cJSON *comp = obj_at(a, "compile_result"), *run = obj_at(a, "run_result");

    ASSERT_STR(job_field("lang"), "cpp");
    ASSERT_STR(job_field("link_flags"), "[\"-lcrypto\",\"-lssl\",\"-lpthread\"]");
    ASSERT_STR(str_at(a, "status"), "Success");
    ASSERT_STR(str_at(comp, "status"), "Finished");
    ASSERT_EQ(num_at(comp, "return_code"), 0);
    ASSERT_EQ(num_at(comp, "execution_time"), 1.5);
    ASSERT_STR(str_at(comp, "stdout"), "");
    ASSERT_STR(str_at(comp, "stderr"), "warning: x");
    ASSERT_STR(str_at(run, "stdout"), "hello\n");
    cJSON_Delete(a);
}

TEST(runtime_error_is_failed_with_its_code)
{
    int status;
    cJSON *a = run_code("{\"code\":\"x\",\"language\":\"python\"}",
                        "{\"status\":\"runtime_error\",\"exit_code\":1,\"stderr\":\"Traceback\"}",
                        &status);
    const cJSON *run = obj_at(a, "run_result");

    ASSERT_STR(str_at(a, "status"), "Failed");
    ASSERT_STR(str_at(a, "message"), "");
    ASSERT_STR(str_at(run, "status"), "Finished");
    ASSERT_EQ(num_at(run, "return_code"), 1);
    ASSERT_STR(str_at(run, "stderr"), "Traceback");
    cJSON_Delete(a);
    a = run_code("{\"code\":\"x\",\"language\":\"python\"}",
                 "{\"status\":\"runtime_error\",\"exit_code\":139,\"signal\":11}", &status);
    ASSERT_EQ(num_at(obj_at(a, "run_result"), "return_code"), 139);
    cJSON_Delete(a);
}

TEST(timeout_is_time_limit_exceeded)
{
    int status;
    cJSON *a = run_code("{\"code\":\"x\",\"language\":\"python\",\"run_timeout\":1}",
                        "{\"status\":\"timeout\",\"exit_code\":137,\"stdout\":\"partial\","
                        "\"duration_ms\":1000}",
                        &status);
    const cJSON *run = obj_at(a, "run_result");

    ASSERT_STR(job_field("timeout"), "1");
    ASSERT_STR(str_at(a, "status"), "Failed");
    ASSERT_STR(str_at(a, "message"), "");
    ASSERT_STR(str_at(run, "status"), "TimeLimitExceeded");
    ASSERT(null_at(run, "return_code"));
    ASSERT_STR(str_at(run, "stdout"), "partial");
    ASSERT_EQ(num_at(run, "execution_time"), 1.0);
    cJSON_Delete(a);
}

TEST(compile_error_has_no_run_result)
{
    int status;
    cJSON *a = run_code("{\"code\":\"int main(\",\"language\":\"cpp\"}",
                        "{\"status\":\"compile_error\",\"compile_output\":\"main.cpp:1: error\","
                        "\"phases\":{\"compile_ms\":200}}",
                        &status);
    const cJSON *comp = obj_at(a, "compile_result");

    ASSERT_STR(str_at(a, "status"), "Failed");
    ASSERT(null_at(a, "run_result"));
    ASSERT_STR(str_at(comp, "status"), "Finished");
    ASSERT(num_at(comp, "return_code") != 0 && num_at(comp, "return_code") != -12345);
    ASSERT_STR(str_at(comp, "stderr"), "main.cpp:1: error");
    ASSERT_EQ(num_at(comp, "execution_time"), 0.2);
    cJSON_Delete(a);
    /* a compile past compile_timeout (agent/run.c's mark) */
    a = run_code("{\"code\":\"x\",\"language\":\"cpp\",\"compile_timeout\":1}",
                 "{\"status\":\"compile_error\",\"compile_output\":\"\\n[llm-sandbox: the compiler "
                 "timed out after 1000 ms]\\n\"}",
                 &status);
    comp = obj_at(a, "compile_result");
    ASSERT_STR(job_field("compile_timeout"), "1");
    ASSERT_STR(str_at(a, "status"), "Failed");
    ASSERT_STR(str_at(comp, "status"), "TimeLimitExceeded");
    ASSERT(null_at(comp, "return_code"));
    ASSERT(null_at(a, "run_result"));
    cJSON_Delete(a);
}

TEST(memory_limit_is_a_killed_run)
{
    int status;
    cJSON *a = run_code("{\"code\":\"x\",\"language\":\"python\",\"memory_limit_MB\":64}",
                        "{\"status\":\"memory_limit\",\"exit_code\":137,\"signal\":9}", &status);
    const cJSON *run = obj_at(a, "run_result");

    ASSERT_STR(str_at(a, "status"), "Failed");
    ASSERT_CONTAINS(str_at(a, "message"), "memory_limit");
    ASSERT_STR(str_at(run, "status"), "Finished");
    ASSERT_EQ(num_at(run, "return_code"), 137);
    cJSON_Delete(a);
    /* no exit code known: still a non-zero one */
    a = run_code("{\"code\":\"x\",\"language\":\"python\"}", "{\"status\":\"memory_limit\"}",
                 &status);
    ASSERT_EQ(num_at(obj_at(a, "run_result"), "return_code"), 137);
    cJSON_Delete(a);
    /* the compiler's: compile_result, no run */
    a = run_code("{\"code\":\"x\",\"language\":\"cpp\"}",
                 "{\"status\":\"memory_limit\",\"compile_output\":\"\\n[llm-sandbox: the "
                 "compiler ran out of memory]\\n\"}",
                 &status);
    ASSERT_STR(str_at(a, "status"), "Failed");
    ASSERT(null_at(a, "run_result"));
    ASSERT_EQ(num_at(obj_at(a, "compile_result"), "return_code"), 137);
    cJSON_Delete(a);
}

TEST(output_limit_is_a_killed_run)
{
    int status;
    cJSON *a =
        run_code("{\"code\":\"x\",\"language\":\"python\"}",
                 "{\"status\":\"output_limit\",\"exit_code\":137,\"stdout\":\"yyyy\"}", &status);
    const cJSON *run = obj_at(a, "run_result");

    ASSERT_STR(str_at(a, "status"), "Failed");
    ASSERT_CONTAINS(str_at(a, "message"), "output_limit");
    ASSERT_STR(str_at(run, "status"), "Finished");
    ASSERT_EQ(num_at(run, "return_code"), 137);
    ASSERT_STR(str_at(run, "stdout"), "yyyy");
    cJSON_Delete(a);
}

/* Statuses of the sandbox's side: SandboxError, our status and why. */
TEST(sandbox_side_statuses_are_sandbox_error)
{
    static const struct {
        const char *result, *says;
    } rows[] = {
        {"{\"status\":\"blocked\",\"error\":\"the security policy refused the code\","
         "\"violations\":[{\"rule\":\"shell\",\"severity\":\"high\",\"line\":3}]}",
         "blocked: the security policy refused the code; shell (high) at line 3"},
        {"{\"status\":\"invalid\",\"error\":\"files: \\\"/abs\\\" must be relative\"}",
         "invalid: files: \"/abs\" must be relative"},
        {"{\"status\":\"internal_error\",\"error\":\"docker: create container: HTTP 500\"}",
         "internal_error: docker: create container: HTTP 500"},
        {"{\"status\":\"install_error\",\"error\":\"pip\",\"compile_output\":\"no such package\"}",
         "install_error: pip: no such package"},
        {"{\"status\":\"invalid\",\"error\":\"timeout: 1e5 s is above the ceiling\"}",
         "invalid: timeout: 1e5 s is above the ceiling (the job's timeout is this request's "
         "run_timeout)"},
        {"{\"status\":\"cancelled\"}", "cancelled: no error given"},
        {"{\"status\":\"session_lost\",\"error\":\"gone\"}", "session_lost: gone"},
        {"{\"stdout\":\"no status\"}", "no status"},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int status;
        cJSON *a = run_code("{\"code\":\"x\",\"language\":\"python\"}", rows[i].result, &status);
        ASSERT_MSG(status == 200, rows[i].says);
        ASSERT_MSG(str_at(a, "status") && strcmp(str_at(a, "status"), "SandboxError") == 0,
                   rows[i].says);
        ASSERT_MSG(str_at(a, "message") && strstr(str_at(a, "message"), rows[i].says),
                   rows[i].says);
        ASSERT_MSG(null_at(a, "run_result") && null_at(a, "compile_result"), rows[i].says);
        cJSON_Delete(a);
    }
}

TEST(host_failures)
{
    int status;
    cJSON *a;

    fake.fail = LLMSB_ERR_INTERRUPTED;
    a = run_code("{\"code\":\"x\",\"language\":\"python\"}", OK_PY, &status);
    ASSERT_EQ(status, 503);
    ASSERT_CONTAINS(str_at(a, "error"), "the server is stopping");
    cJSON_Delete(a);
    fake.fail = LLMSB_ERR_BACKEND;
    a = run_code("{\"code\":\"x\",\"language\":\"python\"}", OK_PY, &status);
    fake.fail = 0;
    ASSERT_EQ(status, 200);
    ASSERT_STR(str_at(a, "status"), "SandboxError");
    ASSERT_CONTAINS(str_at(a, "message"), "the server is stopping");
    cJSON_Delete(a);
}

/* ---- files in, fetch_files out -------------------------------------------- */

TEST(files_and_fetch_files_round_trip)
{
    int status;
    cJSON *a = run_code(
        "{\"code\":\"x\",\"language\":\"python\","
        "\"files\":{\"in/a.txt\":\"aGk=\",\"none\":null,\"IGNORE_THIS_FILE.txt\":\"eA==\"},"
        "\"fetch_files\":[\"out.txt\",\"./b[1]*.txt\",\"missing.txt\",\"big.bin\"]}",
        "{\"status\":\"ok\",\"exit_code\":0,\"artifacts\":["
        "{\"name\":\"plot-001.png\",\"mime\":\"image/png\",\"size\":1,\"base64\":\"AA==\"},"
        "{\"name\":\"out.txt\",\"mime\":\"text/plain\",\"size\":2,\"base64\":\"b2s=\"},"
        "{\"name\":\"b[1]*.txt\",\"mime\":\"text/plain\",\"size\":1,\"base64\":\"Yg==\"},"
        "{\"name\":\"big.bin\",\"skipped\":\"3145728 bytes is over the per-file cap\"}]}",
        &status);
    const cJSON *files = obj_at(a, "files");

    ASSERT_STR(job_field("files"), "{\"in/a.txt\":{\"base64\":\"aGk=\"}}");
    ASSERT_STR(job_field("artifacts"),
               "[\"out.txt\",\"b\\\\[1]\\\\*.txt\",\"missing.txt\",\"big.bin\"]");
    ASSERT_STR(str_at(a, "status"), "Success");
    ASSERT_STR(str_at(files, "out.txt"), "b2s=");
    ASSERT_STR(str_at(files, "./b[1]*.txt"), "Yg=="); /* under the client's spelling */
    ASSERT(obj_at(files, "missing.txt") == NULL);     /* base.py: only files that exist */
    ASSERT(obj_at(files, "big.bin") == NULL);
    ASSERT(obj_at(files, "plot-001.png") == NULL); /* not asked for */
    ASSERT_CONTAINS(str_at(a, "message"), "fetch_files: big.bin was not fetched: 3145728 bytes");
    cJSON_Delete(a);
}

TEST(fetch_files_outside_the_work_dir_are_refused)
{
    static const char *bodies[] = {
        "{\"code\":\"x\",\"language\":\"python\",\"fetch_files\":[\"/tmp/flag.txt\"]}",
        "{\"code\":\"x\",\"language\":\"python\",\"fetch_files\":[\"../up.txt\"]}",
    };

    for (size_t i = 0; i < 2; i++) {
        int status;
        cJSON *a = run_code(bodies[i], OK_PY, &status);
        ASSERT_EQ(status, 200);
        ASSERT_STR(str_at(a, "status"), "SandboxError");
        ASSERT_CONTAINS(str_at(a, "message"), "fetch_files: \"");
        ASSERT_EQ(fake.calls, 0);
        cJSON_Delete(a);
    }
}

TEST(a_nul_in_a_string_is_refused)
{
    int status;
    cJSON *a = run_code("{\"code\":\"print(1)\\u0000\",\"language\":\"python\"}", OK_PY, &status);

    ASSERT_STR(str_at(a, "status"), "SandboxError");
    ASSERT_CONTAINS(str_at(a, "message"), "NUL");
    ASSERT_EQ(fake.calls, 0);
    cJSON_Delete(a);
}

/* ---- each language id ----------------------------------------------------- */

TEST(each_language_id)
{
    static const struct {
        const char *id, *ours; /* ours NULL: refused with SandboxError */
    } rows[] = {
        {"python", "python"},
        {"cpp", "cpp"},
        {"nodejs", "javascript"},
        {"go", "go"},
        {"go_test", "go_test"},
        {"java", "java"},
        {"php", "php"},
        {"csharp", "csharp"},
        {"bash", "bash"},
        {"typescript", "typescript"},
        {"sql", NULL},
        {"rust", "rust"},
        {"cuda", NULL},
        {"lua", "lua"},
        {"R", "r"},
        {"perl", "perl"},
        {"D_ut", "d"},
        {"ruby", "ruby"},
        {"scala", "scala"},
        {"julia", NULL},
        {"pytest", NULL},
        {"junit", NULL},
        {"kotlin_script", NULL},
        {"jest", NULL},
        {"verilog", NULL},
        {"python_gpu", NULL},
        {"lean", NULL},
        {"swift", NULL},
        {"racket", "racket"},
        /* ours beyond its literal (an extension) */
        {"javascript", "javascript"},
        {"haskell", "haskell"},
        {"ocaml", "ocaml"},
        {"elixir", "elixir"},
        {"ada", "ada"},
        {"clojure", "clojure"},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char body[160];
        int status;
        cJSON *a;

        snprintf(body, sizeof(body), "{\"code\":\"x\",\"language\":\"%s\"}", rows[i].id);
        a = run_code(body, OK_PY, &status);
        ASSERT_MSG(status == 200, rows[i].id);
        if (rows[i].ours) {
            ASSERT_MSG(fake.calls == 1, rows[i].id);
            ASSERT_MSG(job_field("lang") && strcmp(job_field("lang"), rows[i].ours) == 0,
                       rows[i].id);
            ASSERT_MSG(strcmp(str_at(a, "status"), "Success") == 0, rows[i].id);
        } else {
            char want[64];
            snprintf(want, sizeof(want), "language \"%s\" is not served here: ", rows[i].id);
            ASSERT_MSG(fake.calls == 0, rows[i].id);
            ASSERT_MSG(strcmp(str_at(a, "status"), "SandboxError") == 0, rows[i].id);
            ASSERT_MSG(strstr(str_at(a, "message"), want) != NULL, rows[i].id);
        }
        cJSON_Delete(a);
    }
}

TEST(an_unknown_language_is_a_literal_error)
{
    int status;
    cJSON *a = run_code("{\"code\":\"x\",\"language\":\"cobol\"}", OK_PY, &status);
    const cJSON *e = first_detail(a);
    char loc[64];

    ASSERT_EQ(status, 422);
    ASSERT_EQ(fake.calls, 0);
    ASSERT_STR(str_at(e, "type"), "literal_error");
    loc_text(e, loc, sizeof(loc));
    ASSERT_STR(loc, "body.language");
    ASSERT_CONTAINS(str_at(e, "msg"), "Input should be 'python', 'cpp', 'nodejs'");
    ASSERT_CONTAINS(str_at(e, "msg"), "'swift' or 'racket'");
    ASSERT_STR(str_at(e, "input"), "cobol");
    ASSERT_CONTAINS(str_at(obj_at(e, "ctx"), "expected"), "'D_ut'");
    cJSON_Delete(a);
    /* its ids are case-sensitive; "r" is ours, "Sql" is nobody's */
    a = run_code("{\"code\":\"x\",\"language\":\"Sql\"}", OK_PY, &status);
    ASSERT_EQ(status, 422);
    cJSON_Delete(a);
}

/* ---- malformed requests: FastAPI's 422 ------------------------------------ */

TEST(malformed_bodies)
{
    static const struct {
        const char *body, *type, *loc;
    } rows[] = {
        {NULL, "missing", "body"},
        {"[1,x]", "json_invalid", "body.3"}, /* where Python's json.loads stops too */
        {"{} x", "json_invalid", "body.3"},
        {"[1,2]", "model_attributes_type", "body"},
        {"{\"language\":\"python\"}", "missing", "body.code"},
        {"{\"code\":\"x\"}", "missing", "body.language"},
        {"{\"code\":5,\"language\":\"python\"}", "string_type", "body.code"},
        {"{\"code\":\"x\",\"language\":5}", "literal_error", "body.language"},
        {"{\"code\":\"x\",\"language\":\"python\",\"run_timeout\":\"abc\"}", "float_parsing",
         "body.run_timeout"},
        {"{\"code\":\"x\",\"language\":\"python\",\"compile_timeout\":[]}", "float_type",
         "body.compile_timeout"},
        {"{\"code\":\"x\",\"language\":\"python\",\"memory_limit_MB\":1.5}", "int_from_float",
         "body.memory_limit_MB"},
        {"{\"code\":\"x\",\"language\":\"python\",\"memory_limit_MB\":\"a\"}", "int_parsing",
         "body.memory_limit_MB"},
        {"{\"code\":\"x\",\"language\":\"python\",\"memory_limit_MB\":[]}", "int_type",
         "body.memory_limit_MB"},
        {"{\"code\":\"x\",\"language\":\"python\",\"stdin\":5}", "string_type", "body.stdin"},
        {"{\"code\":\"x\",\"language\":\"python\",\"files\":[]}", "dict_type", "body.files"},
        {"{\"code\":\"x\",\"language\":\"python\",\"files\":{\"a\":5}}", "string_type",
         "body.files.a"},
        {"{\"code\":\"x\",\"language\":\"python\",\"fetch_files\":\"a\"}", "list_type",
         "body.fetch_files"},
        {"{\"code\":\"x\",\"language\":\"python\",\"fetch_files\":[\"a\",1]}", "string_type",
         "body.fetch_files.1"},
        {"{\"code\":\"x\",\"language\":\"python\",\"args\":{}}", "list_type", "body.args"},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int status;
        cJSON *a = run_code(rows[i].body, OK_PY, &status);
        const cJSON *e = first_detail(a);
        char loc[64];

        ASSERT_MSG(status == 422, rows[i].loc);
        ASSERT_MSG(fake.calls == 0, rows[i].loc);
        ASSERT_MSG(str_at(e, "type") && strcmp(str_at(e, "type"), rows[i].type) == 0, rows[i].loc);
        loc_text(e, loc, sizeof(loc));
        ASSERT_MSG(strcmp(loc, rows[i].loc) == 0, rows[i].loc);
        ASSERT_MSG(str_at(e, "msg") != NULL, rows[i].loc);
        ASSERT_MSG(obj_at(e, "input") != NULL, rows[i].loc);
        cJSON_Delete(a);
    }
}

TEST(every_error_of_a_body_is_listed)
{
    int status;
    cJSON *a = run_code("{\"run_timeout\":\"x\",\"stdin\":1}", OK_PY, &status);
    const cJSON *d = obj_at(a, "detail");
    char loc[64];

    ASSERT_EQ(status, 422);
    ASSERT_EQ(cJSON_GetArraySize(d), 4); /* pydantic's order: the model's fields */
    loc_text(cJSON_GetArrayItem(d, 0), loc, sizeof(loc));
    ASSERT_STR(loc, "body.run_timeout");
    loc_text(cJSON_GetArrayItem(d, 1), loc, sizeof(loc));
    ASSERT_STR(loc, "body.code");
    loc_text(cJSON_GetArrayItem(d, 2), loc, sizeof(loc));
    ASSERT_STR(loc, "body.stdin");
    loc_text(cJSON_GetArrayItem(d, 3), loc, sizeof(loc));
    ASSERT_STR(loc, "body.language");
    cJSON_Delete(a);
}

static void release_fake(void)
{
    cJSON_Delete(fake.job);
    fake.job = NULL;
}

TEST(cleanup)
{
    release_fake();
}

TEST_MAIN("front_fusion", T(ping_answers_pong), T(other_paths_are_not_ours),
          T(python_hello_maps_both_ways), T(limits_and_stdin_map),
          T(executor_pod_name_is_the_worker), T(cpp_has_a_compile_result),
          T(runtime_error_is_failed_with_its_code), T(timeout_is_time_limit_exceeded),
          T(compile_error_has_no_run_result), T(memory_limit_is_a_killed_run),
          T(output_limit_is_a_killed_run), T(sandbox_side_statuses_are_sandbox_error),
          T(host_failures), T(files_and_fetch_files_round_trip),
          T(fetch_files_outside_the_work_dir_are_refused), T(a_nul_in_a_string_is_refused),
          T(each_language_id), T(an_unknown_language_is_a_literal_error), T(malformed_bodies),
          T(every_error_of_a_body_is_listed), T(cleanup))
