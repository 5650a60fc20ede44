/* parse.c - job fields (docs/jobs.md) into a struct job.  The same code
 * serves stream entries, YAML job files and JSON Lines, so a field means
 * the same thing wherever it comes from.  Nothing here trusts its input:
 * sizes are capped before copying and every rejection names the field. */
#include "job.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/features.h"
#include "common/json.h"
#include "config/jobfile.h"
#include "security/security.h"

typedef int (*field_fn)(struct job *j, const struct config *cfg, const char *v, size_t n,
                        struct llmsb_err *err);

static int shown_err(struct llmsb_err *err, const char *field, const char *v, size_t n,
                     const char *why)
{
    char shown[80];
    llmsb_escape(shown, sizeof(shown), v, n);
    return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: \"%s\" %s", field, shown, why);
}

/* A job id (field names where it was found): 1 to JOB_ID_MAX bytes of
 * printable UTF-8. */
static int id_check(const char *field, const char *v, size_t n, struct llmsb_err *err)
{
    if (n == 0 || n > JOB_ID_MAX)
        return shown_err(err, field, v, n, "must be 1 to " JOB_ID_MAX_TEXT " bytes");
    if (!llmsb_printable_utf8(v, n))
        return shown_err(err, field, v, n,
                         "must be printable UTF-8 text (no control characters or invalid bytes)");
    return 0;
}

static int f_id(struct job *j, const struct config *cfg, const char *v, size_t n,
                struct llmsb_err *err)
{
    (void)cfg;
    if (id_check("id", v, n, err) != 0)
        return err->code;
    free(j->id);
    return (j->id = xstrndup(v, n)) ? 0 : LLMSB_ERR_NOMEM;
}

static int f_lang(struct job *j, const struct config *cfg, const char *v, size_t n,
                  struct llmsb_err *err)
{
    char name[32];
    (void)cfg;
    if (n >= sizeof(name) || memchr(v, '\0', n))
        return shown_err(err, "lang", v, n, "is not a language");
    memcpy(name, v, n);
    name[n] = '\0';
    return job_set_language(j, name, err);
}

static int f_code(struct job *j, const struct config *cfg, const char *v, size_t n,
                  struct llmsb_err *err)
{
    (void)cfg;
    return job_set_code(j, v, n, err);
}

static int f_stdin(struct job *j, const struct config *cfg, const char *v, size_t n,
                   struct llmsb_err *err)
{
    (void)cfg;
    if (n > JOB_MAX_STDIN)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "stdin: %zu bytes is over the %zu byte cap", n,
                             JOB_MAX_STDIN);
    free(j->stdin_data);
    j->stdin_len = n;
    return (j->stdin_data = xstrndup(v, n)) ? 0 : LLMSB_ERR_NOMEM;
}

/* Parses v as JSON of the given type; on failure names the field. */
static cJSON *json_of(const char *field, const char *v, size_t n, int want_array,
                      struct llmsb_err *err)
{
    cJSON *j;

    if (json_text_has_nul(v, n)) {
        /* cJSON would cut the string there without a word */
        llmsb_err_set(
            err, LLMSB_ERR_INVALID, "%s: a string holds a NUL character (\\u0000)%s", field,
            strcmp(field, "files") == 0 ? "; send binary files as {\"base64\": ...}" : "");
        return NULL;
    }
    j = cJSON_ParseWithLength(v, n);
    if (!j || (want_array ? !cJSON_IsArray(j) : !cJSON_IsObject(j))) {
        cJSON_Delete(j);
        shown_err(err, field, v, n, want_array ? "is not a JSON array" : "is not a JSON object");
        return NULL;
    }
    return j;
}

/* Each element of a JSON array of strings, through add(); a non-string
 * element is refused by index. */
static int each_string(struct job *j, const char *field, const char *v, size_t n,
                       int (*add)(struct job *, const char *, int, struct llmsb_err *),
                       struct llmsb_err *err)
{
    cJSON *a = json_of(field, v, n, 1, err), *it;
    int i = 0, rc = 0;

    if (!a)
        return err->code;
    cJSON_ArrayForEach(it, a) {
        rc = cJSON_IsString(it) ? add(j, it->valuestring, i, err)
                                : llmsb_err_set(err, LLMSB_ERR_INVALID,
                                                "%s: element %d is not a string", field, i);
        if (rc)
            break;
        i++;
    }
    cJSON_Delete(a);
    return rc;
}

static int add_arg(struct job *j, const char *s, int i, struct llmsb_err *err)
{
    (void)i;
    if (strlist_add(&j->args, &j->nargs, s, strlen(s)) != 0)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "args: more than %d arguments",
                             PROTO_MAX_ARGS);
    return 0;
}

static int f_args(struct job *j, const struct config *cfg, const char *v, size_t n,
                  struct llmsb_err *err)
{
    (void)cfg;
    return each_string(j, "args", v, n, add_arg, err);
}

static int f_env(struct job *j, const struct config *cfg, const char *v, size_t n,
                 struct llmsb_err *err)
{
    cJSON *o = json_of("env", v, n, 0, err), *it;
    int rc = 0;
    (void)cfg;
    if (!o)
        return err->code;
    cJSON_ArrayForEach(it, o) {
        struct buf kv;
        if (!cJSON_IsString(it)) {
            rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "env: value of \"%.40s\" is not a string",
                               it->string);
            break;
        }
        if (!*it->string || strchr(it->string, '=')) {
            rc = shown_err(err, "env", it->string, strlen(it->string),
                           "is not a variable name (letters, digits, _; no '=')");
            break;
        }
        buf_init(&kv, JOB_MAX_FIELD);
        buf_printf(&kv, "%s=%s", it->string, it->valuestring);
        rc = job_add_env(j, kv.data ? kv.data : "", err);
        buf_release(&kv);
        if (rc)
            break;
    }
    cJSON_Delete(o);
    return rc;
}

static int f_files(struct job *j, const struct config *cfg, const char *v, size_t n,
                   struct llmsb_err *err)
{
    cJSON *o = json_of("files", v, n, 0, err), *it;
    int rc = 0;
    (void)cfg;
    if (!o)
        return err->code;
    cJSON_ArrayForEach(it, o) {
        const cJSON *b64 = cJSON_GetObjectItemCaseSensitive(it, "base64");
        if (cJSON_IsString(it)) {
            rc = job_add_file(j, it->string, it->valuestring, strlen(it->valuestring), err);
        } else if (cJSON_IsObject(it) && cJSON_IsString(b64)) {
            size_t dl;
            char *d = base64_decode(b64->valuestring, strlen(b64->valuestring), &dl);
            if (!d)
                rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "files: \"%.60s\": base64 is not valid",
                                   it->string);
            else
                rc = job_add_file(j, it->string, d, dl, err);
            free(d);
        } else {
            rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                               "files: \"%.60s\" must be text or "
                               "{\"base64\": \"...\"}",
                               it->string);
        }
        if (rc)
            break;
    }
    cJSON_Delete(o);
    return rc;
}

static int f_limit(struct job *j, const struct config *cfg, const char *field, const char *v,
                   size_t n, struct llmsb_err *err)
{
    char text[64];
    if (n >= sizeof(text) || memchr(v, '\0', n))
        return shown_err(err, field, v, n, "is not a number");
    memcpy(text, v, n);
    text[n] = '\0';
    return job_set_limit(j, cfg, field, text, err);
}

#define LIMIT_FN(name)                                                                    \
    static int f_##name(struct job *j, const struct config *cfg, const char *v, size_t n, \
                        struct llmsb_err *err)                                            \
    {                                                                                     \
        return f_limit(j, cfg, #name, v, n, err);                                         \
    }
LIMIT_FN(timeout)
LIMIT_FN(compile_timeout)
LIMIT_FN(memory)
LIMIT_FN(cpus)
LIMIT_FN(pids)
LIMIT_FN(output)

/* A job's booleans are JSON's: true or false, nothing else. */
static int text_bool(const char *field, const char *v, size_t n, int *out, struct llmsb_err *err)
{
    if (n == 4 && memcmp(v, "true", 4) == 0)
        *out = 1;
    else if (n == 5 && memcmp(v, "false", 5) == 0)
        *out = 0;
    else
        return shown_err(err, field, v, n, "must be true or false");
    return 0;
}

static int text_int(const char *field, const char *v, size_t n, long long min, long long max,
                    long long *out, struct llmsb_err *err)
{
    char t[32];
    if (n >= sizeof(t) || (memcpy(t, v, n), t[n] = '\0', parse_ll(t, min, max, out) != 0)) {
        char why[96];
        snprintf(why, sizeof(why), "must be an integer between %lld and %lld", min, max);
        return shown_err(err, field, v, n, why);
    }
    return 0;
}

static int f_network(struct job *j, const struct config *cfg, const char *v, size_t n,
                     struct llmsb_err *err)
{
    int b = 0;
    if (text_bool("network", v, n, &b, err))
        return err->code;
    if (b && !cfg->allow_network)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "network: true is not allowed by this "
                             "worker's config (jobs.allow_network)");
    j->network = b;
    return 0;
}

static int f_plots(struct job *j, const struct config *cfg, const char *v, size_t n,
                   struct llmsb_err *err)
{
    int b = 0;
    (void)cfg;
    if (text_bool("plots", v, n, &b, err))
        return err->code;
    j->plots = b;
    return 0;
}

static int f_live(struct job *j, const struct config *cfg, const char *v, size_t n,
                  struct llmsb_err *err)
{
    (void)cfg;
    return text_bool("live", v, n, &j->live, err) ? err->code : 0;
}

static int f_fresh_interpreter(struct job *j, const struct config *cfg, const char *v, size_t n,
                               struct llmsb_err *err)
{
    (void)cfg;
    return text_bool("fresh_interpreter", v, n, &j->fresh_interpreter, err) ? err->code : 0;
}

/* Library names: the security check sees them (a restricted module is
 * "blocked"), then the language's installer gets each as one argument.  A
 * name starts with a letter, digit or '@' (npm scopes), so none can pass
 * for an installer's option. */
static int add_library(struct job *j, const char *s, int i, struct llmsb_err *err)
{
    if (!language_library_name_ok(s))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "libraries: element %d (\"%.60s\") is not a "
                             "package name (a letter, digit or @, then "
                             "letters, digits, -_.:/@=<>~+[],!*^|; at most 200)",
                             i, s);
    if ((int64_t)j->nlibraries >= j->libraries_max ||
        strlist_add(&j->libraries, &j->nlibraries, s, strlen(s)) != 0)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "libraries: more than %lld names "
                             "(libraries.max)",
                             (long long)j->libraries_max);
    return 0;
}

int job_check_libraries(const struct job *j, struct llmsb_err *err)
{
    if (job_check_env(j, err) != 0)
        return err->code;
    for (size_t i = 0; j->lang && i < j->nlibraries; i++)
        if (!language_library_ok(j->lang, j->libraries[i])) {
            char why[200];
            snprintf(why, sizeof(why),
                     "is not a %s package name from its registry (no paths, "
                     "URLs, file: or git specs)",
                     j->lang->install_what ? j->lang->install_what : j->lang->name);
            return shown_err(err, "libraries", j->libraries[i], strlen(j->libraries[i]), why);
        }
    return 0;
}

int job_add_library(struct job *j, const char *name, struct llmsb_err *err)
{
    return add_library(j, name, (int)j->nlibraries, err);
}

static int f_libraries(struct job *j, const struct config *cfg, const char *v, size_t n,
                       struct llmsb_err *err)
{
    (void)cfg;
    return each_string(j, "libraries", v, n, add_library, err);
}

/* compile_flags / link_flags: strings here; whether the language takes
 * them, and these, once the whole job is read (check_flags). */
static int add_flag(struct job *j, const char *s, int link, struct llmsb_err *err)
{
    const char *field = link ? "link_flags" : "compile_flags";
    char ***v = link ? &j->flags.link : &j->flags.compile;
    size_t *n = link ? &j->flags.nlink : &j->flags.ncompile;
    size_t len = strlen(s);

    if (*n >= LANG_MAX_FLAGS)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: more than %d flags", field,
                             LANG_MAX_FLAGS);
    if (len == 0 || len > LANG_MAX_FLAG_LEN || s[0] != '-')
        return shown_err(err, field, s, len, "is not a flag (1-64 bytes starting with -)");
    if (strlist_add(v, n, s, len) != 0)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: out of memory", field);
    return 0;
}

static int add_compile_flag(struct job *j, const char *s, int i, struct llmsb_err *err)
{
    (void)i;
    return add_flag(j, s, 0, err);
}

static int add_link_flag(struct job *j, const char *s, int i, struct llmsb_err *err)
{
    (void)i;
    return add_flag(j, s, 1, err);
}

static int f_compile_flags(struct job *j, const struct config *cfg, const char *v, size_t n,
                           struct llmsb_err *err)
{
    (void)cfg;
    return each_string(j, "compile_flags", v, n, add_compile_flag, err);
}

static int f_link_flags(struct job *j, const struct config *cfg, const char *v, size_t n,
                        struct llmsb_err *err)
{
    (void)cfg;
    return each_string(j, "link_flags", v, n, add_link_flag, err);
}

static int check_flags(const struct job *j, struct llmsb_err *err)
{
    for (int link = 0; link < 2; link++) {
        const char *field = link ? "link_flags" : "compile_flags";
        char *const *v = link ? j->flags.link : j->flags.compile;
        size_t n = link ? j->flags.nlink : j->flags.ncompile;
        const char *why = NULL;
        char text[200];

        if (n && (!j->lang || !j->lang->flag_ok))
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s: %s jobs take no compiler flags (only cpp does)", field,
                                 j->lang ? j->lang->name : "session");
        for (size_t i = 0; i < n; i++)
            if (!j->lang->flag_ok(v[i], link, &why)) {
                snprintf(text, sizeof(text), "is not allowed (%s)", why);
                return shown_err(err, field, v[i], strlen(v[i]), text);
            }
    }
    return 0;
}

static int add_glob(struct job *j, const char *s, int i, struct llmsb_err *err)
{
    (void)i;
    return job_add_artifact_glob(j, s, err);
}

static int f_artifacts(struct job *j, const struct config *cfg, const char *v, size_t n,
                       struct llmsb_err *err)
{
    (void)cfg;
    return each_string(j, "artifacts", v, n, add_glob, err);
}

int job_set_policy(struct job *j, const struct config *cfg, const char *v, size_t n,
                   struct llmsb_err *err)
{
    char name[40];
    if (n == 0)
        return 0;
    if (n >= sizeof(name) || memchr(v, '\0', n))
        return shown_err(err, "policy", v, n, "is not a policy name");
    memcpy(name, v, n);
    name[n] = '\0';
    if (!sec_preset_exists(name) && !config_policy(cfg, name)) {
        char why[200];
        snprintf(why, sizeof(why), "is not a preset (%s) or a policy of this worker's config",
                 sec_preset_names());
        return shown_err(err, "policy", v, n, why);
    }
    free(j->policy);
    return (j->policy = strdup(name)) ? 0 : LLMSB_ERR_NOMEM;
}

static int f_security(struct job *j, const struct config *cfg, const char *v, size_t n,
                      struct llmsb_err *err)
{
    cJSON *p = cJSON_ParseWithLength(v, n);
    (void)cfg;
    if (n == 0 || (n == 2 && memcmp(v, "{}", 2) == 0)) {
        cJSON_Delete(p);
        return 0;
    }
    if (!cJSON_IsObject(p)) {
        cJSON_Delete(p);
        return shown_err(err, "security", v, n, "is not a JSON policy object");
    }
    cJSON_Delete(p);
    free(j->security);
    return (j->security = xstrndup(v, n)) ? 0 : LLMSB_ERR_NOMEM;
}

static int f_expect_stdout(struct job *j, const struct config *cfg, const char *v, size_t n,
                           struct llmsb_err *err)
{
    (void)cfg;
    if (n > JOB_MAX_STDIN)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "expect_stdout: over %zu bytes",
                             JOB_MAX_STDIN);
    free(j->expect_stdout);
    return (j->expect_stdout = xstrndup(v, n)) ? 0 : LLMSB_ERR_NOMEM;
}

static int f_expect_exit(struct job *j, const struct config *cfg, const char *v, size_t n,
                         struct llmsb_err *err)
{
    long long x;
    (void)cfg;
    if (text_int("expect_exit", v, n, 0, 255, &x, err))
        return err->code;
    j->has_expect_exit = 1;
    j->expect_exit = x;
    return 0;
}

/* One path component of an image name: [a-z0-9]+ joined by single
 * separators (".", "_", "__", "-"...). */
static int image_part_ok(const char *p, size_t n)
{
    if (n == 0 || !isalnum((unsigned char)p[0]) || !isalnum((unsigned char)p[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (isdigit(c) || (c >= 'a' && c <= 'z'))
            continue;
        if (c != '.' && c != '_' && c != '-')
            return 0;
        if (c == '.' && p[i + 1] == '.') /* no "..": not a path to walk */
            return 0;
    }
    return 1;
}

/* A Docker-style reference: [registry[:port]/]path[/path...][:tag], no
 * digest; parts as image_part_ok, the tag [A-Za-z0-9_.-]{1,128}. */
static int image_ref_ok(const char *v, size_t n)
{
    const char *end = v + n, *colon = NULL, *slash = memchr(v, '/', n);
    const char *p = v;

    /* a first part with '.' or ':' (a host, maybe a port) may hold them */
    if (slash && (memchr(v, '.', (size_t)(slash - v)) || memchr(v, ':', (size_t)(slash - v))))
        p = slash + 1;
    for (const char *q = end; q > p; q--)
        if (q[-1] == ':') {
            colon = q - 1;
            break;
        }
    if (colon) {
        size_t tl = (size_t)(end - colon - 1);
        if (tl == 0 || tl > 128 || colon[1] == '.' || colon[1] == '-')
            return 0;
        for (const char *t = colon + 1; t < end; t++)
            if (!isalnum((unsigned char)*t) && *t != '_' && *t != '.' && *t != '-')
                return 0;
        end = colon;
    }
    while (p < end) {
        const char *s = memchr(p, '/', (size_t)(end - p));
        size_t len = s ? (size_t)(s - p) : (size_t)(end - p);
        if (!image_part_ok(p, len))
            return 0;
        p += len + (s ? 1 : 0);
        if (s && p == end)
            return 0; /* trailing slash */
    }
    return 1;
}

/* The name Docker and Podman store for v: without a docker.io host (any
 * of its spellings) or localhost/ (Podman's names for local builds), then
 * without library/ (Docker Hub's official images), so the checks below
 * see one spelling of each name.  Sets *n. */
static const char *image_canonical(const char *v, size_t *n)
{
    static const char *const hosts[] = {"docker.io/", "index.docker.io/", "registry-1.docker.io/",
                                        "localhost/"};
    static const char library[] = "library/";

    for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
        size_t hl = strlen(hosts[i]);
        if (*n > hl && memcmp(v, hosts[i], hl) == 0) {
            v += hl, *n -= hl;
            break;
        }
    }
    if (*n > sizeof(library) - 1 && memcmp(v, library, sizeof(library) - 1) == 0)
        v += sizeof(library) - 1, *n -= sizeof(library) - 1;
    return v;
}

/* Whether canonical v names an image by its ID (sha256:..., or a bare
 * hex string the engines take as an ID prefix), reaching any image. */
static int image_is_id(const char *v, size_t n)
{
    size_t i = 0;
    if (n >= 6 && memcmp(v, "sha256", 6) == 0 && (n == 6 || v[6] == ':' || v[6] == '/'))
        return 1;
    while (i < n && (isdigit((unsigned char)v[i]) || (v[i] >= 'a' && v[i] <= 'f')))
        i++;
    return i == n;
}

/* A custom image (images build --dockerfile) is named by the tags its
 * checks made, :latest or :<12 hex digits>, never another tag of its repo.
 * v passed image_ref_ok and is canonical (image_canonical). */
static int custom_tag_ok(const char *v, size_t n)
{
    static const char repo[] = "llmsb/custom/", unchecked[] = "llmsb-unchecked/";
    const char *colon, *tag;
    size_t tl;

    /* the name of one still being checked, whatever jobs.image_prefix says */
    if (n >= sizeof(unchecked) - 1 && memcmp(v, unchecked, sizeof(unchecked) - 1) == 0)
        return 0;
    if (n < sizeof(repo) - 1 || memcmp(v, repo, sizeof(repo) - 1) != 0)
        return 1;
    if (!(colon = memchr(v + sizeof(repo) - 1, ':', n - (sizeof(repo) - 1))))
        return 1; /* :latest */
    tag = colon + 1;
    tl = (size_t)(v + n - tag);
    if (tl == 6 && memcmp(tag, "latest", 6) == 0)
        return 1;
    if (tl != 12)
        return 0;
    for (size_t i = 0; i < tl; i++)
        if (!isdigit((unsigned char)tag[i]) && (tag[i] < 'a' || tag[i] > 'f'))
            return 0;
    return 1;
}

int job_set_image(struct job *j, const struct config *cfg, const char *v, size_t n,
                  struct llmsb_err *err)
{
    size_t pl = strlen(cfg->image_prefix);
    if (n == 0 || n > 255 || memchr(v, '\0', n))
        return shown_err(err, "image", v, n, "is not an image name");
    if (n < pl || memcmp(v, cfg->image_prefix, pl) != 0) {
        char why[128];
        snprintf(why, sizeof(why),
                 "is not allowed: images must start with \"%s\" "
                 "(jobs.image_prefix)",
                 cfg->image_prefix);
        return shown_err(err, "image", v, n, why);
    }
    if (!image_ref_ok(v, n))
        return shown_err(err, "image", v, n,
                         "is not an image reference ([host[:port]/]name[:tag]; name parts of "
                         "a-z, 0-9 and single . _ - between them)");
    size_t cn = n;
    const char *c = image_canonical(v, &cn);
    if (image_is_id(c, cn))
        return shown_err(err, "image", v, n,
                         "is an image ID, not a name: an ID reaches any image, one still being "
                         "checked among them; name the image (NAME[:tag])");
    if (!custom_tag_ok(c, cn))
        return shown_err(err, "image", v, n,
                         "is not a checked custom image: name llmsb/custom/NAME, :latest or its "
                         "12-hex-digit hash tag (images build --dockerfile tags nothing else)");
    free(j->image);
    return (j->image = xstrndup(v, n)) ? 0 : LLMSB_ERR_NOMEM;
}

static int f_result_ttl(struct job *j, const struct config *cfg, const char *v, size_t n,
                        struct llmsb_err *err)
{
    long long x;
    (void)cfg;
    if (text_int("result_ttl", v, n, 1, 2592000, &x, err))
        return err->code;
    j->result_ttl_s = x;
    return 0;
}

static int f_max_attempts(struct job *j, const struct config *cfg, const char *v, size_t n,
                          struct llmsb_err *err)
{
    long long x;
    (void)cfg;
    if (text_int("max_attempts", v, n, 1, 20, &x, err))
        return err->code;
    j->max_attempts = (int)x;
    return 0;
}

static int f_meta(struct job *j, const struct config *cfg, const char *v, size_t n,
                  struct llmsb_err *err)
{
    cJSON *m = cJSON_ParseWithLength(v, n);
    (void)cfg;
    if (!m)
        return shown_err(err, "meta", v, n, "is not JSON");
    cJSON_Delete(m);
    free(j->meta);
    return (j->meta = xstrndup(v, n)) ? 0 : LLMSB_ERR_NOMEM;
}

/* A field that is a JSON array of 1 to max objects, each read by one()
 * into its item of a new array of size-byte items; drop() frees such an
 * array (the old one first, the new one on failure). */
struct object_list {
    const char *field, *shape; /* the field, and its objects as errors show them */
    int max;
    size_t size;
    int (*one)(const cJSON *o, size_t i, void *item, struct llmsb_err *err);
    void (*drop)(void *items, size_t n);
};

static int object_list(const struct object_list *l, const char *v, size_t n, void **items,
                       size_t *count, struct llmsb_err *err)
{
    cJSON *a = json_of(l->field, v, n, 1, err), *o;
    size_t i = 0;
    int rc = 0;

    if (!a)
        return err->code;
    if (cJSON_GetArraySize(a) < 1 || cJSON_GetArraySize(a) > l->max) {
        cJSON_Delete(a);
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: must be a list of 1 to %d objects %s",
                             l->field, l->max, l->shape);
    }
    l->drop(*items, *count);
    *count = (size_t)cJSON_GetArraySize(a);
    if (!(*items = calloc(*count, l->size)))
        rc = LLMSB_ERR_NOMEM;
    cJSON_ArrayForEach(o, a) {
        if (rc == 0)
            rc = l->one(o, i, (char *)*items + i * l->size, err);
        i++;
    }
    cJSON_Delete(a);
    if (rc != 0) {
        l->drop(*items, *count);
        *items = NULL;
        *count = 0;
    }
    return rc;
}

#define COPY_SHAPE "{\"id\": ID, \"meta\": JSON} (meta optional)"

/* One element of copies: {"id": ID, "meta": JSON}, meta optional. */
static int one_copy(const cJSON *o, size_t i, void *item, struct llmsb_err *err)
{
    struct job_copy *c = item;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "meta");
    char field[32];

    snprintf(field, sizeof(field), "copies[%zu].id", i);
    if (!cJSON_IsObject(o) || !cJSON_IsString(id) || cJSON_GetArraySize(o) != 1 + (meta != NULL))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "copies[%zu]: must be an object %s", i,
                             COPY_SHAPE);
    if (id_check(field, id->valuestring, strlen(id->valuestring), err) != 0)
        return err->code;
    if (!(c->id = strdup(id->valuestring)) || (meta && !(c->meta = cJSON_PrintUnformatted(meta))))
        return LLMSB_ERR_NOMEM;
    return 0;
}

static void drop_copies(void *items, size_t n)
{
    job_copies_free(items, n);
}

/* copies: the ids (and metas) submit's dedup gives this job's result to. */
static int f_copies(struct job *j, const struct config *cfg, const char *v, size_t n,
                    struct llmsb_err *err)
{
    static const struct object_list l = {
        "copies", COPY_SHAPE, JOB_MAX_COPIES, sizeof(struct job_copy), one_copy, drop_copies};
    void *items = j->copies;
    int rc;

    (void)cfg;
    rc = object_list(&l, v, n, &items, &j->ncopies, err);
    j->copies = items;
    return rc;
}

/* When a job is invalid before its copies were read (or for them): the
 * copies whose id can be read from the field as sent (any size; an element
 * that is no object with a valid id is left out: no result can be filed
 * for it), so that each still gets the invalid result. */
static void salvage_copies(struct job *j, const struct fields *f)
{
    const struct field *c = NULL;
    cJSON *a, *o;
    size_t n = 0;

    for (size_t i = 0; i < f->n && !c; i++)
        c = strcmp(f->v[i].name, "copies") == 0 ? &f->v[i] : NULL;
    if (j->ncopies || !c || !(a = cJSON_ParseWithLength(c->value, c->len)))
        return;
    if (cJSON_IsArray(a) &&
        (j->copies = calloc((size_t)cJSON_GetArraySize(a) + 1, sizeof(*j->copies)))) {
        cJSON_ArrayForEach(o, a) {
            const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
            const cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "meta");
            struct llmsb_err e = {0};
            struct job_copy *cp = &j->copies[n];
            if (n == JOB_MAX_COPIES || !cJSON_IsString(id) ||
                id_check("copies", id->valuestring, strlen(id->valuestring), &e) != 0 ||
                !(cp->id = strdup(id->valuestring)))
                continue;
            if (meta && !(cp->meta = cJSON_PrintUnformatted(meta))) {
                free(cp->id);
                cp->id = NULL;
                continue;
            }
            n++;
        }
        j->ncopies = n;
    }
    cJSON_Delete(a);
}

/* recheck: the final status of the run this one checks again
 * (--recheck-timeouts); its result replaces that one. */
static int f_recheck(struct job *j, const struct config *cfg, const char *v, size_t n,
                     struct llmsb_err *err)
{
    enum job_status st;
    (void)cfg;
    if (status_parse(v, n, &st) != 0 || !status_final(st))
        return shown_err(err, "recheck", v, n, "is not a final status (docs/statuses.md)");
    j->recheck = st;
    return 0;
}

/* needs: the features (common/features.h) the job cannot do without.  A
 * worker that lacks one hands the job on before it gets here (never
 * invalid); here, a name this build does not know cannot run here. */
static int f_needs(struct job *j, const struct config *cfg, const char *v, size_t n,
                   struct llmsb_err *err)
{
    char unknown[FEATURE_NAME_MAX + 1];
    int rc = features_check("needs", v, n, unknown, sizeof(unknown), err);

    (void)j, (void)cfg;
    if (rc == 1)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "needs: the feature \"%s\" is not one this build knows (%s); a "
                             "newer llm-sandbox runs it",
                             unknown, features_all());
    return rc;
}

/* not_before and delay_ms (job/due.c): checked here, acted on by the
 * worker that reads the entry (it defers one not yet due). */
static int f_not_before(struct job *j, const struct config *cfg, const char *v, size_t n,
                        struct llmsb_err *err)
{
    int64_t ms;
    (void)j, (void)cfg;
    return job_not_before_parse(v, n, &ms, err);
}

static int f_delay_ms(struct job *j, const struct config *cfg, const char *v, size_t n,
                      struct llmsb_err *err)
{
    int64_t ms;
    (void)j, (void)cfg;
    return job_delay_parse(v, n, &ms, err);
}

/* history: what `dead requeue` kept of the job's earlier dead letters, a
 * JSON array of objects; carried into its result. */
static int f_history(struct job *j, const struct config *cfg, const char *v, size_t n,
                     struct llmsb_err *err)
{
    cJSON *a = json_of("history", v, n, 1, err), *it;
    int i = 0;

    (void)cfg;
    if (!a)
        return err->code;
    cJSON_ArrayForEach(it, a) {
        if (!cJSON_IsObject(it)) {
            cJSON_Delete(a);
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "history: element %d is not an object (dead requeue writes "
                                 "{attempts, reason, last_worker, dead_at_ms})",
                                 i);
        }
        i++;
    }
    cJSON_Delete(a);
    free(j->history);
    return (j->history = xstrndup(v, n)) ? 0 : LLMSB_ERR_NOMEM;
}

/* ---- test cases ---------------------------------------------------------------- */

static int case_err(struct llmsb_err *err, size_t i, const char *key, const char *why)
{
    return llmsb_err_set(err, LLMSB_ERR_INVALID, "cases[%zu]%s%s: %s", i, key ? "." : "",
                         key ? key : "", why);
}

static int case_text(const cJSON *v, size_t i, const char *key, char **dst, size_t *len,
                     struct llmsb_err *err)
{
    if (!cJSON_IsString(v))
        return case_err(err, i, key, "must be a string");
    if (*dst) /* cJSON keeps a key given twice; the second is not a leak */
        return case_err(err, i, key, "given twice");
    *len = strlen(v->valuestring);
    return (*dst = xstrndup(v->valuestring, *len)) ? 0 : LLMSB_ERR_NOMEM;
}

/* One {stdin, args, expect_stdout, expect_exit} object into c. */
static int one_case(const cJSON *o, size_t i, void *item, struct llmsb_err *err)
{
    struct proto_case *c = item;
    const cJSON *v;
    int rc = 0;

    if (!cJSON_IsObject(o))
        return case_err(err, i, NULL,
                        "must be an object {stdin, args, expect_stdout, expect_exit}");
    cJSON_ArrayForEach(v, o) {
        const char *k = v->string;
        if (strcmp(k, "stdin") == 0) {
            rc = case_text(v, i, k, &c->stdin_data, &c->stdin_len, err);
        } else if (strcmp(k, "expect_stdout") == 0) {
            rc = case_text(v, i, k, &c->expect_stdout, &c->expect_len, err);
        } else if (strcmp(k, "expect_exit") == 0) {
            if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 255) ||
                v->valuedouble != (double)(int)v->valuedouble)
                return case_err(err, i, k, "must be an integer from 0 to 255");
            c->expect_exit = (uint64_t)v->valuedouble;
        } else if (strcmp(k, "args") == 0) {
            const cJSON *a;
            if (!cJSON_IsArray(v))
                return case_err(err, i, k, "must be a list of strings");
            cJSON_ArrayForEach(a, v) {
                if (!cJSON_IsString(a))
                    return case_err(err, i, k, "must be a list of strings");
                if (strlist_add(&c->args, &c->nargs, a->valuestring, strlen(a->valuestring)))
                    return case_err(err, i, k, "has too many arguments");
            }
        } else {
            char shown[64];
            llmsb_escape(shown, sizeof(shown), k, strlen(k));
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "cases[%zu].%s: unknown (a case has stdin, args, "
                                 "expect_stdout, expect_exit)",
                                 i, shown);
        }
        if (rc)
            return rc;
    }
    return 0;
}

static void drop_cases(void *items, size_t n)
{
    proto_cases_free(items, n);
}

static int f_cases(struct job *j, const struct config *cfg, const char *v, size_t n,
                   struct llmsb_err *err)
{
    static const struct object_list l = {
        "cases",         "{stdin, args, expect_stdout, expect_exit}",
        PROTO_MAX_CASES, sizeof(struct proto_case),
        one_case,        drop_cases};
    void *items = j->cases;
    int rc;

    (void)cfg;
    rc = object_list(&l, v, n, &items, &j->ncases, err);
    j->cases = items;
    return rc;
}

static int f_compare(struct job *j, const struct config *cfg, const char *v, size_t n,
                     struct llmsb_err *err)
{
    const char *why = NULL;
    (void)cfg;
    return compare_parse(v, n, &j->compare, &why) ? shown_err(err, "compare", v, n, why) : 0;
}

static int f_stop_on_failure(struct job *j, const struct config *cfg, const char *v, size_t n,
                             struct llmsb_err *err)
{
    (void)cfg;
    return text_bool("stop_on_failure", v, n, &j->stop_on_failure, err) ? err->code : 0;
}

static int f_session(struct job *j, const struct config *cfg, const char *v, size_t n,
                     struct llmsb_err *err)
{
    (void)cfg;
    if (n == 0 || n > JOB_SESSION_MAX)
        return shown_err(err, "session", v, n, "must be 1 to 128 bytes");
    for (size_t i = 0; i < n; i++)
        if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') ||
              (v[i] >= '0' && v[i] <= '9') || strchr("-_.:@", v[i])) ||
            v[i] == '\0')
            return shown_err(err, "session", v, n, "may hold only letters, digits and - _ . : @");
    free(j->session);
    return (j->session = xstrndup(v, n)) ? 0 : LLMSB_ERR_NOMEM;
}

static int f_session_close(struct job *j, const struct config *cfg, const char *v, size_t n,
                           struct llmsb_err *err)
{
    (void)cfg;
    return text_bool("session_close", v, n, &j->session_close, err) ? err->code : 0;
}

/* A session's call runs in the session's own interpreter (the image's
 * zygote); what it cannot take is refused here, by name.  Its language may
 * be left out: the session's (what the session fixed is checked where it
 * runs, exec/session.c). */
static int check_session(struct job *j, const struct config *cfg, struct llmsb_err *err)
{
    const char *clash = j->nlibraries ? "libraries"
                        : j->ncases   ? "cases"
                        : j->image    ? "image"
                        : j->network  ? "network"
                        : j->ncopies  ? "copies"
                        : j->recheck  ? "recheck"
                                      : NULL;
    if (j->session_close && !j->session)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "session_close: needs session (the id of the session to end)");
    if (!j->session)
        return 0;
    if (cfg->sessions_max == 0)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "session: sessions are off on this worker (sessions.max: 0)");
    if (j->lang && !j->lang->zygote)
        return llmsb_err_set(
            err, LLMSB_ERR_INVALID,
            "session: \"%s\" has no sessions (Python, Ruby and R have; see docs/jobs.md)",
            j->lang->name);
    if (j->fresh_interpreter && job_given(j, "fresh_interpreter"))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "fresh_interpreter: not with session (a session's calls all run in "
                             "its one interpreter; see docs/jobs.md)");
    if (clash)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s: not with session (a session's sandbox is the same for all its "
                             "calls; see docs/jobs.md)",
                             clash);
    return 0;
}

/* With cases, the job-level stdin and expectations would be ambiguous. */
static int check_cases(const struct job *j, struct llmsb_err *err)
{
    const char *clash = j->stdin_len         ? "stdin"
                        : j->expect_stdout   ? "expect_stdout"
                        : j->has_expect_exit ? "expect_exit"
                                             : NULL;
    if (j->ncases && clash)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s: not with cases (give each case its own %s)", clash, clash);
    if (!j->ncases && j->stop_on_failure)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "stop_on_failure: only with cases");
    return 0;
}

static int f_priority(struct job *j, const struct config *cfg, const char *v, size_t n,
                      struct llmsb_err *err)
{
    (void)cfg;
    return lane_class_parse(v, n, &j->lane.cls, err);
}

static int f_tenant(struct job *j, const struct config *cfg, const char *v, size_t n,
                    struct llmsb_err *err)
{
    (void)cfg;
    if (lane_tenant_check(v, n, err) != 0)
        return err->code;
    memcpy(j->lane.tenant, v, n);
    j->lane.tenant[n] = '\0';
    return 0;
}

static const struct {
    const char *name;
    field_fn fn;
    size_t cap;
} fields[] = {
    /* clang-format off */
    {"id", f_id, JOB_ID_MAX}, {"lang", f_lang, 64}, {"code", f_code, JOB_MAX_CODE},
    {"stdin", f_stdin, JOB_MAX_STDIN}, {"args", f_args, JOB_MAX_FIELD}, {"env", f_env, JOB_MAX_FIELD},
    {"files", f_files, JOB_MAX_FILES_BYTES * 2}, {"libraries", f_libraries, JOB_MAX_FIELD},
    {"timeout", f_timeout, 64}, {"compile_timeout", f_compile_timeout, 64},
    {"memory", f_memory, 64}, {"cpus", f_cpus, 64},
    {"pids", f_pids, 64}, {"output", f_output, 64}, {"network", f_network, 16},
    {"policy", job_set_policy, 256}, {"security", f_security, JOB_MAX_FIELD}, {"plots", f_plots, 16},
    {"fresh_interpreter", f_fresh_interpreter, 16}, {"live", f_live, 16},
    {"artifacts", f_artifacts, JOB_MAX_FIELD}, {"expect_stdout", f_expect_stdout, JOB_MAX_STDIN},
    {"expect_exit", f_expect_exit, 16}, {"image", job_set_image, 256}, {"result_ttl", f_result_ttl, 16},
    {"max_attempts", f_max_attempts, 16}, {"meta", f_meta, JOB_MAX_FIELD},
    {"cases", f_cases, JOB_MAX_STDIN}, {"compare", f_compare, 64},
    {"stop_on_failure", f_stop_on_failure, 16}, {"compile_flags", f_compile_flags, JOB_MAX_FIELD},
    {"link_flags", f_link_flags, JOB_MAX_FIELD}, {"session", f_session, JOB_SESSION_MAX},
    {"session_close", f_session_close, 16}, {"copies", f_copies, JOB_MAX_STDIN},
    {"recheck", f_recheck, 32}, {"needs", f_needs, 1024},
    {"not_before", f_not_before, 64}, {"delay_ms", f_delay_ms, 64}, {"history", f_history, JOB_MAX_FIELD},
    {"priority", f_priority, 16}, {"tenant", f_tenant, LANE_TENANT_MAX},
    /* clang-format on */
};
_Static_assert(sizeof(fields) / sizeof(fields[0]) <= sizeof(unsigned long) * 8,
               "one_field's seen mask holds a bit per field");

/* One field through its parser; the error names it. */
static int one_field(struct job *j, const struct config *cfg, const struct field *f, int *have_code,
                     unsigned long *seen, struct llmsb_err *err)
{
    char shown[64];
    size_t k;

    llmsb_escape(shown, sizeof(shown), f->name, f->name_len);
    for (k = 0; k < sizeof(fields) / sizeof(fields[0]); k++)
        if (strlen(fields[k].name) == f->name_len && strcmp(fields[k].name, f->name) == 0)
            break;
    if (k == sizeof(fields) / sizeof(fields[0]))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: unknown job field (see docs/jobs.md)",
                             shown);
    if (*seen & (1UL << k))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s: given twice (a job names each field once)", shown);
    *seen |= 1UL << k;
    if (f->len > fields[k].cap)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: %zu bytes is over the %zu byte cap",
                             shown, f->len, fields[k].cap);
    *have_code |= strcmp(f->name, "code") == 0;
    return fields[k].fn(j, cfg, f->value, f->len, err);
}

const char *job_field_name(size_t k)
{
    return k < sizeof(fields) / sizeof(fields[0]) ? fields[k].name : NULL;
}

int job_given(const struct job *j, const char *field)
{
    for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++)
        if (strcmp(fields[k].name, field) == 0)
            return (j->given >> k) & 1;
    return 0;
}

/* Which pass a field is read in: the id before anything (the result is
 * filed under it whatever else is wrong), then meta and copies (an invalid
 * job's result still carries its meta, and is copied to its copies), then
 * the rest. */
static int pass_of(const struct field *f)
{
    if (strcmp(f->name, "id") == 0)
        return 0;
    return strcmp(f->name, "meta") == 0 || strcmp(f->name, "copies") == 0 ? 1 : 2;
}

int job_from_fields(struct job *j, const struct config *cfg, const struct fields *f,
                    const char *default_id, struct llmsb_err *err)
{
    int have_code = 0, rc = 0;
    unsigned long seen = 0;

    for (int pass = 0; pass < 3; pass++) {
        for (size_t i = 0; i < f->n; i++) {
            if (pass_of(&f->v[i]) != pass)
                continue;
            if ((rc = one_field(j, cfg, &f->v[i], &have_code, &seen, err)) == 0)
                continue;
            if (!j->id && default_id)
                j->id = strdup(default_id);
            salvage_copies(j, f);
            if (rc == LLMSB_ERR_NOMEM && !err->msg[0])
                llmsb_err_set(err, rc, "%s: out of memory", f->v[i].name);
            return rc;
        }
        if (pass == 0 && !j->id && default_id && !(j->id = strdup(default_id)))
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "id: out of memory");
        if (pass == 0 && f->dropped)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "job: more than %zu fields (%zu more "
                                 "left out); see docs/jobs.md for the fields",
                                 f->n, f->dropped);
        if (pass == 0 && f->oversized)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "job: %zu field(s) over the size a "
                                 "field may have",
                                 f->oversized);
    }
    j->given = seen;
    if (job_given(j, "not_before") && job_given(j, "delay_ms"))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "delay_ms: not with not_before (a job gives one of them)");
    /* ending a session needs no program */
    if (!j->lang && j->session_close)
        j->lang = language_find("python");
    if (!have_code && j->session_close && (rc = job_set_code(j, "", 0, err)) != 0)
        return rc;
    if (!j->lang && !j->session) /* a session's call: the session's */
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "lang: is required");
    if (!have_code && !j->session_close)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "code: is required");
    if ((rc = check_cases(j, err)) != 0 || (rc = check_flags(j, err)) != 0 ||
        (rc = check_session(j, cfg, err)) != 0)
        return rc;
    return job_check_libraries(j, err);
}

int job_from_json(struct job *j, const struct config *cfg, const cJSON *o, const char *default_id,
                  struct llmsb_err *err)
{
    struct fields f;
    int rc;

    fields_init(&f, JOB_MAX_FIELDS);
    /* past JOB_MAX_FIELDS the fields are counted (dropped): job_from_fields says so */
    rc = jobfile_fields(o, &f) == LLMSB_ERR_NOMEM
             ? llmsb_err_set(err, LLMSB_ERR_NOMEM, "job: out of memory")
             : job_from_fields(j, cfg, &f, default_id, err);
    fields_release(&f);
    return rc;
}
