/* convert_decode.c - LiveCodeBench's private_test_cases as published
 * (base64 of zlib of a Python pickle of a JSON string) decoded for
 * `convert`: reading a pickle runs whatever code it names, so no pickle is
 * read on the host; each blob is the stdin of a job of the Python image (no
 * network, the job's limits) that unpickles it and prints the JSON, run
 * through the in-process batch `submit --local` uses.  What comes back is
 * text like any program's output: eval/fmt_stdio.c parses it and checks
 * it against the tests' schema before any of it is used. */
#include "convert_decode.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch.h"
#include "config/jobfile.h"
#include "job/job.h"

/* The decoder's limits: its output is the tests (64 MiB at most, the
 * default limits.max.output), its memory the pickle and the JSON twice. */
#define DECODE_OUTPUT_BYTES ((double)(64 << 20))
#define DECODE_MEMORY_MB 2048
#define DECODE_TIMEOUT_S 120
#define DECODE_WHY_MAX 200

/* Runs in the sandbox: stdin the blob; stdout the JSON the pickle's string
 * holds, ASCII only; else why on stderr and exit 3. */
static const char decoder[] =
    "# llm-sandbox convert: LiveCodeBench's private_test_cases (stdin: base64 of zlib\n"
    "# of a pickle) decoded here, in the sandbox, never on the host.\n"
    "import base64, binascii, json, pickle, sys, zlib\n"
    "MAX = 64 << 20\n"
    "def fail(why):\n"
    "    sys.stderr.write(why + '\\n')\n"
    "    sys.exit(3)\n"
    "try:\n"
    "    data = base64.b64decode(sys.stdin.buffer.read())\n"
    "except (binascii.Error, ValueError) as e:\n"
    "    fail('not base64 (%s)' % e)\n"
    "z = zlib.decompressobj()\n"
    "try:\n"
    "    raw = z.decompress(data, MAX + 1)\n"
    "except zlib.error as e:\n"
    "    fail('not zlib data (%s)' % e)\n"
    "if len(raw) > MAX or z.unconsumed_tail:\n"
    "    fail('over 64 MiB once decompressed')\n"
    "if not z.eof:\n"
    "    fail('the zlib stream is cut short')\n"
    "try:\n"
    "    value = pickle.loads(raw)  # what a pickle runs, runs here\n"
    "except Exception as e:\n"
    "    fail('not a pickle (%s)' % type(e).__name__)\n"
    "if not isinstance(value, str):\n"
    "    fail('the pickle holds an object of type %s, not a JSON string' % type(value).__name__)\n"
    "try:\n"
    "    tests = json.loads(value)\n"
    "except ValueError:\n"
    "    fail(\"the pickle's string is not JSON\")\n"
    "sys.stdout.write(json.dumps(tests, ensure_ascii=True))\n";

static const char *const decode_names[BATCH_NAMES] = {
    [BATCH_NAME_ALLOW_INVALID] = "(none)", [BATCH_NAME_RERUN] = "(none)",
    [BATCH_NAME_REUSE] = "(none)",         [BATCH_NAME_NO_DEDUP] = "(none)",
    [BATCH_NAME_RECHECK] = "(none)",       [BATCH_NAME_OUT] = "(none)",
};

/* The batch's problems and warnings on stderr; its notes are not ours,
 * and its error is err's, which convert says. */
static void decode_say(void *ud, enum batch_say kind, const char *line)
{
    (void)ud;
    if (kind == BATCH_SAY_LINE || kind == BATCH_SAY_WARNING)
        fprintf(stderr, "convert: decoding private_test_cases: %s\n", line);
}

/* The jobs, one per blob, as JSON Lines.  Returns a new string (caller
 * frees) or NULL when out of memory. */
static char *decode_jobs(const struct convert_decode *d, size_t n, const char *const *blobs)
{
    struct buf b;
    char id[64];

    buf_init(&b, (size_t)-1);
    for (size_t i = 0; i < n; i++) {
        cJSON *job = cJSON_CreateObject();
        char *text = NULL;
        int ok;
        snprintf(id, sizeof(id), "lcb-decode/%zu", i);
        ok = job && cJSON_AddStringToObject(job, "id", id) &&
             cJSON_AddStringToObject(job, "lang", "python") &&
             cJSON_AddStringToObject(job, "code", decoder) &&
             cJSON_AddStringToObject(job, "stdin", blobs[i]) &&
             cJSON_AddFalseToObject(job, "network") &&
             cJSON_AddNumberToObject(job, "timeout", DECODE_TIMEOUT_S) &&
             cJSON_AddNumberToObject(job, "memory", DECODE_MEMORY_MB) &&
             cJSON_AddNumberToObject(job, "output", DECODE_OUTPUT_BYTES) &&
             (!d->image || cJSON_AddStringToObject(job, "image", d->image)) &&
             (text = cJSON_PrintUnformatted(job)) && buf_append_str(&b, text) == 0 &&
             buf_append(&b, "\n", 1) == 0;
        free(text);
        cJSON_Delete(job);
        if (!ok) {
            buf_release(&b);
            return NULL;
        }
    }
    return buf_steal(&b);
}

/* The last line of text, at most DECODE_WHY_MAX bytes, anything but
 * printable ASCII as '?'. Returns a new string or NULL. */
static char *last_line(const char *text)
{
    const char *end = text + strlen(text), *from;
    char *s;
    size_t k = 0;

    while (end > text && (end[-1] == '\n' || end[-1] == '\r'))
        end--;
    for (from = end; from > text && from[-1] != '\n';)
        from--;
    if (end - from > DECODE_WHY_MAX)
        from = end - DECODE_WHY_MAX;
    if (!(s = malloc((size_t)(end - from) + 1)))
        return NULL;
    for (; from < end; from++)
        s[k++] = *from >= 0x20 && *from < 0x7f ? *from : '?';
    s[k] = '\0';
    return s;
}

/* Job i's result into out[i] or why[i]. */
static int decode_result(const cJSON *r, char **out, char **why)
{
    const char *status = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "status"));
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(r, "exit_code");
    const char *stdout_ = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "stdout"));
    const char *stderr_ = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "stderr"));
    char *said = NULL;

    if (status && strcmp(status, "ok") == 0 && cJSON_IsNumber(code) && code->valuedouble == 0 &&
        !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "stdout_truncated")))
        return (*out = strdup(stdout_ ? stdout_ : "")) ? 0 : -1;
    said = last_line(stderr_ ? stderr_ : "");
    if (!said || asprintf(why, "the decoder ended %s%s%s", status ? status : "with no result",
                          *said ? ": " : "", said) < 0)
        *why = NULL;
    free(said);
    return *why ? 0 : -1;
}

int convert_decode_sandbox(void *ud, size_t n, const char *const *blobs, char **out, char **why,
                           struct llmsb_err *err)
{
    const struct convert_decode *d = ud;
    struct batch_opts bo = {.dedup = 1, .names = decode_names, .say = decode_say};
    struct jobfile jf;
    struct batch b;
    const char **run = NULL; /* the blobs that fit a job */
    size_t nrun = 0;
    char *text = NULL;
    int rc = 0, loaded = 0, inited = 0;

    if (cli_config_finish(d->g) != 0)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "decoding private_test_cases: no config");
    bo.slots = (int)d->g->cfg.slots;
    fprintf(stderr, "convert: decoding %zu rows' private_test_cases in sandbox jobs (%s)\n", n,
            d->image ? d->image : "the python image");
    if (!(run = calloc(n ? n : 1, sizeof(*run)))) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (strlen(blobs[i]) <= JOB_MAX_STDIN)
            run[nrun++] = blobs[i];
        else if (!(why[i] = strdup("over the 16 MiB a job's stdin takes")))
            rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    }
    if (rc != 0 || nrun == 0)
        goto out;
    if (!(text = decode_jobs(d, nrun, run))) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = jobfile_load_string(&jf, text, strlen(text), "decode.jsonl", err)) != 0)
        goto out;
    loaded = 1;
    inited = 1; /* released either way */
    if ((rc = batch_init(&b, &d->g->cfg, &jf, &bo, err)) != 0)
        goto out;
    if ((rc = batch_check(&b, err)) != 0 || (rc = batch_local_plan(&b, err)) != 0)
        goto out;
    if ((rc = batch_local_run(&b, err)) != BATCH_DONE) {
        if (rc >= 0)
            rc = llmsb_err_set(err, LLMSB_ERR_SYS, "decoding private_test_cases: stopped");
        goto out;
    }
    for (size_t i = 0, k = 0; rc == 0 && i < n && k < b.n; i++)
        if (!why[i] && decode_result(b.results[k++], &out[i], &why[i]) != 0)
            rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
out:
    if (rc != 0) {
        char msg[sizeof(err->msg)];
        snprintf(msg, sizeof(msg), "%s", err->code ? err->msg : "failed");
        llmsb_err_set(err, rc, "decoding LiveCodeBench's private_test_cases in the sandbox: %s",
                      msg);
    }
    if (inited)
        batch_release(&b);
    if (loaded)
        jobfile_release(&jf);
    free(run);
    free(text);
    return rc;
}
