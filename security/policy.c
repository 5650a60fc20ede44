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

enum cat { C_SHELL, C_EVAL, C_FS_DELETE, C_NETWORK, C_ENV, C_NATIVE, C_PROCESS, C_DESTRUCTIVE,
           C_COUNT };

/* Patterns per category, in languages[] order: python, javascript, java,
 * cpp, go, r, ruby. */
static const struct {
    const char *desc;
    int anywhere;            /* also inside string literals (commands in strings) */
    const char *pat[7];
} cats[C_COUNT] = {
    [C_SHELL] = {"runs a shell command or another program", 0, {
        "\\b(?:os\\s*\\.\\s*(?:system|popen|exec[lv]p?e?|spawn[lv]p?e?|posix_spawnp?)|subprocess\\s*\\.\\s*\\w+|pty\\s*\\.\\s*spawn|commands\\s*\\.\\s*getoutput)\\s*\\(",
        "require\\s*\\(\\s*['\"](?:node:)?child_process['\"]|from\\s+['\"](?:node:)?child_process['\"]|\\b(?:execSync|spawnSync|execFileSync|execFile)\\s*\\(",
        "\\bRuntime\\s*\\.\\s*getRuntime\\s*\\(\\s*\\)\\s*\\.\\s*exec\\s*\\(|\\bProcessBuilder\\b",
        "\\b(?:system|popen|execl|execlp|execle|execv|execvp|execvpe|posix_spawnp?)\\s*\\(",
        "\\bexec\\s*\\.\\s*Command(?:Context)?\\s*\\(|\\bsyscall\\s*\\.\\s*(?:Exec|ForkExec)\\s*\\(|\\bos\\s*\\.\\s*StartProcess\\s*\\(",
        "\\b(?:system2?|shell|pipe)\\s*\\(",
        "\\b(?:system|exec|spawn)\\b\\s*[(\"']|`|%x[\\[({<]|\\bIO\\s*\\.\\s*popen\\b|\\bOpen3\\b"}},
    [C_EVAL] = {"runs code built at run time (eval, dynamic import, reflection)", 0, {
        "\\b(?:eval|exec|compile)\\s*\\(|\\b__import__\\b|\\bimportlib\\b|\\bgetattr\\s*\\(\\s*__builtins__|\\b__builtins__\\b|\\b__subclasses__\\b|\\bglobals\\s*\\(\\s*\\)\\s*\\[",
        "\\beval\\s*\\(|\\bFunction\\s*\\(|require\\s*\\(\\s*['\"](?:node:)?vm['\"]|\\bimport\\s*\\(",
        "\\bClass\\s*\\.\\s*forName\\s*\\(|\\.getDeclaredMethod\\s*\\(|\\.setAccessible\\s*\\(|\\bScriptEngineManager\\b|\\bMethodHandles\\b",
        "\\bdlopen\\s*\\(|\\bdlsym\\s*\\(",
        "\\bplugin\\s*\\.\\s*Open\\s*\\(",
        "\\beval\\s*\\(|\\bparse\\s*\\(\\s*text\\s*=|\\bdo\\.call\\s*\\(",
        "\\b(?:eval|instance_eval|class_eval|module_eval|instance_exec)\\b|\\.(?:send|public_send|__send__)\\s*\\(|\\bconst_get\\b"}},
    [C_FS_DELETE] = {"deletes files or directories", 0, {
        "\\b(?:os\\s*\\.\\s*(?:remove|unlink|rmdir|removedirs)|shutil\\s*\\.\\s*rmtree)\\s*\\(|\\.(?:unlink|rmdir)\\s*\\(",
        "\\b(?:rm|rmSync|unlink|unlinkSync|rmdir|rmdirSync)\\s*\\(",
        "\\bFiles\\s*\\.\\s*(?:delete|deleteIfExists)\\s*\\(|\\.delete(?:OnExit)?\\s*\\(\\s*\\)",
        "\\b(?:unlink|rmdir)\\s*\\(|filesystem\\s*::\\s*remove(?:_all)?\\s*\\(|\\bfs\\s*::\\s*remove(?:_all)?\\s*\\(|(?<![\\w:.>])remove\\s*\\(\\s*\"",
        "\\bos\\s*\\.\\s*(?:Remove|RemoveAll|Truncate)\\s*\\(",
        "\\b(?:unlink|file\\.remove)\\s*\\(",
        "\\b(?:File|FileUtils)\\s*\\.\\s*(?:delete|unlink|rm|rm_r|rm_rf|remove_dir|remove_entry)\\b|\\bDir\\s*\\.\\s*(?:delete|rmdir)\\b"}},
    [C_NETWORK] = {"opens network connections", 0, {
        "\\bsocket\\s*\\.\\s*(?:socket|create_connection)\\s*\\(|\\burllib\\b|\\brequests\\s*\\.\\s*(?:get|post|put|delete|request|Session)\\b|\\bhttp\\.client\\b|\\bhttpx\\b|\\baiohttp\\b",
        "require\\s*\\(\\s*['\"](?:node:)?(?:net|http|https|dgram|tls|dns)['\"]|from\\s+['\"](?:node:)?(?:net|http|https|dgram|tls|dns)['\"]|\\bfetch\\s*\\(|\\bXMLHttpRequest\\b|\\bWebSocket\\b",
        "\\bjava\\s*\\.\\s*net\\b|\\bnew\\s+(?:Socket|ServerSocket|URL|DatagramSocket)\\s*\\(|\\bHttpClient\\b|\\bHttpURLConnection\\b",
        "\\b(?:socket|connect|getaddrinfo|gethostbyname)\\s*\\(",
        "\\bnet\\s*\\.\\s*(?:Dial|Listen)\\w*\\s*\\(|\\bhttp\\s*\\.\\s*(?:Get|Post|Head|NewRequest|ListenAndServe)\\s*\\(",
        "\\b(?:url|download\\.file|socketConnection)\\s*\\(|\\bhttr\\s*::|\\bcurl\\s*::",
        "\\b(?:Socket|TCPSocket|UDPSocket|TCPServer)\\b|\\bNet\\s*::\\s*HTTP\\b|\\bURI\\s*\\.\\s*open\\b"}},
    [C_ENV] = {"reads or changes environment variables", 0, {
        "\\bos\\s*\\.\\s*(?:environ|getenv|putenv|unsetenv)\\b",
        "\\bprocess\\s*\\.\\s*env\\b",
        "\\bSystem\\s*\\.\\s*getenv\\s*\\(",
        "\\b(?:getenv|setenv|putenv|unsetenv|secure_getenv)\\s*\\(|\\benviron\\b",
        "\\bos\\s*\\.\\s*(?:Getenv|Setenv|Environ|LookupEnv|Unsetenv|Clearenv)\\s*\\(",
        "\\bSys\\s*\\.\\s*(?:getenv|setenv|unsetenv)\\s*\\(",
        "\\bENV\\b"}},
    [C_NATIVE] = {"uses native code or raw memory (FFI, asm, unsafe)", 0, {
        "\\bctypes\\b|\\bcffi\\b",
        "\\bprocess\\s*\\.\\s*(?:binding|dlopen)\\s*\\(|require\\s*\\(\\s*['\"](?:ffi|ffi-napi)['\"]",
        "\\bSystem\\s*\\.\\s*(?:loadLibrary|load)\\s*\\(|\\bsun\\s*\\.\\s*misc\\s*\\.\\s*Unsafe\\b|\\bnative\\s+[\\w<>\\[\\]]+\\s+\\w+\\s*\\(",
        "\\b(?:asm|__asm__|__asm)\\b|\\bsyscall\\s*\\(|\\bmprotect\\s*\\(|\\bptrace\\s*\\(",
        "\\bunsafe\\s*\\.\\s*\\w+|\\bsyscall\\s*\\.\\s*(?:Syscall|RawSyscall)\\w*\\s*\\(|\\bimport\\s+\"C\"",
        "\\b(?:dyn\\.load|\\.Call|\\.C|\\.External|\\.Fortran)\\s*\\(|\\bRcpp\\b",
        "\\bFiddle\\b|\\bFFI\\b|\\bsyscall\\s*\\("}},
    [C_PROCESS] = {"forks, signals or ends processes", 0, {
        "\\bos\\s*\\.\\s*(?:fork|forkpty|kill|killpg|setsid|_exit)\\s*\\(|\\bmultiprocessing\\b|\\bsignal\\s*\\.\\s*signal\\s*\\(",
        "\\bprocess\\s*\\.\\s*(?:exit|kill|abort)\\s*\\(|require\\s*\\(\\s*['\"](?:node:)?(?:cluster|worker_threads)['\"]",
        "\\bSystem\\s*\\.\\s*exit\\s*\\(|\\bRuntime\\s*\\.\\s*getRuntime\\s*\\(\\s*\\)\\s*\\.\\s*(?:halt|exit)\\s*\\(|\\bProcessHandle\\b",
        "\\b(?:fork|vfork|kill|setsid|clone|daemon)\\s*\\(",
        "\\bsyscall\\s*\\.\\s*(?:Kill|Setsid)\\s*\\(|\\bos\\s*\\.\\s*FindProcess\\s*\\(",
        "\\b(?:mcparallel|mcfork|mclapply|makeCluster)\\s*\\(|\\bpskill\\s*\\(",
        "\\bfork\\b|\\bProcess\\s*\\.\\s*(?:fork|kill|daemon|spawn)\\b|\\bexit!"}},
    [C_DESTRUCTIVE] = {"destructive system command (rm -rf /, mkfs, fork bomb, shutdown)", 1, {NULL}},
};

static const char destructive[] =
    "\\brm\\s+-[a-zA-Z]*[rRf][a-zA-Z]*\\s+(?:-[a-zA-Z-]+\\s+)*/(?:\\s|$|\\*|[\"'`)])|\\bmkfs(?:\\.\\w+)?\\b|"
    "\\bdd\\s+if=\\S+\\s+of=/dev/|:\\(\\)\\s*\\{\\s*:\\s*\\|\\s*:\\s*&\\s*\\}\\s*;\\s*:|"
    "\\b(?:shutdown|reboot|poweroff)\\s+(?:-[a-zA-Z]+\\s*)*(?:now|-h)\\b|\\bformat\\s+[A-Za-z]:[/\\\\]";

/* Strict's restricted modules, per language. */
static const char *const strict_modules[7][16] = {
    {"os", "sys", "subprocess", "ctypes", "socket", "importlib", "pickle", "marshal", "shelve",
     "shutil", "multiprocessing", "threading", "pty", "signal", "builtins", NULL},
    {"child_process", "fs", "net", "http", "https", "dgram", "vm", "worker_threads", "cluster",
     "os", "tls", "dns", NULL},
    {"java.net", "java.lang.reflect", "java.nio.file", "javax.script", "sun.misc", NULL},
    {"unistd.h", "sys/socket.h", "sys/ptrace.h", "dlfcn.h", "sys/mman.h", "netinet/in.h",
     "arpa/inet.h", "signal.h", "spawn.h", "sys/syscall.h", NULL},
    {"os/exec", "net", "net/http", "syscall", "unsafe", "plugin", "os/signal", NULL},
    {"parallel", "processx", "callr", "httr", "curl", "RCurl", "sys", NULL},
    {"open3", "socket", "net/http", "fiddle", "ffi", "open-uri", "pty", NULL},
};

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
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                                   PCRE2_MULTILINE | PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &ec,
                                   &eo, NULL);
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
static int add_module(struct sec_policy *p, const struct language *l, const char *mod,
                      int severity, struct llmsb_err *err)
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

static struct sec_policy *preset_compile(size_t pi, const struct language *l, struct llmsb_err *err)
{
    struct sec_policy *p = calloc(1, sizeof(*p));
    size_t li = (size_t)(l - languages);

    if (!p)
        return NULL;
    snprintf(p->name, sizeof(p->name), "%s", presets[pi].name);
    p->threshold = presets[pi].threshold;
    for (int c = 0; c < C_COUNT; c++) {
        const char *pat = c == C_DESTRUCTIVE ? destructive : cats[c].pat[li];
        if (!presets[pi].sev[c] || !pat)
            continue;
        if (add_rule(p, pat, presets[pi].sev[c], cats[c].anywhere, cats[c].desc, err) != 0)
            goto fail;
    }
    for (int i = 0; presets[pi].strict_modules && li < 7 && strict_modules[li][i]; i++)
        if (add_module(p, l, strict_modules[li][i], SEC_HIGH, err) != 0)
            goto fail;
    return p;
fail:
    sec_policy_free(p);
    return NULL;
}

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sec_policy *cache[NPRESETS][16];

const struct sec_policy *sec_preset(const char *name, const struct language *l,
                                    struct llmsb_err *err)
{
    size_t li = (size_t)(l - languages);
    struct sec_policy *p = NULL;

    for (size_t i = 0; i < NPRESETS; i++) {
        if (strcmp(presets[i].name, name) != 0)
            continue;
        pthread_mutex_lock(&cache_mu);
        if (li < 16 && !(p = cache[i][li]) && (p = preset_compile(i, l, err)) != NULL)
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
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "security: %s: severity must be low, medium "
                                                     "or high", what);
    return 0;
}

/* Adds a preset's rules and modules to p (for "extends"). */
static int extend(struct sec_policy *p, const char *preset, const struct language *l,
                  struct llmsb_err *err)
{
    size_t li = (size_t)(l - languages);
    for (size_t i = 0; i < NPRESETS; i++) {
        if (strcmp(presets[i].name, preset) != 0)
            continue;
        p->threshold = presets[i].threshold;
        for (int c = 0; c < C_COUNT; c++) {
            const char *pat = c == C_DESTRUCTIVE ? destructive : cats[c].pat[li];
            if (presets[i].sev[c] && pat &&
                add_rule(p, pat, presets[i].sev[c], cats[c].anywhere, cats[c].desc, err) != 0)
                return err->code;
        }
        for (int k = 0; presets[i].strict_modules && li < 7 && strict_modules[li][k]; k++)
            if (add_module(p, l, strict_modules[li][k], SEC_HIGH, err) != 0)
                return err->code;
        return 0;
    }
    return llmsb_err_set(err, LLMSB_ERR_INVALID, "security: extends: unknown preset \"%.40s\" "
                                                 "(known: %s)", preset, sec_preset_names());
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
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "security: unknown key \"%.40s\" (want "
                                                         "extends, threshold, patterns, "
                                                         "restricted_modules)", it->string);
    }
    if (ext && (!cJSON_IsString(ext) || extend(p, ext->valuestring, l, err) != 0))
        return err->code ? err->code : llmsb_err_set(err, LLMSB_ERR_INVALID, "security: extends "
                                                                             "must be a preset name");
    if (th && (!cJSON_IsString(th) || (p->threshold = sec_severity_parse(th->valuestring)) < 1))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "security: threshold must be low, medium or "
                                                     "high");
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "patterns")) {
        const cJSON *pat = cJSON_GetObjectItemCaseSensitive(it, "pattern");
        const cJSON *desc = cJSON_GetObjectItemCaseSensitive(it, "description");
        char what[32];
        int sev;
        snprintf(what, sizeof(what), "patterns[%d]", i++);
        if (!cJSON_IsString(pat) || strlen(pat->valuestring) > 4096)
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "security: %s: \"pattern\" must be a "
                                                         "string of at most 4096 bytes", what);
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
    for (size_t i = 0; i < n; i++)   /* comments vanish; line breaks stay */
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
                    at++;   /* report where the statement starts, not its separator */
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
