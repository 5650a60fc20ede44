/* fuzz_front_routes.c - the HTTP front's route sets (fusion_route,
 * judge0_route, piston_route, native_route) over any request and any
 * result.  The input is a 16-byte head, then method, path and query lines,
 * then the body, then after a \x01 byte an optional JSON value merged into
 * every result.  The head picks the method and path (a known route, a
 * prefix with the path line after it, or the line alone), whether a
 * well-formed body of the path's route goes under the body (so a short run
 * gets past the peer's JSON), how the host double behaves (run or start
 * failing, what a lookup finds, the batch cap) and the shape of each
 * result: its status (every one of docs/statuses.md and a bogus one) and,
 * field by field, absent, well typed, empty, a number as a string, huge,
 * infinite, or junk.  So both mappings are fuzzed: request -> job fields
 * and result -> answer.  Checked: a route that takes the request answers
 * with a status in 100..599 and a body that prints; one that does not
 * leaves the answer untouched; at most one route takes a request; the jobs
 * a route hands the host stay within its batch cap, a started job carries
 * an id of fewer than FRONT_ID_MAX bytes, and a native job none.
 * Patterned on fuzz_judge0_route.c. */
#include "front/routes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAD 16
#define QUERY_MAX 16

/* ---- the input ---------------------------------------------------------------- */

struct input {
    unsigned char head[HEAD];
    const char *merge; /* JSON text merged into each result, or NULL */
    size_t merge_len;
};

/* The host double's context: this input's choices. */
struct double_ud {
    const struct input *in;
    int native; /* the route under test is native_route: no "id" */
};

/* A request as the routes see it, with the query split into pairs. */
struct fuzz_req {
    struct front_req r;
    const char *name[QUERY_MAX], *value[QUERY_MAX];
    size_t nq;
};

static const char *fuzz_arg(const struct front_req *r, const char *name)
{
    const struct fuzz_req *f = (const struct fuzz_req *)r;

    for (size_t i = 0; i < f->nq; i++)
        if (strcmp(f->name[i], name) == 0)
            return f->value[i];
    return NULL;
}

/* Splits q ("a=b&c&d=e", written over) into f's pairs. */
static void query_split(struct fuzz_req *f, char *q)
{
    while (*q && f->nq < QUERY_MAX) {
        char *amp = strchr(q, '&'), *eq;
        if (amp)
            *amp = '\0';
        eq = strchr(q, '=');
        if (eq)
            *eq = '\0';
        f->name[f->nq] = q;
        f->value[f->nq++] = eq ? eq + 1 : "";
        if (!amp)
            break;
        q = amp + 1;
    }
}

/* ---- results of any shape ------------------------------------------------------- */

static const char *const statuses[] = {
    "ok",           "runtime_error", "compile_error", "install_error", "timeout",
    "memory_limit", "output_limit",  "blocked",       "invalid",       "internal_error",
    "session_lost", "cancelled",     "not_finished",  "bogus_status",  ""};
#define NSTATUSES (sizeof(statuses) / sizeof(statuses[0]))

enum kind {
    K_STATUS,
    K_STR,
    K_NUM,
    K_BOOL,
    K_CASES,
    K_ARTIFACTS,
    K_PHASES,
    K_VIOLATIONS,
    K_META,
    K_ID,
    K_TIME
};

static const struct {
    const char *name;
    enum kind kind;
} result_fields[] = {{"status", K_STATUS},
                     {"exit_code", K_NUM},
                     {"signal", K_NUM},
                     {"stdout", K_STR},
                     {"stderr", K_STR},
                     {"stdout_truncated", K_BOOL},
                     {"stderr_truncated", K_BOOL},
                     {"compile_output", K_STR},
                     {"duration_ms", K_NUM},
                     {"cpu_ms", K_NUM},
                     {"max_rss_kb", K_NUM},
                     {"passed", K_BOOL},
                     {"cases", K_CASES},
                     {"cases_passed", K_NUM},
                     {"cases_total", K_NUM},
                     {"error", K_STR},
                     {"artifacts", K_ARTIFACTS},
                     {"phases", K_PHASES},
                     {"violations", K_VIOLATIONS},
                     {"meta", K_META},
                     {"id", K_ID},
                     {"queued_at", K_TIME},
                     {"started_at", K_TIME},
                     {"finished_at", K_TIME},
                     {"worker", K_STR},
                     {"attempts", K_NUM},
                     {"zygote", K_BOOL},
                     {"copy_of", K_STR},
                     {"rechecked", K_BOOL},
                     {"first_status", K_STATUS}};
#define NFIELDS (sizeof(result_fields) / sizeof(result_fields[0]))

/* Field k's choice (0..7) from the head's bits 16..111, turned by rot. */
static unsigned choice(const struct input *in, size_t k, unsigned rot)
{
    size_t bit = (k * 3 + rot) % 96;
    unsigned v = 0;

    for (size_t i = 0; i < 3; i++) {
        size_t b = (bit + i) % 96;
        v |= (unsigned)(in->head[2 + b / 8] >> (b % 8) & 1) << i;
    }
    return v;
}

static cJSON *junk(size_t k)
{
    switch (k % 4) {
    case 0:
        return cJSON_CreateNull();
    case 1:
        return cJSON_CreateTrue();
    case 2:
        return cJSON_Parse("{\"a\": [1, {\"b\": \"c\"}, [[[]]]], \"\": null}");
    default:
        return cJSON_Parse("[\"x\", 2, -0.5, {}, null, true]");
    }
}

static cJSON *proper(const struct input *in, enum kind kind, size_t k, unsigned sel,
                     const char *job_meta, const char *job_id, int edge);

/* A result (or a case, at depth 1) built from the head, turned by rot. */
static cJSON *make_result(const struct input *in, unsigned rot, const char *job_meta,
                          const char *job_id, unsigned depth)
{
    cJSON *o = cJSON_CreateObject();

    for (size_t k = 0; o && k < NFIELDS; k++) {
        unsigned c = choice(in, k, rot);
        cJSON *v = NULL;
        if (depth > 0 && (result_fields[k].kind == K_CASES || result_fields[k].kind == K_META))
            continue;
        switch (c) {
        case 0:
            continue;
        case 1:
        case 2:
            v = proper(in, result_fields[k].kind, k, in->head[14] + rot, job_meta, job_id, c == 2);
            break;
        case 3: /* a number as a string, or a string as a number */
            v = result_fields[k].kind == K_NUM ? cJSON_CreateString("137")
                                               : cJSON_CreateNumber(137);
            break;
        case 4:
            v = cJSON_CreateNumber(k % 2 ? 1e300 : 9.3e18);
            break;
        case 5:
            v = cJSON_CreateNumber(k % 2 ? -1e300 : -9.3e18);
            break;
        case 6:
            v = cJSON_CreateNumber(k % 2 ? INFINITY : NAN);
            break;
        default:
            v = junk(k + rot);
        }
        if (v)
            cJSON_AddItemToObject(o, result_fields[k].name, v);
    }
    return o;
}

static cJSON *cases_of(const struct input *in, unsigned rot, unsigned n)
{
    cJSON *arr = cJSON_CreateArray();

    for (unsigned i = 0; arr && i < n; i++)
        cJSON_AddItemToArray(arr, make_result(in, rot + 7 * (i + 1), NULL, NULL, 1));
    return arr;
}

/* Field k's value, well typed (edge: empty, zero, false). */
static cJSON *proper(const struct input *in, enum kind kind, size_t k, unsigned sel,
                     const char *job_meta, const char *job_id, int edge)
{
    cJSON *v;

    switch (kind) {
    case K_STATUS:
        return cJSON_CreateString(statuses[sel % NSTATUSES]);
    case K_STR:
        return cJSON_CreateString(edge ? "" : k % 2 ? "out\n\xef\xbf\xbd\t\"line\"\n" : "x");
    case K_NUM:
        return cJSON_CreateNumber(edge ? 0 : (double)(sel % 300) - 10);
    case K_BOOL:
        return cJSON_CreateBool(!edge);
    case K_TIME: /* ms since the epoch */
        return cJSON_CreateNumber(edge ? 0 : 1764400000000.0 + sel);
    case K_CASES:
        return edge ? cJSON_CreateArray() : cases_of(in, sel, 1 + in->head[15] % 3);
    case K_ARTIFACTS:
        return cJSON_Parse(edge ? "[]"
                                : "[{\"name\": \"a.txt\", \"mime\": \"text/plain\", \"size\": 1,"
                                  " \"base64\": \"eA==\"}, {\"name\": \"b\", \"skipped\": "
                                  "\"too big\"}]");
    case K_PHASES:
        return cJSON_Parse(edge ? "{}"
                                : "{\"queue_wait_ms\": 1, \"acquire\": \"warm\", \"run_ms\": 5,"
                                  " \"total_ms\": 9}");
    case K_VIOLATIONS:
        return cJSON_Parse(edge ? "[]"
                                : "[{\"rule\": \"r\", \"severity\": \"high\", \"policy\": "
                                  "\"p\", \"line\": 1, \"column\": 2}]");
    case K_META:
        if (!edge && job_meta && (v = cJSON_Parse(job_meta)))
            return v; /* the host copies the job's meta */
        return cJSON_Parse(edge ? "{}"
                                : "{\"language_id\": 71, \"source_code\": \"eA==\","
                                  " \"stdin\": \"\", \"expected_output\": \"eA==\"}");
    default:
        return cJSON_CreateString(!edge && job_id ? job_id : "run-0123456789ab");
    }
}

/* Moves m's members into o, each replacing o's of its name; frees m. */
static void merge_members(cJSON *o, cJSON *m)
{
    cJSON *item;

    while ((item = m->child) != NULL) {
        cJSON_DetachItemViaPointer(m, item);
        if (!item->string) {
            cJSON_Delete(item);
            continue;
        }
        cJSON_DeleteItemFromObjectCaseSensitive(o, item->string);
        cJSON_AddItemToObject(o, item->string, item);
    }
    cJSON_Delete(m);
}

/* The input's JSON value merged in: an object's members replace the
 * result's; any other value becomes one field's. */
static void merge(const struct input *in, cJSON *res)
{
    cJSON *m;

    if (!in->merge || !res || !(m = cJSON_ParseWithLength(in->merge, in->merge_len)))
        return;
    if (!cJSON_IsObject(m)) {
        const char *name = result_fields[in->head[15] % NFIELDS].name;
        cJSON_DeleteItemFromObjectCaseSensitive(res, name);
        cJSON_AddItemToObject(res, name, m);
        return;
    }
    merge_members(res, m);
}

/* ---- the host double ------------------------------------------------------------ */

/* Every field readable to its end; no NUL past the name. */
static void check_jobs(const struct double_ud *d, const struct fields *jobs, size_t n, int start)
{
    int max = (d->in->head[1] >> 6 & 3) == 0 ? 0 : (d->in->head[1] >> 6 & 3) == 1 ? 1 : 20;

    if (max > 0 && n > (size_t)max)
        __builtin_trap(); /* past the host's batch cap */
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        const char *id = fields_get(&jobs[i], "id", &len);
        for (size_t k = 0; k < jobs[i].n; k++)
            if (!jobs[i].v[k].name || !jobs[i].v[k].value || jobs[i].v[k].value[jobs[i].v[k].len])
                __builtin_trap();
        if ((start && (!id || len == 0 || len >= FRONT_ID_MAX)) || (d->native && id))
            __builtin_trap();
    }
}

static cJSON *job_result(const struct input *in, const struct fields *job, unsigned rot)
{
    cJSON *res = make_result(in, rot, job ? fields_get(job, "meta", NULL) : NULL,
                             job ? fields_get(job, "id", NULL) : NULL, 0);

    merge(in, res);
    return res;
}

static int double_run(void *ud, const struct fields *jobs, size_t n, cJSON **results,
                      struct llmsb_err *err)
{
    const struct double_ud *d = ud;

    check_jobs(d, jobs, n, 0);
    switch (d->in->head[1] & 3) {
    case 2:
        return llmsb_err_set(err, LLMSB_ERR_INTERRUPTED, "the server is stopping");
    case 3:
        return llmsb_err_set(err, LLMSB_ERR_BACKEND, "docker: the engine is gone");
    }
    for (size_t i = 0; i < n; i++)
        results[i] = job_result(d->in, &jobs[i], (unsigned)i);
    return 0;
}

static int double_start(void *ud, const struct fields *jobs, size_t n, const char *callback,
                        front_render_fn render, void *rud, void (*rud_free)(void *),
                        struct llmsb_err *err)
{
    const struct double_ud *d = ud;
    int rc = 0;

    check_jobs(d, jobs, n, 1);
    if (d->in->head[1] & 4)
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "callback \"%s\" is not allowed",
                           callback ? callback : "(none)");
    else if (callback && render)
        for (size_t i = 0; i < n; i++) {
            cJSON *res = job_result(d->in, &jobs[i], (unsigned)i);
            cJSON_Delete(render(res, rud));
            cJSON_Delete(res);
        }
    if (rud_free)
        rud_free(rud);
    return rc;
}

static enum front_state double_lookup(void *ud, const char *id, cJSON **result)
{
    const struct double_ud *d = ud;
    enum front_state st = (enum front_state)(d->in->head[1] >> 3 & 3);

    *result = st == FRONT_DONE ? job_result(d->in, NULL, (unsigned)strlen(id)) : NULL;
    return st;
}

static int double_random_hex(void *ud, char *buf, size_t bufsz, size_t n, struct llmsb_err *err)
{
    static const char hex[] = "0123456789abcdef";
    const struct double_ud *d = ud;

    if (2 * n >= bufsz)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "random_hex: %zu bytes do not fit", n);
    for (size_t i = 0; i < 2 * n; i++)
        buf[i] = hex[(d->in->head[i % HEAD] + i) % 16];
    buf[2 * n] = '\0';
    return 0;
}

/* ---- the request ---------------------------------------------------------------- */

static const char *const paths[] = {"/run_code",
                                    "/v1/ping",
                                    "/llm-sandbox/run",
                                    "/api/v2/execute",
                                    "/api/v2/piston/execute",
                                    "/api/v2/runtimes",
                                    "/api/v2/packages",
                                    "/submissions",
                                    "/submissions/batch",
                                    "/languages",
                                    "/statuses",
                                    "/config_info"};
static const char *const prefixes[] = {"/submissions/", "/api/v2/", "/languages/", ""};
static const char *const methods[] = {"POST", "GET", "DELETE", NULL};

/* A well-formed body for paths[k] (NULL: none), so that a short run
 * reaches the mapping without first finding the peer's JSON. */
static const char *template_of(size_t k)
{
    switch (k) {
    case 0:
        return "{\"code\": \"print(1)\", \"language\": \"python\", \"run_timeout\": 3,"
               " \"stdin\": \"x\", \"files\": {\"a.txt\": \"eA==\"}, \"fetch_files\": [\"a.txt\"]}";
    case 2:
        return "{\"lang\": \"python\", \"code\": \"print(1)\", \"timeout\": \"2\","
               " \"meta\": {\"a\": 1}}";
    case 3:
    case 4:
        return "{\"language\": \"c++\", \"version\": \"*\", \"files\": [{\"name\": "
               "\"m.cpp\", \"content\": \"int main(){}\"}], \"stdin\": \"x\", \"args\": "
               "[\"1\"], \"run_timeout\": 3000, \"compile_memory_limit\": -1}";
    case 7:
        return "{\"source_code\": \"print(1)\", \"language_id\": 71, \"stdin\": \"x\","
               " \"expected_output\": \"1\", \"cpu_time_limit\": 2, \"memory_limit\": 128000,"
               " \"callback_url\": \"http://10.0.0.1/cb\"}";
    case 8:
        return "{\"submissions\": [{\"source_code\": \"cHJpbnQoMSk=\", \"language_id\": 71},"
               " {\"source_code\": \"eA==\", \"language_id\": 54}]}";
    }
    return NULL;
}

/* The body: text[0..*len) as it is, or paths[k]'s template with text's
 * members (when it is a JSON object) over it.  A new string of *len
 * bytes and a NUL. */
static char *body_new(const char *text, size_t *len, size_t k, int templated)
{
    const char *t = templated ? template_of(k) : NULL;
    cJSON *o = t ? cJSON_Parse(t) : NULL, *m;
    char *printed = NULL, *body;

    if (o) {
        if ((m = cJSON_ParseWithLength(text, *len)) != NULL && cJSON_IsObject(m))
            merge_members(o, m);
        else
            cJSON_Delete(m);
        printed = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        if (printed) {
            text = printed;
            *len = strlen(printed);
        }
    }
    if ((body = malloc(*len + 1)) != NULL) {
        memcpy(body, text, *len);
        body[*len] = '\0';
    }
    free(printed);
    return body;
}

/* The next line of text[*at..len) (written over), or "" at the end. */
static char *next_line(char *text, size_t len, size_t *at)
{
    char *s = text + *at, *nl;

    if (*at >= len)
        return text + len;
    nl = memchr(s, '\n', len - *at);
    if (!nl) {
        *at = len;
        return s;
    }
    *nl = '\0';
    *at = (size_t)(nl - text) + 1;
    return s;
}

/* One route over the request; checks its answer. */
static int drive(front_route_fn route, const struct front_host *h, const struct front_req *r)
{
    struct front_answer a = {0};
    int mine = route(h, r, &a);
    char *text;

    if (!mine) {
        if (a.status || a.json || a.retry_after_s)
            __builtin_trap(); /* not its path, yet it wrote */
        return 0;
    }
    if (a.status < 100 || a.status > 599 || !a.json || a.retry_after_s < 0)
        __builtin_trap();
    if ((text = cJSON_PrintUnformatted(a.json)) == NULL)
        __builtin_trap();
    free(text);
    cJSON_Delete(a.json);
    return 1;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static const front_route_fn routes[] = {fusion_route, judge0_route, piston_route, native_route};
    static struct config cfg;
    static int ready;
    struct input in = {{0}, NULL, 0};
    struct double_ud d = {&in, 0};
    struct front_host h = {&cfg, double_run, double_start, double_lookup, double_random_hex, 0,
                           0,    &d};
    struct fuzz_req f;
    size_t at = 0, len = size > HEAD ? size - HEAD : 0, blen;
    char *text, *method, *pathl, *query, *body = NULL, *sep, path[512];
    int taken = 0;

    if (!ready) {
        config_defaults(&cfg);
        ready = 1;
    }
    memcpy(in.head, data, size < HEAD ? size : HEAD);
    if (!(text = malloc(len + 1)))
        return 0;
    if (len)
        memcpy(text, data + HEAD, len);
    text[len] = '\0';
    method = next_line(text, len, &at);
    pathl = next_line(text, len, &at);
    query = next_line(text, len, &at);
    /* the body ends at \x01; what follows is the JSON merged in */
    sep = memchr(text + at, '\x01', len - at);
    blen = sep ? (size_t)(sep - (text + at)) : len - at;
    if (sep) {
        in.merge = sep + 1;
        in.merge_len = len - (size_t)(sep + 1 - text);
    }
    /* the head's top bit: a template of the path's route under the body */
    if (!(body = body_new(text + at, &blen, in.head[0] & 15, in.head[0] >> 7)))
        goto out;

    memset(&f, 0, sizeof(f));
    query_split(&f, query);
    if ((in.head[0] & 15) < 12)
        snprintf(path, sizeof(path), "%s", paths[in.head[0] & 15]);
    else
        snprintf(path, sizeof(path), "%s%.400s", prefixes[(in.head[0] & 15) - 12],
                 (in.head[0] & 0x8f) == 0x8c ? "d85cd024-1548-4165-96c7-7bc88673f194" : pathl);
    f.r = (struct front_req){methods[in.head[0] >> 4 & 3] ? methods[in.head[0] >> 4 & 3] : method,
                             path,
                             body,
                             blen,
                             fuzz_arg,
                             NULL};
    h.queue = in.head[0] >> 6 & 1;
    h.max_jobs = (in.head[1] >> 6 & 3) == 0 ? 0 : (in.head[1] >> 6 & 3) == 1 ? 1 : 20;

    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        d.native = routes[i] == native_route;
        taken += drive(routes[i], &h, &f.r);
    }
    if (taken > 1)
        __builtin_trap(); /* two route sets claim one path */
out:
    free(body);
    free(text);
    return 0;
}
