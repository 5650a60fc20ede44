/* fmt_multiple.c - MultiPL-E's rows (nuprl/MultiPL-E: name, language, prompt,
 * tests, stop_tokens; its completions files add a completions list) as
 * convert's format row.  Its evaluator (evaluation/src/main.py) runs
 * prompt + completion + "\n" + tests as one file with the language's
 * command and grades by the exit code (Go: by `go test`'s output), each
 * language under its own time limit: that program, that limit, here. */
#include "eval/convert_int.h"

#include <string.h>

/* eval_racket.py fails a run that wrote anything to stderr, whatever its
 * exit code (rackunit reports a failed check there and goes on): this
 * runner requires program.rkt behind a stderr that counts what it
 * forwards, and exits 1 at the end (or at an (exit 0)) when it was
 * written to.  The program's configure-runtime is racket/base's, the
 * runner's own (#lang racket's is the same module). */
static const char racket_runner[] =
    "#lang racket/base\n"
    ";; llm-sandbox convert: runs program.rkt as MultiPL-E's eval_racket.py grades\n"
    ";; `racket FILE`: anything written to stderr (a failed rackunit check) fails.\n"
    "(module stderr racket/base\n"
    "  (provide wrote?)\n"
    "  (define real (current-error-port))\n"
    "  (define n 0)\n"
    "  (define (wrote?) (> n 0))\n"
    "  (current-error-port\n"
    "   (make-output-port 'stderr real\n"
    "                     (lambda (bs start end non-block? breakable?)\n"
    "                       (set! n (+ n (- end start)))\n"
    "                       (write-bytes bs real start end)\n"
    "                       (flush-output real)\n"
    "                       (- end start))\n"
    "                     void))\n"
    "  (exit-handler (let ([exit (exit-handler)])\n"
    "                  (lambda (code) (exit (if (and (wrote?) (eqv? code 0)) 1 code))))))\n"
    "(require 'stderr \"program.rkt\")\n"
    "(when (wrote?) (exit 1))\n";

/* eval_clj.py passes a run that exits 0 with "\n0 failures, 0 errors.\n"
 * (clojure.test's summary) in its stdout: clojure.test prints a failure
 * and exits 0.  This runner loads program.clj with its stdout copied
 * aside, and a shutdown hook turns an exit without that line into 1. */
static const char clojure_runner[] =
    ";; llm-sandbox convert: runs program.clj as MultiPL-E's eval_clj.py grades it:\n"
    ";; it passes when it exits 0 with \"0 failures, 0 errors.\" in its stdout.\n"
    "(require 'clojure.test)\n"
    "(let [out *out*\n"
    "      seen (java.io.StringWriter.)\n"
    "      copy (fn [^String s] (.write out s) (.write seen s))\n"
    "      tee (proxy [java.io.Writer] []\n"
    "            (write\n"
    "              ([x] (copy (cond (string? x) x\n"
    "                               (integer? x) (str (char x))\n"
    "                               :else (String. ^chars x))))\n"
    "              ([x off len] (copy (if (string? x)\n"
    "                                   (subs x off (+ off len))\n"
    "                                   (String. ^chars x (int off) (int len))))))\n"
    "            (flush [] (.flush out))\n"
    "            (close [] (.flush out)))]\n"
    "  (.addShutdownHook (Runtime/getRuntime)\n"
    "    (Thread. (fn []\n"
    "               (.flush out)\n"
    "               (when-not (.contains (str seen) \"\\n0 failures, 0 errors.\\n\")\n"
    "                 (.halt (Runtime/getRuntime) 1)))))\n"
    "  (binding [*out* tee clojure.test/*test-out* tee]\n"
    "    (load-file \"program.clj\")))\n";

/* MultiPL-E's language names (its EVALUATORS keys, the dataset's
 * "language" values, and the eval_NAME.py a name not in EVALUATORS falls
 * back to: "ruby", "go"), ours, and the limit in seconds its eval_*.py
 * gives the run (safe_subprocess's 15 s default unless the script sets
 * one).  "go" is eval_go.py on a file not named *_test.go, where `go test`
 * finds no tests and says ok: we run its tests. */
static const struct {
    const char *theirs, *ours;
    long timeout_s;
} multiple_langs[] = {
    {"py", "python", 15},
    {"python", "python", 15},
    {"notypes.py", "python", 15},
    {"js", "javascript", 5},
    {"javascript", "javascript", 5},
    {"java", "java", 15},
    {"cpp", "cpp", 15},
    {"go_test.go", "go_test", 30},
    {"go", "go_test", 30},
    {"rb", "ruby", 5},
    {"ruby", "ruby", 5},
    {"r", "r", 5},
    {"humaneval_to_r.py", "r", 5},
    {"hs", "haskell", 15},
    {"ml", "ocaml", 15},
    {"ocaml", "ocaml", 15}, /* eval_ocaml.py by the fallback */
    /* eval_rust.py: rustc (15 s), then the program under 5 s */
    {"rs", "rust", 5},
    {"rust", "rust", 5},
    /* eval_dlang.py: rdmd -unittest -main, compile and run under one 15 s */
    {"d", "d", 15},
    {"humaneval_to_dlang.py", "d", 15},
    /* eval_elixir.py: timeout=5 */
    {"elixir", "elixir", 5},
    /* eval_adb.py: safe_subprocess's default, 15 s a step */
    {"adb", "ada", 15},
    {"ada", "ada", 15},
    /* eval_lua.py, eval_pl.py, eval_sh.py: safe_subprocess's default */
    {"lua", "lua", 15},
    {"pl", "perl", 15},
    {"sh", "bash", 15},
    {"ts", "typescript", 15}, /* eval_ts.py: tsc and node, 15 s each */
    {"typescript", "typescript", 15},
    {"php", "php", 15}, /* eval_php.py: safe_subprocess's default */
    {"rkt", "racket", 15},
    {"racket", "racket", 15},
    {"clj", "clojure", 15},
    {"scala", "scala", 15}, /* eval_scala.py: safe_subprocess's default */
    {"cs", "csharp", 5},
};

/* Our languages whose evaluator grades more than the exit code: the job's
 * code is the runner, the program its file. */
static const struct {
    const char *lang, *runner, *file;
} multiple_runners[] = {
    {"racket", racket_runner, "program.rkt"},
    {"clojure", clojure_runner, "program.clj"},
};

static int multiple_lang(const char *theirs)
{
    for (size_t i = 0; i < sizeof(multiple_langs) / sizeof(multiple_langs[0]); i++)
        if (strcmp(theirs, multiple_langs[i].theirs) == 0)
            return (int)i;
    return -1;
}

static int multiple_claim(struct convert_task *t, const char *file, size_t line,
                          struct llmsb_err *err)
{
    const char *lang = convert_str(t->row, "language");
    int i;

    if (!lang || !convert_str(t->row, "name") || !convert_str(t->row, "tests"))
        return 0;
    if ((i = multiple_lang(lang)) < 0) {
        char names[1024];
        size_t o = 0;
        for (size_t k = 0; k < sizeof(multiple_langs) / sizeof(multiple_langs[0]); k++) {
            int w = snprintf(names + o, sizeof(names) - o, "%s%s", k ? ", " : "",
                             multiple_langs[k].theirs);
            if (w < 0 || (size_t)w >= sizeof(names) - o)
                break;
            o += (size_t)w;
        }
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: task \"%s\": MultiPL-E language \"%s\" is not one of ours "
                             "(%s)",
                             file, line, t->id, lang, names);
    }
    t->lang = language_find(multiple_langs[i].ours);
    return 1;
}

static void multiple_fields(const struct convert_task *t, struct convert_job_fields *f)
{
    int i = multiple_lang(convert_str(t->row, "language"));

    f->timeout_s = multiple_langs[i].timeout_s;
    /* eval_python.py: python3 FILE, a script like any other */
    f->as_script = 1;
    for (size_t k = 0; k < sizeof(multiple_runners) / sizeof(multiple_runners[0]); k++)
        if (strcmp(t->lang->name, multiple_runners[k].lang) == 0) {
            f->runner = multiple_runners[k].runner;
            f->runner_file = multiple_runners[k].file;
        }
    /* eval_cpp.py: g++ FILE -o BASENAME -std=c++17, no -O */
    if (strcmp(t->lang->name, "cpp") == 0) {
        f->compile_flags[0] = "-std=c++17";
        f->compile_flags[1] = "-O0";
    }
}

/* The row's own fields but its program text, in meta: language, doctests,
 * prompt_terminology, original, stop_tokens, and what a completions file
 * adds (temperature, top_p, max_tokens). */
static int multiple_job(const struct convert_task *t, cJSON *job, cJSON *meta, const char *at,
                        struct llmsb_err *err)
{
    static const char *const skip[] = {"name", "prompt", "tests", "completions", NULL};

    (void)job, (void)at;
    if (convert_meta_copy(meta, t->row, skip) != 0)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    return 0;
}

/* MultiPL-E has no reference solutions: a row's jobs are its completions
 * (a completions file given as the dataset) or --samples. */
static const char *multiple_reference(const struct convert_task *t)
{
    (void)t;
    return NULL;
}

const struct convert_format convert_multiple = {
    .name = "multipl-e",
    .label = "MultiPL-E (name, language and tests)",
    .claim = multiple_claim,
    .fields = multiple_fields,
    .id_key = "name",
    .test_key = "tests",
    .reference = multiple_reference,
    .job = multiple_job,
};
