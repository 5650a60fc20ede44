/* result.c - results: expectations, artifacts, and the two serializers
 * (see result.h), both driven by one schema table. */
#include "result.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/base64.h"
#include "common/json.h"
#include "job/job.h"

enum rtype {
    RT_TEXT,
    RT_INT,
    RT_BOOL,
    RT_JSON,
    RT_INT_OR_NULL, /* absent from the hash: null in JSON */
    RT_JSON_OR_NULL
};

/* The documented result fields, in the order JSON shows them. */
static const struct {
    const char *name;
    enum rtype type;
} schema[] = {
    {"id", RT_TEXT},
    {"status", RT_TEXT},
    {"exit_code", RT_INT_OR_NULL}, /* absent: the program never ran */
    {"signal", RT_INT_OR_NULL},
    {"stdout", RT_TEXT},
    {"stderr", RT_TEXT},
    {"stdout_truncated", RT_BOOL},
    {"stderr_truncated", RT_BOOL},
    {"compile_output", RT_TEXT},
    {"duration_ms", RT_INT},
    {"cpu_ms", RT_INT},
    {"max_rss_kb", RT_INT},
    {"zygote", RT_BOOL},
    {"prespawned", RT_BOOL},
    {"passed", RT_BOOL},
    {"cases_passed", RT_INT},
    {"cases_total", RT_INT},
    {"cases", RT_JSON},
    {"violations", RT_JSON},
    {"artifacts", RT_JSON},
    {"error", RT_TEXT},
    {"worker", RT_TEXT},
    {"backend", RT_TEXT},
    {"image", RT_TEXT},
    {"attempts", RT_INT},
    {"queued_at", RT_INT},
    {"started_at", RT_INT},
    {"finished_at", RT_INT},
    {"phases", RT_JSON},
    {"copy_of", RT_TEXT},      /* submit's dedup: the id whose run this result is */
    {"rechecked", RT_BOOL},    /* --recheck-timeouts ran it again */
    {"first_status", RT_TEXT}, /* the status of the run a recheck replaced */
    {"meta", RT_JSON_OR_NULL},
    {"history", RT_JSON}, /* dead requeue: the dead letters before this run */
};

void job_result_init(struct job_result *r, const struct job *j)
{
    memset(r, 0, sizeof(*r));
    proto_result_init(&r->r, j ? (size_t)j->limits.output_bytes + 1024 : (1u << 20));
    r->passed = -1;
    r->cases_total = -1;
    r->attempts = 1;
    r->queued_at = clock_wall_ms();
    r->ph = (struct result_phases){.claimed_ms = clock_mono_ms(),
                                   .claimed_at = r->queued_at,
                                   .prepare_ms = -1,
                                   .acquire_ms = -1,
                                   .acquire = RESULT_ACQUIRE_NONE,
                                   .agent_ms = -1,
                                   .finish_ms = -1,
                                   .held_ms = -1};
    if (j && j->id)
        snprintf(r->id, sizeof(r->id), "%s", j->id);
    if (j && j->meta)
        r->meta = strdup(j->meta);
    if (j && j->history)
        r->history = strdup(j->history);
    if (j)
        r->first_status = j->recheck;
}

void job_result_release(struct job_result *r)
{
    free(r->meta);
    free(r->history);
    free(r->violations);
    free(r->artifacts);
    free(r->cases);
    r->meta = r->history = r->violations = r->artifacts = r->cases = NULL;
    proto_result_release(&r->r);
}

void job_result_set_status(struct job_result *r, enum job_status status, const char *fmt, ...)
{
    va_list ap;

    r->r.status = status;
    if (fmt) {
        va_start(ap, fmt);
        vsnprintf(r->error, sizeof(r->error), fmt, ap);
        va_end(ap);
    }
}

/* One case result of the agent (untrusted: the status is checked against
 * the table, the text made valid UTF-8) as a JSON object; *passed set. */
static cJSON *case_json(const char *p, size_t len, int *passed)
{
    static const struct {
        uint16_t tag;
        const char *name;
    } nums[] = {{TAG_EXIT_CODE, "exit_code"},
                {TAG_SIGNAL, "signal"},
                {TAG_DURATION_MS, "duration_ms"},
                {TAG_CPU_MS, "cpu_ms"},
                {TAG_MAX_RSS_KB, "max_rss_kb"}};
    cJSON *o = cJSON_CreateObject();
    enum job_status st = STATUS_NONE;
    size_t off = 0;
    uint16_t tag;
    const char *v;
    uint32_t n;
    uint64_t x;

    *passed = 0;
    while (o && proto_tlv_next(p, len, &off, &tag, &v, &n) == 1) {
        if (tag == TAG_STATUS && status_parse(v, n, &st) == 0)
            cJSON_AddStringToObject(o, "status", status_name(st));
        else if (tag == TAG_STDOUT || tag == TAG_STDERR)
            json_add_text(o, tag == TAG_STDOUT ? "stdout" : "stderr", v, n);
        else if ((tag == TAG_STDOUT_TRUNC || tag == TAG_STDERR_TRUNC) && !proto_get_u64(v, n, &x))
            cJSON_AddBoolToObject(
                o, tag == TAG_STDOUT_TRUNC ? "stdout_truncated" : "stderr_truncated", x != 0);
        else if (tag == TAG_CASE_PASSED && !proto_get_u64(v, n, &x))
            *passed = x != 0;
        for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++)
            if (tag == nums[k].tag && !proto_get_u64(v, n, &x)) {
                if (tag == TAG_SIGNAL && x == 0) /* as the job's own: null when none */
                    cJSON_AddNullToObject(o, nums[k].name);
                else
                    cJSON_AddNumberToObject(o, nums[k].name, (double)(int64_t)x);
            }
    }
    if (!o || st == STATUS_NONE) { /* no status: not a case result */
        cJSON_Delete(o);
        *passed = 0;
        return NULL;
    }
    cJSON_AddBoolToObject(o, "passed", *passed);
    return o;
}

/* r->cases and the counts from the agent's TAG_CASES. */
static void check_cases(struct job_result *r, const struct job *j)
{
    const struct buf *c = &r->r.cases;
    cJSON *arr = cJSON_CreateArray();
    size_t off = 0;
    uint16_t tag;
    const char *v;
    uint32_t n;

    r->cases_total = (int)j->ncases;
    r->cases_passed = r->cases_run = 0;
    /* the agent is not trusted: no more entries than the job has cases */
    while (arr && c->len && r->cases_run < r->cases_total &&
           proto_tlv_next(c->data, c->len, &off, &tag, &v, &n) == 1) {
        int passed;
        cJSON *o = tag == TAG_CASE_RESULT ? case_json(v, n, &passed) : NULL;
        if (!o)
            continue;
        r->cases_passed += passed;
        r->cases_run++;
        cJSON_AddItemToArray(arr, o);
    }
    free(r->cases);
    r->cases = arr ? cJSON_PrintUnformatted(arr) : NULL;
    cJSON_Delete(arr);
    /* a case the agent did not report (stopped at a failure) did not pass */
    r->passed = r->cases_passed == r->cases_total && status_info(r->r.status)->ran;
    if (r->cases_run == 0 && status_info(r->r.status)->ran)
        job_result_set_status(r, STATUS_INVALID,
                              "cases: the agent in image %s ran no case (an image built before "
                              "test cases; rebuild it: llm-sandbox images build)",
                              r->image[0] ? r->image : "?");
}

void job_result_check(struct job_result *r, const struct job *j)
{
    if (j->ncases) {
        check_cases(r, j);
        return;
    }
    if (!j->expect_stdout && !j->has_expect_exit)
        return;
    r->passed = compare_expected(status_info(r->r.status)->ran, r->r.exit_code,
                                 j->has_expect_exit ? j->expect_exit : 0, &j->compare,
                                 r->r.out.data, r->r.out.len, j->expect_stdout,
                                 j->expect_stdout ? strlen(j->expect_stdout) : 0);
}

/* ---- phases ------------------------------------------------------------------- */

static int64_t queue_wait_ms(const struct job_result *r)
{
    /* queued_at may come from another clock (Redis's): never below 0 */
    return r->queued_at > 0 && r->ph.claimed_at > r->queued_at ? r->ph.claimed_at - r->queued_at
                                                               : 0;
}

void job_result_phases_end(struct job_result *r)
{
    r->ph.held_ms = clock_mono_ms() - r->ph.claimed_ms;
}

const char *const result_acquire_names[RESULT_ACQUIRE_COUNT] = {
    [RESULT_ACQUIRE_NONE] = "",
    [RESULT_ACQUIRE_WARM] = "warm",
    [RESULT_ACQUIRE_COLD] = "cold",
    [RESULT_ACQUIRE_TEMPORARY] = "temporary",
    [RESULT_ACQUIRE_SESSION] = "session"};

const char *const result_phase_names[RESULT_PHASES] = {
    "queue_wait", "prepare", "acquire", "install", "compile",
    "run",        "collect", "agent",   "finish",  "total"};

void job_result_phases_ms(const struct job_result *r, int64_t ms[RESULT_PHASES])
{
    const struct proto_phases *a = &r->r.phases;
    struct job_result now = {.ph = r->ph};

    if (now.ph.held_ms < 0) /* never through an attempt (invalid, say): until now */
        job_result_phases_end(&now);
    ms[0] = queue_wait_ms(r);
    ms[1] = r->ph.prepare_ms;
    ms[2] = r->ph.acquire_ms;
    ms[3] = a->install_ms;
    ms[4] = a->compile_ms;
    ms[5] = a->run_ms;
    ms[6] = a->collect_ms;
    ms[7] = r->ph.agent_ms;
    ms[8] = r->ph.finish_ms;
    ms[9] = queue_wait_ms(r) + now.ph.held_ms; /* total: always there */
}

cJSON *job_result_phases_json(const struct job_result *r)
{
    cJSON *o = cJSON_CreateObject();
    int64_t ms[RESULT_PHASES];
    char key[32];

    job_result_phases_ms(r, ms);
    for (int i = 0; o && i < RESULT_PHASES; i++) {
        if (ms[i] >= 0 || i == RESULT_PHASES - 1) {
            snprintf(key, sizeof(key), "%s_ms", result_phase_names[i]);
            cJSON_AddNumberToObject(o, key, (double)ms[i]);
        }
        if (i == 2 && r->ph.acquire > RESULT_ACQUIRE_NONE && r->ph.acquire < RESULT_ACQUIRE_COUNT)
            cJSON_AddStringToObject(o, "acquire", result_acquire_names[r->ph.acquire]);
    }
    return o;
}

/* ---- the Redis hash form ------------------------------------------------------ */

/* "phases": the object's JSON text, a copy the list owns. */
static int phases_field(const struct job_result *r, struct fields *out)
{
    cJSON *o = job_result_phases_json(r);
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    int rc = text ? fields_add_copy(out, "phases", 6, text, strlen(text)) : LLMSB_ERR_NOMEM;

    cJSON_Delete(o);
    free(text);
    return rc;
}

int job_result_to_fields(const struct job_result *r, char nums[RESULT_NUMS][32], struct fields *out)
{
    const struct proto_result *p = &r->r;
    const struct {
        const char *name;
        int64_t v;
    } numv[] = {{"exit_code", p->exit_code},     {"signal", p->signal},
                {"duration_ms", p->duration_ms}, {"cpu_ms", p->cpu_ms},
                {"max_rss_kb", p->max_rss_kb},   {"attempts", r->attempts},
                {"queued_at", r->queued_at},     {"started_at", r->started_at},
                {"finished_at", r->finished_at}};
    const char *err = r->error[0] ? r->error : p->error;
    int rc = 0;

    _Static_assert(sizeof(numv) / sizeof(numv[0]) <= RESULT_NUMS - 2, "the case counts' slots");
    fields_init(out, RESULT_MAX_FIELDS);
    rc |= fields_adds(out, "id", r->id);
    rc |= fields_adds(out, "status", status_name(p->status));
    for (size_t i = 0; i < sizeof(numv) / sizeof(numv[0]); i++) {
        snprintf(nums[i], 32, "%lld", (long long)numv[i].v);
        if (strcmp(numv[i].name, "signal") == 0 && !numv[i].v)
            continue;
        if (strcmp(numv[i].name, "exit_code") == 0 &&
            (!status_info(p->status)->has_exit || p->not_run))
            continue; /* a program that never ran has none (null) */
        rc |= fields_adds(out, numv[i].name, nums[i]);
    }
    rc |= fields_add(out, "stdout", p->out.data, p->out.len);
    rc |= fields_add(out, "stderr", p->err.data, p->err.len);
    rc |= fields_adds(out, "stdout_truncated", p->out_truncated ? "true" : "false");
    rc |= fields_adds(out, "stderr_truncated", p->err_truncated ? "true" : "false");
    if (p->zygote)
        rc |= fields_adds(out, "zygote", "true");
    if (p->prespawned)
        rc |= fields_adds(out, "prespawned", "true");
    rc |= fields_add(out, "compile_output", p->compile_output.data, p->compile_output.len);
    if (r->passed >= 0)
        rc |= fields_adds(out, "passed", r->passed ? "true" : "false");
    if (r->cases_total >= 0) {
        snprintf(nums[RESULT_NUMS - 2], 32, "%d", r->cases_passed);
        snprintf(nums[RESULT_NUMS - 1], 32, "%d", r->cases_total);
        rc |= fields_adds(out, "cases_passed", nums[RESULT_NUMS - 2]);
        rc |= fields_adds(out, "cases_total", nums[RESULT_NUMS - 1]);
        rc |= fields_adds(out, "cases", r->cases ? r->cases : "[]");
    }
    rc |= fields_adds(out, "violations", r->violations ? r->violations : "[]");
    rc |= fields_adds(out, "artifacts", r->artifacts ? r->artifacts : "[]");
    if (err[0])
        rc |= fields_adds(out, "error", err);
    rc |= fields_adds(out, "worker", r->worker);
    rc |= fields_adds(out, "backend", r->backend);
    rc |= fields_adds(out, "image", r->image);
    rc |= phases_field(r, out);
    if (r->first_status) {
        rc |= fields_adds(out, "rechecked", "true");
        rc |= fields_adds(out, "first_status", status_name(r->first_status));
    }
    if (r->meta)
        rc |= fields_adds(out, "meta", r->meta);
    if (r->history)
        rc |= fields_adds(out, "history", r->history);
    return rc ? LLMSB_ERR_NOMEM : 0;
}

/* One hash value as the JSON its schema type says; NULL on ENOMEM. */
static cJSON *typed_value(enum rtype t, const char *text)
{
    double d;
    cJSON *parsed;

    switch (t) {
    case RT_INT:
    case RT_INT_OR_NULL:
        if (parse_double(text, -1e300, 1e300, &d) == 0)
            return cJSON_CreateNumber(d);
        break;
    case RT_BOOL:
        return cJSON_CreateBool(strcmp(text, "true") == 0);
    case RT_JSON:
    case RT_JSON_OR_NULL:
        if ((parsed = cJSON_Parse(text)) != NULL)
            return parsed;
        break;
    case RT_TEXT:
        break;
    }
    return cJSON_CreateString(text);
}

cJSON *result_fields_json(const struct fields *f)
{
    cJSON *o = cJSON_CreateObject();

    for (size_t k = 0; o && k < sizeof(schema) / sizeof(schema[0]); k++) {
        size_t len;
        const char *v = fields_get(f, schema[k].name, &len);
        cJSON *item;
        char *text;

        if (!v) {
            if (schema[k].type == RT_INT_OR_NULL || schema[k].type == RT_JSON_OR_NULL)
                cJSON_AddNullToObject(o, schema[k].name);
            continue;
        }
        if (!(text = json_utf8_clean(v, len)))
            goto fail;
        item = typed_value(schema[k].type, text);
        free(text);
        if (!item)
            goto fail;
        cJSON_AddItemToObject(o, schema[k].name, item);
    }
    return o;
fail:
    cJSON_Delete(o);
    return NULL;
}

cJSON *job_result_json(const struct job_result *r)
{
    struct fields f;
    char nums[RESULT_NUMS][32];
    cJSON *o = NULL;

    if (job_result_to_fields(r, nums, &f) == 0)
        o = result_fields_json(&f);
    fields_release(&f);
    return o;
}

cJSON *result_json_copy(const cJSON *r, const char *id, const char *meta, const char *of)
{
    cJSON *o = cJSON_CreateObject(), *m = meta ? cJSON_Parse(meta) : NULL;

    if (!m) /* none (or, never for a checked job, not JSON) */
        m = cJSON_CreateNull();

    for (size_t k = 0; o && m && k < sizeof(schema) / sizeof(schema[0]); k++) {
        const char *name = schema[k].name;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, name);
        cJSON *item = strcmp(name, "id") == 0        ? cJSON_CreateString(id)
                      : strcmp(name, "copy_of") == 0 ? cJSON_CreateString(of)
                      : strcmp(name, "meta") == 0    ? (m ? cJSON_Duplicate(m, 1) : NULL)
                      : v                            ? cJSON_Duplicate(v, 1)
                                                     : NULL;
        if (item)
            cJSON_AddItemToObject(o, name, item);
    }
    cJSON_Delete(m);
    return o;
}

int result_json_final(const cJSON *r)
{
    const cJSON *s = r ? cJSON_GetObjectItemCaseSensitive(r, "status") : NULL;
    enum job_status st;
    return cJSON_IsString(s) && status_parse(s->valuestring, strlen(s->valuestring), &st) == 0 &&
           status_final(st);
}

/* ---- artifacts --------------------------------------------------------------- */

static const char *mime_of(const char *name)
{
    static const char *map[][2] = {
        {"png", "image/png"},  {"jpg", "image/jpeg"},        {"jpeg", "image/jpeg"},
        {"gif", "image/gif"},  {"svg", "image/svg+xml"},     {"pdf", "application/pdf"},
        {"html", "text/html"}, {"htm", "text/html"},         {"txt", "text/plain"},
        {"csv", "text/csv"},   {"json", "application/json"}, {"md", "text/markdown"},
        {"log", "text/plain"}};
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && i < sizeof(map) / sizeof(map[0]); i++)
        if (strcasecmp(dot + 1, map[i][0]) == 0)
            return map[i][1];
    return "application/octet-stream";
}

int job_result_each_artifact(const struct job_result *r,
                             int (*fn)(void *ud, const char *name, const char *data, size_t len),
                             void *ud)
{
    const struct buf *a = &r->r.artifacts;
    size_t off = 0;
    uint16_t tag;
    const char *v;
    uint32_t n;
    char name[4200] = "";
    int rc = 0;

    while (rc == 0 && a->len && proto_tlv_next(a->data, a->len, &off, &tag, &v, &n) == 1) {
        if (tag == TAG_ARTIFACT_NAME) {
            /* the agent is not trusted: a name must be a clean relative path */
            if (n >= sizeof(name) || proto_path_check(v, n, NULL) != 0)
                name[0] = '\0';
            else
                memcpy(name, v, n), name[n] = '\0';
        } else if (tag == TAG_ARTIFACT_DATA && name[0]) {
            rc = fn(ud, name, v, n);
            name[0] = '\0';
        }
    }
    return rc;
}

static int add_artifact_json(void *ud, const char *name, const char *data, size_t len)
{
    cJSON *o = cJSON_CreateObject();
    char *b64 = base64_encode(data, len, NULL);

    if (!o || !b64) {
        cJSON_Delete(o);
        free(b64);
        return -1;
    }
    json_add_text(o, "name", name, strlen(name));
    cJSON_AddStringToObject(o, "mime", mime_of(name));
    cJSON_AddNumberToObject(o, "size", (double)len);
    cJSON_AddStringToObject(o, "base64", b64);
    free(b64);
    cJSON_AddItemToArray(ud, o);
    return 0;
}

/* {name, skipped} for each "path: reason" note of the agent. */
static void add_skipped(cJSON *arr, const struct buf *a)
{
    size_t off = 0;
    uint16_t tag;
    const char *v;
    uint32_t n;

    while (proto_tlv_next(a->data, a->len, &off, &tag, &v, &n) == 1) {
        if (tag != TAG_ARTIFACT_SKIPPED)
            continue;
        const char *colon = memchr(v, ':', n);
        cJSON *o = cJSON_CreateObject();
        size_t nl = colon ? (size_t)(colon - v) : n;
        json_add_text(o, "name", v, nl);
        json_add_text(o, "skipped", colon ? colon + 2 : "", colon && n > nl + 2 ? n - nl - 2 : 0);
        cJSON_AddItemToArray(arr, o);
    }
}

int job_result_artifacts(struct job_result *r)
{
    cJSON *arr;

    if (r->r.artifacts.len == 0)
        return 0;
    if (!(arr = cJSON_CreateArray()))
        return -1;
    job_result_each_artifact(r, add_artifact_json, arr);
    add_skipped(arr, &r->r.artifacts);
    free(r->artifacts);
    r->artifacts = cJSON_PrintUnformatted(arr);
    cJSON_Delete(arr);
    return r->artifacts ? 0 : -1;
}
