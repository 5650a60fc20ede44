/* server.c - `llm-sandbox mcp`: a Model Context Protocol server on stdin and
 * stdout (JSON-RPC 2.0, one message per line; docs/mcp.md).  Its tools:
 * execute_code, get_supported_languages, get_language_details.  A call of
 * execute_code is a job like any other: the same field checks, security
 * scan, limits, pool and statuses; it runs in this process on a warm pool
 * kept between calls (the --local path), or with --queue through Redis on
 * the workers.  Plots come back as image content, other files as embedded
 * resources.  Requests are answered one at a time, in order; stdout carries
 * nothing but the protocol, logs go to stderr.  While a call runs, stdin is
 * still read (what arrives waits for its turn): its end means the client is
 * gone, and the call is stopped, its container removed, and the server
 * exits. */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"
#include "sandbox/pool.h"
#include "common/status.h"
#include "queue/queue.h"
#include "exec/exec.h"
#include "job/job.h"
#include "job/result.h"
#include "exec/session.h"

#define MCP_MAX_MESSAGE ((size_t)8 << 20) /* a line: code (1 MiB) escaped, and more */
#define MCP_QUEUE_WAIT_S 600              /* --queue: default wait for a result */

/* Newest first: the answer to an initialize that asks for none of these. */
static const char *const versions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

static const char mcp_usage[] =
    "usage: llm-sandbox mcp [--queue] [--wait S]\n"
    "\n"
    "A Model Context Protocol server on stdin/stdout (JSON-RPC 2.0, one message\n"
    "per line) with the tools execute_code, get_supported_languages and\n"
    "get_language_details. Each execute_code call is a job: checked, scanned,\n"
    "limited and run like any other (docs/mcp.md).\n"
    "\n"
    "  (default)    run jobs in this process on a warm pool kept between calls\n"
    "  --queue      send them through Redis (--redis, LLMSB_REDIS_URL or the\n"
    "               config) to the workers and wait for their results\n"
    "  --wait S     with --queue: how long to wait for a result (default 600)\n";

/* Sessions whose language the server remembers; past that, the one used
 * least recently is forgotten and a call to it without "language" is
 * Python's again (invalid for a session of another language). */
#define MCP_SESSIONS_KEPT 256

struct mcp {
    struct cli_globals *g;
    int queue_mode;
    double wait_s;
    /* in-process: opened at the first execute_code */
    int pool_open;
    struct backend be;
    struct pool pool;
    /* --queue */
    int queue_open;
    char scope[24]; /* --queue: "mcp-XXXXXXXX-", before the session ids it is given */
    struct queue q;
    unsigned long calls;
    /* stdin while a call runs (watch_stdin) */
    atomic_int cancel;  /* SCHED_CANCEL_ABORT once stdin ended during a call */
    int stdin_ended;    /* seen by the watcher: nothing more is answered */
    int stdin_file;     /* a regular file: its end is no client leaving */
    struct buf pending; /* read during a call, for the main loop */
    /* the language of each session this server's calls opened, so that a
     * later call without "language" runs in it (a session has one) */
    struct mcp_session {
        char sid[JOB_SESSION_MAX + 1];
        char lang[16];
        unsigned long used; /* m->calls at its last call */
    } sessions[MCP_SESSIONS_KEPT];
};

/* ---- output ------------------------------------------------------------- */

/* While a batch is answered, its responses are gathered here and sent as
 * one array (JSON-RPC 2.0 batches; MCP 2025-03-26). */
static cJSON *batch;

static void send_json(cJSON *msg)
{
    char *text;

    if (batch) {
        cJSON_AddItemToArray(batch, msg);
        return;
    }
    text = cJSON_PrintUnformatted(msg);
    if (text) {
        fputs(text, stdout);
        fputc('\n', stdout);
        fflush(stdout);
    }
    free(text);
    cJSON_Delete(msg);
}

static cJSON *envelope(const cJSON *id)
{
    cJSON *m = cJSON_CreateObject();

    cJSON_AddStringToObject(m, "jsonrpc", "2.0");
    cJSON_AddItemToObject(m, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
    return m;
}

static void send_result(const cJSON *id, cJSON *result)
{
    cJSON *m = envelope(id);

    cJSON_AddItemToObject(m, "result", result);
    send_json(m);
}

static void send_error(const cJSON *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void send_error(const cJSON *id, int code, const char *fmt, ...)
{
    cJSON *m = envelope(id), *e = cJSON_CreateObject();
    char msg[600];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cJSON_AddNumberToObject(e, "code", code);
    cJSON_AddStringToObject(e, "message", msg);
    cJSON_AddItemToObject(m, "error", e);
    send_json(m);
}

static void add_text(cJSON *content, const char *text)
{
    cJSON *t = cJSON_CreateObject();

    cJSON_AddStringToObject(t, "type", "text");
    cJSON_AddStringToObject(t, "text", text);
    cJSON_AddItemToArray(content, t);
}

/* A tool's result: content, and isError. */
static cJSON *tool_result(cJSON *content, int is_error)
{
    cJSON *r = cJSON_CreateObject();

    cJSON_AddItemToObject(r, "content", content);
    cJSON_AddBoolToObject(r, "isError", is_error);
    return r;
}

static cJSON *tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static cJSON *tool_error(const char *fmt, ...)
{
    cJSON *content = cJSON_CreateArray();
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    add_text(content, msg);
    return tool_result(content, 1);
}

/* ---- tools/list ----------------------------------------------------------- */

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

static cJSON *tools_list(const struct mcp *m)
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
             (double)m->g->cfg.defaults.timeout_ms / 1000, (double)m->g->cfg.max.timeout_ms / 1000);
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
    return tool_result(content, 0);
}

static cJSON *supported_languages(void)
{
    cJSON *names = cJSON_CreateArray();

    for (size_t i = 0; i < languages_count; i++)
        cJSON_AddItemToArray(names, cJSON_CreateString(languages[i].name));
    return json_text_result(names);
}

static cJSON *language_details(const struct mcp *m, const cJSON *args)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(args, "language");
    const struct language *l;
    cJSON *d, *aliases;
    char file[64], names[256], img[300];
    const char *image;

    if (!cJSON_IsString(name)) {
        return tool_error("language: required, a string (one of get_supported_languages)");
    }
    if (!(l = language_find(name->valuestring))) {
        language_names(names, sizeof(names));
        return tool_error("language: \"%.100s\" is not supported (supported: %s)",
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
    image = config_image(&m->g->cfg, l, img, sizeof(img));
    cJSON_AddStringToObject(d, "image", image ? image : l->image);
    if (l->install[0])
        cJSON_AddStringToObject(d, "libraries", l->install_what ? l->install_what : l->install[0]);
    else
        cJSON_AddNullToObject(d, "libraries");
    cJSON_AddBoolToObject(d, "plots", l->plots);
    cJSON_AddBoolToObject(d, "preloaded_interpreter", l->zygote != NULL);
    return json_text_result(d);
}

/* ---- execute_code ------------------------------------------------------------- */

/* A session id as the queue knows it: with --queue, scope (this server's
 * own) before it, so two servers' "s1" are two sessions. */
static const char *scoped(const char *scope, const char *sid, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s%s", scope, sid);
    return out;
}

/* The tool's arguments as job fields (the names of docs/jobs.md), checked as
 * any job's.  Strings in out point into args or into the kept buffers. */
static int args_to_fields(const cJSON *args, struct fields *f, char *timeout, size_t tsz,
                          char *lists[2], const char *id, const char *scope, char *sid,
                          size_t sidsz, const char *lang_default, struct llmsb_err *err)
{
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(args, "code");
    const cJSON *lang = cJSON_GetObjectItemCaseSensitive(args, "language");
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(args, "libraries");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(args, "timeout");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(args, "artifacts");
    const cJSON *sess = cJSON_GetObjectItemCaseSensitive(args, "session");
    const cJSON *it;

    if (args && !cJSON_IsObject(args))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "arguments: an object is expected");
    cJSON_ArrayForEach(it, args) {
        static const char *known[] = {"code",    "language",  "libraries",
                                      "timeout", "artifacts", "session"};
        size_t k = 0;
        while (k < sizeof(known) / sizeof(known[0]) && strcmp(it->string, known[k]) != 0)
            k++;
        if (k == sizeof(known) / sizeof(known[0]))
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%.60s: unknown argument (execute_code takes code, language, "
                                 "libraries, timeout, artifacts, session)",
                                 it->string);
    }
    if (!cJSON_IsString(code))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "code: required, a string");
    if (lang && !cJSON_IsString(lang) && !cJSON_IsNull(lang))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "language: a string is expected");
    if (t && !cJSON_IsNumber(t) && !cJSON_IsNull(t))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "timeout: a number of seconds is expected");
    if (l && !cJSON_IsArray(l) && !cJSON_IsNull(l))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "libraries: an array of package names is expected");
    if (sess && !cJSON_IsString(sess) && !cJSON_IsNull(sess))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "session: a string (the session's id) is "
                             "expected");
    if (a && !cJSON_IsArray(a) && !cJSON_IsNull(a))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "artifacts: an array of file name patterns is expected");
    for (int k = 0; k < 2; k++) {
        const cJSON *list = k ? a : l;
        if (!cJSON_IsArray(list))
            continue;
        cJSON_ArrayForEach(it, list) {
            if (!cJSON_IsString(it))
                return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: every item must be a string",
                                     k ? "artifacts" : "libraries");
        }
    }
    fields_adds(f, "id", id);
    fields_adds(f, "lang", cJSON_IsString(lang) ? lang->valuestring : lang_default);
    fields_adds(f, "code", code->valuestring);
    if (cJSON_IsNumber(t)) {
        snprintf(timeout, tsz, "%.17g", t->valuedouble);
        fields_adds(f, "timeout", timeout);
    }
    if (cJSON_IsArray(l) && cJSON_GetArraySize(l) > 0 && (lists[0] = cJSON_PrintUnformatted(l)))
        fields_adds(f, "libraries", lists[0]);
    if (cJSON_IsArray(a) && cJSON_GetArraySize(a) > 0 && (lists[1] = cJSON_PrintUnformatted(a)))
        fields_adds(f, "artifacts", lists[1]);
    if (cJSON_IsString(sess))
        fields_adds(f, "session", scoped(scope, sess->valuestring, sid, sidsz));
    return 0;
}

/* A fresh job id: "mcp-", this process's pid, the call's number and 8 hex
 * digits from the kernel's RNG (ids through Redis must not collide). */
static void call_id(struct mcp *m, char *out, size_t outsz)
{
    unsigned int rnd = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

    if (fd >= 0) {
        if (read(fd, &rnd, sizeof(rnd)) != (ssize_t)sizeof(rnd))
            rnd = (unsigned int)clock_wall_ms();
        close(fd);
    }
    snprintf(out, outsz, "mcp-%ld-%lu-%08x", (long)getpid(), ++m->calls, rnd);
}

#ifndef MCP_FUZZ
static int open_pool(struct mcp *m, struct llmsb_err *err)
{
    struct pool_config pc;
    char version[64];
    int rc;

    if (m->pool_open)
        return 0;
    exec_identity(NULL, "local", NULL);
    if ((rc = backend_open(&m->be, m->g->cfg.backend, m->g->cfg.backend_host, &m->g->cfg.kube,
                           err)) != 0)
        return rc;
    if ((rc = m->be.ops->ping(&m->be, version, sizeof(version), err)) != 0) {
        backend_close(&m->be);
        return rc;
    }
    exec_pool_config(&m->g->cfg, 1, &pc);
    pc.min_idle = 0; /* warm after the first call, none before it */
    pool_init(&m->pool, &m->be, &pc);
    m->pool_open = 1;
    return 0;
}

/* In this process: the result as JSON, or NULL with err set. */
static cJSON *run_here(struct mcp *m, const struct job *j, struct llmsb_err *err)
{
    struct job_result r;
    cJSON *out;

    if (open_pool(m, err) != 0)
        return NULL;
    session_expire(&m->pool, &m->g->cfg);
    job_result_init(&r, j);
    if (exec_job_retrying(&m->pool, &m->be, &m->g->cfg, j, &m->cancel, &r) == SCHED_OUT_ABORTED) {
        job_result_release(&r);
        llmsb_err_set(err, LLMSB_ERR_INTERRUPTED, "interrupted");
        return NULL;
    }
    snprintf(r.worker, sizeof(r.worker), "%s", exec_worker_name());
    out = job_result_json(&r);
    job_result_release(&r);
    return out;
}

/* Waits up to --wait for id's done notification, a second at a time: when
 * stdin ends (or a signal comes) the job is cancelled on its worker, which
 * removes its container. Returns 1 done, 0 not in time, or a negative code. */
static int wait_queued(struct mcp *m, const char *id, struct llmsb_err *err)
{
    int64_t until = clock_mono_ms() + (int64_t)(m->wait_s * 1000);
    char status[32];

    for (;;) {
        int64_t left = until - clock_mono_ms();
        int rc;
        if (left <= 0)
            return 0;
        rc = queue_wait_done(&m->q, id, left < 1000 ? (double)left / 1000 : 1.0, status,
                             sizeof(status), err);
        if (rc != 0)
            return rc;
        if (exec_stop_asked(&m->cancel)) {
            if (queue_cancel(&m->q, id, m->g->cfg.result_ttl_s, err) != 0)
                return llmsb_err_wrap(err, "cancel job \"%s\"", id);
            return llmsb_err_set(err, LLMSB_ERR_INTERRUPTED, "interrupted; job \"%s\" cancelled",
                                 id);
        }
    }
}

/* Through Redis: enqueued as any producer's job, then its result. */
static cJSON *run_queued(struct mcp *m, const struct fields *f, const char *id,
                         struct llmsb_err *err)
{
    char entry[64];
    cJSON *r;

    if (!m->queue_open) {
        if (queue_open(&m->q, m->g->cfg.redis_url, m->g->cfg.redis_prefix, NULL,
                       (int)(m->wait_s * 1000) + 5000, err) != 0)
            return NULL;
        m->queue_open = 1;
    }
    if (queue_enqueue(&m->q, f, entry, sizeof(entry), err) != 0)
        return NULL;
    r = cli_fetch_result(&m->q, id);
    if (!cli_result_final(r)) {
        cJSON_Delete(r);
        if (wait_queued(m, id, err) < 0)
            return NULL;
        r = cli_fetch_result(&m->q, id);
    }
    if (!cli_result_final(r)) {
        cJSON_Delete(r);
        llmsb_err_set(err, LLMSB_ERR_TIMEOUT,
                      "no result within %.0f s; the job \"%s\" is still queued or running "
                      "(llm-sandbox result %s)",
                      m->wait_s, id, id);
        return NULL;
    }
    return r;
}

struct watch {
    struct mcp *m;
    pthread_t th;
    atomic_int done; /* the call ended: stop watching */
    int running;
};

/* Reads stdin while a call runs, into m->pending (up to its cap; the rest
 * waits in the pipe); at its end, asks the call to stop. */
static void *watch_stdin(void *arg)
{
    struct watch *w = arg;
    struct mcp *m = w->m;
    char chunk[65536];

    while (!atomic_load(&w->done)) {
        struct pollfd pfd = {STDIN_FILENO, POLLIN, 0};
        size_t room = m->pending.cap - m->pending.len;
        ssize_t n;
        if (room == 0)
            break;
        if (poll(&pfd, 1, 100) <= 0)
            continue;
        n = read(STDIN_FILENO, chunk, room < sizeof(chunk) ? room : sizeof(chunk));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0) {
            m->stdin_ended = 1;
            atomic_store(&m->cancel, SCHED_CANCEL_ABORT);
            break;
        }
        buf_append(&m->pending, chunk, (size_t)n); /* fits: room */
    }
    return NULL;
}

static void watch_start(struct mcp *m, struct watch *w)
{
    w->m = m;
    atomic_init(&w->done, 0);
    w->running = !m->stdin_file && pthread_create(&w->th, NULL, watch_stdin, w) == 0;
}

static void watch_stop(struct watch *w)
{
    if (!w->running)
        return;
    atomic_store(&w->done, 1);
    pthread_join(w->th, NULL);
}
#else
struct watch {
    int running;
};
static void watch_start(struct mcp *m, struct watch *w)
{
    (void)m;
    w->running = 0;
}
static void watch_stop(struct watch *w)
{
    (void)w;
}
/* tests/fuzz/fuzz_mcp.c: the protocol and the answers, with results made
 * up from the job instead of an engine or Redis */
static cJSON *run_here(struct mcp *m, const struct job *j, struct llmsb_err *err);
static cJSON *run_queued(struct mcp *m, const struct fields *f, const char *id,
                         struct llmsb_err *err);
#endif

static const char *str_of(const cJSON *o, const char *name)
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
        const char *name = str_of(a, "name"), *mime = str_of(a, "mime"), *b64 = str_of(a, "base64");
        cJSON *c;
        if (!*b64) {
            const char *why = str_of(a, "skipped");
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
static cJSON *result_content(const cJSON *r)
{
    cJSON *content = cJSON_CreateArray();
    const char *status = str_of(r, "status"), *out = str_of(r, "stdout"),
               *err = str_of(r, "stderr"), *comp = str_of(r, "compile_output"),
               *why = str_of(r, "error");
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
                 num_of(v, "line"), str_of(v, "rule"), str_of(v, "severity"));
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
    add_artifacts(content, r, str_of(r, "id"));
    return tool_result(content, !ok);
}

/* The fields as a job, checked as any job's, then run: its result as the
 * tool's answer (closing: one line), or a tool error.  err may say why
 * the fields could not be made. */
static cJSON *run_fields(struct mcp *m, const struct fields *f, const char *id, int closing,
                         char *status, size_t statussz, struct llmsb_err *err)
{
    struct job j;
    cJSON *r = NULL, *out;

    job_init(&j, &m->g->cfg);
    if (!err->msg[0] && job_from_fields(&j, &m->g->cfg, f, id, err) == 0) {
        struct watch w;
        watch_start(m, &w);
        r = m->queue_mode ? run_queued(m, f, id, err) : run_here(m, &j, err);
        watch_stop(&w);
    }
    snprintf(status, statussz, "%s", r ? str_of(r, "status") : "");
    if (r && closing && strcmp(str_of(r, "status"), "ok") == 0) {
        char line[300];
        cJSON *content = cJSON_CreateArray();
        snprintf(line, sizeof(line), "session \"%s\" ended; its id is free again",
                 j.session + strlen(m->scope));
        add_text(content, line);
        out = tool_result(content, 0);
    } else if (r) {
        out = result_content(r);
    } else if (err->code == LLMSB_ERR_INVALID) {
        out = tool_error("invalid: %s", err->msg);
    } else if (err->code == LLMSB_ERR_INTERRUPTED) {
        /* we stopped it: not the sandbox failing */
        out =
            tool_error("cancelled: %s; the call was stopped and its sandbox removed",
                       m->stdin_ended ? "stdin ended (the client left)" : "the server was stopped");
    } else {
        out = tool_error("internal_error: %s", err->msg[0] ? err->msg : "the job did not run");
    }
    cJSON_Delete(r);
    job_release(&j);
    return out;
}

/* The remembered session sid (as the client names it), or NULL; a hit
 * counts as a use. */
static struct mcp_session *session_known(struct mcp *m, const char *sid)
{
    for (size_t i = 0; i < MCP_SESSIONS_KEPT; i++)
        if (m->sessions[i].sid[0] && strcmp(m->sessions[i].sid, sid) == 0) {
            m->sessions[i].used = m->calls;
            return &m->sessions[i];
        }
    return NULL;
}

/* Remembers (or forgets, lang NULL) the language of session sid. */
static void session_remember(struct mcp *m, const char *sid, const char *lang)
{
    struct mcp_session *s = session_known(m, sid);

    if (!lang) {
        if (s)
            s->sid[0] = '\0';
        return;
    }
    if (!s && strlen(sid) < sizeof(s->sid)) {
        s = &m->sessions[0]; /* a free slot, else the one used least recently */
        for (size_t i = 1; i < MCP_SESSIONS_KEPT && s->sid[0]; i++)
            if (!m->sessions[i].sid[0] || m->sessions[i].used < s->used)
                s = &m->sessions[i];
        snprintf(s->sid, sizeof(s->sid), "%s", sid);
        s->used = m->calls;
    }
    if (s && s->lang != lang)
        snprintf(s->lang, sizeof(s->lang), "%s", lang);
}

static cJSON *execute_code(struct mcp *m, const cJSON *args)
{
    const cJSON *sess = cJSON_GetObjectItemCaseSensitive(args, "session");
    const cJSON *lang = cJSON_GetObjectItemCaseSensitive(args, "language");
    const struct mcp_session *known =
        cJSON_IsString(sess) ? session_known(m, sess->valuestring) : NULL;
    const struct language *l = cJSON_IsString(lang) ? language_find(lang->valuestring) : NULL;
    struct fields f;
    struct llmsb_err err = {0};
    char id[64], timeout[40], sid[JOB_SESSION_MAX + 64], status[32];
    char *lists[2] = {NULL, NULL};
    cJSON *out;

    call_id(m, id, sizeof(id));
    fields_init(&f, JOB_MAX_FIELDS);
    /* a session's call without a language runs in the session's */
    args_to_fields(args, &f, timeout, sizeof(timeout), lists, id, m->scope, sid, sizeof(sid),
                   known ? known->lang : "python", &err);
    out = run_fields(m, &f, id, 0, status, sizeof(status), &err);
    if (cJSON_IsString(sess) && status[0] && strcmp(status, "invalid") != 0 &&
        strcmp(status, "session_lost") != 0)
        session_remember(m, sess->valuestring, l ? l->name : known ? known->lang : "python");
    fields_release(&f);
    free(lists[0]);
    free(lists[1]);
    return out;
}

static cJSON *close_session(struct mcp *m, const cJSON *args)
{
    const cJSON *sess = cJSON_GetObjectItemCaseSensitive(args, "session");
    struct fields f;
    struct llmsb_err err = {0};
    char id[64], sid[JOB_SESSION_MAX + 64], status[32];
    cJSON *out;

    if (!cJSON_IsString(sess))
        return tool_error("invalid: session: required, a string (the session's id)");
    call_id(m, id, sizeof(id));
    fields_init(&f, 4);
    fields_adds(&f, "id", id);
    fields_adds(&f, "session", scoped(m->scope, sess->valuestring, sid, sizeof(sid)));
    fields_adds(&f, "session_close", "true");
    out = run_fields(m, &f, id, 1, status, sizeof(status), &err);
    if (strcmp(status, "ok") == 0 || strcmp(status, "session_lost") == 0) /* it is gone */
        session_remember(m, sess->valuestring, NULL);
    fields_release(&f);
    return out;
}

/* ---- dispatch --------------------------------------------------------------- */

static cJSON *initialize(const cJSON *params)
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

static void handle(struct mcp *m, const cJSON *msg)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(msg, "jsonrpc");
    int notification = id == NULL;

    if (!cJSON_IsObject(msg) || !cJSON_IsString(ver) || strcmp(ver->valuestring, "2.0") != 0 ||
        (id && !cJSON_IsString(id) && !cJSON_IsNumber(id))) {
        send_error(cJSON_IsString(id) || cJSON_IsNumber(id) ? id : NULL, -32600,
                   "Invalid Request: a JSON-RPC 2.0 object is expected");
        return;
    }
    if (!method) {
        return; /* a response to us: we send no requests */
    }
    if (!cJSON_IsString(method)) {
        if (!notification)
            send_error(id, -32600, "Invalid Request: method must be a string");
        return;
    }
    if (params && !cJSON_IsObject(params) && !cJSON_IsArray(params)) {
        if (!notification)
            send_error(id, -32602, "Invalid params: an object is expected");
        return;
    }
    if (notification)
        return; /* notifications/initialized, notifications/cancelled, ... */
    if (strcmp(method->valuestring, "initialize") == 0) {
        send_result(id, initialize(params));
    } else if (strcmp(method->valuestring, "ping") == 0) {
        send_result(id, cJSON_CreateObject());
    } else if (strcmp(method->valuestring, "tools/list") == 0) {
        send_result(id, tools_list(m));
    } else if (strcmp(method->valuestring, "tools/call") == 0) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
        if (!cJSON_IsString(name)) {
            send_error(id, -32602, "Invalid params: name (the tool's) is required");
        } else if (strcmp(name->valuestring, "execute_code") == 0) {
            send_result(id, execute_code(m, args));
        } else if (strcmp(name->valuestring, "close_session") == 0) {
            send_result(id, close_session(m, args));
        } else if (strcmp(name->valuestring, "get_supported_languages") == 0) {
            send_result(id, supported_languages());
        } else if (strcmp(name->valuestring, "get_language_details") == 0) {
            send_result(id, language_details(m, args));
        } else {
            char shown[120];
            llmsb_escape(shown, sizeof(shown), name->valuestring, strlen(name->valuestring));
            send_error(id, -32602,
                       "Unknown tool: %s (tools: execute_code, close_session, "
                       "get_supported_languages, get_language_details)",
                       shown);
        }
    } else {
        char shown[120];
        llmsb_escape(shown, sizeof(shown), method->valuestring, strlen(method->valuestring));
        send_error(id, -32601, "Method not found: %s", shown);
    }
}

/* 1 when a string of the JSON text holds a \u0000: cJSON would end the
 * string there, and a field (code, a session id) would be cut silently.
 * Backslashes stand only in strings, each starting an escape. */
static int has_nul_escape(const char *s, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++) {
        if (s[i] != '\\')
            continue;
        if (s[i + 1] == 'u' && i + 5 < n && memcmp(s + i + 2, "0000", 4) == 0)
            return 1;
        i++; /* the escaped character */
    }
    return 0;
}

/* One line: a message, or a batch (an array of them; answered as one). */
static void handle_line(struct mcp *m, const char *line, size_t len)
{
    cJSON *msg = cJSON_ParseWithLength(line, len), *it;

    if (!msg) {
        send_error(NULL, -32700, "Parse error: not JSON");
        return;
    }
    if (has_nul_escape(line, len)) {
        const cJSON *id = cJSON_IsObject(msg) ? cJSON_GetObjectItemCaseSensitive(msg, "id") : NULL;
        send_error(cJSON_IsString(id) || cJSON_IsNumber(id) ? id : NULL, -32602,
                   "Invalid params: a string holds a NUL character (\\u0000), which no "
                   "argument may");
        cJSON_Delete(msg);
        return;
    }
    if (cJSON_IsArray(msg) && cJSON_GetArraySize(msg) == 0) {
        send_error(NULL, -32600, "Invalid Request: an empty batch");
    } else if (cJSON_IsArray(msg)) {
        cJSON *answers = cJSON_CreateArray();
        batch = answers;
        cJSON_ArrayForEach(it, msg)
            handle(m, it);
        batch = NULL;
        if (cJSON_GetArraySize(answers) > 0)
            send_json(answers); /* none when all were notifications */
        else
            cJSON_Delete(answers);
    } else {
        handle(m, msg);
    }
    cJSON_Delete(msg);
}

/* A line without its end (and a CR before it); blank lines are no messages. */
static void message(struct mcp *m, struct buf *line)
{
    size_t len = line->len;

    while (len && (line->data[len - 1] == '\r' || line->data[len - 1] == ' ' ||
                   line->data[len - 1] == '\t'))
        len--;
    if (len)
        handle_line(m, line->data, len);
}

static void mcp_close(struct mcp *m)
{
    if (m->pool_open) {
        session_end_all(&m->pool, "the MCP server that held it stopped");
        pool_release_all(&m->pool);
        backend_close(&m->be);
    }
    if (m->queue_open)
        queue_close(&m->q);
    buf_release(&m->pending);
}

/* The input as lines: one message per line; a line past the cap is
 * answered with an error and skipped to its end.  Nothing more is
 * answered once stdin ended during a call. */
struct reader {
    struct buf line;
    int skipping;
};

static void feed(struct mcp *m, struct reader *rd, const char *data, size_t n)
{
    size_t start = 0;

    for (size_t k = 0; k <= n && !m->stdin_ended; k++) {
        int eol = k < n && data[k] == '\n';
        if (k < n && !eol)
            continue;
        if (!rd->skipping && buf_append(&rd->line, data + start, k - start) != 0) {
            send_error(NULL, -32600, "Invalid Request: a message over %zu bytes", MCP_MAX_MESSAGE);
            buf_reset(&rd->line);
            rd->skipping = 1;
        }
        if (eol) {
            if (!rd->skipping)
                message(m, &rd->line);
            buf_reset(&rd->line);
            rd->skipping = 0;
        }
        start = k + 1;
    }
}

/* Reads stdin to its end (or a signal), first what was read during a call. */
static void serve(struct mcp *m)
{
    struct reader rd = {{0}, 0};
    char chunk[65536];

    buf_init(&rd.line, MCP_MAX_MESSAGE);
    while (!llmsb_interrupted && !m->stdin_ended) {
        ssize_t n;
        if (m->pending.len) {
            size_t len = m->pending.len;
            char *data = buf_steal(&m->pending);
            feed(m, &rd, data, len);
            free(data);
            continue;
        }
        n = read(STDIN_FILENO, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        feed(m, &rd, chunk, (size_t)n);
    }
    if (!rd.skipping && !m->stdin_ended && !llmsb_interrupted)
        message(m, &rd.line);
    buf_release(&rd.line);
}

int cmd_mcp(struct cli_globals *g, int argc, char **argv)
{
    struct mcp m = {0};
    struct stat st;

    m.g = g;
    m.wait_s = MCP_QUEUE_WAIT_S;
    for (int i = 1; i < argc; i++) {
        int rc = cli_global_opt(g, argc, argv, &i);
        if (rc < 0)
            return EXIT_USAGE;
        if (rc > 0)
            continue;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(mcp_usage, stdout);
            return 0;
        } else if (strcmp(argv[i], "--queue") == 0) {
            m.queue_mode = 1;
        } else if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
            char *end;
            m.wait_s = strtod(argv[++i], &end);
            if (*end || !(m.wait_s > 0)) {
                cli_error("mcp: --wait: \"%s\" is not a positive number of seconds", argv[i]);
                return EXIT_USAGE;
            }
        } else {
            cli_error("mcp: unknown option \"%s\" (see 'llm-sandbox mcp --help')", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (cli_config_finish(g) != 0)
        return EXIT_USAGE;
    if (m.queue_mode) {
        char token[24];
        call_id(&m, token, sizeof(token)); /* its random part */
        snprintf(m.scope, sizeof(m.scope), "mcp-%.8s-", token + strlen(token) - 8);
        m.calls = 0;
    }
    cli_signals();
    signal(SIGPIPE, SIG_IGN);
    atomic_init(&m.cancel, SCHED_GO);
    m.stdin_file = fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode);
    buf_init(&m.pending, 2 * MCP_MAX_MESSAGE);
    serve(&m);
    mcp_close(&m);
    return 0;
}
