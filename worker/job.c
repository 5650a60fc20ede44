/* job.c - job fields, limits against ceilings, the JOB frame and results. */
#include "job.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/json.h"

#define BASE_ENV_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

void job_init(struct job *j, const struct config *cfg)
{
    memset(j, 0, sizeof(*j));
    j->limits = cfg->defaults;
    j->result_ttl_s = cfg->result_ttl_s;
    j->artifact_max_count = cfg->artifact_max_count;
    j->artifact_max_file_mb = cfg->artifact_max_file_mb;
    j->artifact_max_total_mb = cfg->artifact_max_total_mb;
    j->max_attempts = (int)cfg->max_attempts;
    j->plots = 1;
    j->libraries_max = cfg->libraries_max;
}

static void list_free(char **l, size_t n)
{
    for (size_t i = 0; l && i < n; i++)
        free(l[i]);
    free(l);
}

void job_release(struct job *j)
{
    free(j->id);
    free(j->code);
    free(j->stdin_data);
    list_free(j->args, j->nargs);
    list_free(j->env, j->nenv);
    for (size_t i = 0; i < j->nfiles; i++) {
        free(j->files[i].path);
        free(j->files[i].data);
    }
    free(j->files);
    free(j->image);
    free(j->expect_stdout);
    free(j->meta);
    free(j->policy);
    free(j->security);
    list_free(j->artifact_globs, j->nglobs);
    list_free(j->libraries, j->nlibraries);
    memset(j, 0, sizeof(*j));
}

/* A limit field: its name, unit text, where it lives, and how it parses. */
struct limit_field {
    const char *name;
    const char *unit;
    int is_double;      /* parsed as a double */
    double scale;       /* value * scale = stored integer */
    size_t off;
};

#define LO(f) offsetof(struct limits, f)
static const struct limit_field limit_fields[] = {
    {"timeout", "s", 1, 1000, LO(timeout_ms)},
    {"memory", "MB", 0, 1, LO(memory_mb)},
    {"cpus", "CPUs", 1, 0, LO(cpus)},
    {"pids", "processes", 0, 1, LO(pids)},
    {"output", "bytes", 0, 1, LO(output_bytes)},
};

int job_set_limit(struct job *j, const struct config *cfg, const char *field, const char *value,
                  struct llmsb_err *err)
{
    for (size_t i = 0; i < sizeof(limit_fields) / sizeof(limit_fields[0]); i++) {
        const struct limit_field *f = &limit_fields[i];
        char *dst = (char *)&j->limits;
        const char *ceil_p = (const char *)&cfg->max + f->off;
        double v, ceiling;
        long long ll;

        if (strcmp(f->name, field) != 0)
            continue;
        if (f->scale == 0)
            ceiling = *(const double *)ceil_p;
        else
            ceiling = (double)*(const int64_t *)ceil_p / f->scale;
        if (f->is_double ? parse_double(value, -1e18, 1e18, &v) != 0
                         : parse_ll(value, -((long long)1 << 53), (long long)1 << 53, &ll) != 0)
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: \"%s\" is not %s", field, value,
                                 f->is_double ? "a number" : "an integer");
        if (!f->is_double)
            v = (double)ll;
        if (v <= 0)
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: %s must be greater than 0", field,
                                 value);
        if (v > ceiling)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s: %s %s is above the ceiling of %g %s (limits.max.%s)", field,
                                 value, f->unit, ceiling, f->unit, field);
        if (f->scale == 0)
            *(double *)(dst + f->off) = v;
        else
            *(int64_t *)(dst + f->off) = (int64_t)(v * f->scale + 0.5);
        return 0;
    }
    return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: not a limit field", field);
}

int job_set_language(struct job *j, const char *name, struct llmsb_err *err)
{
    char names[256], shown[64];

    if ((j->lang = language_find(name)) != NULL)
        return 0;
    language_names(names, sizeof(names));
    llmsb_escape(shown, sizeof(shown), name, strlen(name));
    return llmsb_err_set(err, LLMSB_ERR_INVALID, "lang: unknown language \"%s\" (known: %s)",
                         shown, names);
}

int job_set_code(struct job *j, const char *code, size_t len, struct llmsb_err *err)
{
    if (len > JOB_MAX_CODE)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "code: %zu bytes is over the %zu byte cap",
                             len, JOB_MAX_CODE);
    free(j->code);
    if (!(j->code = xstrndup(code, len)))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "code: out of memory");
    j->code_len = len;
    return 0;
}

int job_add_env(struct job *j, const char *kv, struct llmsb_err *err)
{
    const char *eq = strchr(kv, '=');
    char shown[64];

    llmsb_escape(shown, sizeof(shown), kv, strlen(kv));
    if (!eq || eq == kv)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "env: \"%s\" is not NAME=VALUE", shown);
    for (const char *p = kv; p < eq; p++)
        if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (p > kv && *p >= '0' && *p <= '9')))
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "env: \"%s\" has an invalid name", shown);
    if (proto_list_add(&j->env, &j->nenv, kv, strlen(kv)) != 0)
        return llmsb_err_set(err, LLMSB_ERR_LIMIT, "env: more than %d entries", PROTO_MAX_ARGS);
    return 0;
}

int job_add_file(struct job *j, const char *path, const char *data, size_t len,
                 struct llmsb_err *err)
{
    struct job_file *nf;
    size_t total = len;
    int rc;

    if ((rc = proto_path_check(path, strlen(path), err)) != 0)
        return rc;
    for (size_t i = 0; i < j->nfiles; i++)
        total += j->files[i].len;
    if (total > JOB_MAX_FILES_BYTES)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "files: %zu bytes in all is over the %zu cap",
                             total, JOB_MAX_FILES_BYTES);
    if (j->nfiles >= PROTO_MAX_FILES - 1)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "files: more than %d files",
                             PROTO_MAX_FILES - 1);
    if (!(nf = realloc(j->files, (j->nfiles + 1) * sizeof(*nf))))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "files: out of memory");
    j->files = nf;
    nf[j->nfiles].path = strdup(path);
    nf[j->nfiles].data = xstrndup(data, len);
    nf[j->nfiles].len = len;
    if (!nf[j->nfiles].path || !nf[j->nfiles].data) {
        free(nf[j->nfiles].path);
        free(nf[j->nfiles].data);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "files: out of memory");
    }
    j->nfiles++;
    return 0;
}

static int add_proto_file(struct proto_job *pj, const char *path, const char *data, size_t len)
{
    struct proto_file *nf = realloc(pj->files, (pj->nfiles + 1) * sizeof(*nf));
    if (!nf)
        return LLMSB_ERR_NOMEM;
    pj->files = nf;
    memset(&nf[pj->nfiles], 0, sizeof(*nf));
    nf[pj->nfiles].path = strdup(path);
    nf[pj->nfiles].data = malloc(len ? len : 1);
    nf[pj->nfiles].mode = 0644;
    nf[pj->nfiles].len = len;
    pj->nfiles++;
    if (!nf[pj->nfiles - 1].path || !nf[pj->nfiles - 1].data)
        return LLMSB_ERR_NOMEM;
    memcpy(nf[pj->nfiles - 1].data, data, len);
    return 0;
}

static int build_env(const struct job *j, struct proto_job *pj)
{
    static const char *base[] = {BASE_ENV_PATH, "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8",
                                 "LC_ALL=C.UTF-8", "USER=sandbox"};
    int rc = 0;

    for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
        rc |= proto_list_add(&pj->env, &pj->nenv, base[i], strlen(base[i]));
    for (int i = 0; i < LANG_MAX_ENV && j->lang->env[i]; i++)
        rc |= proto_list_add(&pj->env, &pj->nenv, j->lang->env[i], strlen(j->lang->env[i]));
    if (j->plots && j->lang->plots)   /* wakes the image's plot hooks */
        rc |= proto_list_add(&pj->env, &pj->nenv, LANG_PLOTS_ENV, strlen(LANG_PLOTS_ENV));
    for (size_t i = 0; i < j->nenv; i++)
        rc |= proto_list_add(&pj->env, &pj->nenv, j->env[i], strlen(j->env[i]));
    return rc;
}

int job_to_proto(const struct job *j, struct proto_job *pj, struct llmsb_err *err)
{
    char file[160];
    int rc = 0;

    proto_job_init(pj);
    if (!j->lang || !j->code)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: is required", j->lang ? "code" : "lang");
    if (language_file_name(j->lang, j->code, j->code_len, file, sizeof(file)) != 0)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "code: cannot name the source file");
    for (size_t i = 0; i < j->nfiles; i++)
        if (strcmp(j->files[i].path, file) == 0)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "files: \"%s\" would overwrite the program's own source file",
                                 file);
    pj->id = j->id ? strdup(j->id) : NULL;
    rc |= add_proto_file(pj, file, j->code, j->code_len);
    for (size_t i = 0; i < j->nfiles; i++)
        rc |= add_proto_file(pj, j->files[i].path, j->files[i].data, j->files[i].len);
    if (j->lang->compile[0] && language_argv(j->lang->compile, file, &pj->compile_argv,
                                             &pj->ncompile) < 0)
        rc = -1;
    if (language_argv(j->lang->run, file, &pj->run_argv, &pj->nrun) < 0)
        rc = -1;
    for (size_t i = 0; i < j->nargs; i++)
        rc |= proto_list_add(&pj->run_argv, &pj->nrun, j->args[i], strlen(j->args[i]));
    rc |= build_env(j, pj);
    if (j->plots && j->lang->plots && !(pj->plots_dir = strdup(LANG_PLOTS_DIR)))
        rc = -1;
    if (j->stdin_len) {
        if (!(pj->stdin_data = malloc(j->stdin_len)))
            rc = -1;
        else
            memcpy(pj->stdin_data, j->stdin_data, j->stdin_len);
        pj->stdin_len = j->stdin_len;
    }
    pj->timeout_ms = (uint64_t)j->limits.timeout_ms;
    pj->compile_timeout_ms = (uint64_t)j->limits.compile_timeout_ms;
    pj->output_limit = (uint64_t)j->limits.output_bytes;
    pj->compile_output_limit = 256 * 1024;
    pj->fsize_limit = (uint64_t)j->limits.file_size_mb << 20;
    pj->nofile = (uint64_t)j->limits.nofile;
    pj->nproc = (uint64_t)j->limits.nproc;
    for (size_t i = 0; i < j->nglobs; i++)
        rc |= proto_list_add(&pj->artifact_globs, &pj->nglobs, j->artifact_globs[i],
                             strlen(j->artifact_globs[i]));
    pj->artifact_max_count = (uint64_t)j->artifact_max_count;
    pj->artifact_max_file = (uint64_t)j->artifact_max_file_mb << 20;
    pj->artifact_max_total = (uint64_t)j->artifact_max_total_mb << 20;
    if (rc) {
        proto_job_release(pj);
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "job: too many arguments, files or env "
                                                     "entries, or out of memory");
    }
    return 0;
}

int job_add_install(const struct job *j, const struct config *cfg, struct proto_job *pj,
                    struct llmsb_err *err)
{
    int rc = 0;

    if (!j->lang->install[0])
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "libraries: %s jobs cannot install "
                                                     "libraries", j->lang->name);
    if (language_argv(j->lang->install, "", &pj->install_argv, &pj->ninstall) < 0)
        rc = -1;
    for (size_t i = 0; i < j->nlibraries; i++)
        rc |= proto_list_add(&pj->install_argv, &pj->ninstall, j->libraries[i],
                             strlen(j->libraries[i]));
    {
        char env[CONFIG_MAX_REGISTRY_ENV][320];
        int n = config_registry_env(cfg, env);
        for (int i = 0; i < n; i++)
            rc |= proto_list_add(&pj->install_env, &pj->ninstall_env, env[i], strlen(env[i]));
    }
    pj->install_timeout_ms = (uint64_t)cfg->libraries_timeout_ms;
    if (rc)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "libraries: too many names");
    return 0;
}

/* ---- results ---------------------------------------------------------------- */

void job_result_init(struct job_result *r, const struct job *j)
{
    memset(r, 0, sizeof(*r));
    proto_result_init(&r->r, j ? (size_t)j->limits.output_bytes + 1024 : (1u << 20));
    r->passed = -1;
    r->attempts = 1;
    r->queued_at = clock_wall_ms();
    if (j && j->id)
        snprintf(r->id, sizeof(r->id), "%s", j->id);
    if (j && j->meta)
        r->meta = strdup(j->meta);
}

void job_result_release(struct job_result *r)
{
    free(r->meta);
    free(r->violations);
    free(r->artifacts);
    r->meta = r->violations = r->artifacts = NULL;
    proto_result_release(&r->r);
}

void job_result_set_status(struct job_result *r, const char *status, const char *fmt, ...)
{
    va_list ap;

    snprintf(r->r.status, sizeof(r->r.status), "%s", status);
    if (fmt) {
        va_start(ap, fmt);
        vsnprintf(r->error, sizeof(r->error), fmt, ap);
        va_end(ap);
    }
}

static size_t rstrip(const char *s, size_t n)
{
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == '\t'))
        n--;
    return n;
}

void job_result_check(struct job_result *r, const struct job *j)
{
    int ran = strcmp(r->r.status, "ok") == 0 || strcmp(r->r.status, "runtime_error") == 0;

    if (!j->expect_stdout && !j->has_expect_exit)
        return;
    r->passed = ran && r->r.exit_code == (j->has_expect_exit ? j->expect_exit : 0);
    if (r->passed && j->expect_stdout) {
        size_t a = rstrip(r->r.out.data ? r->r.out.data : "", r->r.out.len);
        size_t b = rstrip(j->expect_stdout, strlen(j->expect_stdout));
        r->passed = a == b && memcmp(r->r.out.data ? r->r.out.data : "", j->expect_stdout, a) == 0;
    }
}

char *job_result_json(const struct job_result *r, int pretty)
{
    cJSON *o = cJSON_CreateObject();
    const struct proto_result *p = &r->r;
    char *out;
    int rc = 0;

    if (!o)
        return NULL;
    rc |= json_add_text(o, "id", r->id, strlen(r->id));
    cJSON_AddStringToObject(o, "status", p->status);
    cJSON_AddNumberToObject(o, "exit_code", (double)p->exit_code);
    if (p->signal)
        cJSON_AddNumberToObject(o, "signal", (double)p->signal);
    else
        cJSON_AddNullToObject(o, "signal");
    rc |= json_add_text(o, "stdout", p->out.data, p->out.len);
    rc |= json_add_text(o, "stderr", p->err.data, p->err.len);
    cJSON_AddBoolToObject(o, "stdout_truncated", p->out_truncated);
    cJSON_AddBoolToObject(o, "stderr_truncated", p->err_truncated);
    rc |= json_add_text(o, "compile_output", p->compile_output.data, p->compile_output.len);
    cJSON_AddNumberToObject(o, "duration_ms", (double)p->duration_ms);
    cJSON_AddNumberToObject(o, "cpu_ms", (double)p->cpu_ms);
    cJSON_AddNumberToObject(o, "max_rss_kb", (double)p->max_rss_kb);
    if (r->passed >= 0)
        cJSON_AddBoolToObject(o, "passed", r->passed);
    {
        cJSON *v = r->violations ? cJSON_Parse(r->violations) : NULL;
        cJSON_AddItemToObject(o, "violations", v ? v : cJSON_CreateArray());
    }
    {
        cJSON *a = r->artifacts ? cJSON_Parse(r->artifacts) : NULL;
        cJSON_AddItemToObject(o, "artifacts", a ? a : cJSON_CreateArray());
    }
    if (r->error[0] || p->error[0])
        rc |= json_add_text(o, "error", r->error[0] ? r->error : p->error,
                            strlen(r->error[0] ? r->error : p->error));
    rc |= json_add_text(o, "worker", r->worker, strlen(r->worker));
    cJSON_AddStringToObject(o, "backend", r->backend);
    rc |= json_add_text(o, "image", r->image, strlen(r->image));
    cJSON_AddNumberToObject(o, "attempts", r->attempts);
    cJSON_AddNumberToObject(o, "queued_at", (double)r->queued_at);
    cJSON_AddNumberToObject(o, "started_at", (double)r->started_at);
    cJSON_AddNumberToObject(o, "finished_at", (double)r->finished_at);
    {
        cJSON *meta = r->meta ? cJSON_Parse(r->meta) : NULL;
        if (meta)
            cJSON_AddItemToObject(o, "meta", meta);
        else
            cJSON_AddNullToObject(o, "meta");
    }
    out = rc ? NULL : (pretty ? cJSON_Print(o) : cJSON_PrintUnformatted(o));
    cJSON_Delete(o);
    return out;
}

/* ---- the Redis hash form ------------------------------------------------------ */

static const char *num_fields[] = {"exit_code", "signal", "duration_ms", "cpu_ms", "max_rss_kb",
                                   "attempts", "queued_at", "started_at", "finished_at"};
static const char *bool_fields[] = {"stdout_truncated", "stderr_truncated", "passed"};
static const char *json_fields[] = {"artifacts", "violations", "meta"};

static int in_list(const char *name, const char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, list[i]) == 0)
            return 1;
    return 0;
}

size_t job_result_fields(const struct job_result *r, char nums[][32], struct job_field *out,
                         size_t max)
{
    const struct proto_result *p = &r->r;
    const int64_t numv[] = {p->exit_code, p->signal, p->duration_ms, p->cpu_ms, p->max_rss_kb,
                            r->attempts, r->queued_at, r->started_at, r->finished_at};
    size_t n = 0, k = 0;
    const char *err = r->error[0] ? r->error : p->error;

#define PUT(nm, val, ln)                                                                          \
    do {                                                                                          \
        if (n < max)                                                                              \
            out[n++] = (struct job_field){(nm), (val), (ln)};                                     \
    } while (0)
    PUT("id", r->id, strlen(r->id));
    PUT("status", p->status, strlen(p->status));
    for (size_t i = 0; i < sizeof(numv) / sizeof(numv[0]); i++, k++) {
        snprintf(nums[k], 32, "%lld", (long long)numv[i]);
        if (strcmp(num_fields[i], "signal") == 0 && !numv[i])
            continue;
        PUT(num_fields[i], nums[k], strlen(nums[k]));
    }
    PUT("stdout", p->out.data ? p->out.data : "", p->out.len);
    PUT("stderr", p->err.data ? p->err.data : "", p->err.len);
    PUT("stdout_truncated", p->out_truncated ? "true" : "false", p->out_truncated ? 4 : 5);
    PUT("stderr_truncated", p->err_truncated ? "true" : "false", p->err_truncated ? 4 : 5);
    PUT("compile_output", p->compile_output.data ? p->compile_output.data : "",
        p->compile_output.len);
    if (r->passed >= 0)
        PUT("passed", r->passed ? "true" : "false", r->passed ? 4 : 5);
    PUT("violations", r->violations ? r->violations : "[]", r->violations ? strlen(r->violations) : 2);
    PUT("artifacts", r->artifacts ? r->artifacts : "[]", r->artifacts ? strlen(r->artifacts) : 2);
    if (err[0])
        PUT("error", err, strlen(err));
    PUT("worker", r->worker, strlen(r->worker));
    PUT("backend", r->backend, strlen(r->backend));
    PUT("image", r->image, strlen(r->image));
    if (r->meta)
        PUT("meta", r->meta, strlen(r->meta));
#undef PUT
    return n;
}

cJSON *job_result_fields_json(const struct job_field *f, size_t n)
{
    static const char *order[] = {"id", "status", "exit_code", "signal", "stdout", "stderr",
                                  "stdout_truncated", "stderr_truncated", "compile_output",
                                  "duration_ms", "cpu_ms", "max_rss_kb", "passed", "violations",
                                  "artifacts", "error", "worker", "backend", "image", "attempts",
                                  "queued_at", "started_at", "finished_at", "meta"};
    cJSON *o = cJSON_CreateObject();

    for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
        for (size_t i = 0; i < n; i++) {
            const char *name = f[i].name;
            double d;
            char *text;
            cJSON *parsed;
            if (strcmp(name, order[k]) != 0)
                continue;
            text = json_utf8_clean(f[i].value, f[i].len);
            if (!text)
                break;
            if (in_list(name, num_fields, 9) && parse_double(text, -1e300, 1e300, &d) == 0)
                cJSON_AddNumberToObject(o, name, d);
            else if (in_list(name, bool_fields, 3))
                cJSON_AddBoolToObject(o, name, strcmp(text, "true") == 0);
            else if (in_list(name, json_fields, 3) && (parsed = cJSON_Parse(text)) != NULL)
                cJSON_AddItemToObject(o, name, parsed);
            else
                cJSON_AddStringToObject(o, name, text);
            free(text);
            break;
        }
    }
    return o;
}

/* ---- artifacts --------------------------------------------------------------- */

int job_add_artifact_glob(struct job *j, const char *glob, struct llmsb_err *err)
{
    char shown[80];
    size_t n = strlen(glob);

    llmsb_escape(shown, sizeof(shown), glob, n);
    if (n == 0 || n > 256 || glob[0] == '/' || strstr(glob, ".."))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "artifacts: \"%s\" must be a relative glob "
                                                     "of 1-256 bytes without \"..\"", shown);
    if (j->nglobs >= 64 || proto_list_add(&j->artifact_globs, &j->nglobs, glob, n) != 0)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "artifacts: at most 64 globs");
    return 0;
}

static const char *mime_of(const char *name)
{
    static const char *map[][2] = {
        {"png", "image/png"}, {"jpg", "image/jpeg"}, {"jpeg", "image/jpeg"}, {"gif", "image/gif"},
        {"svg", "image/svg+xml"}, {"pdf", "application/pdf"}, {"html", "text/html"},
        {"htm", "text/html"}, {"txt", "text/plain"}, {"csv", "text/csv"}, {"json", "application/json"},
        {"md", "text/markdown"}, {"log", "text/plain"}};
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

int job_result_artifacts(struct job_result *r)
{
    const struct buf *a = &r->r.artifacts;
    cJSON *arr;
    size_t off = 0;
    uint16_t tag;
    const char *v;
    uint32_t n;

    if (a->len == 0)
        return 0;
    if (!(arr = cJSON_CreateArray()))
        return -1;
    job_result_each_artifact(r, add_artifact_json, arr);
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
    free(r->artifacts);
    r->artifacts = cJSON_PrintUnformatted(arr);
    cJSON_Delete(arr);
    return r->artifacts ? 0 : -1;
}
