/* policy.c - policies, presets and the PCRE2 scanner (see security.h).
 * Every pattern is compiled once per policy and language, with a match
 * limit and a depth limit so hostile input cannot stall a worker. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "security.h"

#include <cjson/cJSON.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MATCH_LIMIT 200000
#define DEPTH_LIMIT 5000
#define MAX_TRIES_PER_RULE 4096

/* The danger categories: the first LANG_SCAN_COUNT come with a pattern per
 * language (the language rows' .scan); destructive commands are one
 * pattern for every language. */
enum cat {
    C_SHELL = LANG_SCAN_SHELL,
    C_EVAL = LANG_SCAN_EVAL,
    C_FS_DELETE = LANG_SCAN_FS_DELETE,
    C_NETWORK = LANG_SCAN_NETWORK,
    C_ENV = LANG_SCAN_ENV,
    C_NATIVE = LANG_SCAN_NATIVE,
    C_PROCESS = LANG_SCAN_PROCESS,
    C_DESTRUCTIVE = LANG_SCAN_COUNT,
    C_COUNT
};

static const struct {
    const char *desc;
    int anywhere; /* also inside string literals (commands in strings) */
} cats[C_COUNT] = {
    [C_SHELL] = {"runs a shell command or another program", 0},
    [C_EVAL] = {"runs code built at run time (eval, dynamic import, reflection)", 0},
    [C_FS_DELETE] = {"deletes files or directories", 0},
    [C_NETWORK] = {"opens network connections", 0},
    [C_ENV] = {"reads or changes environment variables", 0},
    [C_NATIVE] = {"uses native code or raw memory (FFI, asm, unsafe)", 0},
    [C_PROCESS] = {"forks, signals or ends processes", 0},
    [C_DESTRUCTIVE] = {"destructive system command (rm -rf /, mkfs, fork bomb, shutdown)", 1},
};

static const char destructive[] =
    "\\brm\\s+-[a-zA-Z]*[rRf][a-zA-Z]*\\s+(?:-[a-zA-Z-]+\\s+)*/(?:\\s|$|\\*|[\"'`)])|\\bmkfs(?:\\.\\w+)?\\b|"
    "\\bdd\\s+if=\\S+\\s+of=/dev/|:\\(\\)\\s*\\{\\s*:\\s*\\|\\s*:\\s*&\\s*\\}\\s*;\\s*:|"
    "\\b(?:shutdown|reboot|poweroff)\\s+(?:-[a-zA-Z]+\\s*)*(?:now|-h)\\b|\\bformat\\s+[A-Za-z]:[/\\\\]";

/* clang-format off */
static const struct {
    const char *name;
    int threshold;
    int sev[C_COUNT];        /* 0: category not used */
    int strict_modules;
} presets[] = {
    {"minimal", SEC_HIGH, {[C_DESTRUCTIVE] = SEC_HIGH}, 0},
    {"development", SEC_HIGH, {[C_DESTRUCTIVE] = SEC_HIGH, [C_SHELL] = SEC_HIGH, [C_NATIVE] = SEC_HIGH}, 0},
    {"educational", SEC_MEDIUM, {[C_DESTRUCTIVE] = SEC_HIGH, [C_SHELL] = SEC_HIGH, [C_FS_DELETE] = SEC_HIGH,
                                 [C_NATIVE] = SEC_MEDIUM, [C_NETWORK] = SEC_LOW, [C_EVAL] = SEC_LOW}, 0},
    {"data_science", SEC_MEDIUM, {[C_DESTRUCTIVE] = SEC_HIGH, [C_SHELL] = SEC_HIGH, [C_FS_DELETE] = SEC_HIGH,
                                  [C_NATIVE] = SEC_MEDIUM, [C_NETWORK] = SEC_LOW, [C_EVAL] = SEC_LOW,
                                  [C_PROCESS] = SEC_LOW}, 0},
    {"web_scraping", SEC_MEDIUM, {[C_DESTRUCTIVE] = SEC_HIGH, [C_SHELL] = SEC_HIGH, [C_FS_DELETE] = SEC_HIGH,
                                  [C_NATIVE] = SEC_HIGH, [C_EVAL] = SEC_LOW, [C_PROCESS] = SEC_LOW}, 0},
    {"production", SEC_LOW, {[C_DESTRUCTIVE] = SEC_HIGH, [C_SHELL] = SEC_HIGH, [C_FS_DELETE] = SEC_HIGH,
                             [C_NATIVE] = SEC_HIGH, [C_EVAL] = SEC_MEDIUM, [C_NETWORK] = SEC_MEDIUM,
                             [C_ENV] = SEC_LOW, [C_PROCESS] = SEC_MEDIUM}, 0},
    {"strict", SEC_LOW, {SEC_HIGH, SEC_HIGH, SEC_HIGH, SEC_HIGH, SEC_HIGH, SEC_HIGH, SEC_HIGH, SEC_HIGH}, 1},
};
/* clang-format on */

#define NPRESETS (sizeof(presets) / sizeof(presets[0]))

struct sec_rule {
    pcre2_code *re;
    int severity;
    int anywhere;
    char desc[160];
};

struct sec_module {
    char name[64];
    int severity;
};

struct sec_policy {
    char name[40];
    int threshold;
    struct sec_rule *rules;
    size_t nrules;
    struct sec_module *mods;
    size_t nmods;
};

const char *sec_severity_name(int s)
{
    static const char *names[] = {"safe", "low", "medium", "high"};
    return names[s < 0 ? 0 : s > 3 ? 3 : s];
}

int sec_severity_parse(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (strcasecmp(s, sec_severity_name(i)) == 0)
            return i;
    return -1;
}

int sec_preset_exists(const char *name)
{
    for (size_t i = 0; i < NPRESETS; i++)
        if (strcmp(presets[i].name, name) == 0)
            return 1;
    return 0;
}

const char *sec_preset_names(void)
{
    return "minimal, development, educational, data_science, web_scraping, production, strict";
}

void sec_policy_free(struct sec_policy *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nrules; i++)
        pcre2_code_free(p->rules[i].re);
    free(p->rules);
    free(p->mods);
    free(p);
}

static int add_rule(struct sec_policy *p, const char *pattern, int severity, int anywhere,
                    const char *desc, struct llmsb_err *err)
{
    struct sec_rule *nr;
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *re =
        pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                      PCRE2_MULTILINE | PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &ec, &eo, NULL);
    if (!re) {
        PCRE2_UCHAR msg[160];
        char shown[80];
        pcre2_get_error_message(ec, msg, sizeof(msg));
        llmsb_escape(shown, sizeof(shown), pattern, strlen(pattern));
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "security: pattern \"%s\" does not compile at offset %zu: %s", shown,
                             (size_t)eo, (const char *)msg);
    }
    if (!(nr = realloc(p->rules, (p->nrules + 1) * sizeof(*nr)))) {
        pcre2_code_free(re);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "security: out of memory");
    }
    p->rules = nr;
    nr[p->nrules].re = re;
    nr[p->nrules].severity = severity;
    nr[p->nrules].anywhere = anywhere;
    snprintf(nr[p->nrules].desc, sizeof(nr[0].desc), "%s", desc);
    p->nrules++;
    return 0;
}

/* A restricted module becomes the language's import pattern with the name
 * quoted (\Q...\E) in place of MOD. */
static int add_module(struct sec_policy *p, const struct language *l, const char *mod, int severity,
                      struct llmsb_err *err)
{
    struct buf pat;
    char desc[160];
    struct sec_module *nm;
    const char *t = l->import_pattern, *m;
    int rc;

    if (!*mod || strlen(mod) >= sizeof(p->mods[0].name) || strstr(mod, "\\E"))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "security: bad module name \"%.60s\"", mod);
    buf_init(&pat, 8192);
    while ((m = strstr(t, "MOD")) != NULL) {
        buf_append(&pat, t, (size_t)(m - t));
        buf_printf(&pat, "\\Q%s\\E", mod);
        t = m + 3;
    }
    buf_append_str(&pat, t);
    snprintf(desc, sizeof(desc), "imports restricted module \"%s\"", mod);
    rc = add_rule(p, pat.data, severity, 0, desc, err);
    buf_release(&pat);
    if (rc)
        return rc;
    if (!(nm = realloc(p->mods, (p->nmods + 1) * sizeof(*nm))))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "security: out of memory");
    p->mods = nm;
    snprintf(nm[p->nmods].name, sizeof(nm[0].name), "%s", mod);
    nm[p->nmods++].severity = severity;
    return 0;
}

/* Adds preset pi's rules and restricted modules, for language l, to p. */
static int add_preset(struct sec_policy *p, size_t pi, const struct language *l,
                      struct llmsb_err *err)
{
    p->threshold = presets[pi].threshold;
    for (int c = 0; c < C_COUNT; c++) {
        const char *pat = c == C_DESTRUCTIVE ? destructive : l->scan[c];
        if (presets[pi].sev[c] && pat &&
            add_rule(p, pat, presets[pi].sev[c], cats[c].anywhere, cats[c].desc, err) != 0)
            return err->code;
    }
    for (int i = 0;
         presets[pi].strict_modules && i < LANG_MAX_STRICT_MODULES && l->strict_modules[i]; i++)
        if (add_module(p, l, l->strict_modules[i], SEC_HIGH, err) != 0)
            return err->code;
    return 0;
}

static struct sec_policy *preset_compile(size_t pi, const struct language *l, struct llmsb_err *err)
{
    struct sec_policy *p = calloc(1, sizeof(*p));

    if (!p)
        return NULL;
    snprintf(p->name, sizeof(p->name), "%s", presets[pi].name);
    if (add_preset(p, pi, l, err) != 0) {
        sec_policy_free(p);
        return NULL;
    }
    return p;
}

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sec_policy *cache[NPRESETS][LANG_MAX];

const struct sec_policy *sec_preset(const char *name, const struct language *l,
                                    struct llmsb_err *err)
{
    size_t li = language_index(l);
    struct sec_policy *p = NULL;

    for (size_t i = 0; i < NPRESETS; i++) {
        if (strcmp(presets[i].name, name) != 0)
            continue;
        pthread_mutex_lock(&cache_mu);
        if (li < LANG_MAX && !(p = cache[i][li]) && (p = preset_compile(i, l, err)) != NULL)
            cache[i][li] = p;
        pthread_mutex_unlock(&cache_mu);
        return p;
    }
    llmsb_err_set(err, LLMSB_ERR_INVALID, "policy: unknown preset \"%.40s\" (known: %s)", name,
                  sec_preset_names());
    return NULL;
}

static int json_severity(const cJSON *o, const char *what, int dflt, int *out,
                         struct llmsb_err *err)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "severity");
    if (!s) {
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsString(s) || (*out = sec_severity_parse(s->valuestring)) < 1)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "security: %s: severity must be low, medium "
                             "or high",
                             what);
    return 0;
}

/* Adds a preset's rules and modules to p (for "extends"). */
static int extend(struct sec_policy *p, const char *preset, const struct language *l,
                  struct llmsb_err *err)
{
    for (size_t i = 0; i < NPRESETS; i++)
        if (strcmp(presets[i].name, preset) == 0)
            return add_preset(p, i, l, err);
    return llmsb_err_set(err, LLMSB_ERR_INVALID,
                         "security: extends: unknown preset \"%.40s\" "
                         "(known: %s)",
                         preset, sec_preset_names());
}

static int parse_policy(struct sec_policy *p, const cJSON *j, const struct language *l,
                        struct llmsb_err *err)
{
    const cJSON *ext = cJSON_GetObjectItemCaseSensitive(j, "extends");
    const cJSON *th = cJSON_GetObjectItemCaseSensitive(j, "threshold"), *it;
    int i = 0;

    if (!cJSON_IsObject(j))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "security: a policy is a JSON object");
    cJSON_ArrayForEach(it, j) {
        static const char *known[] = {"extends", "threshold", "patterns", "restricted_modules"};
        int ok = 0;
        for (int k = 0; k < 4; k++)
            ok |= strcmp(it->string, known[k]) == 0;
        if (!ok)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "security: unknown key \"%.40s\" (want "
                                 "extends, threshold, patterns, "
                                 "restricted_modules)",
                                 it->string);
    }
    if (ext && (!cJSON_IsString(ext) || extend(p, ext->valuestring, l, err) != 0))
        return err->code ? err->code
                         : llmsb_err_set(err, LLMSB_ERR_INVALID,
                                         "security: extends "
                                         "must be a preset name");
    if (th && (!cJSON_IsString(th) || (p->threshold = sec_severity_parse(th->valuestring)) < 1))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "security: threshold must be low, medium or "
                             "high");
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "patterns")) {
        const cJSON *pat = cJSON_GetObjectItemCaseSensitive(it, "pattern");
        const cJSON *desc = cJSON_GetObjectItemCaseSensitive(it, "description");
        char what[32];
        int sev;
        snprintf(what, sizeof(what), "patterns[%d]", i++);
        if (!cJSON_IsString(pat) || strlen(pat->valuestring) > 4096)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "security: %s: \"pattern\" must be a "
                                 "string of at most 4096 bytes",
                                 what);
        if (json_severity(it, what, SEC_HIGH, &sev, err) ||
            add_rule(p, pat->valuestring, sev, 0,
                     cJSON_IsString(desc) ? desc->valuestring : pat->valuestring, err))
            return err->code;
    }
    i = 0;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "restricted_modules")) {
        const cJSON *name = cJSON_IsString(it) ? it : cJSON_GetObjectItemCaseSensitive(it, "name");
        char what[40];
        int sev = SEC_HIGH;
        snprintf(what, sizeof(what), "restricted_modules[%d]", i++);
        if (!cJSON_IsString(name))
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "security: %s needs a \"name\"", what);
        if ((!cJSON_IsString(it) && json_severity(it, what, SEC_HIGH, &sev, err)) ||
            add_module(p, l, name->valuestring, sev, err))
            return err->code;
    }
    if (p->threshold < 1)
        p->threshold = SEC_LOW;
    return 0;
}

struct sec_policy *sec_policy_from_json(const char *json, size_t len, const char *name,
                                        const struct language *l, struct llmsb_err *err)
{
    cJSON *j = cJSON_ParseWithLength(json, len);
    struct sec_policy *p = calloc(1, sizeof(*p));

    if (!p || !j || parse_policy(p, j, l, err) != 0) {
        if (!j)
            llmsb_err_set(err, LLMSB_ERR_INVALID, "security: the policy is not valid JSON");
        cJSON_Delete(j);
        sec_policy_free(p);
        return NULL;
    }
    cJSON_Delete(j);
    snprintf(p->name, sizeof(p->name), "%s", name ? name : "inline");
    return p;
}

/* ---- scanning ------------------------------------------------------------------- */

static void add_violation(struct sec_result *res, const struct sec_policy *p, const char *rule,
                          int severity, const char *src, size_t at)
{
    struct sec_violation *v;
    size_t line = 1, col = 1;

    if (severity >= p->threshold)
        res->blocked = 1;
    if (res->n >= SEC_MAX_VIOLATIONS)
        return;
    for (size_t i = 0; i < at; i++) {
        if (src[i] == '\n')
            line++, col = 1;
        else
            col++;
    }
    v = &res->v[res->n++];
    snprintf(v->rule, sizeof(v->rule), "%s", rule);
    snprintf(v->policy, sizeof(v->policy), "%s", p->name);
    v->severity = severity;
    v->line = line;
    v->column = col;
}

int sec_scan(const struct sec_policy *p, const struct language *l, const char *code, size_t n,
             struct sec_result *res, struct llmsb_err *err)
{
    unsigned char *kind = malloc(n ? n : 1);
    char *view = malloc(n + 1);
    pcre2_match_data *md = NULL;
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    int rc = 0;

    if (!kind || !view || !mc) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "security: out of memory");
        goto out;
    }
    pcre2_set_match_limit(mc, MATCH_LIMIT);
    pcre2_set_depth_limit(mc, DEPTH_LIMIT);
    sec_lex(l, code, n, kind);
    for (size_t i = 0; i < n; i++) /* comments vanish; line breaks stay */
        view[i] = kind[i] == 2 && code[i] != '\n' ? ' ' : code[i];
    view[n] = '\0';
    for (size_t r = 0; r < p->nrules && rc == 0; r++) {
        const struct sec_rule *rule = &p->rules[r];
        PCRE2_SIZE off = 0;
        md = pcre2_match_data_create_from_pattern(rule->re, NULL);
        for (int tries = 0; md && off <= n && tries < MAX_TRIES_PER_RULE; tries++) {
            int m = pcre2_match(rule->re, (PCRE2_SPTR)view, n, off, 0, md, mc);
            if (m == PCRE2_ERROR_NOMATCH)
                break;
            if (m < 0) {
                PCRE2_UCHAR msg[120];
                pcre2_get_error_message(m, msg, sizeof(msg));
                rc = llmsb_err_set(err, LLMSB_ERR_LIMIT, "security: scanning stopped: %s",
                                   (const char *)msg);
                break;
            }
            size_t at = pcre2_get_ovector_pointer(md)[0];
            /* a match counts only where it starts in code (or, for commands
             * that live in strings, anywhere but a comment) */
            if (at < n && (rule->anywhere ? kind[at] != 2 : kind[at] == 0)) {
                size_t end = pcre2_get_ovector_pointer(md)[1];
                while (at + 1 < end && strchr("\n; \t", code[at]))
                    at++; /* report where the statement starts, not its separator */
                add_violation(res, p, rule->desc, rule->severity, code, at);
                break;
            }
            if (at == n)
                break;
            off = at + 1;
        }
        pcre2_match_data_free(md);
        md = NULL;
    }
out:
    pcre2_match_context_free(mc);
    free(kind);
    free(view);
    return rc;
}

int sec_scan_libraries(const struct sec_policy *p, const char *const *libs, size_t n,
                       struct sec_result *res)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < p->nmods; k++)
            if (strcmp(libs[i], p->mods[k].name) == 0) {
                char rule[160];
                snprintf(rule, sizeof(rule), "library \"%s\" is a restricted module", libs[i]);
                add_violation(res, p, rule, p->mods[k].severity, "", 0);
                res->v[res->n ? res->n - 1 : 0].line = 0;
            }
    return 0;
}

char *sec_result_json(const struct sec_result *res)
{
    cJSON *a = cJSON_CreateArray();
    char *out;

    for (size_t i = 0; i < res->n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "rule", res->v[i].rule);
        cJSON_AddStringToObject(o, "severity", sec_severity_name(res->v[i].severity));
        cJSON_AddStringToObject(o, "policy", res->v[i].policy);
        cJSON_AddNumberToObject(o, "line", (double)res->v[i].line);
        cJSON_AddNumberToObject(o, "column", (double)res->v[i].column);
        cJSON_AddItemToArray(a, o);
    }
    out = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    return out;
}
