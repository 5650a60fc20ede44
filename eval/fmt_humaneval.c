/* fmt_humaneval.c - HumanEval (openai/human-eval) and the benchmarks in
 * its shape, HumanEval-X (CodeGeeX) and MBXP (mxeval): rows of prompt,
 * test and canonical_solution, a row each of convert's table.  Each row says how its dataset rows are recognised and how its own
 * harness puts a program together (prompt, solution, test), so the job's
 * exit code grades the solution exactly as that harness would. */
#include "eval/convert_int.h"

#include <stdio.h>
#include <string.h>

static int is_lang(const struct convert_task *t, const char *name)
{
    return strcmp(t->lang->name, name) == 0;
}

/* HumanEval's and MBXP's Python tests define check(); the harness calls it */
static int python_check(const struct convert_task *t, struct buf *b)
{
    const char *entry = convert_str(t->row, "entry_point");
    int rc = 0;

    if (!is_lang(t, "python") || !entry)
        return 0;
    rc |= buf_append_str(b, "\ncheck(");
    rc |= buf_append_str(b, entry);
    rc |= buf_append_str(b, ")\n");
    return rc;
}

/* ---- HumanEval: Python rows with an entry_point ------------------------ */

static int humaneval_claim(struct convert_task *t, const char *file, size_t line,
                           struct llmsb_err *err)
{
    (void)file, (void)line, (void)err;
    if (!convert_str(t->row, "entry_point"))
        return 0;
    t->lang = language_find("python");
    return 1;
}

const struct convert_format convert_humaneval = {
    .name = "humaneval",
    .label = "HumanEval (no entry_point)",
    .claim = humaneval_claim,
    .tail = python_check,
};

/* ---- HumanEval-X: task ids Python/, JavaScript/, Java/, CPP/, Go/ ------ */

static const struct {
    const char *prefix, *lang;
} x_langs[] = {{"Python/", "python"},
               {"JavaScript/", "javascript"},
               {"Java/", "java"},
               {"CPP/", "cpp"},
               {"Go/", "go_test"}};

/* node's console.assert only logs a failed check; HumanEval-X's JS tests
 * rely on it, so it must throw for a wrong answer to fail the program. */
static const char js_assert[] =
    "console.assert = (ok, ...msg) => { if (!ok) throw new Error('Assertion failed' + "
    "(msg.length ? ': ' + msg.join(' ') : '')); };\n";

/* What CodeGeeX's evaluate_humaneval_x.py adds to a Go or C++ program (its
 * IMPORT_HELPER): the Go packages a solution names and the test setup
 * lacks (the prompt's own import block is taken out: the setup has it),
 * and the C++ headers the prompt lacks.  Without them canonical solutions
 * do not compile. */
static const char *const go_helpers[] = {"math",      "strings",    "fmt",    "strconv",
                                         "time",      "bytes",      "regexp", "sort",
                                         "math/rand", "crypto/md5", NULL};
static const char *const cpp_helpers[] = {"#include<stdlib.h>",
                                          "#include<algorithm>",
                                          "#include<math.h>",
                                          "#include<stdio.h>",
                                          "#include<vector>",
                                          "#include<string>",
                                          "#include<climits>",
                                          "#include<cstring>",
                                          "#include<iostream>",
                                          "#include<cassert>",
                                          NULL};

/* CodeGeeX's Python helper imports, put before every HumanEval-X Python
 * program. */
static const char python_helpers[] =
    "import math\nimport re\nimport sys\nimport copy\nimport datetime\nimport itertools\n"
    "import collections\nimport heapq\nimport statistics\nimport functools\nimport hashlib\n"
    "import numpy\nimport numpy as np\nimport string\nfrom typing import *\n"
    "from collections import *\n";

static int x_claim(struct convert_task *t, const char *file, size_t line, struct llmsb_err *err)
{
    (void)file, (void)line, (void)err;
    for (size_t i = 0; i < sizeof(x_langs) / sizeof(x_langs[0]); i++)
        if (strncmp(t->id, x_langs[i].prefix, strlen(x_langs[i].prefix)) == 0) {
            t->lang = language_find(x_langs[i].lang);
            return 1;
        }
    return 0;
}

/* Go: the test setup, an import block of the helper packages the solution
 * uses, the prompt less its own import block. */
static int x_go_head(const struct convert_task *t, const char *sol, struct buf *b,
                     const char **prompt)
{
    const char *setup = convert_str(t->row, "test_setup"), *imp = convert_str(t->row, "import");
    const char *at = imp && *imp ? strstr(*prompt, imp) : NULL;
    int rc = 0, any = 0;

    if (setup)
        rc |= buf_append_str(b, setup);
    rc |= buf_append_str(b, "\n");
    for (int i = 0; go_helpers[i]; i++) {
        const char *base = strrchr(go_helpers[i], '/');
        char use[32], quoted[40];
        snprintf(use, sizeof(use), "%s.", base ? base + 1 : go_helpers[i]);
        snprintf(quoted, sizeof(quoted), "\"%s\"", go_helpers[i]);
        if ((setup && strstr(setup, go_helpers[i])) || !strstr(sol, use))
            continue;
        rc |= buf_append_str(b, any++ ? "    " : "import (\n    ");
        rc |= buf_append_str(b, quoted);
        rc |= buf_append_str(b, "\n");
    }
    if (any)
        rc |= buf_append_str(b, ")\n");
    if (at) { /* the prompt's text around its import block */
        rc |= buf_append(b, *prompt, (size_t)(at - *prompt));
        *prompt = at + strlen(imp);
    }
    return rc;
}

static int x_head(const struct convert_task *t, const char *sol, struct buf *b, const char **prompt)
{
    int rc = 0;

    if (is_lang(t, "javascript"))
        return buf_append_str(b, js_assert);
    if (is_lang(t, "python"))
        return buf_append_str(b, python_helpers);
    if (is_lang(t, "go_test"))
        return x_go_head(t, sol, b, prompt);
    for (int i = 0; is_lang(t, "cpp") && cpp_helpers[i]; i++)
        if (!strstr(*prompt, cpp_helpers[i])) {
            rc |= buf_append_str(b, cpp_helpers[i]);
            rc |= buf_append_str(b, "\n");
        }
    return rc;
}

static void x_fields(const struct convert_task *t, struct convert_job_fields *f)
{
    /* CodeGeeX fails a JavaScript program that prints anything */
    if (is_lang(t, "javascript"))
        f->expect_stdout = "";
    /* and compiles C++ with `g++ -std=c++11` (no -O) */
    if (is_lang(t, "cpp")) {
        f->compile_flags[0] = "-std=c++11";
        f->compile_flags[1] = "-O0";
    }
}

const struct convert_format convert_humaneval_x = {
    .name = "humaneval-x",
    .label = "HumanEval-X (task ids Python/, JavaScript/, Java/, CPP/, Go/)",
    .claim = x_claim,
    .head = x_head,
    .fields = x_fields,
};

/* ---- MBXP: rows with a "language" -------------------------------------- */

static int mbxp_claim(struct convert_task *t, const char *file, size_t line, struct llmsb_err *err)
{
    const char *lang = convert_str(t->row, "language");

    if (!lang)
        return 0;
    if (!(t->lang = language_find(lang)))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: task \"%s\": language \"%s\" is not one of ours", file, line,
                             t->id, lang);
    return 1;
}

/* Ruby 3.1 (Debian's) does not load Set by itself; MBXP's harness did */
static int mbxp_head(const struct convert_task *t, const char *sol, struct buf *b,
                     const char **prompt)
{
    (void)sol, (void)prompt;
    return is_lang(t, "ruby") ? buf_append_str(b, "require 'set'\n") : 0;
}

const struct convert_format convert_mbxp = {
    .name = "mbxp",
    .label = "MBXP (no language)",
    .claim = mbxp_claim,
    .head = mbxp_head,
    .tail = python_check,
};
