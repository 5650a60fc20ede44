/* piston.c - Piston v2's route set: POST /api/v2/execute runs one job and
 * answers Piston's {language, version, run, compile?}; GET /api/v2/runtimes
 * lists our languages in Piston's shape; GET /api/v2/packages lists them
 * as installed packages.  The same routes answer under /api/v2/piston/ (the
 * public emkc.org spelling some clients use).  Errors are Piston's own
 * shape, {"message": "..."}, with its status 400.
 *
 * What each field means comes from Piston's repository (engineer-man/piston):
 * api/src/api/v2.js (the checks, their messages, the runtime pick),
 * api/src/job.js (the answer, its statuses, which file runs, stdin's added
 * newline), api/src/globals.js (the signal names), docs/api-v2.md.  The
 * mapping, field by field, is docs/http/piston.md. */
#include "front/piston.h"
#include "front/routes.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/base64.h"
#include "common/json.h"
#include "languages/languages.h"

#define PISTON_RANGE_MAX 256 /* a version range longer than this is not read */
#define PISTON_SHOWN 100     /* bytes of a client's text an error message repeats */
#define PISTON_MIB (1024.0 * 1024.0)
#define PISTON_ALIASES 4 /* Piston's aliases a row adds to ours */

/* ---- the runtimes ------------------------------------------------------------- */

/* One of our languages as Piston names it: Piston's language name where
 * Piston has the language (its packages' metadata.json: "c++" is gcc's,
 * "rscript" is R's), the version of our image as semver (Debian 12's
 * package), the runtime named with it (where Piston names one, a package
 * of several languages: node, gcc, mono; or where our compiler has a name
 * of its own: ldc, gnat), and Piston's aliases our languages table lacks.  Every row of languages[]
 * has a row here (the unit test checks it). */
struct piston_runtime {
    const char *lang;    /* our name (languages[]) */
    const char *piston;  /* Piston's language name */
    const char *version; /* semver */
    const char *runtime; /* Piston's "runtime", or NULL */
    const char *aliases[PISTON_ALIASES];
};

static const struct piston_runtime piston_runtimes[] = {
    {"python", "python", "3.11.2", NULL, {"py3"}},
    {"javascript", "javascript", "18.20.4", "node", {"node-javascript", "node-js"}},
    {"java", "java", "17.0.19", NULL, {NULL}},
    {"cpp", "c++", "12.2.0", "gcc", {"g++"}},
    {"go", "go", "1.19.8", NULL, {NULL}},
    {"go_test", "go_test", "1.19.8", NULL, {NULL}},
    {"r", "rscript", "4.2.2", NULL, {NULL}},
    {"ruby", "ruby", "3.1.2", NULL, {NULL}},
    {"bash", "bash", "5.2.15", NULL, {NULL}},
    {"haskell", "haskell", "9.0.2", NULL, {NULL}},
    {"ocaml", "ocaml", "4.13.1", NULL, {NULL}},
    {"rust", "rust", "1.63.0", NULL, {NULL}},
    {"d", "d", "1.30.0", "ldc", {NULL}},
    {"elixir", "elixir", "1.14.0", NULL, {NULL}},
    {"ada", "ada", "12.2.0", "gnat", {NULL}},
    {"lua", "lua", "5.4.4", NULL, {NULL}},
    {"perl", "perl", "5.36.0", NULL, {NULL}},
    {"typescript", "typescript", "4.8.4", NULL, {"node-ts", "tsc"}},
    {"php", "php", "8.2.32", NULL, {NULL}},
    {"racket", "racket", "8.7.0", NULL, {NULL}},
    {"clojure", "clojure", "1.11.1", NULL, {NULL}},
    {"scala", "scala", "2.11.12", NULL, {"sc"}},
    {"csharp", "csharp", "6.8.0", "mono", {"mono-csharp", "mono-c#", "mono-cs"}},
};
#define PISTON_RUNTIMES (sizeof(piston_runtimes) / sizeof(piston_runtimes[0]))

static const struct piston_runtime *runtime_of(const struct language *l)
{
    for (size_t i = 0; i < PISTON_RUNTIMES; i++)
        if (strcmp(piston_runtimes[i].lang, l->name) == 0)
            return &piston_runtimes[i];
    return NULL;
}

/* The runtime named name (Piston's name, one of Piston's aliases, or any
 * of our names and aliases) whose version satisfies range; NULL: none. */
static const struct piston_runtime *runtime_find(const char *name, const char *range,
                                                 const struct language **lang)
{
    const struct piston_runtime *rt = NULL;
    const struct language *l = NULL;

    for (size_t i = 0; i < PISTON_RUNTIMES && !rt; i++) {
        const struct piston_runtime *p = &piston_runtimes[i];
        int hit = strcmp(p->piston, name) == 0;
        for (size_t k = 0; !hit && k < PISTON_ALIASES && p->aliases[k]; k++)
            hit = strcmp(p->aliases[k], name) == 0;
        if (hit)
            rt = p;
    }
    if (rt)
        l = language_find(rt->lang);
    else if ((l = language_find(name)) != NULL)
        rt = runtime_of(l);
    if (!rt || !l || !piston_semver_satisfies(rt->version, range))
        return NULL;
    *lang = l;
    return rt;
}

/* ---- semver ranges (node-semver's satisfies, for a plain version) ------------ */

enum sv_op { SV_EQ, SV_LT, SV_LE, SV_GT, SV_GE, SV_TILDE, SV_CARET };

/* A version as a range writes it: n parts given before the first wildcard
 * or the end (0: "*"), pre when it has a pre-release tag. */
struct sv_partial {
    long long v[3];
    int n;
    int pre;
};

/* A decimal part without a leading zero (node-semver's strict form). */
static int sv_number(const char **p, const char *end, long long *out)
{
    const char *s = *p;
    long long v = 0;
    int digits = 0;

    while (s < end && isdigit((unsigned char)*s) && digits < 16) {
        v = v * 10 + (*s - '0');
        s++;
        digits++;
    }
    if (digits == 0 || (s < end && isdigit((unsigned char)*s)) || (digits > 1 && **p == '0'))
        return -1;
    *p = s;
    *out = v;
    return 0;
}

static int sv_partial_parse(const char *s, const char *end, struct sv_partial *out)
{
    int wild = 0;

    memset(out, 0, sizeof(*out));
    if (s < end && *s == 'v')
        s++;
    if (s == end)
        return 0; /* "" after an operator reads as "*" */
    for (int i = 0; i < 3 && s < end && *s != '-' && *s != '+'; i++) {
        if (i > 0 && *s++ != '.')
            return -1;
        if (s < end && (*s == 'x' || *s == 'X' || *s == '*')) {
            s++;
            wild = 1;
        } else if (sv_number(&s, end, &out->v[i]) != 0) {
            return -1;
        } else if (!wild) {
            out->n = i + 1;
        }
    }
    if (s < end && *s == '-') { /* a pre-release tag */
        out->pre = 1;
        if (++s == end)
            return -1;
        while (s < end && (isalnum((unsigned char)*s) || *s == '-' || *s == '.'))
            s++;
    }
    if (s < end && *s == '+') { /* build metadata: not compared */
        if (++s == end)
            return -1;
        while (s < end && (isalnum((unsigned char)*s) || *s == '-' || *s == '.'))
            s++;
    }
    if (out->n < 3)
        out->pre = 0; /* node-semver drops a partial version's tag */
    return s == end ? 0 : -1;
}

/* v against a version of the range's (missing parts 0): <0, 0, >0.  Our
 * versions have no pre-release tag, so one with a tag is below them. */
static int sv_cmp(const long long v[3], long long a, long long b, long long c, int pre)
{
    const long long w[3] = {a, b, c};
    for (int i = 0; i < 3; i++)
        if (v[i] != w[i])
            return v[i] < w[i] ? -1 : 1;
    return pre ? 1 : 0;
}

/* v below the first version past what p's given parts fix (1.2 -> 1.3.0). */
static int sv_below_next(const long long v[3], const struct sv_partial *p)
{
    if (p->n == 0)
        return 1;
    if (p->n == 1)
        return sv_cmp(v, p->v[0] + 1, 0, 0, 0) < 0;
    if (p->n == 2)
        return sv_cmp(v, p->v[0], p->v[1] + 1, 0, 0) < 0;
    return sv_cmp(v, p->v[0], p->v[1], p->v[2], p->pre) <= 0;
}

static int sv_at_least(const long long v[3], const struct sv_partial *p)
{
    return sv_cmp(v, p->v[0], p->v[1], p->v[2], p->pre) >= 0;
}

/* Caret's upper end: the next version that changes the left-most non-zero
 * part given (^1.2.3 <2.0.0, ^0.2.3 <0.3.0, ^0.0.3 <0.0.4, ^0.x <1.0.0). */
static int sv_caret_below(const long long v[3], const struct sv_partial *p)
{
    if (p->n <= 1 || p->v[0] != 0)
        return p->n == 0 || sv_cmp(v, p->v[0] + 1, 0, 0, 0) < 0;
    if (p->n == 2 || p->v[1] != 0)
        return sv_cmp(v, 0, p->v[1] + 1, 0, 0) < 0;
    return sv_cmp(v, 0, 0, p->v[2] + 1, 0) < 0;
}

static int sv_comparator(const long long v[3], enum sv_op op, const struct sv_partial *p)
{
    if (p->n == 0)
        return op != SV_LT && op != SV_GT;
    switch (op) {
    case SV_EQ:
        return sv_at_least(v, p) && sv_below_next(v, p);
    case SV_LT:
        return sv_cmp(v, p->v[0], p->v[1], p->v[2], p->pre) < 0;
    case SV_LE:
        return sv_below_next(v, p);
    case SV_GT:
        return !sv_below_next(v, p);
    case SV_GE:
        return sv_at_least(v, p);
    case SV_TILDE: {
        struct sv_partial up = *p;
        up.n = p->n == 1 ? 1 : 2;
        return sv_at_least(v, p) && sv_below_next(v, &up);
    }
    case SV_CARET:
        return sv_at_least(v, p) && sv_caret_below(v, p);
    }
    return 0;
}

/* The operator at the start of [s, end); *s moves past it. */
static enum sv_op sv_op_parse(const char **s, const char *end)
{
    static const struct {
        const char *text;
        enum sv_op op;
    } ops[] = {{">=", SV_GE}, {"<=", SV_LE}, {"~>", SV_TILDE}, {">", SV_GT},
               {"<", SV_LT},  {"=", SV_EQ},  {"~", SV_TILDE},  {"^", SV_CARET}};
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        size_t n = strlen(ops[i].text);
        if ((size_t)(end - *s) >= n && memcmp(*s, ops[i].text, n) == 0) {
            *s += n;
            return ops[i].op;
        }
    }
    return SV_EQ;
}

#define SV_TOKENS 32
struct sv_token {
    const char *s, *end;
};

/* One set of comparators (no "||"), all of which v must satisfy. */
static int sv_set(const long long v[3], const char *s, const char *end)
{
    struct sv_token t[SV_TOKENS];
    size_t n = 0;
    struct sv_partial a, b;

    while (s < end) {
        while (s < end && isspace((unsigned char)*s))
            s++;
        if (s == end)
            break;
        if (n == SV_TOKENS)
            return 0;
        t[n].s = s;
        while (s < end && !isspace((unsigned char)*s))
            s++;
        t[n++].end = s;
    }
    if (n == 3 && t[1].end - t[1].s == 1 && *t[1].s == '-') { /* "A - B" */
        if (sv_partial_parse(t[0].s, t[0].end, &a) || sv_partial_parse(t[2].s, t[2].end, &b))
            return 0;
        return sv_at_least(v, &a) && sv_below_next(v, &b);
    }
    for (size_t i = 0; i < n; i++) {
        const char *p = t[i].s;
        enum sv_op op = sv_op_parse(&p, t[i].end);
        const char *pend = t[i].end;
        if (p == pend && p != t[i].s) { /* "> 1.2": the operator stands alone */
            if (++i == n)
                return 0;
            p = t[i].s;
            pend = t[i].end;
        }
        if (sv_partial_parse(p, pend, &a) != 0 || !sv_comparator(v, op, &a))
            return 0;
    }
    return 1;
}

int piston_semver_satisfies(const char *version, const char *range)
{
    struct sv_partial ver;
    size_t len = strlen(range);
    const char *s = range, *end = range + len;

    if (len > PISTON_RANGE_MAX || sv_partial_parse(version, version + strlen(version), &ver) != 0 ||
        ver.n != 3)
        return 0;
    while (s <= end) {
        const char *bar = strstr(s, "||");
        const char *set_end = bar ? bar : end;
        if (sv_set(ver.v, s, set_end))
            return 1;
        if (!bar)
            break;
        s = bar + 2;
    }
    return 0;
}

/* ---- answers ------------------------------------------------------------------ */

/* a's body is Piston's error shape, {"message": ...}, with status. */
#define piston_error(a, status, ...) front_error_key(a, status, "message", __VA_ARGS__)

/* Client text, cut for an error message (cJSON escapes what it holds). */
static const char *shown(const char *s, char *buf, size_t bufsz)
{
    snprintf(buf, bufsz, "%.*s%s", PISTON_SHOWN, s, strlen(s) > PISTON_SHOWN ? "..." : "");
    return buf;
}

/* ---- the request: Piston's checks, in its order, then the job's fields ------- */

/* Piston's own refusals before it picks a runtime (v2.js get_job).
 * Returns 0, or -1 with a filled. */
static int check_required(const cJSON *body, struct front_answer *a)
{
    const cJSON *lang = cJSON_GetObjectItemCaseSensitive(body, "language");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(body, "version");
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(body, "files");
    const cJSON *f;
    size_t i = 0;

    if (!cJSON_IsString(lang) || !*lang->valuestring) {
        piston_error(a, 400, "language is required as a string");
        return -1;
    }
    if (!cJSON_IsString(ver) || !*ver->valuestring) {
        piston_error(a, 400, "version is required as a string");
        return -1;
    }
    if (!cJSON_IsArray(files)) {
        piston_error(a, 400, "files is required as an array");
        return -1;
    }
    cJSON_ArrayForEach(f, files) {
        if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(f, "content"))) {
            piston_error(a, 400, "files[%zu].content is required as a string", i);
            return -1;
        }
        i++;
    }
    return 0;
}

/* A file's encoding as Piston's job.js reads it: base64 or hex, anything
 * else utf8. */
static const char *file_encoding(const cJSON *f)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(f, "encoding");
    if (cJSON_IsString(e) &&
        (strcmp(e->valuestring, "base64") == 0 || strcmp(e->valuestring, "hex") == 0))
        return e->valuestring;
    return "utf8";
}

/* The program: the first utf8 file (job.js runs code_files[0]).  v2.js
 * asks for one whose encoding is absent or "utf8"; NULL with a filled
 * when there is none. */
static const cJSON *program_file(const cJSON *files, struct front_answer *a)
{
    const cJSON *f, *first = NULL;
    int plain = 0;

    cJSON_ArrayForEach(f, files) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(f, "encoding");
        if (!e || cJSON_IsNull(e) || (cJSON_IsString(e) && strcmp(e->valuestring, "utf8") == 0))
            plain = 1;
        if (!first && strcmp(file_encoding(f), "utf8") == 0)
            first = f;
    }
    if (!plain || !first) {
        piston_error(a, 400, "files must include at least one utf8 encoded file");
        return NULL;
    }
    return first;
}

/* Piston's limit fields, in the order v2.js checks them, and the ceiling
 * each has here (0: none: Piston's -1). */
enum limit_kind { LIM_NONE, LIM_RUN_TIMEOUT, LIM_COMPILE_TIMEOUT, LIM_MEMORY };
static const struct {
    const char *name;
    enum limit_kind kind;
} piston_limits[] = {
    {"compile_memory_limit", LIM_NONE}, /* one memory limit here, for every step */
    {"run_memory_limit", LIM_MEMORY},
    {"compile_timeout", LIM_COMPILE_TIMEOUT},
    {"run_timeout", LIM_RUN_TIMEOUT},
    {"compile_cpu_time", LIM_NONE}, /* wall time and CPUs are limited, not CPU time */
    {"run_cpu_time", LIM_NONE},
};

static double limit_ceiling(const struct config *cfg, enum limit_kind kind)
{
    switch (kind) {
    case LIM_RUN_TIMEOUT:
        return (double)cfg->max.timeout_ms;
    case LIM_COMPILE_TIMEOUT:
        return (double)cfg->max.compile_timeout_ms;
    case LIM_MEMORY:
        return (double)cfg->max.memory_mb * PISTON_MIB;
    case LIM_NONE:
        break;
    }
    return 0;
}

/* v2.js's checks of a limit: absent, null, false or 0 is "not given"; a
 * number, at most the ceiling, not negative (a negative memory limit is
 * Piston's -1: none asked, so ours).  *v gets the value, 0: not given.
 * Returns 0, or -1 with a filled. */
static int limit_value(const struct config *cfg, const cJSON *body, size_t i, double *v,
                       struct front_answer *a)
{
    const char *name = piston_limits[i].name;
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(body, name);
    double ceiling = limit_ceiling(cfg, piston_limits[i].kind);

    *v = 0;
    if (!x || cJSON_IsNull(x) || cJSON_IsFalse(x) || (cJSON_IsString(x) && !*x->valuestring) ||
        (cJSON_IsNumber(x) && x->valuedouble == 0))
        return 0;
    if (!cJSON_IsNumber(x)) {
        piston_error(a, 400, "If specified, %s must be a number", name);
        return -1;
    }
    if (ceiling <= 0)
        return 0;
    if (x->valuedouble > ceiling) {
        piston_error(a, 400, "%s cannot exceed the configured limit of %.0f", name, ceiling);
        return -1;
    }
    if (x->valuedouble < 0 && piston_limits[i].kind != LIM_MEMORY) {
        piston_error(a, 400, "%s must be non-negative", name);
        return -1;
    }
    *v = x->valuedouble > 0 ? x->valuedouble : 0;
    return 0;
}

/* Milliseconds as our seconds, without trailing zeros ("1.5", "3"). */
static void seconds_text(double ms, char *buf, size_t bufsz)
{
    size_t n;

    snprintf(buf, bufsz, "%.3f", ms / 1000.0);
    n = strlen(buf);
    while (n > 1 && buf[n - 1] == '0')
        buf[--n] = '\0';
    if (n > 1 && buf[n - 1] == '.')
        buf[--n] = '\0';
}

/* The limits as job fields: run_timeout ms -> timeout s, compile_timeout
 * ms -> compile_timeout s, run_memory_limit bytes -> memory MiB (rounded
 * up).  Returns 0, or -1 with a filled. */
static int add_limits(const struct config *cfg, const cJSON *body, struct fields *job,
                      struct front_answer *a)
{
    char text[64];

    for (size_t i = 0; i < sizeof(piston_limits) / sizeof(piston_limits[0]); i++) {
        double v;
        int rc = 0;
        if (limit_value(cfg, body, i, &v, a) != 0)
            return -1;
        if (v <= 0)
            continue;
        switch (piston_limits[i].kind) {
        case LIM_RUN_TIMEOUT:
            seconds_text(v, text, sizeof(text));
            rc = fields_add_copy(job, "timeout", 7, text, strlen(text));
            break;
        case LIM_COMPILE_TIMEOUT:
            seconds_text(v, text, sizeof(text));
            rc = fields_add_copy(job, "compile_timeout", 15, text, strlen(text));
            break;
        case LIM_MEMORY:
            snprintf(text, sizeof(text), "%.0f", ceil(v / PISTON_MIB));
            rc = fields_add_copy(job, "memory", 6, text, strlen(text));
            break;
        case LIM_NONE:
            break;
        }
        if (rc != 0) {
            piston_error(a, 500, "%s: out of memory", piston_limits[i].name);
            return -1;
        }
    }
    return 0;
}

/* 1 when name is a relative path with no ".." part (our files field's
 * rule; Piston's job.js refuses only a path that leaves the directory). */
static int file_name_ok(const char *name)
{
    const char *p = name;

    if (*name == '/' || *name == '\0')
        return 0;
    while (*p) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return 0;
        p += n;
        if (*p == '/')
            p++;
    }
    return 1;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A file's content as our files field holds it: text for utf8, else
 * {"base64": ...} of the decoded bytes.  NULL with a filled. */
static cJSON *file_content(const cJSON *f, size_t i, struct front_answer *a)
{
    const char *enc = file_encoding(f);
    const char *s = cJSON_GetObjectItemCaseSensitive(f, "content")->valuestring;
    size_t len = strlen(s), n = 0;
    unsigned char *bytes = NULL;
    char *b64 = NULL;
    cJSON *o = NULL;

    if (strcmp(enc, "utf8") == 0)
        return cJSON_CreateString(s);
    if (strcmp(enc, "base64") == 0) {
        bytes = (unsigned char *)base64_decode(s, len, &n);
        if (!bytes)
            piston_error(a, 400, "files[%zu].content is not valid base64", i);
    } else if (len % 2 != 0) {
        piston_error(a, 400, "files[%zu].content is not valid hex: an odd number of digits", i);
    } else if ((bytes = malloc(len / 2 + 1)) == NULL) {
        piston_error(a, 500, "files[%zu]: out of memory", i);
    } else {
        for (n = 0; n < len / 2; n++) {
            int hi = hex_digit(s[2 * n]), lo = hex_digit(s[2 * n + 1]);
            if (hi < 0 || lo < 0) {
                piston_error(a, 400, "files[%zu].content is not valid hex (at byte %zu)", i,
                             2 * n + (hi < 0 ? 0 : 1));
                free(bytes);
                return NULL;
            }
            bytes[n] = (unsigned char)(hi << 4 | lo);
        }
    }
    if (!bytes)
        return NULL;
    if ((b64 = base64_encode(bytes, n, NULL)) == NULL || (o = cJSON_CreateObject()) == NULL ||
        !cJSON_AddStringToObject(o, "base64", b64)) {
        cJSON_Delete(o);
        o = NULL;
        piston_error(a, 500, "files[%zu]: out of memory", i);
    }
    free(bytes);
    free(b64);
    return o;
}

/* Every file but the program, as our files field (JSON text); a later
 * file of one name replaces an earlier one, as Piston writes them in
 * turn.  Returns 0, or -1 with a filled. */
static int add_files(const cJSON *files, const cJSON *program, struct fields *job,
                     struct front_answer *a)
{
    cJSON *out = cJSON_CreateObject();
    const cJSON *f;
    char *text = NULL, buf[PISTON_SHOWN + 8];
    size_t i = 0;
    int rc = -1;

    if (!out)
        goto nomem;
    cJSON_ArrayForEach(f, files) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(f, "name");
        char name[32];
        const char *fname = name;
        cJSON *content;
        if (f == program) {
            i++;
            continue;
        }
        snprintf(name, sizeof(name), "file%zu.code", i); /* job.js's name for none */
        if (cJSON_IsString(nm) && *nm->valuestring)
            fname = nm->valuestring;
        if (!file_name_ok(fname)) {
            piston_error(a, 400,
                         "files[%zu].name \"%s\" must be a relative path without \"..\": it "
                         "would name a file outside the job's directory",
                         i, shown(fname, buf, sizeof(buf)));
            goto out;
        }
        if ((content = file_content(f, i, a)) == NULL)
            goto out;
        cJSON_DeleteItemFromObjectCaseSensitive(out, fname);
        if (!cJSON_AddItemToObject(out, fname, content)) {
            cJSON_Delete(content);
            goto nomem;
        }
        i++;
    }
    rc = 0;
    if (!out->child)
        goto out;
    if ((text = cJSON_PrintUnformatted(out)) == NULL ||
        fields_add_copy(job, "files", 5, text, strlen(text)) != 0)
        goto nomem;
    goto out;
nomem:
    rc = -1;
    piston_error(a, 500, "files: out of memory");
out:
    free(text);
    cJSON_Delete(out);
    return rc;
}

/* stdin (job.js adds a newline when it does not end with one, an empty
 * one too) and args (strings: Node's spawn takes nothing else).  Returns
 * 0, or -1 with a filled. */
static int add_stdin_args(const cJSON *body, struct fields *job, struct front_answer *a)
{
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(body, "stdin");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(body, "args");
    const char *s = cJSON_IsString(in) ? in->valuestring : "";
    size_t n = strlen(s), i = 0;
    const cJSON *x;
    char *text = NULL;
    int rc;

    if (in && !cJSON_IsNull(in) && !cJSON_IsString(in)) {
        piston_error(a, 400, "stdin must be a string");
        return -1;
    }
    if ((text = malloc(n + 2)) == NULL)
        goto nomem;
    memcpy(text, s, n);
    if (n == 0 || s[n - 1] != '\n')
        text[n++] = '\n';
    rc = fields_add_copy(job, "stdin", 5, text, n);
    free(text);
    text = NULL;
    if (rc != 0)
        goto nomem;
    if (!args || cJSON_IsNull(args))
        return 0;
    if (!cJSON_IsArray(args)) {
        piston_error(a, 400, "args must be an array of strings");
        return -1;
    }
    cJSON_ArrayForEach(x, args) {
        if (!cJSON_IsString(x)) {
            piston_error(a, 400, "args must be an array of strings: args[%zu] is not a string", i);
            return -1;
        }
        i++;
    }
    if (i == 0)
        return 0;
    if ((text = cJSON_PrintUnformatted(args)) == NULL ||
        fields_add_copy(job, "args", 4, text, strlen(text)) != 0)
        goto nomem;
    free(text);
    return 0;
nomem:
    free(text);
    piston_error(a, 500, "stdin, args: out of memory");
    return -1;
}

/* The body as one job: Piston's checks in its order, the runtime its
 * language and version pick, then the fields.  Returns 0, or -1 with a
 * filled. */
static int request_job(const struct front_host *h, const cJSON *body, struct fields *job,
                       const struct piston_runtime **rt, const struct language **l,
                       struct front_answer *a)
{
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(body, "files");
    const cJSON *program;
    const char *lang, *ver, *code;
    char b1[PISTON_SHOWN + 8], b2[PISTON_SHOWN + 8];

    if (check_required(body, a) != 0)
        return -1;
    lang = cJSON_GetObjectItemCaseSensitive(body, "language")->valuestring;
    ver = cJSON_GetObjectItemCaseSensitive(body, "version")->valuestring;
    if ((*rt = runtime_find(lang, ver, l)) == NULL) {
        piston_error(a, 400, "%s-%s runtime is unknown", shown(lang, b1, sizeof(b1)),
                     shown(ver, b2, sizeof(b2)));
        return -1;
    }
    if ((program = program_file(files, a)) == NULL || add_limits(h->cfg, body, job, a) != 0)
        return -1;
    code = cJSON_GetObjectItemCaseSensitive(program, "content")->valuestring;
    if (fields_add_copy(job, "lang", 4, (*l)->name, strlen((*l)->name)) != 0 ||
        fields_add_copy(job, "code", 4, code, strlen(code)) != 0) {
        piston_error(a, 500, "lang, code: out of memory");
        return -1;
    }
    if (add_files(files, program, job, a) != 0 || add_stdin_args(body, job, a) != 0)
        return -1;
    return 0;
}

/* ---- the answer ---------------------------------------------------------------- */

/* A signal's name as Piston's globals.js spells it (Linux numbers). */
static const char *signal_name(int sig, char *buf, size_t bufsz)
{
    static const char *const names[32] = {
        NULL,        "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",   "SIGTRAP", "SIGABRT", "SIGBUS",
        "SIGFPE",    "SIGKILL", "SIGUSR1",   "SIGSEGV", "SIGUSR2",  "SIGPIPE", "SIGALRM", "SIGTERM",
        "SIGSTKFLT", "SIGCHLD", "SIGCONT",   "SIGSTOP", "SIGTSTP",  "SIGTTIN", "SIGTTOU", "SIGURG",
        "SIGXCPU",   "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO",   "SIGPWR",  "SIGSYS"};

    if (sig > 0 && sig < 32)
        return names[sig];
    if (sig == 34 || sig == 64)
        return sig == 34 ? "SIGRTMIN" : "SIGRTMAX";
    if (sig > 34 && sig < 50)
        snprintf(buf, bufsz, "SIGRTMIN+%d", sig - 34);
    else if (sig >= 50 && sig < 64)
        snprintf(buf, bufsz, "SIGRTMAX-%d", 64 - sig);
    else
        return NULL;
    return buf;
}

/* One stage of Piston's answer (job.js safe_call's object). */
struct stage {
    const char *out, *err; /* stdout, stderr */
    int has_code;
    long long code;
    const char *signal;                 /* NULL: null */
    const char *message;                /* NULL: null */
    const char *status;                 /* NULL: null */
    double memory, cpu_time, wall_time; /* < 0: null */
};

static void add_num_or_null(cJSON *o, const char *name, int has, double v)
{
    if (has)
        cJSON_AddNumberToObject(o, name, v);
    else
        cJSON_AddNullToObject(o, name);
}

static void add_text_or_null(cJSON *o, const char *name, const char *s)
{
    if (s)
        json_add_text(o, name, s, strlen(s));
    else
        cJSON_AddNullToObject(o, name);
}

/* The stage as JSON: stdout, stderr, code, signal, output (stdout then
 * stderr: the streams are kept apart, not interleaved), memory, message,
 * status, cpu_time, wall_time.  New cJSON (NULL: no memory). */
static cJSON *stage_json(const struct stage *s)
{
    size_t no = strlen(s->out), ne = strlen(s->err);
    cJSON *o = cJSON_CreateObject();
    char *both = malloc(no + ne + 1);

    if (!o || !both) {
        free(both);
        cJSON_Delete(o);
        return NULL;
    }
    memcpy(both, s->out, no);
    memcpy(both + no, s->err, ne + 1);
    json_add_text(o, "stdout", s->out, no);
    json_add_text(o, "stderr", s->err, ne);
    add_num_or_null(o, "code", s->has_code, (double)s->code);
    add_text_or_null(o, "signal", s->signal);
    json_add_text(o, "output", both, no + ne);
    add_num_or_null(o, "memory", s->memory >= 0, s->memory);
    add_text_or_null(o, "message", s->message);
    add_text_or_null(o, "status", s->status);
    add_num_or_null(o, "cpu_time", s->cpu_time >= 0, s->cpu_time);
    add_num_or_null(o, "wall_time", s->wall_time >= 0, s->wall_time);
    free(both);
    return o;
}

static const char *res_text(const cJSON *res, const char *name)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(res, name);
    return cJSON_IsString(x) ? x->valuestring : "";
}

/* A number of the result (or of its phases), or -1 when absent. */
static double res_num(const cJSON *res, const char *name)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(res, name);
    return cJSON_IsNumber(x) ? x->valuedouble : -1;
}

/* The compile stage of a compiled language.  failed: our compile_error
 * (the compiler's own exit code is not kept: 1) or the compiler ended by
 * the memory limit. */
static void compile_stage(const cJSON *res, const char *status, struct stage *s)
{
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(res, "phases");

    *s = (struct stage){.out = "",
                        .err = res_text(res, "compile_output"),
                        .has_code = 1,
                        .memory = -1,
                        .cpu_time = -1,
                        .wall_time = res_num(ph, "compile_ms")};
    if (strcmp(status, "compile_error") == 0) {
        s->code = 1;
        s->status = "RE";
        s->message = "Exited with error status 1";
    } else if (strcmp(status, "memory_limit") == 0) {
        s->has_code = 0;
        s->signal = "SIGKILL";
        s->status = "SG";
        s->message = "Memory limit exceeded: the kernel's OOM killer ended the compiler";
    }
}

/* 1 when the job ended in its compile step: a compile_error, or a
 * compiled language's memory_limit with no run step in its phases. */
static int ended_compiling(const struct language *l, const cJSON *res, const char *status)
{
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(res, "phases");

    if (strcmp(status, "compile_error") == 0)
        return 1;
    return l->compile[0] && strcmp(status, "memory_limit") == 0 && res_num(ph, "compile_ms") >= 0 &&
           res_num(ph, "run_ms") < 0;
}

/* The run stage from the result's status (docs/statuses.md) as isolate's
 * statuses, which Piston passes on: RE a non-zero exit, SG a signal, TO
 * the time limit, OL/EL stdout's/stderr's limit, XX the sandbox's own
 * failure.  Piston reports code null whenever a signal ended it, and
 * SIGKILL for TO, OL and EL. */
static void run_stage(const cJSON *res, const char *status, struct stage *s, char *msg,
                      size_t msgsz, char *sigbuf, size_t sigsz)
{
    double code = res_num(res, "exit_code"), sig = res_num(res, "signal");
    double rss = res_num(res, "max_rss_kb");
    /* a result's numbers as an exit code (0..255 and 128+N) and a signal
     * (1..64) only in their range: anything else is none (fuzzed) */
    int has_code = code >= 0 && code <= 65535 && code == (long long)code;

    if (!(sig >= 1 && sig <= 64))
        sig = 0;
    *s = (struct stage){.out = res_text(res, "stdout"),
                        .err = res_text(res, "stderr"),
                        .has_code = has_code,
                        .code = has_code ? (long long)code : 0,
                        .memory = rss >= 0 ? rss * 1024 : -1,
                        .cpu_time = res_num(res, "cpu_ms"),
                        .wall_time = res_num(res, "duration_ms")};
    if (strcmp(status, "ok") == 0)
        return;
    s->has_code = 0;
    if (strcmp(status, "runtime_error") == 0 && sig > 0) {
        s->signal = signal_name((int)sig, sigbuf, sigsz);
        s->status = "SG";
        snprintf(msg, msgsz, "Caught fatal signal %d", (int)sig);
    } else if (strcmp(status, "runtime_error") == 0) {
        s->has_code = has_code;
        s->status = "RE";
        snprintf(msg, msgsz, "Exited with error status %lld", s->code);
    } else if (strcmp(status, "timeout") == 0) {
        s->signal = "SIGKILL";
        s->status = "TO";
        snprintf(msg, msgsz, "Time limit exceeded (wall clock)");
    } else if (strcmp(status, "memory_limit") == 0) {
        s->signal = "SIGKILL";
        s->status = "SG";
        snprintf(msg, msgsz, "Memory limit exceeded: the kernel's OOM killer ended the program");
    } else if (strcmp(status, "output_limit") == 0) {
        int err_only = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "stderr_truncated")) &&
                       !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "stdout_truncated"));
        s->signal = "SIGKILL";
        s->status = err_only ? "EL" : "OL";
        snprintf(msg, msgsz, "%s length exceeded", err_only ? "stderr" : "stdout");
    } else { /* internal_error, cancelled, session_lost, ...: we failed, not the program */
        s->status = "XX";
        snprintf(msg, msgsz, "%s: %s", status,
                 *res_text(res, "error") ? res_text(res, "error") : "the job did not run");
    }
    s->message = msg;
}

/* What a refused job (invalid, blocked) says: its error and, when the
 * security policy refused it, the first finding. */
static void refusal(const cJSON *res, struct front_answer *a)
{
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(res, "violations"), 0);
    const char *err = *res_text(res, "error") ? res_text(res, "error") : res_text(res, "status");

    if (strcmp(res_text(res, "status"), "blocked") == 0 && v)
        piston_error(a, 400, "%s: %s (%s) at line %.0f, column %.0f", err, res_text(v, "rule"),
                     res_text(v, "severity"), res_num(v, "line"), res_num(v, "column"));
    else
        piston_error(a, 400, "%s", err);
}

/* Our result as Piston's answer: {compile?, run, language, version}. */
static void answer_result(const struct piston_runtime *rt, const struct language *l,
                          const cJSON *res, struct front_answer *a)
{
    const char *status = res_text(res, "status");
    char msg[700], sigbuf[16];
    struct stage s;
    cJSON *o = NULL, *run = NULL, *compile = NULL;
    int internal;

    if (strcmp(status, "invalid") == 0 || strcmp(status, "blocked") == 0) {
        refusal(res, a);
        return;
    }
    if ((o = cJSON_CreateObject()) == NULL)
        goto nomem;
    if (ended_compiling(l, res, status)) {
        /* v2.js: a run that never started is the compile stage again */
        struct stage c;
        compile_stage(res, status, &c);
        if ((compile = stage_json(&c)) == NULL)
            goto nomem;
        cJSON_AddItemToObject(o, "compile", compile);
        run = stage_json(&c);
    } else {
        run_stage(res, status, &s, msg, sizeof(msg), sigbuf, sizeof(sigbuf));
        internal = s.status && strcmp(s.status, "XX") == 0;
        if (l->compile[0] && !internal) {
            struct stage c;
            compile_stage(res, "ok", &c);
            if ((compile = stage_json(&c)) == NULL)
                goto nomem;
            cJSON_AddItemToObject(o, "compile", compile);
        }
        run = stage_json(&s);
    }
    if (!run)
        goto nomem;
    cJSON_AddItemToObject(o, "run", run);
    cJSON_AddStringToObject(o, "language", rt->piston);
    cJSON_AddStringToObject(o, "version", rt->version);
    cJSON_Delete(a->json);
    a->status = 200;
    a->json = o;
    return;
nomem:
    cJSON_Delete(o);
    piston_error(a, 500, "the answer: out of memory");
}

/* ---- the routes ------------------------------------------------------------------ */

/* POST /api/v2/execute: one job, run and waited for. */
static void route_execute(const struct front_host *h, const struct front_req *r,
                          struct front_answer *a)
{
    const struct piston_runtime *rt = NULL;
    const struct language *l = NULL;
    struct llmsb_err err = {0};
    struct fields job;
    cJSON *body, *res = NULL;
    int rc;

    fields_init(&job, 64);
    if ((body = front_body_object(r, a)) == NULL) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(a->json, "error");
        piston_error(a, 400, "%s", cJSON_IsString(e) ? e->valuestring : "the body is not JSON");
        goto out;
    }
    if (json_text_has_nul(r->body, r->len)) {
        piston_error(a, 400,
                     "a string of the body holds a NUL character (\\u0000), which "
                     "cannot be passed on: send such a file with encoding base64 or hex");
        goto out;
    }
    if (request_job(h, body, &job, &rt, &l, a) != 0)
        goto out;
    rc = h->run(h->ud, &job, 1, &res, &err);
    if (rc != 0 || !res) {
        piston_error(a, rc == LLMSB_ERR_INTERRUPTED ? 503 : 500, "the job could not be run: %s",
                     err.msg[0] ? err.msg : "no result");
        goto out;
    }
    answer_result(rt, l, res, a);
out:
    cJSON_Delete(res);
    cJSON_Delete(body);
    fields_release(&job);
}

/* The aliases of a runtime: ours (our name too, where Piston's differs),
 * then Piston's that ours lack.  A new array (NULL: no memory). */
static cJSON *aliases_json(const struct piston_runtime *rt, const struct language *l)
{
    cJSON *arr = cJSON_CreateArray();

    if (!arr)
        return NULL;
    if (strcmp(rt->piston, l->name) != 0)
        cJSON_AddItemToArray(arr, cJSON_CreateString(l->name));
    for (size_t k = 0; k < LANG_MAX_ALIASES && l->aliases[k]; k++)
        if (strcmp(l->aliases[k], rt->piston) != 0)
            cJSON_AddItemToArray(arr, cJSON_CreateString(l->aliases[k]));
    for (size_t k = 0; k < PISTON_ALIASES && rt->aliases[k]; k++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(rt->aliases[k]));
    return arr;
}

/* GET /api/v2/runtimes: [{language, version, aliases, runtime?}], one
 * per language; packages: GET /api/v2/packages, [{language,
 * language_version, installed}], every one installed (the images). */
static void route_list(struct front_answer *a, int packages)
{
    cJSON *arr = cJSON_CreateArray();

    for (size_t i = 0; arr && i < languages_count; i++) {
        const struct piston_runtime *rt = runtime_of(languages[i]);
        cJSON *o;
        if (!rt)
            continue; /* a language without a row: not offered here */
        if ((o = cJSON_CreateObject()) == NULL)
            goto nomem;
        cJSON_AddItemToArray(arr, o);
        if (packages) {
            cJSON_AddStringToObject(o, "language", rt->runtime ? rt->runtime : rt->piston);
            cJSON_AddStringToObject(o, "language_version", rt->version);
            cJSON_AddTrueToObject(o, "installed");
            continue;
        }
        cJSON_AddStringToObject(o, "language", rt->piston);
        cJSON_AddStringToObject(o, "version", rt->version);
        if (!cJSON_AddItemToObject(o, "aliases", aliases_json(rt, languages[i])))
            goto nomem;
        if (rt->runtime)
            cJSON_AddStringToObject(o, "runtime", rt->runtime);
    }
    if (!arr)
        goto nomem;
    cJSON_Delete(a->json);
    a->status = 200;
    a->json = arr;
    return;
nomem:
    cJSON_Delete(arr);
    piston_error(a, 500, "the list: out of memory");
}

/* The route under Piston's prefixes (/api/v2/ and emkc.org's
 * /api/v2/piston/) with one trailing slash dropped, as Express matches:
 * "/execute"; NULL when the path is not ours. */
static const char *own_path(const char *path, char *buf, size_t bufsz)
{
    static const char *const prefixes[] = {"/api/v2/piston", "/api/v2"};
    size_t n;

    for (size_t i = 0; i < 2; i++) {
        size_t pl = strlen(prefixes[i]);
        if (strncmp(path, prefixes[i], pl) != 0 || (path[pl] != '/' && path[pl] != '\0'))
            continue;
        n = strlen(path + pl);
        if (n >= bufsz)
            n = bufsz - 1; /* longer than any route: matches none */
        memcpy(buf, path + pl, n);
        buf[n] = '\0';
        if (n > 1 && buf[n - 1] == '/')
            buf[n - 1] = '\0';
        return buf;
    }
    return NULL;
}

int piston_route(const struct front_host *h, const struct front_req *r, struct front_answer *a)
{
    char sub[32], b1[PISTON_SHOWN + 8];
    const char *p = own_path(r->path, sub, sizeof(sub));
    int get = strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0;

    if (!p)
        return 0;
    if (strcmp(p, "/execute") == 0 && strcmp(r->method, "POST") == 0)
        route_execute(h, r, a);
    else if (strcmp(p, "/runtimes") == 0 && get)
        route_list(a, 0);
    else if (strcmp(p, "/packages") == 0 && get)
        route_list(a, 1);
    else if (strcmp(p, "/packages") == 0)
        piston_error(a, 403,
                     "packages cannot be installed or removed here: each language is "
                     "an image of the server (llm-sandbox images build)");
    else if (strcmp(p, "/connect") == 0)
        piston_error(a, 404,
                     "interactive jobs (the /api/v2/connect WebSocket) are not served "
                     "here: POST /api/v2/execute");
    else
        piston_error(a, 404,
                     "Cannot %s %s: Piston's routes here are POST /api/v2/execute, GET "
                     "/api/v2/runtimes and GET /api/v2/packages",
                     r->method, shown(r->path, b1, sizeof(b1)));
    return 1;
}
