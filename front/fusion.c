/* fusion.c - SandboxFusion's API (bytedance/SandboxFusion): POST /run_code
 * and GET /v1/ping, mapped onto one job and back.  Its request and answer
 * follow sandbox/server/sandbox_api.py (RunCodeRequest, RunCodeResponse,
 * parse_run_status) and sandbox/runners/types.py (Language,
 * CommandRunResult); a bad request gets FastAPI's 422 shape, as pydantic
 * words it.  The mapping tables and what cannot be mapped are in
 * docs/http/fusion.md. */
#include "front/routes.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/json.h"
#include "common/status.h"
#include "languages/languages.h"

#define FUSION_DEFAULT_TIMEOUT_S 10.0 /* RunCodeRequest's run_timeout */
#define FUSION_MAX_FIELDS 16
#define FUSION_MSG_MAX 2048
/* A signal-killed program's exit code when the result has none: 128 +
 * SIGKILL, what the kernel's OOM killer sends. */
#define FUSION_KILLED_RC 137

/* One id of SandboxFusion's Language literal (sandbox/runners/types.py), in
 * its order (a literal_error lists them so): the language of ours that
 * runs it, or NULL with why we do not. */
struct fusion_lang {
    const char *id;
    const char *ours;
    const char *why;
    const char *link_flags; /* JSON text of the job's link_flags, or NULL */
};

static const struct fusion_lang fusion_langs[] = {
    {"python", "python", NULL, NULL},
    /* its run_cpp links these when the machine has them (get_cpp_rt_flags,
     * sandbox/runners/major.py): programs that use OpenSSL link as there */
    {"cpp", "cpp", NULL, "[\"-lcrypto\",\"-lssl\",\"-lpthread\"]"},
    {"nodejs", "javascript", NULL, NULL},
    {"go", "go", NULL, NULL},
    {"go_test", "go_test", NULL, NULL},
    {"java", "java", NULL, NULL},
    {"php", "php", NULL, NULL},
    {"csharp", "csharp", NULL, NULL},
    {"bash", "bash", NULL, NULL},
    {"typescript", "typescript", NULL, NULL},
    {"sql", NULL,
     "there is no SQL engine in our images (SandboxFusion itself has no runner "
     "for it and answers SandboxError too)",
     NULL},
    {"rust", "rust", NULL, NULL},
    {"cuda", NULL, "there is no GPU here", NULL},
    {"lua", "lua", NULL, NULL},
    {"R", "r", NULL, NULL},
    {"perl", "perl", NULL, NULL},
    {"D_ut", "d", NULL, NULL},
    {"ruby", "ruby", NULL, NULL},
    {"scala", "scala", NULL, NULL},
    {"julia", NULL, "Julia is not in Debian 12, which our images are built from", NULL},
    {"pytest", NULL,
     "our python image has no pytest; send the tests as a python program "
     "(language \"python\") that calls them",
     NULL},
    {"junit", NULL,
     "our java image has no JUnit; send a java program whose main runs the "
     "checks (language \"java\")",
     NULL},
    {"kotlin_script", NULL,
     "Kotlin's compiler is not in Debian 12, which our images are built from", NULL},
    {"jest", NULL,
     "our images have no jest; send a typescript or nodejs program that runs the "
     "checks itself",
     NULL},
    {"verilog", NULL, "there is no Verilog simulator in our images", NULL},
    {"python_gpu", NULL, "there is no GPU here", NULL},
    {"lean", NULL, "there is no Lean toolchain in our images", NULL},
    {"swift", NULL, "Swift is not in Debian 12, which our images are built from", NULL},
    {"racket", "racket", NULL, NULL},
};
#define FUSION_NLANGS (sizeof(fusion_langs) / sizeof(fusion_langs[0]))

/* A /run_code request, checked: strings borrowed from the parsed body. */
struct fusion_call {
    const char *code;
    const char *stdin_text;              /* NULL: none */
    const char *lang_id;                 /* as the client wrote it */
    const struct language *lang;         /* ours, or NULL: refused (refusal says why) */
    const char *refusal;                 /* why a known id is not served */
    const char *link_flags;              /* the id's own link_flags, or NULL */
    double compile_timeout, run_timeout; /* s; compile_timeout NAN: not given */
    long long memory_mb;                 /* <= 0: ours (SandboxFusion: no limit) */
    const cJSON *files, *fetch_files;    /* an object, an array, or NULL */
};

/* ---- FastAPI's 422: {"detail": [{type, loc, msg, input[, ctx]}]} ------- */

/* ["body", field(, key or index)]: pydantic's loc of a body field. */
static cJSON *loc_new(const char *field, const char *key, int index)
{
    cJSON *loc = cJSON_CreateArray();

    if (!loc)
        return NULL;
    cJSON_AddItemToArray(loc, cJSON_CreateString("body"));
    if (field)
        cJSON_AddItemToArray(loc, cJSON_CreateString(field));
    if (key)
        cJSON_AddItemToArray(loc, cJSON_CreateString(key));
    else if (index >= 0)
        cJSON_AddItemToArray(loc, cJSON_CreateNumber(index));
    return loc;
}

/* Adds one error to detail; loc and ctx are consumed, input copied. */
static void detail_add(cJSON *detail, const char *type, cJSON *loc, const char *msg,
                       const cJSON *input, cJSON *ctx)
{
    cJSON *e = cJSON_CreateObject();

    if (!e) {
        cJSON_Delete(loc);
        cJSON_Delete(ctx);
        return;
    }
    cJSON_AddStringToObject(e, "type", type);
    cJSON_AddItemToObject(e, "loc", loc ? loc : cJSON_CreateArray());
    cJSON_AddStringToObject(e, "msg", msg);
    cJSON_AddItemToObject(e, "input", input ? cJSON_Duplicate(input, 1) : cJSON_CreateNull());
    if (ctx)
        cJSON_AddItemToObject(e, "ctx", ctx);
    cJSON_AddItemToArray(detail, e);
}

/* The answer for a request pydantic would refuse: 422 {"detail": detail}. */
static void answer_422(struct front_answer *a, cJSON *detail)
{
    cJSON_Delete(a->json);
    a->status = 422;
    a->json = cJSON_CreateObject();
    if (a->json)
        cJSON_AddItemToObject(a->json, "detail", detail);
    else
        cJSON_Delete(detail);
}

/* ---- the request -------------------------------------------------------- */

/* A required str field (code). */
static const char *check_str(cJSON *detail, const cJSON *body, const char *field)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(body, field);

    if (!v) {
        detail_add(detail, "missing", loc_new(field, NULL, -1), "Field required", body, NULL);
        return NULL;
    }
    if (!cJSON_IsString(v)) {
        detail_add(detail, "string_type", loc_new(field, NULL, -1),
                   "Input should be a valid string", v, NULL);
        return NULL;
    }
    return v->valuestring;
}

/* A float field with a default: a number, or a string holding one
 * (pydantic's lax mode takes "10" too). */
static double check_float(cJSON *detail, const cJSON *body, const char *field, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(body, field);
    char *end = NULL;
    double d;

    if (!v)
        return dflt;
    if (cJSON_IsNumber(v))
        return v->valuedouble;
    if (cJSON_IsString(v)) {
        d = strtod(v->valuestring, &end);
        if (end != v->valuestring && *end == '\0' && isfinite(d))
            return d;
        detail_add(detail, "float_parsing", loc_new(field, NULL, -1),
                   "Input should be a valid number, unable to parse string as a number", v, NULL);
        return dflt;
    }
    detail_add(detail, "float_type", loc_new(field, NULL, -1), "Input should be a valid number", v,
               NULL);
    return dflt;
}

/* memory_limit_MB: an int (a float without a fraction and a string of
 * digits pass, as in pydantic's lax mode); default -1. */
static long long check_int(cJSON *detail, const cJSON *body, const char *field)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(body, field);

    char *end = NULL;
    long long n;

    if (!v)
        return -1;
    if (cJSON_IsString(v)) { /* "64", as pydantic's lax mode takes it */
        errno = 0;
        n = strtoll(v->valuestring, &end, 10);
        if (end != v->valuestring && *end == '\0' && errno == 0)
            return n;
        detail_add(detail, "int_parsing", loc_new(field, NULL, -1),
                   "Input should be a valid integer, unable to parse string as an integer", v,
                   NULL);
        return -1;
    }
    if (!cJSON_IsNumber(v)) {
        detail_add(detail, "int_type", loc_new(field, NULL, -1), "Input should be a valid integer",
                   v, NULL);
        return -1;
    }
    if (v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > 9.0e15) {
        detail_add(detail, "int_from_float", loc_new(field, NULL, -1),
                   "Input should be a valid integer, got a number with a fractional part", v, NULL);
        return -1;
    }
    return (long long)v->valuedouble;
}

/* A dict of str -> str or null (files): each value checked. */
static const cJSON *check_files(cJSON *detail, const cJSON *body)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(body, "files"), *e;

    if (!v)
        return NULL;
    if (!cJSON_IsObject(v)) {
        detail_add(detail, "dict_type", loc_new("files", NULL, -1),
                   "Input should be a valid dictionary", v, NULL);
        return NULL;
    }
    cJSON_ArrayForEach(e, v) {
        if (!cJSON_IsString(e) && !cJSON_IsNull(e))
            detail_add(detail, "string_type", loc_new("files", e->string, -1),
                       "Input should be a valid string", e, NULL);
    }
    return v;
}

/* A list of str (fetch_files, args). */
static const cJSON *check_list(cJSON *detail, const cJSON *body, const char *field)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(body, field), *e;
    int i = 0;

    if (!v)
        return NULL;
    if (!cJSON_IsArray(v)) {
        detail_add(detail, "list_type", loc_new(field, NULL, -1), "Input should be a valid list", v,
                   NULL);
        return NULL;
    }
    cJSON_ArrayForEach(e, v) {
        if (!cJSON_IsString(e))
            detail_add(detail, "string_type", loc_new(field, NULL, i),
                       "Input should be a valid string", e, NULL);
        i++;
    }
    return v;
}

/* "'python', 'cpp', ... or 'racket'": pydantic's words for a literal. */
static void literal_expected(char *out, size_t outsz)
{
    out[0] = '\0';
    for (size_t i = 0; i < FUSION_NLANGS; i++)
        llmsb_append(out, outsz, "%s'%s'",
                     i == 0                   ? ""
                     : i + 1 == FUSION_NLANGS ? " or "
                                              : ", ",
                     fusion_langs[i].id);
}

/* language: one of the literal's ids (served or not), or a name or alias of
 * ours (docs/http/fusion.md: an extension); else literal_error. */
static void check_language(cJSON *detail, const cJSON *body, struct fusion_call *c)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(body, "language");
    char expected[512], msg[600];
    cJSON *ctx;

    if (!v) {
        detail_add(detail, "missing", loc_new("language", NULL, -1), "Field required", body, NULL);
        return;
    }
    if (cJSON_IsString(v)) {
        c->lang_id = v->valuestring;
        for (size_t i = 0; i < FUSION_NLANGS; i++) {
            if (strcmp(v->valuestring, fusion_langs[i].id) != 0)
                continue;
            c->lang = fusion_langs[i].ours ? language_find(fusion_langs[i].ours) : NULL;
            c->refusal = fusion_langs[i].why;
            c->link_flags = fusion_langs[i].link_flags;
            return;
        }
        if ((c->lang = language_find(v->valuestring)) != NULL)
            return;
    }
    literal_expected(expected, sizeof(expected));
    snprintf(msg, sizeof(msg), "Input should be %s", expected);
    ctx = cJSON_CreateObject();
    if (ctx)
        cJSON_AddStringToObject(ctx, "expected", expected);
    detail_add(detail, "literal_error", loc_new("language", NULL, -1), msg, v, ctx);
}

/* stdin: str or null. */
static void check_stdin(cJSON *detail, const cJSON *body, struct fusion_call *c)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(body, "stdin");

    if (!v || cJSON_IsNull(v))
        return;
    if (cJSON_IsString(v))
        c->stdin_text = v->valuestring;
    else
        detail_add(detail, "string_type", loc_new("stdin", NULL, -1),
                   "Input should be a valid string", v, NULL);
}

/* Checks body as RunCodeRequest; returns the detail array (empty: valid). */
static cJSON *call_check(const cJSON *body, struct fusion_call *c)
{
    cJSON *detail = cJSON_CreateArray();

    if (!detail)
        return NULL;
    memset(c, 0, sizeof(*c));
    /* absent: our own compile limit (limits.*.compile_timeout), not
     * SandboxFusion's 10 s, which its runners without a compile step
     * (typescript's tsx, csharp's dotnet run, go test) never apply */
    c->compile_timeout = check_float(detail, body, "compile_timeout", NAN);
    c->run_timeout = check_float(detail, body, "run_timeout", FUSION_DEFAULT_TIMEOUT_S);
    c->memory_mb = check_int(detail, body, "memory_limit_MB");
    c->code = check_str(detail, body, "code");
    check_stdin(detail, body, c);
    check_language(detail, body, c);
    c->files = check_files(detail, body);
    c->fetch_files = check_list(detail, body, "fetch_files");
    check_list(detail, body, "args"); /* checked as pydantic does; only pytest reads it */
    return detail;
}

/* The body as JSON, all of it: NULL when it is not, *at then the offset
 * where it went wrong and *why Python's json words for it.  (The body is
 * parsed by its length, not up to a NUL.) */
static cJSON *json_parse_whole(const struct front_req *r, size_t *at, const char **why)
{
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithLengthOpts(r->body, r->len, &end, 0);

    if (!end || end < r->body || end > r->body + r->len)
        end = r->body;
    *at = (size_t)(end - r->body);
    *why = "Expecting value";
    if (!o)
        return NULL;
    while (end < r->body + r->len && *end && strchr(" \t\r\n", *end))
        end++;
    if (end == r->body + r->len)
        return o;
    cJSON_Delete(o);
    *at = (size_t)(end - r->body);
    *why = "Extra data";
    return NULL;
}

/* FastAPI's error for a body that is not JSON: loc ["body", offset]. */
static void detail_json_invalid(cJSON *detail, size_t at, const char *why)
{
    cJSON *loc = loc_new(NULL, NULL, -1), *ctx = cJSON_CreateObject(), *empty;

    if (loc)
        cJSON_AddItemToArray(loc, cJSON_CreateNumber((double)at));
    if (ctx)
        cJSON_AddStringToObject(ctx, "error", why);
    empty = cJSON_CreateObject();
    detail_add(detail, "json_invalid", loc, "JSON decode error", empty, ctx);
    cJSON_Delete(empty);
}

/* The body as a JSON object, or NULL with FastAPI's 422 for what it is
 * instead (nothing, not JSON, not an object). */
static cJSON *body_parse(const struct front_req *r, struct front_answer *a)
{
    cJSON *detail = cJSON_CreateArray(), *o = NULL;
    const char *why;
    size_t at;

    if (!detail) {
        front_error(a, 500, "run_code: out of memory");
        return NULL;
    }
    if (r->len == 0)
        detail_add(detail, "missing", loc_new(NULL, NULL, -1), "Field required", NULL, NULL);
    else if (!(o = json_parse_whole(r, &at, &why)))
        detail_json_invalid(detail, at, why);
    else if (!cJSON_IsObject(o))
        detail_add(detail, "model_attributes_type", loc_new(NULL, NULL, -1),
                   "Input should be a valid dictionary or object to extract fields from", o, NULL);
    if (o && cJSON_IsObject(o)) {
        cJSON_Delete(detail);
        return o;
    }
    cJSON_Delete(o);
    answer_422(a, detail);
    return NULL;
}

/* ---- the job ------------------------------------------------------------ */

/* fetch_files' path as an fnmatch glob matching it alone: *, ?, [ and \
 * escaped (agent/artifacts.c matches with fnmatch, flags 0).  Returns a new
 * string; caller frees. */
static char *glob_exact(const char *path)
{
    size_t n = strlen(path);
    char *g = malloc(2 * n + 1), *o = g;

    if (!g)
        return NULL;
    for (const char *p = path; *p; p++) {
        if (strchr("*?[\\", *p))
            *o++ = '\\';
        *o++ = *p;
    }
    *o = '\0';
    return g;
}

/* A path of fetch_files as the artifact's name: without leading "./"
 * (agent/artifacts.c names files relative to the work dir). */
static const char *fetch_name(const char *path)
{
    while (strncmp(path, "./", 2) == 0)
        path += 2;
    return path;
}

/* 1 when fetch_files' path can be one of our artifacts' names: relative,
 * without "..". */
static int fetch_path_ok(const char *path)
{
    return path[0] != '\0' && path[0] != '/' && !strstr(path, "..");
}

/* Adds v as JSON text (consumed) under name; 0 or a negative code. */
static int add_json(struct fields *job, const char *name, cJSON *v)
{
    char *text = v ? cJSON_PrintUnformatted(v) : NULL;
    int rc = text ? fields_add_copy(job, name, strlen(name), text, strlen(text)) : LLMSB_ERR_NOMEM;

    free(text);
    cJSON_Delete(v);
    return rc;
}

/* files {path: base64 or null} -> ours {path: {"base64": ...}}: null values
 * and names holding IGNORE_THIS_FILE are left out, as restore_files
 * (sandbox/runners/base.py) leaves them. */
static int add_files(struct fields *job, const cJSON *files)
{
    cJSON *out = cJSON_CreateObject(), *f;
    const cJSON *e;
    int n = 0;

    if (!out)
        return LLMSB_ERR_NOMEM;
    cJSON_ArrayForEach(e, files) {
        if (!cJSON_IsString(e) || strstr(e->string, "IGNORE_THIS_FILE"))
            continue;
        f = cJSON_AddObjectToObject(out, e->string);
        if (!f || !cJSON_AddStringToObject(f, "base64", e->valuestring)) {
            cJSON_Delete(out);
            return LLMSB_ERR_NOMEM;
        }
        n++;
    }
    if (n == 0) {
        cJSON_Delete(out);
        return 0;
    }
    return add_json(job, "files", out);
}

/* fetch_files -> artifacts, each path a glob matching it alone. */
static int add_artifacts(struct fields *job, const cJSON *fetch)
{
    cJSON *globs = cJSON_CreateArray();
    const cJSON *e;
    char *g;

    if (!globs)
        return LLMSB_ERR_NOMEM;
    cJSON_ArrayForEach(e, fetch) {
        if (!(g = glob_exact(fetch_name(e->valuestring)))) {
            cJSON_Delete(globs);
            return LLMSB_ERR_NOMEM;
        }
        cJSON_AddItemToArray(globs, cJSON_CreateString(g));
        free(g);
    }
    return add_json(job, "artifacts", globs);
}

/* v as the job's number text: integral (memory, MB) or seconds. */
static int add_num(struct fields *job, const char *name, double v, int integral)
{
    char text[64];

    if (integral)
        snprintf(text, sizeof(text), "%.0f", v);
    else
        snprintf(text, sizeof(text), "%.15g", v); /* 0.2 as "0.2" */
    return fields_add_copy(job, name, strlen(name), text, strlen(text));
}

static int add_text(struct fields *job, const char *name, const char *v)
{
    return fields_add_copy(job, name, strlen(name), v, strlen(v));
}

/* The job's fields for call c (docs/jobs.md); 0 or a negative code. */
static int call_job(const struct fusion_call *c, struct fields *job)
{
    int rc = 0;

    rc |= add_text(job, "lang", c->lang->name);
    rc |= add_text(job, "code", c->code);
    if (c->stdin_text)
        rc |= add_text(job, "stdin", c->stdin_text);
    rc |= add_num(job, "timeout", c->run_timeout, 0);
    if (!isnan(c->compile_timeout))
        rc |= add_num(job, "compile_timeout", c->compile_timeout, 0);
    if (c->memory_mb > 0) /* base.py limits memory only when > 0 */
        rc |= add_num(job, "memory", (double)c->memory_mb, 1);
    if (c->link_flags)
        rc |= add_text(job, "link_flags", c->link_flags);
    rc |= add_text(job, "plots", "false"); /* SandboxFusion captures no figures */
    if (c->files)
        rc |= add_files(job, c->files);
    if (c->fetch_files && cJSON_GetArraySize(c->fetch_files) > 0)
        rc |= add_artifacts(job, c->fetch_files);
    return rc ? LLMSB_ERR_NOMEM : 0;
}

/* ---- the answer --------------------------------------------------------- */

/* RunCodeResponse with status and message, no results yet. */
static cJSON *response_new(const char *status, const char *message, const char *pod)
{
    cJSON *o = cJSON_CreateObject();

    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "status", status);
    cJSON_AddStringToObject(o, "message", message);
    cJSON_AddNullToObject(o, "compile_result");
    cJSON_AddNullToObject(o, "run_result");
    if (pod)
        cJSON_AddStringToObject(o, "executor_pod_name", pod);
    else
        cJSON_AddNullToObject(o, "executor_pod_name");
    cJSON_AddObjectToObject(o, "files");
    return o;
}

static void answer_sandbox_error(struct front_answer *a, const char *message)
{
    cJSON_Delete(a->json);
    a->status = 200;
    a->json = response_new("SandboxError", message, NULL);
}

static const char *res_str(const cJSON *res, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(res, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Where the job ran (executor_pod_name), or NULL: not said. */
static const char *res_worker(const cJSON *res)
{
    const char *w = res_str(res, "worker");
    return w && w[0] ? w : NULL;
}

/* A number of the result, or NAN when absent or null. */
static double res_num(const cJSON *res, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(res, name);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* CommandRunResult: status Finished/TimeLimitExceeded, execution_time in
 * seconds (NAN: null), return_code (NAN: null), stdout, stderr. */
static cJSON *command_result(const char *status, double seconds, double rc, const char *out,
                             const char *err)
{
    cJSON *o = cJSON_CreateObject();

    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "status", status);
    if (isnan(seconds))
        cJSON_AddNullToObject(o, "execution_time");
    else
        cJSON_AddNumberToObject(o, "execution_time", seconds);
    if (isnan(rc))
        cJSON_AddNullToObject(o, "return_code");
    else
        cJSON_AddNumberToObject(o, "return_code", rc);
    cJSON_AddStringToObject(o, "stdout", out ? out : "");
    cJSON_AddStringToObject(o, "stderr", err ? err : "");
    return o;
}

/* How a status of ours reads in SandboxFusion's answer. */
enum fusion_shape {
    SHAPE_SANDBOX_ERROR = 0, /* SandboxError, message: our status and error */
    SHAPE_RAN,               /* run_result Finished with the exit code */
    SHAPE_RUN_TLE,           /* run_result TimeLimitExceeded */
    SHAPE_COMPILE_FAILED,    /* compile_result only: Finished rc != 0, or TimeLimitExceeded */
    SHAPE_KILLED             /* ran, killed by a limit SandboxFusion lacks: Finished, rc != 0 */
};

static const enum fusion_shape fusion_shapes[STATUS_COUNT] = {
    [STATUS_OK] = SHAPE_RAN,
    [STATUS_RUNTIME_ERROR] = SHAPE_RAN,
    [STATUS_TIMEOUT] = SHAPE_RUN_TLE,
    [STATUS_COMPILE_ERROR] = SHAPE_COMPILE_FAILED,
    [STATUS_MEMORY_LIMIT] = SHAPE_KILLED,
    [STATUS_OUTPUT_LIMIT] = SHAPE_KILLED,
    /* install_error, blocked, invalid, internal_error, cancelled,
     * session_lost, none, running: the sandbox's side */
};

/* Marks agent/run.c writes into compile_output. */
#define MARK_COMPILE_TIMEOUT "[llm-sandbox: the compiler timed out after"
#define MARK_COMPILE_OOM "[llm-sandbox: the compiler ran out of memory]"

/* The program's return code for shape: our exit code (128+N for signal
 * N).  A run killed by a limit SandboxFusion lacks is never 0 (its
 * parse_run_status would call that Success): 137 when none is known. */
static double run_rc(const cJSON *res, enum fusion_shape shape)
{
    double rc = res_num(res, "exit_code");

    if (shape == SHAPE_KILLED && (isnan(rc) || rc == 0))
        return FUSION_KILLED_RC;
    if (isnan(rc)) /* ok without an exit code: 0; runtime_error: 1 */
        return strcmp(res_str(res, "status"), "ok") == 0 ? 0 : 1;
    return rc;
}

/* The compile step's seconds (phases.compile_ms), NAN when not measured. */
static double compile_seconds(const cJSON *res)
{
    double ms = res_num(cJSON_GetObjectItemCaseSensitive(res, "phases"), "compile_ms");
    return isnan(ms) ? NAN : ms / 1000.0;
}

/* compile_result for a compile that failed (compile_error, or the
 * compiler's memory_limit): TimeLimitExceeded without a return code, or
 * Finished with one (the compiler's is not in our result: 1, or 137 for an
 * OOM kill).  Compiler messages go to stderr, where g++ and javac write
 * them. */
static cJSON *compile_failed(const cJSON *res, int oom)
{
    const char *out = res_str(res, "compile_output");

    if (!oom && out && strstr(out, MARK_COMPILE_TIMEOUT))
        return command_result("TimeLimitExceeded", compile_seconds(res), NAN, "", out);
    return command_result("Finished", compile_seconds(res), oom ? FUSION_KILLED_RC : 1, "", out);
}

/* Fills o's compile_result and run_result for shape; returns the RunStatus. */
static const char *fill_results(cJSON *o, enum fusion_shape shape, const struct language *l,
                                const cJSON *res)
{
    const char *out = res_str(res, "stdout"), *err = res_str(res, "stderr");
    const char *cout = res_str(res, "compile_output");
    double secs = res_num(res, "duration_ms") / 1000.0, rc = run_rc(res, shape);
    int compiler_oom = shape == SHAPE_KILLED && cout && strstr(cout, MARK_COMPILE_OOM);
    cJSON *comp = NULL, *run = NULL;

    if (shape == SHAPE_COMPILE_FAILED || compiler_oom)
        comp = compile_failed(res, compiler_oom);
    else if (l->compile[0])
        comp = command_result("Finished", compile_seconds(res), 0, "", cout);
    if (shape == SHAPE_RUN_TLE)
        run = command_result("TimeLimitExceeded", secs, NAN, out, err);
    else if (shape == SHAPE_RAN || (shape == SHAPE_KILLED && !compiler_oom))
        run = command_result("Finished", secs, rc, out, err);
    if (comp)
        cJSON_ReplaceItemInObjectCaseSensitive(o, "compile_result", comp);
    if (run)
        cJSON_ReplaceItemInObjectCaseSensitive(o, "run_result", run);
    /* parse_run_status: Success only when every step finished with 0 */
    return shape == SHAPE_RAN && rc == 0 ? "Success" : "Failed";
}

/* The artifacts' name -> base64 for each path of fetch_files found, under
 * the client's own spelling of it; a file left out is told in msg. */
static void fill_files(cJSON *o, const cJSON *fetch, const cJSON *res, char *msg, size_t msgsz)
{
    const cJSON *arts = cJSON_GetObjectItemCaseSensitive(res, "artifacts"), *p, *a;
    cJSON *files = cJSON_GetObjectItemCaseSensitive(o, "files");

    cJSON_ArrayForEach(p, fetch) {
        const char *want = fetch_name(p->valuestring);
        cJSON_ArrayForEach(a, arts) {
            const char *name = res_str(a, "name"), *b64 = res_str(a, "base64");
            const char *skipped = res_str(a, "skipped");
            if (!name || strcmp(name, want) != 0)
                continue;
            if (b64 && !cJSON_GetObjectItemCaseSensitive(files, p->valuestring))
                cJSON_AddStringToObject(files, p->valuestring, b64);
            else if (skipped)
                llmsb_append(msg, msgsz, "%sfetch_files: %s was not fetched: %s",
                             msg[0] ? "; " : "", p->valuestring, skipped);
        }
    }
}

/* What we add to message where SandboxFusion's shape cannot say it: a
 * limit it does not have. */
static void killed_message(const cJSON *res, const char *status, char *msg, size_t msgsz)
{
    const char *error = res_str(res, "error");

    if (strcmp(status, "memory_limit") == 0)
        llmsb_fmt(msg, msgsz, "memory_limit: the kernel's OOM killer ended the program%s%s",
                  error ? ": " : "", error ? error : "");
    else
        llmsb_fmt(msg, msgsz,
                  "output_limit: stdout and stderr passed the output cap; the "
                  "program was killed and its output cut%s%s",
                  error ? ": " : "", error ? error : "");
}

/* The message of a SandboxError for result res: its status and why. */
/* Job fields of ours that a request field of SandboxFusion's became, for
 * an error that names ours. */
static const struct {
    const char *ours, *theirs;
} fusion_renamed[] = {
    {"timeout", "run_timeout"},
    {"memory", "memory_limit_MB"},
    {"artifacts", "fetch_files"},
};

/* ", timeout being run_timeout" when error names a renamed field. */
static void renamed_hint(const char *error, char *msg, size_t msgsz)
{
    for (size_t i = 0; i < sizeof(fusion_renamed) / sizeof(fusion_renamed[0]); i++) {
        size_t n = strlen(fusion_renamed[i].ours);
        if (strncmp(error, fusion_renamed[i].ours, n) == 0 && error[n] == ':')
            llmsb_append(msg, msgsz, " (the job's %s is this request's %s)", fusion_renamed[i].ours,
                         fusion_renamed[i].theirs);
    }
}

static void error_message(const cJSON *res, const char *status, char *msg, size_t msgsz)
{
    const char *error = res_str(res, "error"), *cout = res_str(res, "compile_output");
    const cJSON *v;

    llmsb_fmt(msg, msgsz, "%s: %s", status[0] ? status : "no status",
              error && error[0] ? error : "no error given");
    if (error)
        renamed_hint(error, msg, msgsz);
    if (strcmp(status, "install_error") == 0 && cout)
        llmsb_append(msg, msgsz, ": %s", cout);
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(res, "violations")) {
        const char *rule = res_str(v, "rule"), *sev = res_str(v, "severity");
        llmsb_append(msg, msgsz, "; %s (%s) at line %.0f", rule ? rule : "?", sev ? sev : "?",
                     res_num(v, "line"));
    }
}

/* RunCodeResponse for call c from our result res. */
static cJSON *call_response(const struct fusion_call *c, const cJSON *res)
{
    const char *status = res ? res_str(res, "status") : NULL;
    enum job_status st = STATUS_NONE;
    enum fusion_shape shape;
    char msg[FUSION_MSG_MAX] = "";
    cJSON *o;

    if (status)
        status_parse(status, strlen(status), &st);
    shape = fusion_shapes[st];
    if (shape == SHAPE_SANDBOX_ERROR) {
        error_message(res, status ? status : "", msg, sizeof(msg));
        return response_new("SandboxError", msg, res_worker(res));
    }
    if (shape == SHAPE_KILLED)
        killed_message(res, status, msg, sizeof(msg));
    if (!(o = response_new("Success", "", res_worker(res))))
        return NULL;
    cJSON_ReplaceItemInObjectCaseSensitive(
        o, "status", cJSON_CreateString(fill_results(o, shape, c->lang, res)));
    if (c->fetch_files)
        fill_files(o, c->fetch_files, res, msg, sizeof(msg));
    cJSON_ReplaceItemInObjectCaseSensitive(o, "message", cJSON_CreateString(msg));
    return o;
}

/* ---- the routes ----------------------------------------------------------- */

/* What the request asks that we cannot map (SandboxError), or NULL. */
static const char *call_refusal(const struct front_req *r, const struct fusion_call *c, char *why,
                                size_t whysz)
{
    const cJSON *p;

    if (!c->lang) {
        llmsb_fmt(why, whysz, "language \"%s\" is not served here: %s", c->lang_id, c->refusal);
        return why;
    }
    cJSON_ArrayForEach(p, c->fetch_files) {
        if (fetch_path_ok(p->valuestring))
            continue;
        llmsb_fmt(why, whysz,
                  "fetch_files: \"%s\" is not fetched here: only paths relative to "
                  "the code's directory, without \"..\", are",
                  p->valuestring);
        return why;
    }
    if (json_text_has_nul(r->body, r->len))
        return "the request holds a NUL character (\\u0000) in a string, which a job cannot carry";
    return NULL;
}

/* Runs call c's job and answers with its result. */
static void call_run(const struct front_host *h, const struct fusion_call *c,
                     struct front_answer *a)
{
    struct fields job;
    struct llmsb_err err = {0};
    cJSON *res = NULL;

    fields_init(&job, FUSION_MAX_FIELDS);
    if (call_job(c, &job) != 0) {
        front_error(a, 500, "run_code: out of memory building the job");
        goto out;
    }
    if (h->run(h->ud, &job, 1, &res, &err) != 0) {
        if (err.code == LLMSB_ERR_INTERRUPTED) {
            front_error(a, 503, "run_code: %s", err.msg);
            goto out;
        }
        answer_sandbox_error(a, err.msg);
        goto out;
    }
    cJSON_Delete(a->json);
    a->status = 200;
    a->json = call_response(c, res);
out:
    cJSON_Delete(res);
    fields_release(&job);
}

static void route_run_code(const struct front_host *h, const struct front_req *r,
                           struct front_answer *a)
{
    struct fusion_call c;
    char why[FUSION_MSG_MAX];
    const char *refusal;
    cJSON *body = body_parse(r, a), *detail;

    if (!body)
        return;
    detail = call_check(body, &c);
    if (!detail) {
        front_error(a, 500, "run_code: out of memory");
    } else if (cJSON_GetArraySize(detail) > 0) {
        answer_422(a, detail);
        detail = NULL;
    } else if ((refusal = call_refusal(r, &c, why, sizeof(why))) != NULL) {
        answer_sandbox_error(a, refusal);
    } else {
        call_run(h, &c, a);
    }
    cJSON_Delete(detail);
    cJSON_Delete(body);
}

/* FastAPI's answer to a method a path does not take. */
static void answer_405(struct front_answer *a)
{
    cJSON_Delete(a->json);
    a->status = 405;
    a->json = cJSON_CreateObject();
    if (a->json)
        cJSON_AddStringToObject(a->json, "detail", "Method Not Allowed");
}

int fusion_route(const struct front_host *h, const struct front_req *r, struct front_answer *a)
{
    if (strcmp(r->path, "/run_code") == 0) {
        if (strcmp(r->method, "POST") == 0)
            route_run_code(h, r, a);
        else
            answer_405(a);
        return 1;
    }
    if (strcmp(r->path, "/v1/ping") == 0) {
        if (strcmp(r->method, "GET") == 0) {
            cJSON_Delete(a->json);
            a->status = 200;
            a->json = cJSON_CreateString("pong"); /* server.py: return "pong" */
        } else {
            answer_405(a);
        }
        return 1;
    }
    return 0;
}
