/* tools.c - the MCP server's tools, pure: the initialize reply, the tool
 * schemas, arguments as job fields, results as content, the dispatch of
 * methods and tools, and the language each session was opened in
 * (mcp/tools.h). */
#include "mcp/tools.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch.h"
#include "common/status.h"
#include "mcp/jsonrpc.h"

/* Newest first: the answer to an initialize that asks for none of these. */
static const char *const versions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

static void add_text(cJSON *content, const char *text)
{
    cJSON *t = cJSON_CreateObject();

    cJSON_AddStringToObject(t, "type", "text");
    cJSON_AddStringToObject(t, "text", text);
    cJSON_AddItemToArray(content, t);
}

cJSON *mcp_tool_result(cJSON *content, int is_error)
{
    cJSON *r = cJSON_CreateObject();

    cJSON_AddItemToObject(r, "content", content);
    cJSON_AddBoolToObject(r, "isError", is_error);
    return r;
}

cJSON *mcp_tool_error(const char *fmt, ...)
{
    cJSON *content = cJSON_CreateArray();
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    add_text(content, msg);
    return mcp_tool_result(content, 1);
}

/* ---- initialize, tools/list ------------------------------------------------ */

cJSON *mcp_initialize(const cJSON *params)
{
    const cJSON *want = cJSON_GetObjectItemCaseSensitive(params, "protocolVersion");
    const char *v = versions[0];
    cJSON *r = cJSON_CreateObject(), *caps, *info;

    for (size_t i = 0; cJSON_IsString(want) && i < sizeof(versions) / sizeof(versions[0]); i++)
        if (strcmp(want->valuestring, versions[i]) == 0)
            v = versions[i];
    cJSON_AddStringToObject(r, "protocolVersion", v);
    caps = cJSON_AddObjectToObject(r, "capabilities");
    cJSON_AddBoolToObject(cJSON_AddObjectToObject(caps, "tools"), "listChanged", 0);
    info = cJSON_AddObjectToObject(r, "serverInfo");
    cJSON_AddStringToObject(info, "name", "llm-sandbox");
    cJSON_AddStringToObject(info, "version", LLMSB_VERSION);
    cJSON_AddStringToObject(r, "instructions",
                            "execute_code runs a program in a fresh hardened sandbox without "
                            "network; print what you want to see. Plots drawn with "
                            "matplotlib (plt.show) or R graphics come back as images.");
    return r;
}

int mcp_version_known(const char *v)
{
    for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
        if (strcmp(v, versions[i]) == 0)
            return 1;
    return 0;
}

static cJSON *prop(cJSON *props, const char *name, const char *type, const char *desc)
{
    cJSON *p = cJSON_CreateObject();

    cJSON_AddStringToObject(p, "type", type);
    cJSON_AddStringToObject(p, "description", desc);
    cJSON_AddItemToObject(props, name, p);
    return p;
}

static void string_array_prop(cJSON *props, const char *name, const char *desc)
{
    cJSON *items = cJSON_CreateObject();

    cJSON_AddStringToObject(items, "type", "string");
    cJSON_AddItemToObject(prop(props, name, "array", desc), "items", items);
}

static cJSON *tool(const char *name, const char *title, const char *desc, cJSON *props,
                   const char *required)
{
    cJSON *t = cJSON_CreateObject(), *schema = cJSON_CreateObject(), *ann;

    cJSON_AddStringToObject(t, "name", name);
    cJSON_AddStringToObject(t, "title", title);
    cJSON_AddStringToObject(t, "description", desc);
    cJSON_AddStringToObject(schema, "type", "object");
    cJSON_AddItemToObject(schema, "properties", props);
    if (required) {
        cJSON *req = cJSON_CreateArray();
        cJSON_AddItemToArray(req, cJSON_CreateString(required));
        cJSON_AddItemToObject(schema, "required", req);
    }
    cJSON_AddItemToObject(t, "inputSchema", schema);
    ann = cJSON_AddObjectToObject(t, "annotations");
    cJSON_AddBoolToObject(ann, "readOnlyHint", strncmp(name, "get_", 4) == 0);
    cJSON_AddBoolToObject(ann, "openWorldHint", 0);
    return t;
}

/* submit_jobs' schema: the job file, and how the batch runs it. */
static cJSON *submit_jobs_tool(void)
{
    cJSON *props = cJSON_CreateObject(), *modes = cJSON_CreateArray();

    prop(props, "jobs", "string",
         "The job file: JSON Lines, one job a line ({\"id\": \"t1\", \"lang\": \"python\", "
         "\"code\": \"print(1)\", \"expect_stdout\": \"1\"}), or YAML (defaults: and jobs:); "
         "the fields of llm-sandbox job files. At most 1000 jobs.");
    prop(props, "dedup", "boolean",
         "Run jobs identical in everything but id and meta once; each still gets its own "
         "result, marked copy_of (default true).");
    prop(props, "recheck_timeouts", "boolean",
         "Run each job that timed out once more, alone, and keep that result (default false).");
    prop(props, "wait", "boolean",
         "Wait for the results (default true). false (a server started with --queue): answer "
         "with the ids at once; the same file again with existing \"reuse\" collects them.");
    cJSON_AddItemToArray(modes, cJSON_CreateString("refuse"));
    cJSON_AddItemToArray(modes, cJSON_CreateString("rerun"));
    cJSON_AddItemToArray(modes, cJSON_CreateString("reuse"));
    cJSON_AddItemToObject(prop(props, "existing", "string",
                               "With --queue, ids that already have a result: refuse the file "
                               "(default), rerun them, or reuse their results."),
                          "enum", modes);
    prop(props, "allow_invalid", "boolean",
         "Give jobs that fail their checks an invalid result instead of refusing the file "
         "(default false).");
    return tool("submit_jobs", "Run a file of jobs",
                "Runs a job file as one batch: every job checked before any runs, identical "
                "programs run once, timeouts run again alone if asked. Answers with a summary "
                "(jobs by status and language, pass rates, what dedup saved) and every job's "
                "result, one JSON object a line.",
                props, "jobs");
}

cJSON *mcp_tools_list(const struct config *cfg)
{
    cJSON *tools = cJSON_CreateArray(), *props, *r = cJSON_CreateObject();
    char names[256], desc[600];

    language_names(names, sizeof(names));
    props = cJSON_CreateObject();
    prop(props, "code", "string", "The program's source code.");
    snprintf(desc, sizeof(desc),
             "The language: one of %s (default python, or in a session the session's).", names);
    prop(props, "language", "string", desc);
    string_array_prop(props, "libraries",
                      "Packages to install first from the language's registry (pip, npm, gem, "
                      "CRAN, go get; Debian packages for C++), e.g. [\"requests\"].");
    snprintf(desc, sizeof(desc), "Wall-clock limit in seconds (default %.3g, at most %.3g).",
             (double)cfg->defaults.timeout_ms / 1000, (double)cfg->max.timeout_ms / 1000);
    prop(props, "timeout", "number", desc);
    string_array_prop(props, "artifacts",
                      "Files the program writes to bring back, as patterns relative to its "
                      "working directory, e.g. [\"*.csv\"]; they come back as embedded "
                      "resources.");
    prop(
        props, "session", "string",
        "A session id of your choosing (letters, digits, - _ . : @; Python, Ruby, R): calls with the "
        "same id run in one interpreter whose variables, imports and files persist, until "
        "close_session or its idle time runs out. Omit for a fresh sandbox.");
    cJSON_AddItemToArray(
        tools, tool("execute_code", "Run code in a sandbox",
                    "Runs a program in a hardened, network-less container and returns its "
                    "standard output and error, its status and exit code; plots it draws "
                    "(matplotlib, R graphics) come back as images, files as resources. "
                    "Each call starts from a clean sandbox unless it names a session.",
                    props, "code"));
    cJSON_AddItemToArray(tools, submit_jobs_tool());
    props = cJSON_CreateObject();
    prop(props, "session", "string", "The id given to execute_code.");
    cJSON_AddItemToArray(tools, tool("close_session", "End a session",
                                     "Ends a session: its interpreter and files are gone and its "
                                     "id may start a new one.",
                                     props, "session"));
    cJSON_AddItemToArray(tools, tool("get_supported_languages", "Supported languages",
                                     "The languages execute_code runs, as a JSON array.",
                                     cJSON_CreateObject(), NULL));
    props = cJSON_CreateObject();
    prop(props, "language", "string", "A language name, as get_supported_languages lists.");
    cJSON_AddItemToArray(tools, tool("get_language_details", "Language details",
                                     "How execute_code runs a language: file name, compile and "
                                     "run commands, image, library installer, plot capture.",
                                     props, "language"));
    cJSON_AddItemToObject(r, "tools", tools);
    return r;
}

/* ---- the language tools ----------------------------------------------------- */

static cJSON *argv_json(const char *const *argv, size_t max)
{
    cJSON *a = cJSON_CreateArray();

    for (size_t i = 0; i < max && argv[i]; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(argv[i]));
    return a;
}

static cJSON *json_text_result(cJSON *value)
{
    cJSON *content = cJSON_CreateArray();
    char *text = cJSON_PrintUnformatted(value);

    add_text(content, text ? text : "null");
    free(text);
    cJSON_Delete(value);
    return mcp_tool_result(content, 0);
}

cJSON *mcp_supported_languages(void)
{
    cJSON *names = cJSON_CreateArray();

    for (size_t i = 0; i < languages_count; i++)
        cJSON_AddItemToArray(names, cJSON_CreateString(languages[i]->name));
    return json_text_result(names);
}

cJSON *mcp_language_details(const struct config *cfg, const cJSON *args)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(args, "language");
    const struct language *l;
    cJSON *d, *aliases;
    char file[64], names[256], img[300];
    const char *image;

    if (!cJSON_IsString(name)) {
        return mcp_tool_error("language: required, a string (one of get_supported_languages)");
    }
    if (!(l = language_find(name->valuestring))) {
        language_names(names, sizeof(names));
        return mcp_tool_error("language: \"%.100s\" is not supported (supported: %s)",
                              name->valuestring, names);
    }
    d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "name", l->name);
    aliases = cJSON_AddArrayToObject(d, "aliases");
    for (size_t i = 0; i < sizeof(l->aliases) / sizeof(l->aliases[0]) && l->aliases[i]; i++)
        cJSON_AddItemToArray(aliases, cJSON_CreateString(l->aliases[i]));
    snprintf(file, sizeof(file), "%s.%s", l->default_stem, l->ext);
    cJSON_AddStringToObject(d, "file", file);
    cJSON_AddItemToObject(d, "compile", argv_json(l->compile, LANG_MAX_ARGV));
    cJSON_AddItemToObject(d, "run", argv_json(l->run, LANG_MAX_ARGV));
    image = config_image(cfg, l, img, sizeof(img));
    cJSON_AddStringToObject(d, "image", image ? image : l->image);
    if (l->install[0])
        cJSON_AddStringToObject(d, "libraries", l->install_what ? l->install_what : l->install[0]);
    else
        cJSON_AddNullToObject(d, "libraries");
    cJSON_AddBoolToObject(d, "plots", l->plots);
    cJSON_AddBoolToObject(d, "preloaded_interpreter", l->zygote != NULL);
    return json_text_result(d);
}

/* ---- execute_code, close_session ------------------------------------------- */

/* A session id as the queue knows it: with --queue, scope (this server's
 * own) before it, so two servers' "s1" are two sessions. */
static const char *scoped(const char *scope, const char *sid, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s%s", scope, sid);
    return out;
}

void mcp_call_init(struct mcp_call *c)
{
    memset(c, 0, sizeof(*c));
    fields_init(&c->f, JOB_MAX_FIELDS);
}

void mcp_call_release(struct mcp_call *c)
{
    fields_release(&c->f);
    free(c->lists[0]);
    free(c->lists[1]);
    c->lists[0] = c->lists[1] = NULL;
}

/* A tool's argument: its name, its type and what a bad value is told. */
struct arg_rule {
    const char *name;
    cJSON_bool (*is)(const cJSON *const item);
    const char *expected;
};

/* execute_code's arguments, in the order they are checked: each of its
 * type or absent (null), code required. */
static const struct arg_rule execute_args[] = {
    {"code", cJSON_IsString, "required, a string"},
    {"language", cJSON_IsString, "a string is expected"},
    {"timeout", cJSON_IsNumber, "a number of seconds is expected"},
    {"libraries", cJSON_IsArray, "an array of package names is expected"},
    {"session", cJSON_IsString, "a string (the session's id) is expected"},
    {"artifacts", cJSON_IsArray, "an array of file name patterns is expected"},
};

/* args against rules (n of them, the first required): an object of known
 * arguments (takes: which, for the message), each of its type or null. */
static int args_check_rules(const cJSON *args, const struct arg_rule *rules, size_t n,
                            const char *takes, struct llmsb_err *err)
{
    const cJSON *it;

    if (args && !cJSON_IsObject(args))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "arguments: an object is expected");
    cJSON_ArrayForEach(it, args) {
        size_t k = 0;
        while (k < n && strcmp(it->string, rules[k].name) != 0)
            k++;
        if (k == n)
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "%.60s: unknown argument (%s)", it->string,
                                 takes);
    }
    for (size_t k = 0; k < n; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, rules[k].name);
        if (k == 0 ? !rules[k].is(v) : v && !rules[k].is(v) && !cJSON_IsNull(v))
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: %s", rules[k].name,
                                 rules[k].expected);
    }
    return 0;
}

static int args_check(const cJSON *args, struct llmsb_err *err)
{
    const cJSON *it;
    int rc = args_check_rules(args, execute_args, sizeof(execute_args) / sizeof(execute_args[0]),
                              "execute_code takes code, language, libraries, timeout, artifacts, "
                              "session",
                              err);

    if (rc != 0)
        return rc;
    for (int k = 0; k < 2; k++) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(args, k ? "artifacts" : "libraries");
        if (!cJSON_IsArray(list))
            continue;
        cJSON_ArrayForEach(it, list) {
            if (!cJSON_IsString(it))
                return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: every item must be a string",
                                     k ? "artifacts" : "libraries");
        }
    }
    return 0;
}

/* The tool's arguments as job fields, checked as any job's once they are
 * made a job. */
int mcp_execute_fields(struct mcp_call *c, const cJSON *args, const char *id, const char *scope,
                       const char *lang_default, struct llmsb_err *err)
{
    struct fields *f = &c->f;
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(args, "code");
    const cJSON *lang = cJSON_GetObjectItemCaseSensitive(args, "language");
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(args, "libraries");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(args, "timeout");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(args, "artifacts");
    const cJSON *sess = cJSON_GetObjectItemCaseSensitive(args, "session");
    int rc;

    if ((rc = args_check(args, err)) != 0)
        return rc;
    fields_adds(f, "id", id);
    fields_adds(f, "lang", cJSON_IsString(lang) ? lang->valuestring : lang_default);
    fields_adds(f, "code", code->valuestring);
    if (cJSON_IsNumber(t)) {
        snprintf(c->timeout, sizeof(c->timeout), "%.17g", t->valuedouble);
        fields_adds(f, "timeout", c->timeout);
    }
    if (cJSON_IsArray(l) && cJSON_GetArraySize(l) > 0 && (c->lists[0] = cJSON_PrintUnformatted(l)))
        fields_adds(f, "libraries", c->lists[0]);
    if (cJSON_IsArray(a) && cJSON_GetArraySize(a) > 0 && (c->lists[1] = cJSON_PrintUnformatted(a)))
        fields_adds(f, "artifacts", c->lists[1]);
    if (cJSON_IsString(sess))
        fields_adds(f, "session", scoped(scope, sess->valuestring, c->sid, sizeof(c->sid)));
    return 0;
}

void mcp_close_fields(struct mcp_call *c, const char *session, const char *id, const char *scope)
{
    fields_adds(&c->f, "id", id);
    fields_adds(&c->f, "session", scoped(scope, session, c->sid, sizeof(c->sid)));
    fields_adds(&c->f, "session_close", "true");
}

/* ---- submit_jobs ------------------------------------------------------------ */

static const struct arg_rule submit_args[] = {
    {"jobs", cJSON_IsString, "required, a string (the job file: JSON Lines or YAML)"},
    {"dedup", cJSON_IsBool, "true or false is expected"},
    {"recheck_timeouts", cJSON_IsBool, "true or false is expected"},
    {"wait", cJSON_IsBool, "true or false is expected"},
    {"existing", cJSON_IsString, "\"refuse\", \"rerun\" or \"reuse\" is expected"},
    {"allow_invalid", cJSON_IsBool, "true or false is expected"},
};

/* A boolean argument, dflt when absent or null. */
static int bool_arg(const cJSON *args, const char *name, int dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

int mcp_submit_args(const cJSON *args, int queue, struct mcp_submit *s, struct llmsb_err *err)
{
    static const char *const modes[] = {[BATCH_EXISTING_REFUSE] = "refuse",
                                        [BATCH_EXISTING_RERUN] = "rerun",
                                        [BATCH_EXISTING_REUSE] = "reuse"};
    const cJSON *existing = cJSON_GetObjectItemCaseSensitive(args, "existing");
    int rc = args_check_rules(args, submit_args, sizeof(submit_args) / sizeof(submit_args[0]),
                              "submit_jobs takes jobs, dedup, recheck_timeouts, wait, existing, "
                              "allow_invalid",
                              err);

    if (rc != 0)
        return rc;
    memset(s, 0, sizeof(*s));
    s->jobs = cJSON_GetObjectItemCaseSensitive(args, "jobs")->valuestring;
    s->len = strlen(s->jobs);
    s->dedup = bool_arg(args, "dedup", 1);
    s->recheck = bool_arg(args, "recheck_timeouts", 0);
    s->wait = bool_arg(args, "wait", 1);
    s->allow_invalid = bool_arg(args, "allow_invalid", 0);
    if (cJSON_IsString(existing)) {
        char shown[80];
        while (s->existing < 3 && strcmp(existing->valuestring, modes[s->existing]) != 0)
            s->existing++; /* BATCH_EXISTING_REFUSE first */
        llmsb_escape(shown, sizeof(shown), existing->valuestring, strlen(existing->valuestring));
        if (s->existing == 3)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "existing: \"%s\" is not one of \"refuse\", \"rerun\", \"reuse\"",
                                 shown);
        if (s->existing && !queue)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "existing: \"%s\" needs a server started with --queue (in "
                                 "process no result outlives its call)",
                                 shown);
    }
    if (!s->wait && !queue)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "wait: false needs a server started with --queue (in process the "
                             "jobs run within the call)");
    return 0;
}

/* Job member key as scope + its value (a string, else its JSON text); an
 * empty id stays empty (the job then gets an id of the batch's). */
static int scope_member(cJSON *job, const char *key, const char *scope)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(job, key), *nv;
    char *text, *scoped_text = NULL;

    if (!v || cJSON_IsNull(v) || (cJSON_IsString(v) && !v->valuestring[0]))
        return 0;
    text = cJSON_IsString(v) ? strdup(v->valuestring) : cJSON_PrintUnformatted(v);
    if (!text || asprintf(&scoped_text, "%s%s", scope, text) < 0)
        scoped_text = NULL;
    free(text);
    if (!scoped_text || !(nv = cJSON_CreateString(scoped_text))) {
        free(scoped_text);
        return LLMSB_ERR_NOMEM;
    }
    free(scoped_text);
    cJSON_ReplaceItemInObjectCaseSensitive(job, key, nv);
    return 0;
}

int mcp_jobs_scope(struct jobfile *jf, const char *scope, struct llmsb_err *err)
{
    static const char *const own[] = {"copies", "recheck"}; /* a batch's own fields */

    if (jf->n > MCP_SUBMIT_MAX_JOBS)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "jobs: %zu jobs, over the %d one call takes (split the file)", jf->n,
                             MCP_SUBMIT_MAX_JOBS);
    for (size_t i = 0; i < jf->n; i++) {
        for (size_t k = 0; k < sizeof(own) / sizeof(own[0]); k++)
            if (cJSON_GetObjectItemCaseSensitive(jf->jobs[i], own[k]))
                return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                     "%s:%zu: %s: written by the batch itself (dedup, "
                                     "recheck_timeouts), not by a job",
                                     jf->name, jf->lines[i], own[k]);
        if (*scope && (scope_member(jf->jobs[i], "id", scope) != 0 ||
                       scope_member(jf->jobs[i], "session", scope) != 0))
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "jobs: out of memory");
    }
    return 0;
}

void mcp_unscope(char *text, const char *scope)
{
    size_t sl = strlen(scope);
    char *w = text;

    if (!sl)
        return;
    for (const char *r = text; *r;)
        if (strncmp(r, scope, sl) == 0)
            r += sl;
        else
            *w++ = *r++;
    *w = '\0';
}

/* r's string member key without scope before it. */
static void unscope_member(cJSON *r, const char *key, const char *scope)
{
    const char *v = mcp_str_of(r, key);
    size_t sl = strlen(scope);

    if (sl && strncmp(v, scope, sl) == 0)
        cJSON_ReplaceItemInObjectCaseSensitive(r, key, cJSON_CreateString(v + sl));
}

/* A result without its output: its verdict, and why the rest is not here. */
static cJSON *short_result(const cJSON *r)
{
    static const char *const keep[] = {"id",           "status",       "exit_code",   "passed",
                                       "copy_of",      "cases_passed", "cases_total", "rechecked",
                                       "first_status", "duration_ms"};
    cJSON *s = cJSON_CreateObject();
    char why[120];

    for (size_t k = 0; s && k < sizeof(keep) / sizeof(keep[0]); k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, keep[k]);
        if (v)
            cJSON_AddItemToObject(s, keep[k], cJSON_Duplicate(v, 1));
    }
    snprintf(why, sizeof(why), "its output and the rest: the answer's results reached %zu MiB",
             MCP_SUBMIT_RESULTS_MAX >> 20);
    cJSON_AddStringToObject(s, "omitted", why);
    return s;
}

/* r (unscoped) as one line of the results, short once used would pass
 * the cap; appended to lines. */
static void add_result_line(struct buf *lines, const cJSON *r, const char *scope, size_t *used)
{
    cJSON *c = cJSON_Duplicate(r, 1), *s = NULL;
    char *t;

    if (!c)
        return;
    unscope_member(c, "id", scope);
    unscope_member(c, "copy_of", scope);
    t = cJSON_PrintUnformatted(c);
    if (t && *used + strlen(t) + 1 > MCP_SUBMIT_RESULTS_MAX) {
        free(t);
        t = (s = short_result(c)) ? cJSON_PrintUnformatted(s) : NULL;
    } else if (t) {
        *used += strlen(t) + 1;
    }
    buf_printf(lines, "%s\n", t ? t : "{}");
    free(t);
    cJSON_Delete(s);
    cJSON_Delete(c);
}

cJSON *mcp_submit_answer(const char *text, cJSON *const *results, size_t n, const char *scope,
                         int is_error)
{
    cJSON *content = cJSON_CreateArray();
    struct buf lines;
    size_t used = 0;

    buf_init(&lines, 0);
    add_text(content, text);
    for (size_t i = 0; results && i < n; i++)
        add_result_line(&lines, results[i], scope, &used);
    if (results)
        add_text(content, lines.data ? lines.data : "");
    buf_release(&lines);
    return mcp_tool_result(content, is_error);
}

cJSON *mcp_submit_sent(const char *text, char *const *ids, size_t n, const char *scope)
{
    cJSON *content = cJSON_CreateArray(), *a = cJSON_CreateArray();
    size_t sl = strlen(scope);
    char *t;

    add_text(content, text);
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(
            a, cJSON_CreateString(sl && strncmp(ids[i], scope, sl) == 0 ? ids[i] + sl : ids[i]));
    t = cJSON_PrintUnformatted(a);
    add_text(content, t ? t : "[]");
    free(t);
    cJSON_Delete(a);
    return mcp_tool_result(content, 0);
}

/* ---- results ---------------------------------------------------------------- */

const char *mcp_str_of(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static long long num_of(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? (long long)v->valuedouble : 0;
}

static void add_labelled(cJSON *content, const char *label, const char *text)
{
    size_t n = strlen(label) + strlen(text) + 2;
    char *s = malloc(n);

    if (!s)
        return;
    snprintf(s, n, "%s\n%s", label, text);
    add_text(content, s);
    free(s);
}

/* The files a job brought back: images as image content, the rest as
 * embedded resources (base64 blobs) named sandbox://ID/NAME. */
static void add_artifacts(cJSON *content, const cJSON *r, const char *id)
{
    const cJSON *a, *arts = cJSON_GetObjectItemCaseSensitive(r, "artifacts");

    cJSON_ArrayForEach(a, arts) {
        const char *name = mcp_str_of(a, "name"), *mime = mcp_str_of(a, "mime"),
                   *b64 = mcp_str_of(a, "base64");
        cJSON *c;
        if (!*b64) {
            const char *why = mcp_str_of(a, "skipped");
            if (*why) {
                char line[600];
                snprintf(line, sizeof(line), "file %s not returned: %s", name, why);
                add_text(content, line);
            }
            continue;
        }
        c = cJSON_CreateObject();
        if (strncmp(mime, "image/", 6) == 0) {
            cJSON_AddStringToObject(c, "type", "image");
            cJSON_AddStringToObject(c, "data", b64);
            cJSON_AddStringToObject(c, "mimeType", mime);
        } else {
            cJSON *res = cJSON_CreateObject();
            size_t n = strlen(id) + strlen(name) + 16;
            char *uri = malloc(n);
            if (uri)
                snprintf(uri, n, "sandbox://%s/%s", id, name);
            cJSON_AddStringToObject(c, "type", "resource");
            cJSON_AddStringToObject(res, "uri", uri ? uri : name);
            cJSON_AddStringToObject(res, "mimeType", *mime ? mime : "application/octet-stream");
            cJSON_AddStringToObject(res, "blob", b64);
            cJSON_AddItemToObject(c, "resource", res);
            free(uri);
        }
        cJSON_AddItemToArray(content, c);
    }
}

/* A result object (result_fields_json's form) as the tool's answer: the
 * program's stdout, its stderr, compile output and the policy's findings
 * when they matter, one status line, then its plots and files.  isError
 * unless the status is ok. */
cJSON *mcp_result_content(const cJSON *r)
{
    cJSON *content = cJSON_CreateArray();
    const char *status = mcp_str_of(r, "status"), *out = mcp_str_of(r, "stdout"),
               *err = mcp_str_of(r, "stderr"), *comp = mcp_str_of(r, "compile_output"),
               *why = mcp_str_of(r, "error");
    const cJSON *v, *viol = cJSON_GetObjectItemCaseSensitive(r, "violations");
    char line[1024];
    int ok = strcmp(status, "ok") == 0;

    if (*out)
        add_text(content, out);
    if (*err)
        add_labelled(content, "stderr:", err);
    if (*comp && !ok)
        add_labelled(content, "compile output:", comp);
    cJSON_ArrayForEach(v, viol) {
        snprintf(line, sizeof(line), "blocked by the security policy: line %lld: %s (%s)",
                 num_of(v, "line"), mcp_str_of(v, "rule"), mcp_str_of(v, "severity"));
        add_text(content, line);
    }
    {
        enum job_status st = STATUS_NONE;
        size_t n = 0;
        status_parse(status, strlen(status), &st);
        n += (size_t)snprintf(line + n, sizeof(line) - n, "status: %s", status);
        if (status_info(st)->ran &&
            cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(r, "exit_code")))
            n += (size_t)snprintf(line + n, sizeof(line) - n, ", exit code %lld",
                                  num_of(r, "exit_code"));
        if (num_of(r, "duration_ms") > 0 && n < sizeof(line))
            n +=
                (size_t)snprintf(line + n, sizeof(line) - n, ", %lld ms", num_of(r, "duration_ms"));
        if (*why && n < sizeof(line))
            snprintf(line + n, sizeof(line) - n, "; %s", why);
    }
    add_text(content, line);
    add_artifacts(content, r, mcp_str_of(r, "id"));
    return mcp_tool_result(content, !ok);
}

cJSON *mcp_session_closed(const char *session)
{
    char line[300];
    cJSON *content = cJSON_CreateArray();

    snprintf(line, sizeof(line), "session \"%s\" ended; its id is free again", session);
    add_text(content, line);
    return mcp_tool_result(content, 0);
}

cJSON *mcp_call_failed(const struct llmsb_err *err, const char *client_left)
{
    if (err->code == LLMSB_ERR_INVALID)
        return mcp_tool_error("invalid: %s", err->msg);
    if (err->code == LLMSB_ERR_INTERRUPTED) /* we stopped it: not the sandbox failing */
        return mcp_tool_error("cancelled: %s; the call was stopped and its sandbox removed",
                              client_left ? client_left : "the server was stopped");
    return mcp_tool_error("internal_error: %s", err->msg[0] ? err->msg : "the job did not run");
}

/* ---- dispatch --------------------------------------------------------------- */

/* A tools/call's params._meta.progressToken: 0 with *token NULL (none, or
 * null: no progress asked) or the token, else -1 with the JSON-RPC error
 * sent.  MCP's ProgressToken is a string or a number; a string is capped
 * because every notification of the call repeats it. */
static int progress_token(struct jsonrpc *rpc, const cJSON *id, const cJSON *params,
                          const cJSON **token)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
    size_t len;

    *token = NULL;
    if (!t || cJSON_IsNull(t))
        return 0;
    if (!cJSON_IsString(t) && !cJSON_IsNumber(t)) {
        jsonrpc_error(rpc, id, JSONRPC_INVALID_PARAMS,
                      "Invalid params: _meta.progressToken: a string or a number is expected "
                      "(got %s)",
                      cJSON_IsObject(t)  ? "an object"
                      : cJSON_IsArray(t) ? "an array"
                                         : "a boolean");
        return -1;
    }
    if (cJSON_IsString(t) && (len = strlen(t->valuestring)) > MCP_PROGRESS_TOKEN_MAX) {
        jsonrpc_error(rpc, id, JSONRPC_INVALID_PARAMS,
                      "Invalid params: _meta.progressToken: a string of %zu bytes, over the %d "
                      "byte cap (every progress notification repeats it)",
                      len, MCP_PROGRESS_TOKEN_MAX);
        return -1;
    }
    *token = t;
    return 0;
}

static void tools_call(const struct config *cfg, const struct mcp_runner *run, struct jsonrpc *rpc,
                       const cJSON *id, const cJSON *params)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
    const cJSON *token;
    struct mcp_progress progress = {rpc, NULL};

    if (progress_token(rpc, id, params, &token) != 0)
        return;
    progress.token = token;
    if (!cJSON_IsString(name)) {
        jsonrpc_error(rpc, id, JSONRPC_INVALID_PARAMS,
                      "Invalid params: name (the tool's) is required");
    } else if (strcmp(name->valuestring, "execute_code") == 0) {
        jsonrpc_reply(rpc, id, run->execute_code(run->ud, args, token ? &progress : NULL));
    } else if (strcmp(name->valuestring, "submit_jobs") == 0) {
        jsonrpc_reply(rpc, id, run->submit_jobs(run->ud, args, token ? &progress : NULL));
    } else if (strcmp(name->valuestring, "close_session") == 0) {
        jsonrpc_reply(rpc, id, run->close_session(run->ud, args));
    } else if (strcmp(name->valuestring, "get_supported_languages") == 0) {
        jsonrpc_reply(rpc, id, mcp_supported_languages());
    } else if (strcmp(name->valuestring, "get_language_details") == 0) {
        jsonrpc_reply(rpc, id, mcp_language_details(cfg, args));
    } else {
        char shown[120];
        llmsb_escape(shown, sizeof(shown), name->valuestring, strlen(name->valuestring));
        jsonrpc_error(rpc, id, JSONRPC_INVALID_PARAMS,
                      "Unknown tool: %s (tools: execute_code, submit_jobs, close_session, "
                      "get_supported_languages, get_language_details)",
                      shown);
    }
}

void mcp_method(const struct config *cfg, const struct mcp_runner *run, struct jsonrpc *rpc,
                const cJSON *id, const char *name, const cJSON *params)
{
    if (strcmp(name, "initialize") == 0) {
        jsonrpc_reply(rpc, id, mcp_initialize(params));
    } else if (strcmp(name, "ping") == 0) {
        jsonrpc_reply(rpc, id, cJSON_CreateObject());
    } else if (strcmp(name, "tools/list") == 0) {
        jsonrpc_reply(rpc, id, mcp_tools_list(cfg));
    } else if (strcmp(name, "tools/call") == 0) {
        tools_call(cfg, run, rpc, id, params);
    } else {
        char shown[120];
        llmsb_escape(shown, sizeof(shown), name, strlen(name));
        jsonrpc_error(rpc, id, JSONRPC_METHOD_NOT_FOUND, "Method not found: %s", shown);
    }
}

/* ---- sessions ---------------------------------------------------------------- */

struct mcp_session *mcp_session_known(struct mcp_sessions *ss, const char *sid, unsigned long now)
{
    for (size_t i = 0; i < MCP_SESSIONS_KEPT; i++)
        if (ss->s[i].sid[0] && strcmp(ss->s[i].sid, sid) == 0) {
            ss->s[i].used = now;
            return &ss->s[i];
        }
    return NULL;
}

void mcp_session_remember(struct mcp_sessions *ss, const char *sid, const char *lang,
                          unsigned long now)
{
    struct mcp_session *s = mcp_session_known(ss, sid, now);

    if (!lang) {
        if (s)
            s->sid[0] = '\0';
        return;
    }
    if (!s && strlen(sid) < sizeof(s->sid)) {
        s = &ss->s[0]; /* a free slot, else the one used least recently */
        for (size_t i = 1; i < MCP_SESSIONS_KEPT && s->sid[0]; i++)
            if (!ss->s[i].sid[0] || ss->s[i].used < s->used)
                s = &ss->s[i];
        snprintf(s->sid, sizeof(s->sid), "%s", sid);
        s->used = now;
    }
    if (s && s->lang != lang)
        snprintf(s->lang, sizeof(s->lang), "%s", lang);
}
