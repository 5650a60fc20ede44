/* proto.h - the framed protocol between the worker and llmsb-agent.
 *
 * Frame: "LS" magic, version byte, type byte, payload length (u32, big
 * endian), payload.  A payload is a run of TLV fields: tag (u16 BE), length
 * (u32 BE), value.  Integers are u64 BE in 8 bytes.  Unknown tags are skipped
 * so either side can add fields without breaking the other; a different
 * version byte is refused.  The agent's stdout carries agent->worker frames,
 * its stdin worker->agent frames.
 *
 * Conversation: agent sends HELLO; then per job worker sends JOB, agent
 * answers RESULT, cleans up and sends READY.  PING is answered by PONG.
 * A job with an install step and TAG_INSTALL_PAUSE set stops after a
 * successful install: the agent sends INSTALLED and runs the program only
 * after the worker's CONTINUE (the worker takes the container off the
 * network in between), then runs the install's offline step (TAG_BUILD_ARG:
 * builds of what the install fetched, which may run package code) before
 * the program.  A failed install ends the job with its RESULT.
 *
 * An agent whose HELLO (and PONG) says TAG_PRESTART 1 takes PRESTART before
 * a sandbox's first JOB: a JOB payload of which it reads the zygote, its
 * profile, the run argv and the env (the zygote that job would use); it
 * starts that zygote on the clean, idle sandbox, waits for it as a job
 * would (agent/zygote.c), and answers READY.  A worker sends it only to
 * such an agent; an older agent skips frame types it does not know.  A
 * PRESTART with TAG_PRESPAWN starts that job's run-step process ahead
 * (agent/prespawn.c) the same way.
 *
 * Live output: an agent whose HELLO (and PONG) says TAG_LIVE 1 answers a
 * JOB carrying TAG_LIVE 1 with OUTPUT frames while its run step runs, each
 * one chunk of the program's stdout or stderr (TAG_CHUNK_FD 1 or 2,
 * TAG_CHUNK_OFFSET: where the chunk starts in that stream, TAG_CHUNK_DATA),
 * coalesced (at most every PROTO_LIVE_FLUSH_MS or PROTO_LIVE_FLUSH_BYTES),
 * before its RESULT.  Together the chunks of a stream are a prefix of what
 * the RESULT carries of it (never past the job's output limit): the RESULT
 * stays the whole truth.  A worker sends TAG_LIVE only to such an agent. */
#ifndef LLMSB_PROTO_H
#define LLMSB_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include "common/common.h"
#include "common/compare.h"
#include "common/status.h"
#include "common/strlist.h"

#define PROTO_VERSION 1
#define PROTO_HEADER_LEN 8
#define PROTO_MAX_PAYLOAD ((size_t)128 << 20)
#define PROTO_MAX_FILES 1024
/* What one RESULT frame carries at most, and so the largest limits a
 * worker may set (the config's bounds are these): stdout+stderr, the
 * collected files, the compile output; with their TLV headers and skip
 * notes they stay under PROTO_MAX_PAYLOAD. */
#define PROTO_MAX_OUTPUT ((size_t)64 << 20)
#define PROTO_MAX_ARTIFACTS ((size_t)48 << 20)
#define PROTO_MAX_COMPILE_OUTPUT ((size_t)1 << 20)
#define PROTO_NOTES_SLACK ((size_t)1 << 20) /* artifact names, skip notes */
#define PROTO_MAX_ARGS STRLIST_MAX
#define PROTO_MAX_CASES 1000
/* Of each case's stdout and stderr, what its entry in the RESULT keeps (the
 * comparison sees all of it, up to the job's output limit), while all the
 * cases together stay under PROTO_MAX_CASE_OUTPUT. */
#define PROTO_CASE_KEEP ((size_t)16 << 10)
/* All cases' kept output together: the RESULT frame's room beside the
 * output, artifacts, compile output and notes (128 - 64 - 48 - 1 - 1 MiB). */
#define PROTO_MAX_CASE_OUTPUT ((size_t)8 << 20)
_Static_assert(PROTO_MAX_OUTPUT + PROTO_MAX_ARTIFACTS + PROTO_MAX_COMPILE_OUTPUT +
                       PROTO_NOTES_SLACK + PROTO_MAX_CASE_OUTPUT + PROTO_MAX_CASES * 256 <
                   PROTO_MAX_PAYLOAD,
               "a RESULT with everything at its cap fits one frame");

enum proto_type {
    PROTO_HELLO = 1,
    PROTO_JOB = 2,
    PROTO_RESULT = 3,
    PROTO_READY = 4,
    PROTO_PING = 5,
    PROTO_PONG = 6,
    PROTO_SHUTDOWN = 7,
    PROTO_INSTALLED = 8, /* agent: libraries installed; waits for CONTINUE */
    PROTO_CONTINUE = 9,  /* worker: go on to compile and run */
    PROTO_PRESTART = 10, /* worker: start the zygote this job would use; agent answers READY */
    PROTO_OUTPUT = 11    /* agent: a chunk of a live job's output (TAG_LIVE), before its RESULT */
};

/* How an agent coalesces a live job's output: a chunk goes out once this
 * long has passed since the last one, or this many bytes wait. */
#define PROTO_LIVE_FLUSH_MS 100
#define PROTO_LIVE_FLUSH_BYTES ((size_t)32 << 10)

enum proto_tag {
    /* hello / ready */
    TAG_AGENT_VERSION = 1,
    TAG_AGENT_PID = 2,
    TAG_CLEAN = 3,    /* ready: 1 if cleanup fully succeeded */
    TAG_PRESTART = 4, /* hello / pong: 1 when the agent takes PROTO_PRESTART */
    /* job */
    TAG_JOB_ID = 10,
    TAG_FILE_PATH = 11, /* followed by TAG_FILE_DATA and TAG_FILE_MODE */
    TAG_FILE_DATA = 12,
    TAG_FILE_MODE = 13,
    TAG_COMPILE_ARG = 14,
    TAG_RUN_ARG = 15,
    TAG_ENV = 16,
    TAG_STDIN = 17,
    TAG_TIMEOUT_MS = 18,
    TAG_COMPILE_TIMEOUT_MS = 19,
    TAG_OUTPUT_LIMIT = 20,
    TAG_COMPILE_OUTPUT_LIMIT = 21,
    TAG_FSIZE_LIMIT = 22,
    TAG_NOFILE = 23,
    TAG_NPROC = 24,
    TAG_ARTIFACT_GLOB = 25, /* repeated */
    TAG_ARTIFACT_MAX_COUNT = 26,
    TAG_ARTIFACT_MAX_FILE = 27,
    TAG_ARTIFACT_MAX_TOTAL = 28,
    TAG_PLOTS_DIR = 29,   /* absolute; made for the job, collected after */
    TAG_INSTALL_ARG = 30, /* argv of the library install step */
    TAG_INSTALL_ENV = 31, /* extra "K=V" for the install step only */
    TAG_INSTALL_TIMEOUT_MS = 32,
    TAG_INSTALL_PAUSE = 33,  /* 1: INSTALLED/CONTINUE between install and run */
    TAG_BUILD_ARG = 34,      /* argv of the install's offline step, after the pause */
    TAG_CASE = 35,           /* repeated, nested: TAG_CASE_* fields of one test case */
    TAG_COMPARE = 36,        /* text: the cases' comparison, as compare_parse reads it */
    TAG_ZYGOTE_PROFILE = 37, /* what the zygote preloads: "base" (default), "data" or "numpy" */
    TAG_STOP_ON_FAILURE = 38,
    TAG_ZYGOTE = 39, /* absolute path of the image's zygote script for run_argv[0] */
    /* result */
    TAG_STATUS = 40,
    TAG_EXIT_CODE = 41,
    TAG_SIGNAL = 42,
    TAG_STDOUT = 43,
    TAG_STDERR = 44,
    TAG_STDOUT_TRUNC = 45,
    TAG_STDERR_TRUNC = 46,
    TAG_COMPILE_OUTPUT = 47,
    TAG_DURATION_MS = 48,
    TAG_CPU_MS = 49,
    TAG_MAX_RSS_KB = 50,
    TAG_ERROR = 51,
    TAG_ARTIFACTS = 52, /* nested: NAME, DATA pairs and SKIPPED notes */
    TAG_ARTIFACT_NAME = 53,
    TAG_ARTIFACT_DATA = 54,
    TAG_ARTIFACT_SKIPPED = 55, /* "path: reason" */
    TAG_CASES = 56,            /* nested: one TAG_CASE_RESULT per case run */
    TAG_CASE_RESULT = 57,      /* nested: result tags of one case and TAG_CASE_PASSED */
    TAG_CASE_PASSED = 58,
    TAG_ZYGOTE_USED = 59, /* 1: the program was forked by the zygote */
    /* a job: its session's id (the program runs in the session's process,
     * whose state persists; no cleanup after it) */
    TAG_SESSION = 60,
    TAG_SESSION_ENDED = 61, /* a result: 1 when the session's process is gone */
    /* a result: 1 when its exit code is not known though its status has
     * one: the program never ran (the compiler ran out of memory:
     * memory_limit; a session's close), or whether and how it ran is
     * unknown (the agent's result never came: a backstop timeout, the
     * container's OOM kill); exit_code null */
    TAG_NOT_RUN = 62,
    /* a job: absolute path of the image's warm compiler for compile_argv
     * (agent/javac.c); absent: the compile step runs plainly */
    TAG_COMPILE_SERVER = 63,
    /* a job: "NAME=words": its run step may use a process started ahead
     * of it (agent/prespawn.c), with words added to variable NAME (the
     * job's own value first) so that it waits for the agent's go */
    TAG_PRESPAWN = 70,
    TAG_PRESPAWNED = 71, /* a result: 1 when the run used the process started ahead */
    /* a result, nested: TAG_PHASE_* u64 fields, the milliseconds the agent
     * measured for each step it ran (an agent without it sends none: the
     * worker's phases then hold only what it measured itself) */
    TAG_PHASES = 72,
    /* hello / pong: 1 when the agent sends OUTPUT frames; a job: 1 asks
     * for them (docs/jobs.md, live) */
    TAG_LIVE = 73,
    /* an OUTPUT frame's fields */
    TAG_CHUNK_FD = 74,     /* 1 stdout, 2 stderr */
    TAG_CHUNK_OFFSET = 75, /* where the chunk starts in its stream, bytes */
    TAG_CHUNK_DATA = 76,
    /* hello / pong: 1 when the agent's kernel is gVisor's (its uname
     * version is PROTO_GVISOR_UNAME_VERSION): the host runs one job in
     * that container, whatever it was told of the runtime */
    TAG_KERNEL_GVISOR = 77
};

/* The kernel version (uname -v) every gVisor sandbox reports, with release
 * 4.4.0. */
#define PROTO_GVISOR_UNAME_VERSION "#1 SMP Sun Jan 10 15:06:54 PST 2016"

/* The container a job of TAG_COMPILE_SERVER runs in, both sides' rule:
 * the agent starts the warm javac (agent/javac.c) only where the memory
 * limit is PROTO_JAVAC_MIN_MEMORY_MB or more and the pids limit
 * PROTO_JAVAC_MIN_PIDS + PROTO_JAVAC_PIDS or more, and the worker makes
 * such a container's pids limit the job's own plus PROTO_JAVAC_PIDS (the
 * server's threads, each a task of the pids cgroup), so that they take
 * none of the job's (exec/exec.c). */
#define PROTO_JAVAC_MIN_MEMORY_MB 512
#define PROTO_JAVAC_MIN_PIDS 256
#define PROTO_JAVAC_PIDS 12

/* The fields inside TAG_PHASES; a step that did not run is left out. */
enum proto_phase_tag {
    TAG_PHASE_INSTALL_MS = 1, /* the install step and its offline step (not the pause between) */
    TAG_PHASE_COMPILE_MS = 2,
    TAG_PHASE_RUN_MS = 3,    /* the run step, or every case with its state put back */
    TAG_PHASE_COLLECT_MS = 4 /* artifact collection */
};

/* The fields inside one TAG_CASE. */
enum proto_case_tag {
    TAG_CASE_STDIN = 1,
    TAG_CASE_ARG = 2, /* repeated: appended to the run argv */
    TAG_CASE_EXPECT_STDOUT = 3,
    TAG_CASE_EXPECT_EXIT = 4
};

struct proto_frame {
    int type;
    const char *payload; /* points into the caller's buffer */
    size_t len;
};

/* Parses one frame from data. Returns 1 with *used set when a whole frame is
 * there, 0 when more bytes are needed, or a negative code (bad magic,
 * version, size) with err set. */
int proto_frame_parse(const char *data, size_t len, struct proto_frame *f, size_t *used,
                      struct llmsb_err *err);
/* Writes one frame (header + payload) to fd, all of it. Returns 0 or -1. */
int proto_frame_write(int fd, int type, const char *payload, size_t len);
/* Appends a frame header + payload to out. */
int proto_frame_append(struct buf *out, int type, const char *payload, size_t len);

int proto_put_bytes(struct buf *b, uint16_t tag, const void *p, size_t n);
int proto_put_str(struct buf *b, uint16_t tag, const char *s);
int proto_put_u64(struct buf *b, uint16_t tag, uint64_t v);

/* Walks TLV fields. Returns 1 with the field, 0 at the end, negative if the
 * payload is malformed. */
int proto_tlv_next(const char *p, size_t len, size_t *off, uint16_t *tag, const char **val,
                   uint32_t *vlen);
int proto_get_u64(const char *val, uint32_t vlen, uint64_t *out);

struct proto_file {
    char *path;
    char *data;
    size_t len;
    uint32_t mode;
};

struct proto_case {
    char *stdin_data;
    size_t stdin_len;
    char **args; /* NULL-terminated; appended to the run argv */
    size_t nargs;
    char *expect_stdout; /* NULL: not compared */
    size_t expect_len;
    uint64_t expect_exit;
};

struct proto_job {
    char *id;
    struct proto_file *files;
    size_t nfiles;
    char **compile_argv; /* NULL-terminated; ncompile == 0: no compile step */
    size_t ncompile;
    char **run_argv; /* NULL-terminated */
    size_t nrun;
    char **env; /* NULL-terminated "K=V" */
    size_t nenv;
    /* the worker's side only, never sent: how many of env's last entries
     * are the job's own (the rest are the sandbox's and the language's) */
    size_t nenv_own;
    char *stdin_data;
    size_t stdin_len;
    uint64_t timeout_ms;
    uint64_t compile_timeout_ms;
    uint64_t output_limit; /* stdout + stderr bytes */
    uint64_t compile_output_limit;
    uint64_t fsize_limit; /* RLIMIT_FSIZE bytes */
    uint64_t nofile;
    uint64_t nproc;
    /* the worker's side only, never sent: the job's pids limit, which
     * bounds nproc where the sandbox's runtime profile says so (the
     * engine's, or gVisor's when the agent's HELLO says gVisor: sandbox.c) */
    uint64_t pids;
    char **artifact_globs; /* NULL-terminated; none: collect nothing */
    size_t nglobs;
    uint64_t artifact_max_count;
    uint64_t artifact_max_file;
    uint64_t artifact_max_total;
    char *plots_dir;     /* NULL: no plot capture */
    char **install_argv; /* NULL-terminated; ninstall == 0: no install step */
    size_t ninstall;
    char **install_env; /* added to env for the install step */
    size_t ninstall_env;
    uint64_t install_timeout_ms;
    uint64_t install_pause;
    char **build_argv; /* NULL-terminated; nbuild == 0: no offline step */
    size_t nbuild;
    struct proto_case *cases; /* ncases > 0: compile once, run each case */
    size_t ncases;
    struct compare compare; /* of each case's stdout with what it expects */
    uint64_t stop_on_failure;
    char *zygote;         /* NULL: a plain start; else the zygote script (agent/zygote.c) */
    char *zygote_profile; /* NULL: "base" */
    char *session;        /* NULL: no session; else its id */
    char *compile_server; /* NULL: a plain compile; else the warm compiler (agent/javac.c) */
    char *prespawn;       /* NULL: a plain start; else TAG_PRESPAWN's "NAME=words" */
    uint64_t live;        /* 1: OUTPUT frames while the run step runs (TAG_LIVE) */
};

struct proto_result {
    enum job_status status;
    int64_t exit_code;
    int64_t signal;
    struct buf out;
    struct buf err;
    struct buf compile_output;
    int out_truncated;
    int err_truncated;
    int64_t duration_ms;
    int64_t cpu_ms;
    int64_t max_rss_kb;
    int zygote;        /* the run went through the zygote */
    int prespawned;    /* the run used the process started ahead (TAG_PRESPAWNED) */
    int session_ended; /* the session's process is gone after this call */
    int not_run;       /* no exit code: never ran, or unknown (TAG_NOT_RUN) */
    char error[256];
    struct buf artifacts; /* nested TLVs: TAG_ARTIFACT_NAME/DATA pairs, SKIPPED */
    struct buf cases;     /* TAG_CASE_RESULT entries, one per case run */
    /* TAG_PHASES: ms per step as the agent measured it; -1: not run, or
     * not reported (an older agent) */
    struct proto_phases {
        int64_t install_ms, compile_ms, run_ms, collect_ms;
    } phases;
};

void proto_job_init(struct proto_job *j);
/* Frees n cases and the array; a deep copy of n cases, NULL on ENOMEM. */
void proto_cases_free(struct proto_case *c, size_t n);
struct proto_case *proto_cases_copy(const struct proto_case *c, size_t n);
void proto_job_release(struct proto_job *j);
int proto_job_encode(const struct proto_job *j, struct buf *payload);
/* Decodes a JOB payload; on error j is released and err names the field. */
int proto_job_decode(const char *p, size_t len, struct proto_job *j, struct llmsb_err *err);

/* caps: the largest stdout/stderr/compile output the decoder will accept */
void proto_result_init(struct proto_result *r, size_t out_cap);
void proto_result_release(struct proto_result *r);
int proto_result_encode(const struct proto_result *r, struct buf *payload);
int proto_result_decode(const char *p, size_t len, struct proto_result *r, struct llmsb_err *err);

/* One OUTPUT frame's chunk: fd 1 (stdout) or 2 (stderr), where it starts
 * in that stream, its bytes (pointing into the payload). */
struct proto_chunk {
    int fd;
    uint64_t offset;
    const char *data;
    size_t len;
};
/* Where a live job's chunks go as they come (the front end's: a Redis
 * stream, a terminal, an MCP progress notification).  fn and begin are
 * called in the thread that runs the job.  begin (may be NULL) comes
 * before each attempt's JOB frame: an attempt's chunks start at offset 0
 * again, and what came of an earlier attempt is void. */
struct proto_chunk_sink {
    void (*fn)(void *arg, const struct proto_chunk *c);
    void *arg;
    void (*begin)(void *arg);
};
int proto_chunk_encode(const struct proto_chunk *c, struct buf *payload);
/* Decodes an OUTPUT payload (untrusted: from the container): fd must be 1
 * or 2 and the offset plus the length must not wrap; c->data points into
 * p.  Returns 0, or LLMSB_ERR_PROTO with err naming the field. */
int proto_chunk_decode(const char *p, size_t len, struct proto_chunk *c, struct llmsb_err *err);

/* Validates a job file path (and an artifact name): relative, no "..", no
 * empty or "." parts, no control characters (NUL, newline, escape, ...),
 * at most 255 bytes a part and 4096 in all. */
int proto_path_check(const char *path, size_t len, struct llmsb_err *err);

#endif
