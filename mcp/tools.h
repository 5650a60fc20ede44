/* tools.h - the MCP server's tools as pure mappings (no engine, no Redis,
 * no I/O): the initialize reply and the tool schemas, execute_code's and
 * close_session's arguments as job fields (checked as any job's once made
 * a job), submit_jobs' arguments and its job file in the client's scope,
 * a result object as the tool's content and a batch's results as
 * submit_jobs', the dispatch of methods and tools, and the language each
 * session was opened in.  mcp/server.c runs the calls these describe. */
#ifndef LLMSB_MCP_TOOLS_H
#define LLMSB_MCP_TOOLS_H

#include <cjson/cJSON.h>
#include "common/common.h"
#include "common/fields.h"
#include "config/config.h"
#include "config/jobfile.h"
#include "job/job.h"

/* The result of initialize: the protocol version asked for when it is one
 * we speak, else our newest.  New cJSON; caller deletes. */
cJSON *mcp_initialize(const cJSON *params);
/* 1 when v is a protocol version we speak (an MCP-Protocol-Version header). */
int mcp_version_known(const char *v);
/* The result of tools/list: execute_code, submit_jobs, close_session,
 * get_supported_languages, get_language_details; limits from cfg. */
cJSON *mcp_tools_list(const struct config *cfg);

/* Tool results: {content, isError}.  New cJSON; caller deletes. */
cJSON *mcp_tool_result(cJSON *content, int is_error); /* consumes content */
cJSON *mcp_tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* get_supported_languages: the names as a JSON array in one text. */
cJSON *mcp_supported_languages(void);
/* get_language_details: args' "language", its file, commands and image. */
cJSON *mcp_language_details(const struct config *cfg, const cJSON *args);

/* One call's job fields.  Values point into the arguments (which must
 * outlive it) and into its own buffers. */
struct mcp_call {
    struct fields f;
    char timeout[40];
    char *lists[2]; /* libraries and artifacts as JSON text; owned */
    char sid[JOB_SESSION_MAX + 64];
};

void mcp_call_init(struct mcp_call *c);
void mcp_call_release(struct mcp_call *c);
/* execute_code's arguments as the job fields of job id: a session id gets
 * scope before it (the server's own, so two servers' "s1" are two
 * sessions); without "language" it is lang_default.  Returns 0, or
 * LLMSB_ERR_INVALID with err naming the argument. */
int mcp_execute_fields(struct mcp_call *c, const cJSON *args, const char *id, const char *scope,
                       const char *lang_default, struct llmsb_err *err);
/* close_session's job fields: session (as the client names it), scoped. */
void mcp_close_fields(struct mcp_call *c, const char *session, const char *id, const char *scope);

/* submit_jobs: a job file's text run as one batch (batch/batch.h).  Its
 * caps: the jobs of one call (the answer carries each one's result), the
 * bytes of the answer's results past which a result comes short (its
 * verdict without its output), the bytes of the lines the batch says. */
#define MCP_SUBMIT_MAX_JOBS 1000
#define MCP_SUBMIT_RESULTS_MAX ((size_t)4 << 20)
#define MCP_SUBMIT_SAID_MAX ((size_t)64 << 10)
/* submit_jobs' arguments (jobs borrowed from them). */
struct mcp_submit {
    const char *jobs; /* the job file: JSON Lines, or YAML (defaults: and jobs:) */
    size_t len;
    int dedup, recheck, wait, allow_invalid;
    int existing; /* an enum batch_existing */
};
/* Checks submit_jobs' arguments into s: each of its type, jobs required,
 * wait false and existing other than "refuse" only through the queue
 * (queue: the server's --queue).  Returns 0, or LLMSB_ERR_INVALID with err
 * naming the argument, its value and why. */
int mcp_submit_args(const cJSON *args, int queue, struct mcp_submit *s, struct llmsb_err *err);
/* The file's jobs in the client's scope: its ids and sessions get scope
 * before them (so no other client can name, read or replace them), and
 * what only a batch writes (copies, recheck) is refused, as are more than
 * MCP_SUBMIT_MAX_JOBS jobs.  Returns 0, or LLMSB_ERR_INVALID (err: the
 * file's line and the field) or LLMSB_ERR_NOMEM. */
int mcp_jobs_scope(struct jobfile *jf, const char *scope, struct llmsb_err *err);
/* Removes every occurrence of scope from text, in place ("": none). */
void mcp_unscope(char *text, const char *scope);
/* submit_jobs' answer: text (what the batch said, its summary), then its
 * results, one JSON object a line in the file's order (results[i], a
 * result or a job's not_finished line), their id and copy_of as the client
 * named them; past MCP_SUBMIT_RESULTS_MAX a result comes short (its
 * verdict and "omitted"); results NULL: the text alone.  isError as
 * is_error.  New cJSON. */
cJSON *mcp_submit_answer(const char *text, cJSON *const *results, size_t n, const char *scope,
                         int is_error);
/* submit_jobs' answer when it does not wait: text, then the ids sent (a
 * JSON array, scope removed).  New cJSON. */
cJSON *mcp_submit_sent(const char *text, char *const *ids, size_t n, const char *scope);

/* A result object (result_fields_json's form) as the tool's answer: the
 * program's stdout, its stderr, compile output and the policy's findings
 * when they matter, one status line, then its plots and files.  isError
 * unless the status is ok. */
cJSON *mcp_result_content(const cJSON *r);
/* close_session's answer once the session is gone. */
cJSON *mcp_session_closed(const char *session);
/* The answer to a call that brought no result, from why (err): invalid,
 * cancelled (client_left: how the client left, e.g. "stdin ended (the
 * client left)"; NULL: the server was stopped) or internal_error. */
cJSON *mcp_call_failed(const struct llmsb_err *err, const char *client_left);
struct jsonrpc;
/* A progressToken's cap (a string's bytes; a longer one is a JSON-RPC
 * error), and the most a call's progress notifications send in all: past
 * it one says so and the rest are dropped (the answer has the output). */
#define MCP_PROGRESS_TOKEN_MAX 256
#define MCP_PROGRESS_MAX_BYTES ((size_t)8 << 20)
/* Where a call's progress goes: the client's progressToken (its
 * params._meta's: a string of at most MCP_PROGRESS_TOKEN_MAX bytes or a
 * number) and the connection the call came on. */
struct mcp_progress {
    struct jsonrpc *rpc;
    const cJSON *token;
};
/* The calls that run a job (the server's: in this process or queued); each
 * returns the tool's result, a new cJSON.  execute_code's progress is
 * NULL unless the client asked for progress (docs/mcp.md). */
struct mcp_runner {
    cJSON *(*execute_code)(void *ud, const cJSON *args, const struct mcp_progress *progress);
    cJSON *(*close_session)(void *ud, const cJSON *args);
    /* progress: the jobs done, of how many */
    cJSON *(*submit_jobs)(void *ud, const cJSON *args, const struct mcp_progress *progress);
    void *ud;
};
/* MCP's methods (initialize, ping, tools/list, tools/call) answering the
 * request id through rpc: a jsonrpc_method_fn's body.  The tools that run
 * a job go to run. */
void mcp_method(const struct config *cfg, const struct mcp_runner *run, struct jsonrpc *rpc,
                const cJSON *id, const char *method, const cJSON *params);

/* A string member of o, or "" when there is none. */
const char *mcp_str_of(const cJSON *o, const char *name);

/* The language of each session this server's calls opened, so that a
 * later call without "language" runs in it (a session has one).  Past
 * MCP_SESSIONS_KEPT the one used least recently is forgotten, and a call
 * to it without "language" is Python's again (invalid for a session of
 * another language).  `now` is a clock of calls. */
#define MCP_SESSIONS_KEPT 256
struct mcp_sessions {
    struct mcp_session {
        char sid[JOB_SESSION_MAX + 1];
        char lang[16];
        unsigned long used; /* `now` at its last call */
    } s[MCP_SESSIONS_KEPT];
};

/* The remembered session sid (as the client names it), or NULL; a hit
 * counts as a use at now. */
struct mcp_session *mcp_session_known(struct mcp_sessions *ss, const char *sid, unsigned long now);
/* Remembers (or forgets, lang NULL) the language of session sid. */
void mcp_session_remember(struct mcp_sessions *ss, const char *sid, const char *lang,
                          unsigned long now);

#endif
