/* job.c - a job: limits against ceilings, setters, and the JOB frame. */
#include "job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    j->lane.cls = LANE_NORMAL;
    j->fresh_interpreter = cfg->fresh_interpreter;
    j->compare.tol = COMPARE_DEFAULT_TOL;
    j->libraries_max = cfg->libraries_max;
}

void job_copies_free(struct job_copy *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++) {
        free(c[i].id);
        free(c[i].meta);
    }
    free(c);
}

void job_release(struct job *j)
{
    free(j->id);
    free(j->history);
    free(j->code);
    free(j->stdin_data);
    strlist_free(j->args, j->nargs);
    strlist_free(j->env, j->nenv);
    for (size_t i = 0; i < j->nfiles; i++) {
        free(j->files[i].path);
        free(j->files[i].data);
    }
    free(j->files);
    free(j->image);
    free(j->expect_stdout);
    proto_cases_free(j->cases, j->ncases);
    free(j->meta);
    free(j->policy);
    free(j->session);
    free(j->security);
    strlist_free(j->artifact_globs, j->nglobs);
    strlist_free(j->libraries, j->nlibraries);
    strlist_free(j->flags.compile, j->flags.ncompile);
    strlist_free(j->flags.link, j->flags.nlink);
    job_copies_free(j->copies, j->ncopies);
    memset(j, 0, sizeof(*j));
}

/* A limit field: its name, unit text, where it lives, and how it parses. */
struct limit_field {
    const char *name;
    const char *unit;
    int is_double; /* parsed as a double */
    double scale;  /* value * scale = stored integer */
    size_t off;
};

#define LO(f) offsetof(struct limits, f)
static const struct limit_field limit_fields[] = {
    {"timeout", "s", 1, 1000, LO(timeout_ms)},
    {"compile_timeout", "s", 1, 1000, LO(compile_timeout_ms)},
    {"memory", "MB", 0, 1, LO(memory_mb)},
    {"cpus", "CPUs", 1, 0, LO(cpus)},
    {"pids", "processes", 0, 1, LO(pids)},
    {"output", "bytes", 0, 1, LO(output_bytes)},
};

/* The least a job may ask for: the config's own lower bound of the key,
 * so a job and the config agree (docs/config.md lists them). */
static double limit_min(const struct limit_field *f)
{
    char key[64];
    double min = 0;

    snprintf(key, sizeof(key), "limits.max.%s", f->name);
    if (config_key_min(key, &min) != 0 || min <= 0)
        min = f->is_double ? 1e-9 : 1;
    return min;
}

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
        if (v < limit_min(f))
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: %s %s is below the minimum of %g %s",
                                 field, value, f->unit, limit_min(f), f->unit);
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
    return llmsb_err_set(err, LLMSB_ERR_INVALID, "lang: unknown language \"%s\" (known: %s)", shown,
                         names);
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
    if (strlist_add(&j->env, &j->nenv, kv, strlen(kv)) != 0)
        return llmsb_err_set(err, LLMSB_ERR_LIMIT, "env: more than %d entries", PROTO_MAX_ARGS);
    return 0;
}

/* 1 when a and b are the same path, 2 when one is a directory prefix of
 * the other ("a" and "a/b": a file cannot also be a directory), else 0. */
static int path_conflict(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    const char *s = la < lb ? a : b, *l = la < lb ? b : a;
    size_t ls = la < lb ? la : lb;

    if (la == lb)
        return strcmp(a, b) == 0;
    return strncmp(s, l, ls) == 0 && l[ls] == '/' ? 2 : 0;
}

int job_add_file(struct job *j, const char *path, const char *data, size_t len,
                 struct llmsb_err *err)
{
    struct job_file *nf;
    size_t total = len;
    int rc;

    if ((rc = proto_path_check(path, strlen(path), err)) != 0)
        return rc;
    for (size_t i = 0; i < j->nfiles; i++) {
        const char *other = j->files[i].path;
        if ((rc = path_conflict(path, other)) != 0) {
            char a[96], b[96];
            llmsb_escape(a, sizeof(a), path, strlen(path));
            llmsb_escape(b, sizeof(b), other, strlen(other));
            if (rc == 1)
                return llmsb_err_set(err, LLMSB_ERR_INVALID, "files: \"%s\" is given twice", a);
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "files: \"%s\" and \"%s\": one is a "
                                 "file, the other needs it as a directory",
                                 a, b);
        }
        total += j->files[i].len;
    }
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

/* What every job's environment starts with; job_check_env keeps a job's
 * own env off these names, the language's and the plots variable. */
static const char *const base_env[] = {BASE_ENV_PATH,  "HOME=/tmp",      "TMPDIR=/tmp",
                                       "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "USER=sandbox"};
#define BASE_ENV_N (sizeof(base_env) / sizeof(base_env[0]))

static int build_env(const struct job *j, struct proto_job *pj)
{
    int rc = 0;

    for (size_t i = 0; i < BASE_ENV_N; i++)
        rc |= strlist_add(&pj->env, &pj->nenv, base_env[i], strlen(base_env[i]));
    for (int i = 0; i < LANG_MAX_ENV && j->lang->env[i]; i++)
        rc |= strlist_add(&pj->env, &pj->nenv, j->lang->env[i], strlen(j->lang->env[i]));
    if (j->plots && j->lang->plots) /* wakes the image's plot hooks */
        rc |= strlist_add(&pj->env, &pj->nenv, LANG_PLOTS_ENV, strlen(LANG_PLOTS_ENV));
    for (size_t i = 0; i < j->nenv; i++)
        rc |= strlist_add(&pj->env, &pj->nenv, j->env[i], strlen(j->env[i]));
    pj->nenv_own = j->nenv;
    return rc;
}

/* 1 when name (up to '=') is one of the "K=V" entries' names. */
static int env_names(const char *const *kv, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n && kv[i]; i++)
        if (strncmp(kv[i], name, len) == 0 && kv[i][len] == '=')
            return 1;
    return 0;
}

int job_check_env(const struct job *j, struct llmsb_err *err)
{
    static const char *const plots[] = {LANG_PLOTS_ENV};

    for (size_t i = 0; i < j->nenv; i++) {
        size_t len = strcspn(j->env[i], "=");
        if (env_names(base_env, BASE_ENV_N, j->env[i], len) ||
            env_names(plots, 1, j->env[i], len) ||
            (j->lang && env_names(j->lang->env, LANG_MAX_ENV, j->env[i], len))) {
            char shown[80];
            llmsb_escape(shown, sizeof(shown), j->env[i], len);
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "env: %s is set by the sandbox for %s jobs and cannot be "
                                 "replaced (see \"Environment\" in docs/jobs.md)",
                                 shown, j->lang ? j->lang->name : "all");
        }
    }
    return 0;
}

/* 1 when the job's code or a file of it holds w[0..n). */
static int names(const struct job *j, const char *w, size_t n)
{
    if (memmem(j->code, j->code_len, w, n))
        return 1;
    for (size_t i = 0; i < j->nfiles; i++)
        if (memmem(j->files[i].data, j->files[i].len, w, n))
            return 1;
    return 0;
}

/* The zygote profile of the modules the job's code or files name (a plain
 * substring: a miss only costs speed): "data" for any of the language's
 * zygote_data but its zygote_numpy, "numpy" for that one alone, else
 * "base". */
static const char *zygote_profile_of(const struct job *j)
{
    const char *w = j->lang->zygote_data, *numpy = j->lang->zygote_numpy;
    int lean = 0;

    while (w && *w) {
        size_t n = strcspn(w, " ");
        if (n && names(j, w, n)) {
            if (!numpy || strlen(numpy) != n || strncmp(numpy, w, n) != 0)
                return "data";
            lean = 1;
        }
        w += n + (w[n] == ' ');
    }
    return lean ? "numpy" : "base";
}

const char *job_compile_server(const struct job *j)
{
    /* the warm compiler compiles what the row's own argv names, with
     * nothing a job installed on its class path */
    if (!j->lang || !j->lang->compile_server || j->session || j->nlibraries || j->flags.ncompile ||
        j->flags.nlink)
        return NULL;
    for (size_t i = 0; i < j->nenv; i++)
        if (strcmp(j->env[i], "LLMSB_COMPILE_CACHE=0") == 0)
            return NULL;
    return j->lang->compile_server;
}

int job_to_proto(const struct job *j, struct proto_job *pj, struct llmsb_err *err)
{
    struct lang_source src;
    int rc = 0;

    proto_job_init(pj);
    if (!j->lang || !j->code)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: is required", j->lang ? "code" : "lang");
    if ((rc = language_source(j->lang, j->code, j->code_len, &src, err)) != 0)
        return rc;
    for (size_t i = 0; i < j->nfiles; i++)
        if (strcmp(j->files[i].path, src.file) == 0)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "files: \"%s\" would overwrite the program's own source file",
                                 src.file);
    pj->id = j->id ? strdup(j->id) : NULL;
    rc |= add_proto_file(pj, src.file, j->code, j->code_len);
    for (size_t i = 0; i < j->nfiles; i++)
        rc |= add_proto_file(pj, j->files[i].path, j->files[i].data, j->files[i].len);
    if (j->lang->compile[0] &&
        language_argv(j->lang->compile, &src, &j->flags, &pj->compile_argv, &pj->ncompile) < 0)
        rc = -1;
    if (language_argv(j->lang->run, &src, NULL, &pj->run_argv, &pj->nrun) < 0)
        rc = -1;
    for (size_t i = 0; i < j->nargs; i++)
        rc |= strlist_add(&pj->run_argv, &pj->nrun, j->args[i], strlen(j->args[i]));
    rc |= build_env(j, pj);
    if (j->plots && j->lang->plots && !(pj->plots_dir = strdup(LANG_PLOTS_DIR)))
        rc = -1;
    if (j->session && !(pj->session = strdup(j->session)))
        rc = -1;
    pj->live = j->live && j->sink;
    /* a job with libraries gets what it installed: a plain start; a
     * session's call, its session's interpreter */
    if (j->lang->zygote && (j->session || (!j->fresh_interpreter && !j->nlibraries)) &&
        (!(pj->zygote = strdup(j->lang->zygote)) ||
         !(pj->zygote_profile = strdup(zygote_profile_of(j)))))
        rc = -1;
    /* the same rule for a run-step process started ahead (never a
     * session's: its calls run in its own process), and only for a job
     * with no env of its own: what the process is started with is then
     * the sandbox's and the language's alone, so it never holds a job's
     * secret, nothing a job sets acts at its start (NODE_DEBUG, LD_*...)
     * before the job's files are there, and whether a job got one tells
     * it nothing of the job before */
    if (j->lang->prespawn && !j->session && !j->fresh_interpreter && !j->nlibraries && !j->nenv &&
        !(pj->prespawn = strdup(j->lang->prespawn)))
        rc = -1;
    if (job_compile_server(j) && !(pj->compile_server = strdup(job_compile_server(j))))
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
    pj->pids = (uint64_t)j->limits.pids;
    for (size_t i = 0; i < j->nglobs; i++)
        rc |= strlist_add(&pj->artifact_globs, &pj->nglobs, j->artifact_globs[i],
                          strlen(j->artifact_globs[i]));
    for (size_t i = 0; i < j->ncases; i++)
        if (pj->nrun + j->cases[i].nargs > PROTO_MAX_ARGS) {
            proto_job_release(pj);
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "cases[%zu].args: with the program's own, more than %d "
                                 "arguments",
                                 i, PROTO_MAX_ARGS);
        }
    if (j->ncases && !(pj->cases = proto_cases_copy(j->cases, j->ncases)))
        rc = -1;
    pj->ncases = pj->cases ? j->ncases : 0;
    pj->compare = j->compare;
    pj->stop_on_failure = (uint64_t)j->stop_on_failure;
    pj->artifact_max_count = (uint64_t)j->artifact_max_count;
    pj->artifact_max_file = (uint64_t)j->artifact_max_file_mb << 20;
    pj->artifact_max_total = (uint64_t)j->artifact_max_total_mb << 20;
    if (rc) {
        proto_job_release(pj);
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "job: too many arguments, files or env "
                             "entries, or out of memory");
    }
    return 0;
}

int job_add_install(const struct job *j, const struct config *cfg, struct proto_job *pj,
                    struct llmsb_err *err)
{
    int rc = 0;

    if (!j->lang->install[0])
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "libraries: %s jobs cannot install "
                             "libraries",
                             j->lang->name);
    if (language_argv(j->lang->install, NULL, NULL, &pj->install_argv, &pj->ninstall) < 0)
        rc = -1;
    /* the offline half, where the language has one, gets the names too */
    if (j->lang->install_build[0] &&
        language_argv(j->lang->install_build, NULL, NULL, &pj->build_argv, &pj->nbuild) < 0)
        rc = -1;
    for (size_t i = 0; i < j->nlibraries; i++) {
        size_t len = strlen(j->libraries[i]);
        rc |= strlist_add(&pj->install_argv, &pj->ninstall, j->libraries[i], len);
        if (pj->nbuild)
            rc |= strlist_add(&pj->build_argv, &pj->nbuild, j->libraries[i], len);
    }
    {
        char env[CONFIG_MAX_REGISTRY_ENV][320];
        int n = config_registry_env(cfg, j->lang, env);
        for (int i = 0; i < n; i++)
            rc |= strlist_add(&pj->install_env, &pj->ninstall_env, env[i], strlen(env[i]));
    }
    pj->install_timeout_ms = (uint64_t)cfg->libraries_timeout_ms;
    if (rc)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "libraries: too many names");
    return 0;
}

int job_add_artifact_glob(struct job *j, const char *glob, struct llmsb_err *err)
{
    char shown[80];
    size_t n = strlen(glob);

    llmsb_escape(shown, sizeof(shown), glob, n);
    if (n == 0 || n > 256 || glob[0] == '/' || strstr(glob, ".."))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "artifacts: \"%s\" must be a relative glob "
                             "of 1-256 bytes without \"..\"",
                             shown);
    if (j->nglobs >= JOB_MAX_GLOBS || strlist_add(&j->artifact_globs, &j->nglobs, glob, n) != 0)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "artifacts: at most %d globs", JOB_MAX_GLOBS);
    return 0;
}
