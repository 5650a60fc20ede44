/* judge0.c - the Judge0 CE route set: /submissions (one, a batch, by
 * token), /languages, /statuses, /about and /config_info, each a thin
 * mapping of Judge0's submission onto our job fields and of our result
 * onto Judge0's submission.  What each Judge0 name means comes from its
 * own source (judge0/judge0: app/controllers/submissions_controller.rb,
 * app/models/submission.rb, app/serializers/submission_serializer.rb,
 * app/jobs/isolate_job.rb, app/enumerations/status.rb, db/languages/
 * active.rb); docs/http/judge0.md has the tables and what is not mapped. */
#include "front/routes.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base64.h"
#include "common/json.h"
#include "front/judge0_int.h"
#include "languages/languages.h"

#define J0_PREFIX "judge0-"      /* our job id is this and the token */
#define J0_TOKEN_LEN 36          /* a UUID: 8-4-4-4-12 hex digits */
#define J0_BATCH_MAX 20          /* Judge0's MAX_SUBMISSION_BATCH_SIZE */
#define J0_TEXT_ARG_MAX 512      /* compiler_options, command_line_arguments */
#define J0_URL_MAX 2048          /* callback_url */
#define J0_META_MAX (60u << 10)  /* under job/parse.c's 64 KiB for meta */
#define J0_MEMORY_MIN_KB 2048    /* submission.rb: memory_limit >= 2048 */
#define J0_STACK_MAX_KB 128000   /* Config::MAX_STACK_LIMIT */
#define J0_EXTRA_TIME_MAX 5      /* Config::MAX_CPU_EXTRA_TIME */
#define J0_FILE_SIZE_MAX_KB 4096 /* Config::MAX_MAX_FILE_SIZE */

/* Our languages and Judge0 CE's ids for them (db/languages/active.rb):
 * clients hard-code these, so a language both have keeps Judge0's id; the
 * others get ids from 1001 up, which Judge0 CE never used.  The versions
 * are our images' (docs/jobs.md, "Languages"). */
static const struct j0_lang {
    const char *name; /* ours, languages/ */
    int id;
    const char *display;
} j0_langs[] = {
    {"bash", 46, "Bash (5.2.15)"},
    {"csharp", 51, "C# (Mono 6.8)"},
    {"cpp", 54, "C++ (GCC 12.2.0)"},
    {"d", 56, "D (LDC 1.30.0)"},
    {"elixir", 57, "Elixir (1.14.0)"},
    {"go", 60, "Go (1.19.8)"},
    {"haskell", 61, "Haskell (GHC 9.0.2)"},
    {"java", 62, "Java (OpenJDK 17.0.19)"},
    {"javascript", 63, "JavaScript (Node.js 18.20)"},
    {"lua", 64, "Lua (5.4.4)"},
    {"ocaml", 65, "OCaml (4.13.1)"},
    {"php", 68, "PHP (8.2)"},
    {"python", 71, "Python (3.11.2)"},
    {"ruby", 72, "Ruby (3.1.2)"},
    {"rust", 73, "Rust (1.63.0)"},
    {"typescript", 74, "TypeScript (4.8.4)"},
    {"r", 80, "R (4.2.2)"},
    {"scala", 81, "Scala (2.11.12)"},
    {"perl", 85, "Perl (5.36.0)"},
    {"clojure", 86, "Clojure (1.11.1)"},
    {"ada", 1001, "Ada (GNAT 12.2)"},
    {"racket", 1002, "Racket (8.7)"},
    {"go_test", 1003, "Go test (1.19.8)"},
};
#define J0_NLANGS (sizeof(j0_langs) / sizeof(j0_langs[0]))

/* Judge0's statuses (app/enumerations/status.rb), then ours for what
 * Judge0 has no status for (15 up). */
enum {
    J0_QUEUE = 1,
    J0_PROCESS,
    J0_AC,
    J0_WA,
    J0_TLE,
    J0_CE,
    J0_SIGSEGV,
    J0_SIGXFSZ,
    J0_SIGFPE,
    J0_SIGABRT,
    J0_NZEC,
    J0_OTHER,
    J0_BOXERR,
    J0_EXEERR,
    J0_MLE,
    J0_OLE,
    J0_BLOCKED,
    J0_INVALID,
    J0_NSTATUS = J0_INVALID
};
static const char *const j0_status_names[J0_NSTATUS + 1] = {
    [J0_QUEUE] = "In Queue",
    [J0_PROCESS] = "Processing",
    [J0_AC] = "Accepted",
    [J0_WA] = "Wrong Answer",
    [J0_TLE] = "Time Limit Exceeded",
    [J0_CE] = "Compilation Error",
    [J0_SIGSEGV] = "Runtime Error (SIGSEGV)",
    [J0_SIGXFSZ] = "Runtime Error (SIGXFSZ)",
    [J0_SIGFPE] = "Runtime Error (SIGFPE)",
    [J0_SIGABRT] = "Runtime Error (SIGABRT)",
    [J0_NZEC] = "Runtime Error (NZEC)",
    [J0_OTHER] = "Runtime Error (Other)",
    [J0_BOXERR] = "Internal Error",
    [J0_EXEERR] = "Exec Format Error",
    [J0_MLE] = "Memory Limit Exceeded",
    [J0_OLE] = "Output Limit Exceeded",
    [J0_BLOCKED] = "Blocked by Policy",
    [J0_INVALID] = "Invalid Submission",
};

/* The fields the serializer shows by default (submission_serializer.rb). */
static const char *const j0_fields_default[] = {"token",  "time",           "memory",  "stdout",
                                                "stderr", "compile_output", "message", "status"};

/* Fields asked for: a bit per j0_field_table row. */
typedef unsigned long long j0_mask;

/* The row of Judge0 id id (any number: a client's), or NULL. */
static const struct j0_lang *j0_lang_by_id(double id)
{
    for (size_t i = 0; i < J0_NLANGS; i++)
        if (j0_langs[i].id == id)
            return &j0_langs[i];
    return NULL;
}

/* ---- request: a Judge0 submission to our job fields ---- */

/* Adds msg to errs[field] (Judge0's 422 shape: {"field": ["msg", ...]}). */
static void j0_err(cJSON *errs, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void j0_err(cJSON *errs, const char *field, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    cJSON *list = cJSON_GetObjectItemCaseSensitive(errs, field);

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (!list)
        list = cJSON_AddArrayToObject(errs, field);
    if (list)
        cJSON_AddItemToArray(list, cJSON_CreateString(msg));
}

/* Rails' blank?: absent, null, or a string of white space only. */
static int j0_blank(const cJSON *v)
{
    if (!v || cJSON_IsNull(v))
        return 1;
    if (!cJSON_IsString(v))
        return 0;
    for (const char *p = v->valuestring; *p; p++)
        if (!isspace((unsigned char)*p))
            return 0;
    return 1;
}

/* A number as Rails' numericality reads it: a JSON number or a numeric
 * string.  Returns 1 when given (*out set), 0 when absent or null, -1 (an
 * error added) when it is no number. */
static int j0_number(const cJSON *o, const char *name, double *out, cJSON *errs)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    char *end = NULL;

    if (!v || cJSON_IsNull(v) || (cJSON_IsString(v) && v->valuestring[0] == '\0'))
        return 0;
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
        *out = v->valuedouble;
        return 1;
    }
    if (cJSON_IsString(v) && strlen(v->valuestring) <= 64) {
        *out = strtod(v->valuestring, &end);
        if (end != v->valuestring && *end == '\0' && isfinite(*out))
            return 1;
    }
    j0_err(errs, name, "is not a number");
    return -1;
}

/* A number within [min, max] (gt: above min, not at it); as j0_number. */
static int j0_range(const cJSON *o, const char *name, double min, int gt, double max, double *out,
                    cJSON *errs)
{
    int rc = j0_number(o, name, out, errs);

    if (rc <= 0)
        return rc;
    if (gt ? *out <= min : *out < min) {
        j0_err(errs, name, "must be greater than %s%g", gt ? "" : "or equal to ", min);
        return -1;
    }
    if (*out > max) {
        j0_err(errs, name, "must be less than or equal to %g", max);
        return -1;
    }
    return 1;
}

/* A boolean (true/false or their strings); 1 when given and true. */
static int j0_bool(const cJSON *o, const char *name, cJSON *errs)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

    if (!v || cJSON_IsNull(v))
        return 0;
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v);
    if (cJSON_IsString(v) &&
        (strcmp(v->valuestring, "true") == 0 || strcmp(v->valuestring, "false") == 0))
        return v->valuestring[0] == 't';
    j0_err(errs, name, "must be true or false");
    return 0;
}

/* A text field: NULL when absent or null; decoded when b64 (new buffer,
 * *len set); an error added when it is not a string or not Base64. */
static char *j0_text(const cJSON *o, const char *name, int b64, size_t *len, cJSON *errs)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    char *out;

    *len = 0;
    if (!v || cJSON_IsNull(v))
        return NULL;
    if (!cJSON_IsString(v)) {
        j0_err(errs, name, "must be a string");
        return NULL;
    }
    if (!b64) {
        *len = strlen(v->valuestring);
        out = strdup(v->valuestring);
    } else if (!(out = base64_decode(v->valuestring, strlen(v->valuestring), len))) {
        j0_err(errs, name, "is not valid Base64 (base64_encoded=true)");
    }
    return out;
}

/* s split at white space as a JSON array text (new; caller frees). */
static char *j0_split_words(const char *s)
{
    cJSON *a = cJSON_CreateArray();
    char *text = NULL;

    while (a && *s) {
        size_t n = 0;
        while (isspace((unsigned char)*s))
            s++;
        while (s[n] && !isspace((unsigned char)s[n]))
            n++;
        if (n) {
            char *w = strndup(s, n);
            cJSON_AddItemToArray(a, cJSON_CreateString(w ? w : ""));
            free(w);
        }
        s += n;
    }
    if (a)
        text = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    return text;
}

/* What one submission asks, checked as submission.rb checks it. */
struct j0_sub {
    const struct j0_lang *lang;
    char *code, *stdin_text, *expected;
    size_t code_len, stdin_len, expected_len;
    char *args, *flags; /* JSON array texts or NULL */
    char *files;        /* JSON object text (additional_files) or NULL */
    double timeout_s;   /* 0: our default */
    long long memory_mb, pids;
    int network;
    const char *callback; /* borrowed from the request */
    cJSON *meta;          /* what GET shows back (language_id, the texts...) */
};

static void j0_sub_release(struct j0_sub *s)
{
    free(s->code);
    free(s->stdin_text);
    free(s->expected);
    free(s->args);
    free(s->flags);
    free(s->files);
    cJSON_Delete(s->meta);
    memset(s, 0, sizeof(*s));
}

/* The languages whose compiler takes flags, for compiler_options' error. */
static void j0_flag_langs(char *out, size_t outsz)
{
    size_t used = 0;

    out[0] = '\0';
    for (size_t i = 0; i < J0_NLANGS; i++) {
        const struct language *l = language_find(j0_langs[i].name);
        if (l && l->flag_ok && used < outsz)
            used += (size_t)snprintf(out + used, outsz - used, "%s%s", used ? ", " : "",
                                     j0_langs[i].display);
    }
}

static void j0_check_language(struct j0_sub *s, const cJSON *o, cJSON *errs)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "language_id");
    double id = 0;

    if (j0_blank(v)) {
        j0_err(errs, "language_id", "can't be blank");
        return;
    }
    if (j0_number(o, "language_id", &id, errs) <= 0)
        return;
    if (!(s->lang = j0_lang_by_id(id)))
        j0_err(errs, "language_id", "language with id %g doesn't exist", id);
}

/* compiler_options and command_line_arguments: at most 512 characters,
 * split at white space (Judge0 hands them to bash: we run no shell). */
static void j0_check_words(struct j0_sub *s, const cJSON *o, cJSON *errs)
{
    const cJSON *co = cJSON_GetObjectItemCaseSensitive(o, "compiler_options");
    const cJSON *ca = cJSON_GetObjectItemCaseSensitive(o, "command_line_arguments");
    const struct language *l = s->lang ? language_find(s->lang->name) : NULL;
    char names[256];

    if (!j0_blank(co)) {
        if (!cJSON_IsString(co))
            j0_err(errs, "compiler_options", "must be a string");
        else if (strlen(co->valuestring) > J0_TEXT_ARG_MAX)
            j0_err(errs, "compiler_options", "is too long (maximum is 512 characters)");
        else if (l && !l->compile[0])
            j0_err(errs, "compiler_options",
                   "setting compiler options is only allowed for compiled languages");
        else if (l && !l->flag_ok) {
            j0_flag_langs(names, sizeof(names));
            j0_err(errs, "compiler_options", "setting compiler options is only allowed for %s",
                   names);
        } else {
            s->flags = j0_split_words(co->valuestring);
        }
    }
    if (!j0_blank(ca)) {
        if (!cJSON_IsString(ca))
            j0_err(errs, "command_line_arguments", "must be a string");
        else if (strlen(ca->valuestring) > J0_TEXT_ARG_MAX)
            j0_err(errs, "command_line_arguments", "is too long (maximum is 512 characters)");
        else
            s->args = j0_split_words(ca->valuestring);
    }
}

/* The limits, each in submission.rb's range (our config's ceilings where
 * we have the limit); the time limits become our one wall-clock timeout,
 * the larger of the two given. */
static void j0_check_limits(const struct front_host *h, struct j0_sub *s, const cJSON *o,
                            cJSON *errs)
{
    const struct limits *max = &h->cfg->max;
    double max_s = (double)max->timeout_ms / 1000.0, v = 0;

    if (j0_range(o, "cpu_time_limit", 0, 0, max_s, &v, errs) > 0 && v > s->timeout_s)
        s->timeout_s = v;
    if (j0_range(o, "wall_time_limit", 1, 0, max_s, &v, errs) > 0 && v > s->timeout_s)
        s->timeout_s = v;
    j0_range(o, "cpu_extra_time", 0, 0, J0_EXTRA_TIME_MAX, &v, errs);
    if (j0_range(o, "memory_limit", J0_MEMORY_MIN_KB, 0, (double)max->memory_mb * 1024, &v, errs) >
        0)
        s->memory_mb = (long long)ceil(v / 1024);
    j0_range(o, "stack_limit", 0, 0, J0_STACK_MAX_KB, &v, errs);
    if (j0_range(o, "max_processes_and_or_threads", 0, 1, (double)max->pids, &v, errs) > 0)
        s->pids = (long long)ceil(v);
    j0_range(o, "max_file_size", 0, 0, J0_FILE_SIZE_MAX_KB, &v, errs);
    j0_range(o, "number_of_runs", 0, 1, 1, &v, errs);
}

/* additional_files: a zip archive, Base64-encoded whatever base64_encoded
 * says (submissions_controller.rb decodes it always), as our files. */
static void j0_check_files(struct j0_sub *s, const cJSON *o, cJSON *errs)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "additional_files");
    const struct language *l = s->lang ? language_find(s->lang->name) : NULL;
    struct lang_source src;
    struct llmsb_err err = {0};
    char why[256], *zip;
    size_t n = 0;
    cJSON *files = NULL;

    if (j0_blank(v))
        return;
    memset(&src, 0, sizeof(src));
    if (!cJSON_IsString(v) || !(zip = base64_decode(v->valuestring, strlen(v->valuestring), &n))) {
        j0_err(errs, "additional_files", "is not a Base64-encoded zip archive");
        return;
    }
    /* the program's own file name, which the archive may not replace */
    if (l && s->code)
        language_source(l, s->code, s->code_len, &src, &err);
    if (judge0_zip_files(zip, n, src.file, &files, why, sizeof(why)) != 0)
        j0_err(errs, "additional_files", "%s", why);
    else if (files->child)
        s->files = cJSON_PrintUnformatted(files);
    cJSON_Delete(files);
    free(zip);
}

/* The switches: what Judge0 refuses with its own words when its config
 * turns them off, and what we cannot do. */
static void j0_check_switches(const struct front_host *h, struct j0_sub *s, const cJSON *o,
                              cJSON *errs)
{
    const cJSON *cb = cJSON_GetObjectItemCaseSensitive(o, "callback_url");

    if (j0_bool(o, "enable_per_process_and_thread_time_limit", errs))
        j0_err(errs, "enable_per_process_and_thread_time_limit", "this option cannot be enabled");
    if (j0_bool(o, "enable_per_process_and_thread_memory_limit", errs))
        j0_err(errs, "enable_per_process_and_thread_memory_limit", "this option cannot be enabled");
    if (j0_bool(o, "redirect_stderr_to_stdout", errs))
        j0_err(errs, "redirect_stderr_to_stdout",
               "this option cannot be enabled (stdout and stderr are kept apart here)");
    if ((s->network = j0_bool(o, "enable_network", errs)) && !h->cfg->allow_network)
        j0_err(errs, "enable_network", "enabling network is not allowed");
    j0_check_files(s, o, errs);
    if (!j0_blank(cb)) {
        if (!cJSON_IsString(cb) || strlen(cb->valuestring) > J0_URL_MAX)
            j0_err(errs, "callback_url", "must be a URL of at most %d characters", J0_URL_MAX);
        else
            s->callback = cb->valuestring;
    }
}

/* Keeps what GET shows back in meta: the texts as Base64 (they may be
 * any bytes), dropped when they would not fit the meta field. */
static void j0_keep_meta(struct j0_sub *s, const cJSON *o)
{
    static const char *const kept[] = {"compiler_options", "command_line_arguments",
                                       "cpu_time_limit",   "cpu_extra_time",
                                       "wall_time_limit",  "memory_limit",
                                       "stack_limit",      "max_processes_and_or_threads",
                                       "max_file_size",    "number_of_runs",
                                       "callback_url",     "enable_network"};
    const struct {
        const char *name, *p;
        size_t n;
    } texts[] = {{"source_code", s->code, s->code_len},
                 {"stdin", s->stdin_text, s->stdin_len},
                 {"expected_output", s->expected, s->expected_len}};
    size_t total = 0;

    s->meta = cJSON_CreateObject();
    if (!s->meta)
        return;
    cJSON_AddNumberToObject(s->meta, "language_id", s->lang->id);
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, kept[i]);
        if (v && !cJSON_IsNull(v))
            cJSON_AddItemToObject(s->meta, kept[i], cJSON_Duplicate(v, 1));
    }
    for (size_t i = 0; i < 3; i++)
        total += texts[i].n;
    for (size_t i = 0; i < 3 && total / 3 * 4 + 4096 < J0_META_MAX; i++) {
        char *b = texts[i].p ? base64_encode(texts[i].p, texts[i].n, NULL) : NULL;
        if (b)
            cJSON_AddStringToObject(s->meta, texts[i].name, b);
        free(b);
    }
}

/* Reads one submission (Judge0's create params) into s; returns 0, or -1
 * with errs filled as Judge0's 422 body. */
static int j0_sub_parse(const struct front_host *h, const cJSON *o, int b64, struct j0_sub *s,
                        cJSON *errs)
{
    memset(s, 0, sizeof(*s));
    if (!cJSON_IsObject(o)) {
        j0_err(errs, "submission", "must be a JSON object");
        return -1;
    }
    j0_check_language(s, o, errs);
    if (j0_blank(cJSON_GetObjectItemCaseSensitive(o, "source_code")))
        j0_err(errs, "source_code", "can't be blank");
    else
        s->code = j0_text(o, "source_code", b64, &s->code_len, errs);
    s->stdin_text = j0_text(o, "stdin", b64, &s->stdin_len, errs);
    s->expected = j0_text(o, "expected_output", b64, &s->expected_len, errs);
    j0_check_words(s, o, errs);
    j0_check_limits(h, s, o, errs);
    j0_check_switches(h, s, o, errs);
    if (errs->child)
        return -1;
    j0_keep_meta(s, o);
    return 0;
}

/* s as our job's fields (copies: out owns them).  The expected output is
 * compared by the job (compare trailing_whitespace: isolate_job.rb's
 * strip, each line's trailing white space and the trailing blank lines
 * ignored), on the program's bytes as they came. */
static int j0_sub_fields(const struct j0_sub *s, const char *id, struct fields *out)
{
    char num[64], *meta = s->meta ? cJSON_PrintUnformatted(s->meta) : NULL;
    int rc = 0;

#define J0_ADD(name, v, n) (rc = rc ? rc : fields_add_copy(out, name, strlen(name), v, n))
#define J0_ADDS(name, v) J0_ADD(name, v, strlen(v))
    J0_ADDS("id", id);
    J0_ADDS("lang", s->lang->name);
    J0_ADD("code", s->code, s->code_len);
    if (s->stdin_text)
        J0_ADD("stdin", s->stdin_text, s->stdin_len);
    if (s->expected) {
        J0_ADD("expect_stdout", s->expected, s->expected_len);
        J0_ADDS("compare", "trailing_whitespace");
    }
    if (s->args)
        J0_ADDS("args", s->args);
    if (s->flags)
        J0_ADDS("compile_flags", s->flags);
    if (s->files)
        J0_ADDS("files", s->files);
    if (s->timeout_s > 0) {
        snprintf(num, sizeof(num), "%g", s->timeout_s);
        J0_ADDS("timeout", num);
    }
    if (s->memory_mb > 0) {
        snprintf(num, sizeof(num), "%lld", s->memory_mb);
        J0_ADDS("memory", num);
    }
    if (s->pids > 0) {
        snprintf(num, sizeof(num), "%lld", s->pids);
        J0_ADDS("pids", num);
    }
    if (s->network)
        J0_ADDS("network", "true");
    if (meta)
        J0_ADDS("meta", meta);
#undef J0_ADDS
#undef J0_ADD
    free(meta);
    return rc;
}

/* A new token: a version 4 UUID from 16 random bytes (as Judge0's
 * SecureRandom.uuid), and our job id for it. */
static int j0_new_token(const struct front_host *h, char token[J0_TOKEN_LEN + 1],
                        char id[FRONT_ID_MAX], struct llmsb_err *err)
{
    static const char digits[] = "0123456789abcdef";
    char hex[33] = "";
    const char *variant;
    int rc = h->random_hex(h->ud, hex, sizeof(hex), 16, err);

    if (rc)
        return rc;
    if (!hex[16] || !(variant = strchr(digits, hex[16])))
        return llmsb_err_set(err, LLMSB_ERR_SYS, "random_hex: \"%.32s\" is not 32 hex digits", hex);
    hex[12] = '4';
    hex[16] = digits[8 | (variant - digits) % 4];
    snprintf(token, J0_TOKEN_LEN + 1, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16,
             hex + 20);
    snprintf(id, FRONT_ID_MAX, J0_PREFIX "%s", token);
    return 0;
}

/* ---- response: our result as a Judge0 submission ---- */

static const char *j0_str(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double j0_num(const cJSON *o, const char *name, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* The Judge0 status of a final result (docs/http/judge0.md's table). */
static int j0_status_of(const cJSON *r)
{
    const char *st = j0_str(r, "status");
    double sig = j0_num(r, "signal", 0);

    if (!st)
        return J0_BOXERR;
    if (strcmp(st, "ok") == 0)
        return cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r, "passed")) ? J0_WA : J0_AC;
    if (strcmp(st, "timeout") == 0)
        return J0_TLE;
    if (strcmp(st, "compile_error") == 0)
        return J0_CE;
    if (strcmp(st, "runtime_error") == 0) {
        /* status.rb's find_runtime_error_by_status_code */
        return sig == 11   ? J0_SIGSEGV
               : sig == 25 ? J0_SIGXFSZ
               : sig == 8  ? J0_SIGFPE
               : sig == 6  ? J0_SIGABRT
               : sig > 0   ? J0_OTHER
                           : J0_NZEC;
    }
    if (strcmp(st, "memory_limit") == 0)
        return J0_MLE;
    if (strcmp(st, "output_limit") == 0)
        return J0_OLE;
    if (strcmp(st, "blocked") == 0)
        return J0_BLOCKED;
    if (strcmp(st, "invalid") == 0)
        return J0_INVALID;
    return J0_BOXERR;
}

/* isolate's message for the status (isolate_job.rb shows isolate's own),
 * or our error text; "" for none. */
static void j0_message(const cJSON *r, int status, char *out, size_t outsz)
{
    const char *error = j0_str(r, "error");
    double code = j0_num(r, "exit_code", 0), sig = j0_num(r, "signal", 0);

    out[0] = '\0';
    if (status == J0_TLE)
        snprintf(out, outsz, "Time limit exceeded");
    else if (status >= J0_SIGSEGV && status <= J0_OTHER && status != J0_NZEC)
        snprintf(out, outsz, "Caught fatal signal %g", sig);
    else if (status == J0_NZEC)
        snprintf(out, outsz, "Exited with error status %g", code);
    else if (status == J0_MLE)
        snprintf(out, outsz, "Memory limit exceeded%s%s", error ? ": " : "", error ? error : "");
    else if (status == J0_OLE)
        snprintf(out, outsz, "Output limit exceeded: the output was cut at the cap");
    else if (error && (status == J0_BLOCKED || status == J0_INVALID || status == J0_BOXERR))
        snprintf(out, outsz, "%s", error);
    else if (status == J0_BLOCKED)
        snprintf(out, outsz, "the security policy refused the code");
    else if (status == J0_BOXERR)
        snprintf(out, outsz, "%s", j0_str(r, "status") ? j0_str(r, "status") : "no result");
}

/* A text value: null when empty (isolate_job.rb: nil if empty), Base64
 * when asked. */
static cJSON *j0_text_value(const char *s, int b64)
{
    cJSON *v;
    char *e;

    if (!s || !*s)
        return cJSON_CreateNull();
    if (!b64)
        return cJSON_CreateString(s);
    e = base64_encode(s, strlen(s), NULL);
    v = e ? cJSON_CreateString(e) : cJSON_CreateNull();
    free(e);
    return v;
}

/* ms since the epoch as Rails writes a time: 2024-01-02T03:04:05.678Z. */
static cJSON *j0_time_value(double ms)
{
    char buf[96];
    struct tm tm;
    time_t t;

    /* a time a result could hold (up to the year 9999), else none */
    if (!(ms > 0 && ms < 253402300800000.0))
        return cJSON_CreateNull();
    t = (time_t)(ms / 1000);
    if (!gmtime_r(&t, &tm))
        return cJSON_CreateNull();
    snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)fmod(ms, 1000));
    return cJSON_CreateString(buf);
}

/* Seconds as Judge0's decimals are written: a string, "0.002". */
static cJSON *j0_seconds_value(const cJSON *r, const char *name)
{
    char buf[32];
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, name);

    if (!cJSON_IsNumber(v))
        return cJSON_CreateNull();
    snprintf(buf, sizeof(buf), "%.3f", v->valuedouble / 1000.0);
    return cJSON_CreateString(buf);
}

/* A kept text of meta (Base64 there): as the answer wants it. */
static cJSON *j0_meta_text(const cJSON *meta, const char *name, int b64)
{
    const char *s = j0_str(meta, name);
    size_t n = 0;
    char *raw, *clean;
    cJSON *v;

    if (!s)
        return cJSON_CreateNull();
    if (b64)
        return cJSON_CreateString(s);
    raw = base64_decode(s, strlen(s), &n);
    if (!raw)
        return cJSON_CreateNull();
    clean = json_utf8_clean(raw, n);
    v = clean ? cJSON_CreateString(clean) : cJSON_CreateNull();
    free(clean);
    free(raw);
    return v;
}

/* What a submission's answer is made from. */
struct j0_view {
    const struct front_host *h;
    int status;        /* J0_* */
    const cJSON *r;    /* the final result, or NULL (queued, running) */
    const cJSON *meta; /* the result's meta (what the request asked), or NULL */
    const char *token;
    int b64;
};

/* How each serializer field is filled. */
enum j0_kind {
    J0_K_TOKEN,
    J0_K_STATUS,
    J0_K_STATUS_ID,
    J0_K_LANGUAGE,
    J0_K_META_TEXT, /* source_code, stdin, expected_output (kept in meta) */
    J0_K_META,      /* a request value kept in meta, else dflt */
    J0_K_TEXT,      /* a result text: stdout, stderr, compile_output */
    J0_K_SECONDS,   /* a result's ms as Judge0's seconds */
    J0_K_TIME,      /* a result's ms since the epoch as a time */
    J0_K_MEMORY,
    J0_K_EXIT_CODE,
    J0_K_EXIT_SIGNAL,
    J0_K_MESSAGE,
    J0_K_WORKER,
    J0_K_CONST /* dflt alone */
};
enum j0_dflt {
    J0_D_NULL,
    J0_D_TIMEOUT,
    J0_D_MEMORY,
    J0_D_PIDS,
    J0_D_FSIZE,
    J0_D_0,
    J0_D_1,
    J0_D_FALSE
};

static const struct j0_field {
    const char *name;
    enum j0_kind kind;
    const char *src; /* the result's or meta's key */
    enum j0_dflt dflt;
} j0_field_table[] = {
    {"source_code", J0_K_META_TEXT, "source_code", J0_D_NULL},
    {"language_id", J0_K_META, "language_id", J0_D_NULL},
    {"stdin", J0_K_META_TEXT, "stdin", J0_D_NULL},
    {"expected_output", J0_K_META_TEXT, "expected_output", J0_D_NULL},
    {"stdout", J0_K_TEXT, "stdout", J0_D_NULL},
    {"status_id", J0_K_STATUS_ID, NULL, J0_D_NULL},
    {"created_at", J0_K_TIME, "queued_at", J0_D_NULL},
    {"finished_at", J0_K_TIME, "finished_at", J0_D_NULL},
    {"time", J0_K_SECONDS, "cpu_ms", J0_D_NULL},
    {"memory", J0_K_MEMORY, "max_rss_kb", J0_D_NULL},
    {"stderr", J0_K_TEXT, "stderr", J0_D_NULL},
    {"token", J0_K_TOKEN, NULL, J0_D_NULL},
    {"number_of_runs", J0_K_META, "number_of_runs", J0_D_1},
    {"cpu_time_limit", J0_K_META, "cpu_time_limit", J0_D_TIMEOUT},
    {"cpu_extra_time", J0_K_META, "cpu_extra_time", J0_D_0},
    {"wall_time_limit", J0_K_META, "wall_time_limit", J0_D_TIMEOUT},
    {"memory_limit", J0_K_META, "memory_limit", J0_D_MEMORY},
    {"stack_limit", J0_K_META, "stack_limit", J0_D_NULL},
    {"max_processes_and_or_threads", J0_K_META, "max_processes_and_or_threads", J0_D_PIDS},
    {"enable_per_process_and_thread_time_limit", J0_K_CONST, NULL, J0_D_FALSE},
    {"enable_per_process_and_thread_memory_limit", J0_K_CONST, NULL, J0_D_FALSE},
    {"max_file_size", J0_K_META, "max_file_size", J0_D_FSIZE},
    {"compile_output", J0_K_TEXT, "compile_output", J0_D_NULL},
    {"exit_code", J0_K_EXIT_CODE, NULL, J0_D_NULL},
    {"exit_signal", J0_K_EXIT_SIGNAL, NULL, J0_D_NULL},
    {"message", J0_K_MESSAGE, NULL, J0_D_NULL},
    {"wall_time", J0_K_SECONDS, "duration_ms", J0_D_NULL},
    {"compiler_options", J0_K_META, "compiler_options", J0_D_NULL},
    {"command_line_arguments", J0_K_META, "command_line_arguments", J0_D_NULL},
    {"redirect_stderr_to_stdout", J0_K_CONST, NULL, J0_D_FALSE},
    {"callback_url", J0_K_META, "callback_url", J0_D_NULL},
    {"additional_files", J0_K_CONST, NULL, J0_D_NULL},
    {"enable_network", J0_K_META, "enable_network", J0_D_FALSE},
    {"started_at", J0_K_TIME, "started_at", J0_D_NULL},
    {"queued_at", J0_K_TIME, "queued_at", J0_D_NULL},
    {"updated_at", J0_K_TIME, "finished_at", J0_D_NULL},
    {"queue_host", J0_K_CONST, NULL, J0_D_NULL},
    {"execution_host", J0_K_WORKER, "worker", J0_D_NULL},
    {"status", J0_K_STATUS, NULL, J0_D_NULL},
    {"language", J0_K_LANGUAGE, NULL, J0_D_NULL},
};
#define J0_NFIELDS (sizeof(j0_field_table) / sizeof(j0_field_table[0]))
_Static_assert(J0_NFIELDS <= 64, "a bit per serializer field");

static cJSON *j0_default(const struct j0_view *v, enum j0_dflt d)
{
    const struct limits *def = v->h ? &v->h->cfg->defaults : NULL;

    switch (def ? d : d == J0_D_FALSE ? d : J0_D_NULL) {
    case J0_D_TIMEOUT:
        return cJSON_CreateNumber((double)def->timeout_ms / 1000.0);
    case J0_D_MEMORY:
        return cJSON_CreateNumber((double)def->memory_mb * 1024);
    case J0_D_PIDS:
        return cJSON_CreateNumber((double)def->pids);
    case J0_D_FSIZE:
        return cJSON_CreateNumber((double)def->file_size_mb * 1024);
    case J0_D_0:
        return cJSON_CreateNumber(0);
    case J0_D_1:
        return cJSON_CreateNumber(1);
    case J0_D_FALSE:
        return cJSON_CreateFalse();
    case J0_D_NULL:
        break;
    }
    return cJSON_CreateNull();
}

static cJSON *j0_status_value(int status)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "id", status);
    cJSON_AddStringToObject(o, "description", j0_status_names[status]);
    return o;
}

static cJSON *j0_language_value(const struct j0_view *v)
{
    const struct j0_lang *l = j0_lang_by_id(j0_num(v->meta, "language_id", -1));
    cJSON *o;

    if (!l)
        return cJSON_CreateNull();
    o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", l->id);
    cJSON_AddStringToObject(o, "name", l->display);
    return o;
}

/* exit_code as isolate_job.rb sets it: the exit code, 0 when a signal
 * ended the program (isolate then gives no exitcode), null when it never
 * ran. */
static cJSON *j0_exit_code_value(const struct j0_view *v)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(v->r, "exit_code");

    if (!cJSON_IsNumber(c) || v->status == J0_CE)
        return cJSON_CreateNull();
    return cJSON_CreateNumber(j0_num(v->r, "signal", 0) > 0 ? 0 : c->valuedouble);
}

static cJSON *j0_field_value(const struct j0_view *v, const struct j0_field *f)
{
    const cJSON *m;
    char msg[1024];

    switch (f->kind) {
    case J0_K_TOKEN:
        return cJSON_CreateString(v->token);
    case J0_K_STATUS:
        return j0_status_value(v->status);
    case J0_K_STATUS_ID:
        return cJSON_CreateNumber(v->status);
    case J0_K_LANGUAGE:
        return j0_language_value(v);
    case J0_K_META_TEXT:
        return j0_meta_text(v->meta, f->src, v->b64);
    case J0_K_META:
        m = cJSON_GetObjectItemCaseSensitive(v->meta, f->src);
        return m ? cJSON_Duplicate(m, 1) : j0_default(v, f->dflt);
    case J0_K_TEXT:
        return j0_text_value(j0_str(v->r, f->src), v->b64);
    case J0_K_SECONDS:
        return j0_seconds_value(v->r, f->src);
    case J0_K_TIME:
        return j0_time_value(j0_num(v->r, f->src, 0));
    case J0_K_MEMORY:
        m = cJSON_GetObjectItemCaseSensitive(v->r, f->src);
        return cJSON_IsNumber(m) ? cJSON_CreateNumber(m->valuedouble) : cJSON_CreateNull();
    case J0_K_EXIT_CODE:
        return j0_exit_code_value(v);
    case J0_K_EXIT_SIGNAL:
        return j0_num(v->r, "signal", 0) > 0 ? cJSON_CreateNumber(j0_num(v->r, "signal", 0))
                                             : cJSON_CreateNull();
    case J0_K_MESSAGE:
        if (!v->r)
            return cJSON_CreateNull();
        j0_message(v->r, v->status, msg, sizeof(msg));
        return j0_text_value(msg, v->b64);
    case J0_K_WORKER:
        return j0_str(v->r, f->src) ? cJSON_CreateString(j0_str(v->r, f->src)) : cJSON_CreateNull();
    case J0_K_CONST:
        break;
    }
    return j0_default(v, f->dflt);
}

/* The submission's answer: the fields of mask. */
static cJSON *j0_render(const struct j0_view *v, j0_mask mask)
{
    cJSON *o = cJSON_CreateObject();

    for (size_t i = 0; o && i < J0_NFIELDS; i++)
        if (mask & (1ull << i))
            cJSON_AddItemToObject(o, j0_field_table[i].name, j0_field_value(v, &j0_field_table[i]));
    return o;
}

static j0_mask j0_mask_of(const char *const *names, size_t n)
{
    j0_mask m = 0;

    for (size_t i = 0; i < J0_NFIELDS; i++)
        for (size_t k = 0; k < n; k++)
            if (strcmp(j0_field_table[i].name, names[k]) == 0)
                m |= 1ull << i;
    return m;
}

/* One name of fields=: its bit, or 0 when unknown ("*": all). */
static j0_mask j0_field_bit(const char *name, size_t n)
{
    if (n == 1 && name[0] == '*')
        return ~0ull >> (64 - J0_NFIELDS);
    for (size_t i = 0; i < J0_NFIELDS; i++)
        if (strlen(j0_field_table[i].name) == n && memcmp(j0_field_table[i].name, name, n) == 0)
            return 1ull << i;
    return 0;
}

/* The fields= argument as Fields::Submission reads it: names split at
 * commas, "*" all of them, none the defaults; an unknown name is a 400
 * naming each.  Returns the mask, or 0 with a filled. */
static j0_mask j0_fields_arg(const struct front_req *r, struct front_answer *a)
{
    const char *arg = r->arg ? r->arg(r, "fields") : NULL;
    char bad[512] = "";
    size_t nbad = 0;
    j0_mask m = 0;

    while (arg && *arg) {
        size_t n = strcspn(arg, ",");
        j0_mask bit = j0_field_bit(arg, n);
        if (bit)
            m |= bit;
        else if (nbad < sizeof(bad))
            nbad += (size_t)snprintf(bad + nbad, sizeof(bad) - nbad, "%s%.*s", nbad ? ", " : "",
                                     (int)(n > 64 ? 64 : n), arg);
        arg += n + (arg[n] == ',');
    }
    if (nbad) {
        front_error(a, 400, "invalid fields: [%s]", bad);
        return 0;
    }
    return m ? m
             : j0_mask_of(j0_fields_default,
                          sizeof(j0_fields_default) / sizeof(j0_fields_default[0]));
}

/* The callback's body (isolate_job.rb's call_callback: the default
 * fields, Base64-encoded), from the final result alone. */
static cJSON *j0_render_callback(const cJSON *result, void *ud)
{
    const char *id = j0_str(result, "id");
    struct j0_view v = {NULL,   j0_status_of(result),
                        result, cJSON_GetObjectItemCaseSensitive(result, "meta"),
                        "",     1};

    if (id && strncmp(id, J0_PREFIX, strlen(J0_PREFIX)) == 0)
        v.token = id + strlen(J0_PREFIX);
    return j0_render(&v, j0_mask_of(j0_fields_default,
                                    sizeof(j0_fields_default) / sizeof(j0_fields_default[0])));
}

/* ---- the routes ---- */

static int j0_arg_true(const struct front_req *r, const char *name)
{
    const char *v = r->arg ? r->arg(r, name) : NULL;
    return v && strcmp(v, "true") == 0;
}

static void j0_answer(struct front_answer *a, int status, cJSON *json)
{
    cJSON_Delete(a->json);
    a->status = status;
    a->json = json;
}

/* Our field name in a job's error, as Judge0's request names it. */
static const char *j0_field_of_error(const char *error)
{
    static const struct {
        const char *ours, *theirs;
    } map[] = {{"code", "source_code"},
               {"lang", "language_id"},
               {"stdin", "stdin"},
               {"expect_stdout", "expected_output"},
               {"args", "command_line_arguments"},
               {"compile_flags", "compiler_options"},
               {"timeout", "cpu_time_limit"},
               {"memory", "memory_limit"},
               {"pids", "max_processes_and_or_threads"},
               {"network", "enable_network"},
               {"files", "additional_files"}};
    size_t n = error ? strcspn(error, ":") : 0;

    for (size_t i = 0; error && error[n] == ':' && i < sizeof(map) / sizeof(map[0]); i++)
        if (strlen(map[i].ours) == n && memcmp(map[i].ours, error, n) == 0)
            return map[i].theirs;
    return "submission";
}

/* wait=true: runs it and answers the submission (201), or the job's
 * refusal as Judge0's 422 when the host found its fields invalid. */
static void j0_create_wait(const struct front_host *h, const struct fields *f, const char *token,
                           int b64, j0_mask mask, struct front_answer *a)
{
    struct llmsb_err err = {0};
    cJSON *result = NULL, *errs;
    struct j0_view v = {h, 0, NULL, NULL, token, b64};

    if (h->run(h->ud, f, 1, &result, &err) != 0 || !result) {
        front_error(a, 503, "the submission could not be run: %s", err.msg);
        return;
    }
    v.status = j0_status_of(result);
    if (v.status == J0_INVALID && (errs = cJSON_CreateObject()) != NULL) {
        j0_err(errs, j0_field_of_error(j0_str(result, "error")), "%s",
               j0_str(result, "error") ? j0_str(result, "error") : "was refused");
        j0_answer(a, 422, errs);
    } else {
        v.r = result;
        v.meta = cJSON_GetObjectItemCaseSensitive(result, "meta");
        j0_answer(a, 201, j0_render(&v, mask));
    }
    cJSON_Delete(result);
}

/* Starts one parsed submission; returns 0, or the host's code with err. */
static int j0_start(const struct front_host *h, const struct fields *f, const char *callback,
                    struct llmsb_err *err)
{
    return h->start(h->ud, f, 1, callback, callback ? j0_render_callback : NULL, NULL, NULL, err);
}

/* wait=false: starts it and answers its token (201). */
static void j0_create_start(const struct front_host *h, const struct fields *f, const char *token,
                            const char *callback, struct front_answer *a)
{
    struct llmsb_err err = {0};
    cJSON *o;

    if (j0_start(h, f, callback, &err) != 0) {
        if (callback && err.code == LLMSB_ERR_INVALID && (o = cJSON_CreateObject()) != NULL) {
            j0_err(o, "callback_url", "%s", err.msg);
            j0_answer(a, 422, o);
        } else {
            front_error(a, 503, "the submission could not be queued: %s", err.msg);
        }
        return;
    }
    if ((o = cJSON_CreateObject()) != NULL)
        cJSON_AddStringToObject(o, "token", token);
    j0_answer(a, 201, o);
}

/* A checked submission: its token and job, then run or started. */
static void j0_create_checked(const struct front_host *h, const struct j0_sub *s, int b64, int wait,
                              j0_mask mask, struct front_answer *a)
{
    char token[J0_TOKEN_LEN + 1], id[FRONT_ID_MAX];
    struct llmsb_err err = {0};
    struct fields f;

    if (wait && s->callback) {
        front_error(a, 400,
                    "wait=true with a callback_url is not supported here: leave wait "
                    "out and the submission comes to the callback");
        return;
    }
    fields_init(&f, 32);
    if (j0_new_token(h, token, id, &err) != 0)
        front_error(a, 500, "no token could be made: %s", err.msg);
    else if (j0_sub_fields(s, id, &f) != 0)
        front_error(a, 500, "the submission's job could not be made: out of memory");
    else if (wait)
        j0_create_wait(h, &f, token, b64, mask, a);
    else
        j0_create_start(h, &f, token, s->callback, a);
    fields_release(&f);
}

/* POST /submissions (submissions_controller.rb's create). */
static void j0_create(const struct front_host *h, const struct front_req *r, struct front_answer *a)
{
    int b64 = j0_arg_true(r, "base64_encoded"), wait = j0_arg_true(r, "wait");
    j0_mask mask = j0_fields_arg(r, a);
    cJSON *body, *errs;
    struct j0_sub s = {0};

    if (!mask || !(body = front_body_object(r, a)))
        return;
    if (!(errs = cJSON_CreateObject()))
        front_error(a, 500, "out of memory");
    else if (j0_sub_parse(h, body, b64, &s, errs) != 0)
        j0_answer(a, 422, errs), errs = NULL;
    else
        j0_create_checked(h, &s, b64, wait, mask, a);
    cJSON_Delete(errs);
    j0_sub_release(&s);
    cJSON_Delete(body);
}

/* The most submissions one batch may hold: Judge0's 20, or the host's
 * cap when smaller. */
static int j0_batch_max(const struct front_host *h)
{
    return h->max_jobs > 0 && h->max_jobs < J0_BATCH_MAX ? h->max_jobs : J0_BATCH_MAX;
}

/* A batch's size as batch_create and batch_show check it; 0 (a filled)
 * when out of bounds. */
static int j0_batch_size_ok(const struct front_host *h, int n, struct front_answer *a)
{
    if (n > j0_batch_max(h)) {
        front_error(a, 400, "number of submissions in a batch should be less than or equal to %d",
                    j0_batch_max(h));
        return 0;
    }
    if (n <= 0) {
        front_error(a, 400, "there should be at least one submission in a batch");
        return 0;
    }
    return 1;
}

/* One submission of a batch: {"token"} when started, else its errors. */
static cJSON *j0_batch_one(const struct front_host *h, const cJSON *item, int b64)
{
    char token[J0_TOKEN_LEN + 1], id[FRONT_ID_MAX];
    struct llmsb_err err = {0};
    struct j0_sub s = {0};
    struct fields f;
    cJSON *out = cJSON_CreateObject();

    fields_init(&f, 32);
    if (!out || j0_sub_parse(h, item, b64, &s, out) != 0)
        goto done;
    if (j0_new_token(h, token, id, &err) != 0 || j0_sub_fields(&s, id, &f) != 0 ||
        j0_start(h, &f, s.callback, &err) != 0)
        j0_err(out, s.callback && err.code == LLMSB_ERR_INVALID ? "callback_url" : "submission",
               "could not be queued: %s", err.msg[0] ? err.msg : "out of memory");
    else
        cJSON_AddStringToObject(out, "token", token);
done:
    fields_release(&f);
    j0_sub_release(&s);
    return out;
}

/* POST /submissions/batch: each started on its own (each may have its own
 * callback); 201 when one was, else 422, as Judge0's batch_create. */
static void j0_batch_create(const struct front_host *h, const struct front_req *r,
                            struct front_answer *a)
{
    int b64 = j0_arg_true(r, "base64_encoded"), any = 0;
    cJSON *body = front_body_object(r, a), *list, *out, *item;
    const cJSON *subs;

    if (!body)
        return;
    subs = cJSON_GetObjectItemCaseSensitive(body, "submissions");
    if (j0_batch_size_ok(h, cJSON_IsArray(subs) ? cJSON_GetArraySize(subs) : 0, a) &&
        (list = cJSON_CreateArray()) != NULL) {
        cJSON_ArrayForEach(item, subs) {
            out = j0_batch_one(h, item, b64);
            any |= cJSON_GetObjectItemCaseSensitive(out, "token") != NULL;
            cJSON_AddItemToArray(list, out);
        }
        j0_answer(a, any ? 201 : 422, list);
    }
    cJSON_Delete(body);
}

/* A token as we make them: 36 characters of hex digits and dashes. */
static int j0_token_ok(const char *t, size_t n)
{
    if (n != J0_TOKEN_LEN)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(isdigit((unsigned char)t[i]) || (t[i] >= 'a' && t[i] <= 'f') || t[i] == '-'))
            return 0;
    return 1;
}

/* The submission of token t[0..n): a new answer body, or NULL when there
 * is none (unknown, expired, not one of ours). */
static cJSON *j0_lookup(const struct front_host *h, const char *t, size_t n, int b64, j0_mask mask)
{
    char id[FRONT_ID_MAX], token[J0_TOKEN_LEN + 1];
    cJSON *result = NULL, *out;
    struct j0_view v = {h, 0, NULL, NULL, token, b64};
    enum front_state st;

    if (!j0_token_ok(t, n))
        return NULL;
    memcpy(token, t, n);
    token[n] = '\0';
    snprintf(id, sizeof(id), J0_PREFIX "%s", token);
    st = h->lookup(h->ud, id, &result);
    if (st == FRONT_UNKNOWN || (st == FRONT_DONE && !result)) {
        cJSON_Delete(result);
        return NULL;
    }
    v.status = st == FRONT_QUEUED    ? J0_QUEUE
               : st == FRONT_RUNNING ? J0_PROCESS
                                     : j0_status_of(result);
    v.r = result;
    v.meta = cJSON_GetObjectItemCaseSensitive(result, "meta");
    out = j0_render(&v, mask);
    cJSON_Delete(result);
    return out;
}

/* GET /submissions/{token} */
static void j0_show(const struct front_host *h, const struct front_req *r, const char *token,
                    struct front_answer *a)
{
    j0_mask mask = j0_fields_arg(r, a);
    cJSON *o;

    if (!mask)
        return;
    if ((o = j0_lookup(h, token, strlen(token), j0_arg_true(r, "base64_encoded"), mask)) != NULL)
        j0_answer(a, 200, o);
    else
        front_error(a, 404, "Not Found");
}

/* GET /submissions/batch?tokens=a,b: each submission, or null for a token
 * that has none (batch_show). */
static void j0_batch_show(const struct front_host *h, const struct front_req *r,
                          struct front_answer *a)
{
    const char *tokens = r->arg ? r->arg(r, "tokens") : NULL, *p;
    int b64 = j0_arg_true(r, "base64_encoded"), n = 0;
    j0_mask mask = j0_fields_arg(r, a);
    cJSON *list, *o;

    if (!mask)
        return;
    while (tokens && isspace((unsigned char)*tokens))
        tokens++;
    for (p = tokens; p && *p; p++)
        n += *p == ',' && p[1] != '\0';
    if (!j0_batch_size_ok(h, tokens && *tokens ? n + 1 : 0, a) || !(list = cJSON_CreateArray()))
        return;
    for (p = tokens; *p;) {
        size_t len = strcspn(p, ",");
        size_t trim = len;
        while (trim && isspace((unsigned char)p[trim - 1]))
            trim--;
        cJSON_AddItemToArray(list, (o = j0_lookup(h, p, trim, b64, mask)) ? o : cJSON_CreateNull());
        p += len + (p[len] == ',');
    }
    if ((o = cJSON_CreateObject()) != NULL)
        cJSON_AddItemToObject(o, "submissions", list);
    else
        cJSON_Delete(list);
    j0_answer(a, 200, o);
}

/* A command template as one line, the default file's names put in (the
 * flag placeholders left out); NULL for an empty template. */
static cJSON *j0_cmd_value(const char *const *tmpl, const struct language *l)
{
    char line[1024], file[LANG_FILE_NAME], one[512];
    size_t used = 0;

    if (!tmpl[0])
        return cJSON_CreateNull();
    snprintf(file, sizeof(file), "%s.%s", l->default_stem, l->ext);
    line[0] = '\0';
    for (size_t i = 0; i < LANG_MAX_ARGV && tmpl[i] && used < sizeof(line); i++) {
        const char *t = tmpl[i];
        size_t k = 0;
        if (strcmp(t, LANG_COMPILE_FLAGS) == 0 || strcmp(t, LANG_LINK_FLAGS) == 0)
            continue;
        while (*t && k + 1 < sizeof(one)) {
            const char *sub = strncmp(t, "{file}", 6) == 0    ? file
                              : strncmp(t, "{stem}", 6) == 0  ? l->default_stem
                              : strncmp(t, "{class}", 7) == 0 ? l->default_stem
                                                              : NULL;
            if (sub) {
                k += (size_t)snprintf(one + k, sizeof(one) - k, "%s", sub);
                k = k < sizeof(one) ? k : sizeof(one) - 1;
                t += t[1] == 'c' ? 7 : 6;
            } else {
                one[k++] = *t++;
            }
        }
        one[k] = '\0';
        used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%s", used ? " " : "", one);
    }
    return cJSON_CreateString(line);
}

/* GET /languages (id and name, as Judge0's index) and /languages/all
 * (with is_archived). */
static void j0_languages(int all, struct front_answer *a)
{
    cJSON *list = cJSON_CreateArray(), *o;

    for (size_t i = 0; list && i < J0_NLANGS; i++) {
        if (!language_find(j0_langs[i].name) || !(o = cJSON_CreateObject()))
            continue;
        cJSON_AddNumberToObject(o, "id", j0_langs[i].id);
        cJSON_AddStringToObject(o, "name", j0_langs[i].display);
        if (all)
            cJSON_AddFalseToObject(o, "is_archived");
        cJSON_AddItemToArray(list, o);
    }
    j0_answer(a, 200, list);
}

/* GET /languages/{id}: LanguageSerializer's attributes. */
static void j0_language(const char *idtext, struct front_answer *a)
{
    char *end = NULL;
    long long id = strtoll(idtext, &end, 10);
    const struct j0_lang *jl = end != idtext && *end == '\0' ? j0_lang_by_id((double)id) : NULL;
    const struct language *l = jl ? language_find(jl->name) : NULL;
    char file[LANG_FILE_NAME];
    cJSON *o;

    if (!l || !(o = cJSON_CreateObject())) {
        front_error(a, 404, "Not Found");
        return;
    }
    snprintf(file, sizeof(file), "%s.%s", l->default_stem, l->ext);
    cJSON_AddNumberToObject(o, "id", jl->id);
    cJSON_AddStringToObject(o, "name", jl->display);
    cJSON_AddFalseToObject(o, "is_archived");
    cJSON_AddStringToObject(o, "source_file", file);
    cJSON_AddItemToObject(o, "compile_cmd", j0_cmd_value(l->compile, l));
    cJSON_AddItemToObject(o, "run_cmd", j0_cmd_value(l->run, l));
    j0_answer(a, 200, o);
}

/* GET /statuses: Judge0's and ours. */
static void j0_statuses(struct front_answer *a)
{
    cJSON *list = cJSON_CreateArray(), *o;

    for (int i = 1; list && i <= J0_NSTATUS; i++) {
        if (!(o = cJSON_CreateObject()))
            continue;
        cJSON_AddNumberToObject(o, "id", i);
        cJSON_AddStringToObject(o, "description", j0_status_names[i]);
        cJSON_AddItemToArray(list, o);
    }
    j0_answer(a, 200, list);
}

/* GET /about (info_controller.rb's about). */
static void j0_about(struct front_answer *a)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "version", LLMSB_VERSION);
    cJSON_AddStringToObject(o, "homepage", "https://github.com/llm-sandbox/llm-sandbox");
    cJSON_AddStringToObject(o, "source_code", "https://github.com/llm-sandbox/llm-sandbox");
    cJSON_AddStringToObject(o, "maintainer", "llm-sandbox");
    j0_answer(a, 200, o);
}

/* GET /config_info: Config.config_info's keys, with what applies here. */
static void j0_config_info(const struct front_host *h, struct front_answer *a)
{
    const struct limits *d = &h->cfg->defaults, *m = &h->cfg->max;
    cJSON *o = cJSON_CreateObject(), *langs = cJSON_CreateArray();
    const struct {
        const char *key;
        double v;
        int is_bool;
    } rows[] = {
        {"maintenance_mode", 0, 1},
        {"enable_wait_result", 1, 1},
        {"enable_compiler_options", 1, 1},
        {"enable_command_line_arguments", 1, 1},
        {"enable_submission_delete", 0, 1},
        {"enable_callbacks", 1, 1},
        {"enable_additional_files", 1, 1},
        {"cpu_time_limit", (double)d->timeout_ms / 1000, 0},
        {"max_cpu_time_limit", (double)m->timeout_ms / 1000, 0},
        {"cpu_extra_time", 0, 0},
        {"max_cpu_extra_time", J0_EXTRA_TIME_MAX, 0},
        {"wall_time_limit", (double)d->timeout_ms / 1000, 0},
        {"max_wall_time_limit", (double)m->timeout_ms / 1000, 0},
        {"memory_limit", (double)d->memory_mb * 1024, 0},
        {"max_memory_limit", (double)m->memory_mb * 1024, 0},
        {"stack_limit", 0, 0},
        {"max_stack_limit", J0_STACK_MAX_KB, 0},
        {"max_processes_and_or_threads", (double)d->pids, 0},
        {"max_max_processes_and_or_threads", (double)m->pids, 0},
        {"enable_per_process_and_thread_time_limit", 0, 1},
        {"allow_enable_per_process_and_thread_time_limit", 0, 1},
        {"enable_per_process_and_thread_memory_limit", 0, 1},
        {"allow_enable_per_process_and_thread_memory_limit", 0, 1},
        {"max_file_size", (double)d->file_size_mb * 1024, 0},
        {"max_max_file_size", J0_FILE_SIZE_MAX_KB, 0},
        {"number_of_runs", 1, 0},
        {"max_number_of_runs", 1, 0},
        {"redirect_stderr_to_stdout", 0, 1},
        {"max_extract_size", JUDGE0_EXTRACT_MAX_KB, 0},
        {"enable_batched_submissions", 1, 1},
        {"max_submission_batch_size", j0_batch_max(h), 0},
        {"use_docs_as_homepage", 0, 1},
        {"allow_enable_network", h->cfg->allow_network, 1},
        {"enable_network", 0, 1},
        {"disable_implicit_base64_encoding", 1, 1},
    };
    char names[256];

    for (size_t i = 0; o && i < sizeof(rows) / sizeof(rows[0]); i++)
        cJSON_AddItemToObject(o, rows[i].key,
                              rows[i].is_bool ? cJSON_CreateBool(rows[i].v != 0)
                                              : cJSON_CreateNumber(rows[i].v));
    j0_flag_langs(names, sizeof(names));
    cJSON_AddItemToArray(langs, cJSON_CreateString(names));
    cJSON_AddItemToObject(o, "allowed_languages_for_compile_options", langs);
    j0_answer(a, 200, o);
}

/* What /submissions/... names: the token (or "batch") after the slash. */
static int j0_submissions_route(const struct front_host *h, const struct front_req *r,
                                const char *rest, struct front_answer *a)
{
    int get = strcmp(r->method, "GET") == 0, post = strcmp(r->method, "POST") == 0;

    if (*rest == '\0') {
        if (post)
            j0_create(h, r, a);
        else
            front_error(a, get ? 400 : 404,
                        get ? "listing submissions is not supported here: "
                              "get each by its token, or a batch by tokens"
                            : "Not Found");
    } else if (strcmp(rest, "/batch") == 0) {
        if (post)
            j0_batch_create(h, r, a);
        else if (get)
            j0_batch_show(h, r, a);
        else
            front_error(a, 404, "Not Found");
    } else if (rest[0] == '/' && !strchr(rest + 1, '/')) {
        if (get)
            j0_show(h, r, rest + 1, a);
        else if (strcmp(r->method, "DELETE") == 0)
            front_error(a, 400, "delete not allowed"); /* ENABLE_SUBMISSION_DELETE off */
        else
            front_error(a, 404, "Not Found");
    } else {
        front_error(a, 404, "Not Found");
    }
    return 1;
}

int judge0_route(const struct front_host *h, const struct front_req *r, struct front_answer *a)
{
    const char *p = r->path;
    int get = strcmp(r->method, "GET") == 0;

    if (strncmp(p, "/submissions", 12) == 0 && (p[12] == '\0' || p[12] == '/'))
        return j0_submissions_route(h, r, p + 12, a);
    if (strcmp(p, "/languages") == 0 || strcmp(p, "/languages/all") == 0)
        get ? j0_languages(p[10] != '\0', a) : front_error(a, 404, "Not Found");
    else if (strncmp(p, "/languages/", 11) == 0)
        get ? j0_language(p + 11, a) : front_error(a, 404, "Not Found");
    else if (strcmp(p, "/statuses") == 0)
        get ? j0_statuses(a) : front_error(a, 404, "Not Found");
    else if (strcmp(p, "/about") == 0)
        get ? j0_about(a) : front_error(a, 404, "Not Found");
    else if (strcmp(p, "/config_info") == 0)
        get ? j0_config_info(h, a) : front_error(a, 404, "Not Found");
    else
        return 0;
    return 1;
}
