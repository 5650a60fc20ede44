/* fmt_bigcodebench.c - BigCodeBench (bigcode-project/bigcodebench), its
 * complete and instruct splits alike: rows of task_id BigCodeBench/N,
 * complete_prompt, instruct_prompt, canonical_solution, code_prompt, test
 * (a unittest class TestCases), entry_point, libs.  The program is the
 * solution, "\n", the test, as its evaluator (bigcodebench/eval/__init__.py,
 * unsafe_execute) builds it, and the job runs TestCases under a runner of
 * ours that does what that function does around it; a pass is a run with
 * no failure and no error.  Jobs run in llmsb/custom/python-bigcodebench
 * (images/python-bigcodebench: Debian 12's packages); a task whose libs
 * name a module Debian does not package gets it as a library, so where no
 * package index answers it ends install_error naming it, never a model's
 * failure (docs/eval.md, "BigCodeBench"). */
#include "eval/convert_int.h"

#include <stdlib.h>
#include <string.h>

#define BCB_PREFIX "BigCodeBench/"
#define BCB_IMAGE "llmsb/custom/python-bigcodebench"
/* unsafe_execute's limit is max(240, the reference's time) + 1 s for the
 * tests; untrusted_check joins its process 1 s later */
#define BCB_TIMEOUT_S 242
/* its limits are 30 GB of address space and data, which no job here gets;
 * 4 GB is under limits.max.memory's default (8192) and holds every
 * reference of the excerpt (BigCodeBench/0 lists 10! permutations) */
#define BCB_MEMORY_MB 4096

/* The modules BigCodeBench's tasks list in libs that the image lacks --
 * Debian 12 does not package them (its python3-pycryptodome is the
 * Cryptodome namespace, not Crypto), or (wordcloud, gensim) not without a
 * gigabyte more -- and the PyPI name a job asks for
 * (images/python-bigcodebench/Dockerfile has the rest; keep the two in
 * step). */
static const struct {
    const char *module, *pip;
} missing[] = {
    {"tensorflow", "tensorflow"},
    {"keras", "keras"},
    {"textblob", "textblob"},
    {"librosa", "librosa"},
    {"wikipedia", "wikipedia"},
    {"sendgrid", "sendgrid"},
    {"python_http_client", "python-http-client"},
    {"blake3", "blake3"},
    {"wordninja", "wordninja"},
    {"pytesseract", "pytesseract"},
    {"wordcloud", "wordcloud"},
    {"gensim", "gensim"},
    {"Crypto", "pycryptodome"},
};

/* The runner: program.py's TestCases run as unsafe_execute runs them. */
static const char bcb_runner[] =
    "# llm-sandbox convert: runs program.py (solution + test) as BigCodeBench's\n"
    "# evaluator does: in a module __test__ with sys, os and environ, in a fresh\n"
    "# temporary directory, TZ=UTC, exit/quit taken away, its rlimits, stdout,\n"
    "# stderr and stdin swallowed, then its TestCases in a unittest.TestResult\n"
    "# under an alarm.  It passes when no test failed or erred and nothing\n"
    "# was raised; the failures go to stderr and the exit is 1.\n"
    "import builtins, contextlib, io, os, signal, subprocess, sys, tempfile, time, types\n"
    "import unittest\n"
    "\n"
    "LIMIT_S = 241.0\n"
    "MB = 1024 * 1024\n"
    "real_err, real_exit = sys.stderr, os._exit\n"
    "\n"
    "\n"
    "class Sink(io.StringIO):\n"
    "    def read(self, *args, **kwargs):\n"
    "        raise IOError\n"
    "\n"
    "    readline = readlines = read\n"
    "\n"
    "    def readable(self, *args, **kwargs):\n"
    "        return False\n"
    "\n"
    "\n"
    "class Timeout(Exception):\n"
    "    pass\n"
    "\n"
    "\n"
    "def on_alarm(signum, frame):\n"
    "    raise Timeout(\"Timed out!\")\n"
    "\n"
    "\n"
    "def piped(real):\n"
    "    # a child's output is piped unless captured, as the evaluator has it\n"
    "    def call(*args, **kwargs):\n"
    "        if kwargs.get(\"capture_output\"):\n"
    "            kwargs.pop(\"stdout\", None), kwargs.pop(\"stderr\", None)\n"
    "        else:\n"
    "            kwargs.setdefault(\"stdout\", subprocess.PIPE)\n"
    "            kwargs.setdefault(\"stderr\", subprocess.PIPE)\n"
    "        return real(*args, **kwargs)\n"
    "    return call\n"
    "\n"
    "\n"
    "def guard():\n"
    "    import resource\n"
    "    os.environ[\"TZ\"] = \"UTC\"\n"
    "    time.tzset()\n"
    "    os.environ[\"OMP_NUM_THREADS\"] = \"1\"\n"
    "    os.environ[\"TF_CPP_MIN_LOG_LEVEL\"] = \"3\"\n"
    "    os.environ[\"TF_ENABLE_ONEDNN_OPTS\"] = \"0\"\n"
    "    for what, mb in ((resource.RLIMIT_AS, 30 * 1024), (resource.RLIMIT_DATA, 30 * 1024),\n"
    "                     (resource.RLIMIT_STACK, 10)):\n"
    "        try:\n"
    "            resource.setrlimit(what, (mb * MB, mb * MB))\n"
    "        except (ValueError, OSError):\n"
    "            pass  # the sandbox's own limit is lower\n"
    "    builtins.exit = None\n"
    "    builtins.quit = None\n"
    "    try:\n"
    "        import matplotlib.pyplot as plt\n"
    "        plt.close(\"all\")\n"
    "    except ImportError:\n"
    "        pass\n"
    "\n"
    "\n"
    "def main():\n"
    "    with open(\"program.py\") as f:\n"
    "        src = f.read()\n"
    "    # /tmp is noexec in the sandbox: temporary files go under the work dir,\n"
    "    # where a script a task writes can be run, as on the evaluator's host\n"
    "    tempfile.tempdir = os.environ[\"TMPDIR\"] = os.path.abspath(\".tmp\")\n"
    "    os.makedirs(tempfile.tempdir, exist_ok=True)\n"
    "    os.chdir(tempfile.mkdtemp())\n"
    "    guard()\n"
    "    mod = types.ModuleType(\"__test__\")\n"
    "    mod.__dict__.update({\"__builtins__\": builtins, \"__file__\": \"__test__.py\",\n"
    "                         \"__package__\": None, \"__doc__\": None, \"sys\": sys, \"os\": os,\n"
    "                         \"environ\": os.environ})\n"
    "    result, sink = unittest.TestResult(), Sink()\n"
    "    popen, run = subprocess.Popen, subprocess.run\n"
    "    try:\n"
    "        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):\n"
    "            sys.stdin = sink\n"
    "            subprocess.Popen, subprocess.run = piped(popen), piped(run)\n"
    "            exec(compile(src, \"__test__.py\", \"exec\"), mod.__dict__)\n"
    "            sys.modules[\"__test__\"] = mod\n"
    "            suite = unittest.TestLoader().loadTestsFromTestCase(mod.TestCases)\n"
    "            signal.setitimer(signal.ITIMER_REAL, LIMIT_S)\n"
    "            signal.signal(signal.SIGALRM, on_alarm)\n"
    "            try:\n"
    "                suite.run(result)\n"
    "            finally:\n"
    "                signal.setitimer(signal.ITIMER_REAL, 0)\n"
    "    except BaseException as e:\n"
    "        real_err.write(\"BigCodeBench: %s: %s\\n\" % (type(e).__name__, e))\n"
    "        return 1\n"
    "    issues = result.failures + result.errors\n"
    "    for test, trace in issues:\n"
    "        real_err.write(\"BigCodeBench: %s failed:\\n%s\\n\" % (test.id().split(\".\")[-1], trace))\n"
    "    return 1 if issues else 0\n"
    "\n"
    "\n"
    "code = main()\n"
    "real_err.flush()\n"
    "real_exit(code)  # as the evaluator's child ends: threads left are not waited for\n";

/* A row with a task_id BigCodeBench/N and the fields its evaluator reads. */
static int bcb_adopt(struct convert_task *t, cJSON *row, const char *file, size_t line,
                     struct llmsb_err *err)
{
    static const char *const need[] = {"complete_prompt", "code_prompt", "test", NULL};
    const char *id = convert_str(row, "task_id");

    if (!id || strncmp(id, BCB_PREFIX, strlen(BCB_PREFIX)) != 0 ||
        !cJSON_GetObjectItemCaseSensitive(row, "complete_prompt"))
        return 0;
    for (int i = 0; need[i]; i++)
        if (!convert_str(row, need[i]))
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s:%zu: task \"%s\": %s must be a string (BigCodeBench's "
                                 "evaluator builds the program of it)",
                                 file, line, id, need[i]);
    t->id = id;
    t->lang = language_find("python");
    return 1;
}

static int bcb_program(const struct convert_task *t, const char *sol, struct buf *b)
{
    int rc = 0;

    rc |= buf_append_str(b, sol);
    rc |= buf_append_str(b, "\n");
    rc |= buf_append_str(b, convert_str(t->row, "test"));
    return rc;
}

static void bcb_fields(const struct convert_task *t, struct convert_job_fields *f)
{
    (void)t;
    f->timeout_s = BCB_TIMEOUT_S;
    f->as_script = 1;
    f->runner = bcb_runner;
    f->runner_file = "program.py";
}

/* The row's libs: a list of names, or the text of one (the published
 * rows have "['pandas', 'random']"). */
static int lib_listed(const cJSON *row, const char *module)
{
    const cJSON *libs = cJSON_GetObjectItemCaseSensitive(row, "libs"), *l;
    size_t n = strlen(module);

    if (cJSON_IsString(libs)) {
        for (const char *p = libs->valuestring; (p = strstr(p, module)) != NULL; p += n)
            if ((p == libs->valuestring || strchr("'\" [,", p[-1])) && strchr("'\"", p[n]))
                return 1;
        return 0;
    }
    cJSON_ArrayForEach(l, libs) {
        if (cJSON_IsString(l) && strcmp(l->valuestring, module) == 0)
            return 1;
    }
    return 0;
}

/* The image and its memory, and the modules of its libs the image lacks: meta.missing_modules,
 * and the job's libraries (their PyPI names). */
static int bcb_job(const struct convert_task *t, cJSON *job, cJSON *meta, const char *at,
                   struct llmsb_err *err)
{
    cJSON *mods = NULL, *pips = NULL;
    const cJSON *libs = cJSON_GetObjectItemCaseSensitive(t->row, "libs");

    (void)at;
    if (!cJSON_AddStringToObject(job, "image", BCB_IMAGE) ||
        !cJSON_AddNumberToObject(job, "memory", BCB_MEMORY_MB))
        goto nomem;
    if (libs && !cJSON_AddItemToObject(meta, "libs", cJSON_Duplicate(libs, 1)))
        goto nomem;
    for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++) {
        if (!lib_listed(t->row, missing[i].module))
            continue;
        if ((!mods && !(mods = cJSON_AddArrayToObject(meta, "missing_modules"))) ||
            (!pips && !(pips = cJSON_AddArrayToObject(job, "libraries"))))
            goto nomem;
        if (!cJSON_AddItemToArray(mods, cJSON_CreateString(missing[i].module)) ||
            !cJSON_AddItemToArray(pips, cJSON_CreateString(missing[i].pip)))
            goto nomem;
    }
    return 0;
nomem:
    return llmsb_err_set(err, LLMSB_ERR_NOMEM, "task \"%s\": out of memory", t->id);
}

/* The reference: complete_prompt, "\n", canonical_solution, as its
 * get_groundtruth runs it. */
static int bcb_references(struct convert_set *s, struct convert_task *t, struct convert_out *o,
                          const char *at, struct llmsb_err *err)
{
    const char *canon = convert_str(t->row, "canonical_solution");
    struct buf sol, code;
    int rc = 0;

    (void)s;
    if (!canon) {
        o->unsolved++;
        return 0;
    }
    buf_init(&sol, CONVERT_MAX_PROGRAM);
    buf_init(&code, CONVERT_MAX_PROGRAM);
    if (buf_append_str(&sol, convert_str(t->row, "complete_prompt")) != 0 ||
        buf_append_str(&sol, "\n") != 0 || buf_append_str(&sol, canon) != 0)
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "task \"%s\": out of memory", t->id);
    else
        rc = convert_job_write(o, t, t->id, sol.data, &code, at, err);
    buf_release(&sol);
    buf_release(&code);
    return rc;
}

/* ---- samples: {"task_id", "solution"} (the whole code) or {"task_id",
 * "completion"} (after complete_prompt), calibrated as its evaluate does by
 * default: code_prompt, "\n    pass\n" before it ---- */

struct bcb_samples {
    struct convert_set *set;
    const char *name;
    struct convert_out *out;
    struct buf sol, code;
};

static int bcb_sample(cJSON *row, size_t line, void *ctx, struct llmsb_err *err)
{
    struct bcb_samples *e = ctx;
    const char *id = convert_str(row, "task_id"), *whole = convert_str(row, "solution");
    const char *tail = convert_str(row, "completion");
    struct convert_task *t = NULL;
    char *jid = NULL, at[320];
    int rc = 0;

    snprintf(at, sizeof(at), "%s:%zu", e->name, line);
    buf_reset(&e->sol);
    if (!id || (!whole && !tail))
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "%s: a BigCodeBench sample needs task_id and a solution (the whole "
                           "code) or a completion (what follows complete_prompt) string",
                           at);
    else if (!(t = convert_set_find(e->set, id)))
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: task \"%s\" is not in %s", at, id,
                           e->set->name);
    else if (buf_append_str(&e->sol, convert_str(t->row, "code_prompt")) != 0 ||
             buf_append_str(&e->sol, "\n    pass\n") != 0 ||
             (!whole && buf_append_str(&e->sol, convert_str(t->row, "complete_prompt")) != 0) ||
             buf_append_str(&e->sol, whole ? whole : tail) != 0 || !(jid = convert_sample_id(t)))
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: out of memory", at);
    else
        rc = convert_job_write(e->out, t, jid, e->sol.data, &e->code, at, err);
    free(jid);
    cJSON_Delete(row);
    return rc;
}

static int bcb_samples(struct convert_set *s, const char *name, const char *text,
                       struct convert_out *o, struct llmsb_err *err)
{
    struct bcb_samples e = {.set = s, .name = name, .out = o};
    int rc;

    buf_init(&e.sol, CONVERT_MAX_PROGRAM);
    buf_init(&e.code, CONVERT_MAX_PROGRAM);
    rc = convert_each_row(name, text, bcb_sample, &e, err);
    buf_release(&e.sol);
    buf_release(&e.code);
    return rc;
}

const struct convert_format convert_bigcodebench = {
    .name = "bigcodebench",
    .label = "BigCodeBench (task_id BigCodeBench/N, complete_prompt)",
    .adopt = bcb_adopt,
    .family = "BigCodeBench",
    .program = bcb_program,
    .fields = bcb_fields,
    .job = bcb_job,
    .references = bcb_references,
    .samples = bcb_samples,
    .lacks = "canonical_solution",
};
