/* test_lang_typescript.c - the TypeScript row: its lexer (comments,
 * quotes, templates and their substitutions, regex literals), the strict
 * preset per category in code and not in strings or comments, ES and
 * `import x = require()` imports, names, extension, tsc and node. */
#include "test.h"
#include "lang_test.h"

#include "common/strlist.h"
#include "languages/languages.h"
#include "security/security.h"

static int blocked(const char *policy, const char *code)
{
    return lang_scan("typescript", policy, code, NULL, NULL, 0);
}

static int kind_at(const char *src, const char *what, size_t offset)
{
    return lang_kind_at("typescript", src, what, offset);
}

TEST(lexer_marks)
{
    const char *src = "let s: string = 'a\\'b'; // c\n"
                      "const t = `x1 ${f({k: `x2 ${g()}`})} x3`; /* d */ \"e\"\n"
                      "const parts = s.split(/'/); h(1);\n"
                      "const q = a / b / c; k(2);\n"
                      "if (r) return /[/\"]x/g.test(s); m(3);\n"
                      "const u = (a) / 2; n('z');\n";

    ASSERT_EQ(kind_at(src, "let", 0), 0);
    ASSERT_EQ(kind_at(src, "b';", 0), 1); /* past the escaped quote */
    ASSERT_EQ(kind_at(src, "// c", 0), 2);
    ASSERT_EQ(kind_at(src, "x1", 0), 1);  /* a template's text */
    ASSERT_EQ(kind_at(src, "f({", 0), 0); /* its substitution */
    ASSERT_EQ(kind_at(src, "x2", 0), 1);  /* a template in it */
    ASSERT_EQ(kind_at(src, "g()", 0), 0);
    ASSERT_EQ(kind_at(src, "})}", 2), 0); /* the braces balance */
    ASSERT_EQ(kind_at(src, "x3", 0), 1);
    ASSERT_EQ(kind_at(src, "/* d", 3), 2);
    ASSERT_EQ(kind_at(src, "\"e\"", 1), 1);
    ASSERT_EQ(kind_at(src, "/'/", 1), 1);  /* the quote is in a regex */
    ASSERT_EQ(kind_at(src, "h(1)", 0), 0); /* so the line goes on as code */
    ASSERT_EQ(kind_at(src, "/ b", 0), 0);  /* a division */
    ASSERT_EQ(kind_at(src, "k(2)", 0), 0);
    ASSERT_EQ(kind_at(src, "[/\"]", 2), 1); /* a slash and quote in a class */
    ASSERT_EQ(kind_at(src, "m(3)", 0), 0);
    ASSERT_EQ(kind_at(src, "/ 2", 0), 0);
    ASSERT_EQ(kind_at(src, "n('z')", 0), 0);
}

TEST(strict_per_category)
{
    static const char *const idioms[] = {
        "import { execSync } from 'child_process'",
        "import cp = require('child_process')",
        "const cp = require('node:child_process')",
        "execSync('ls')",
        "eval('1')",
        "new Function('return 1')",
        "import('fs')",
        "rmSync('/work/x')",
        "import * as net from 'net'",
        "fetch('http://h/')",
        "const e = process.env.HOME",
        "process.binding('fs')",
        "process.kill(1)",
        "import { Worker } from 'worker_threads'",
        "import * as fs from 'fs'",
    };
    char code[256];

    for (size_t i = 0; i < sizeof(idioms) / sizeof(idioms[0]); i++) {
        snprintf(code, sizeof(code), "declare var require: any;\n%s;\n", idioms[i]);
        if (blocked("strict", code) != 1)
            fprintf(stderr, "  not blocked: %s\n", code);
        ASSERT_EQ(blocked("strict", code), 1);
        snprintf(code, sizeof(code), "// %s;\n/* %s */\n", idioms[i], idioms[i]);
        ASSERT_EQ(blocked("strict", code), 0);
    }
    ASSERT_EQ(blocked("strict", "const s: string = \"execSync('ls')\";\n"), 0);
    ASSERT_EQ(blocked("strict", "const s = 'require(\"child_process\")';\n"), 0);
    /* a template literal's substitutions run: code; its text does not */
    ASSERT_EQ(blocked("strict", "const s = `${execSync('ls')}`;\n"), 1);
    ASSERT_EQ(blocked("strict", "const s = `execSync('ls') ${1 + 1}`;\n"), 0);
    /* a quote in a regex hides nothing; a regex's text is no call */
    ASSERT_EQ(blocked("strict", "const p = s.split(/'/); execSync('ls');\n"), 1);
    ASSERT_EQ(blocked("strict", "const p = s.split(/\"/); eval('1');\n"), 1);
    ASSERT_EQ(blocked("strict", "const re = /execSync\\(/;\n"), 0);
    ASSERT_EQ(blocked("strict", "function add(x: number, y: number): number { return x + y; }\n"),
              0);
}

TEST(names_extension_commands)
{
    const struct language *l = language_find("typescript");
    struct lang_source src;
    struct llmsb_err err = {0};
    char **argv;
    size_t n;

    ASSERT(l != NULL);
    ASSERT(language_find("ts") == l);
    ASSERT(language_find("TypeScript") == l);
    ASSERT(language_from_path("a/b.ts") == l);
    ASSERT_EQ(language_source(l, "", 0, &src, &err), 0);
    ASSERT_STR(src.file, "main.ts");
    /* eval_ts.py: tsc --target esnext FILE (through tsc-fast, which runs
     * exactly that command's compile), then node FILE.js */
    ASSERT_EQ(language_argv(l->compile, &src, NULL, &argv, &n), 5);
    ASSERT_STR(argv[0], "/usr/local/lib/llmsb/tsc-fast");
    ASSERT_STR(argv[1], "tsc");
    ASSERT_STR(argv[2], "--target");
    ASSERT_STR(argv[3], "esnext");
    ASSERT_STR(argv[4], "main.ts");
    strlist_free(argv, n);
    ASSERT_EQ(language_argv(l->run, &src, NULL, &argv, &n), 2);
    ASSERT_STR(argv[0], "node");
    ASSERT_STR(argv[1], "main.js");
    strlist_free(argv, n);
}

/* review: a slash after ) } ++ -- may start a regex or divide; either
 * reading, taken wrongly, turned a quote into a string's opening that hid
 * the require after it */
TEST(review_ambiguous_slash)
{
    ASSERT_EQ(blocked("strict", "if (true) /\"/.test(\"\"); require(\"child_process\").execSync(\"id\"); let z = \"\"\n"), 1);
    ASSERT_EQ(blocked("strict", "let a = 1; let x = a++ / 2; let s = \"/\"; require(\"child_process\").execSync(\"id\"); let t = \"\"\n"), 1);
    ASSERT_EQ(blocked("strict", "{}\n/'/.test(''); require('child_process').execSync('id'); ''\n"), 1);
    ASSERT_EQ(blocked("strict", "if (x) /`/.test(y); `\nrequire('child_process').execSync('id')\n`\n"), 1);
    /* a plain division, and a string after it, as before */
    ASSERT_EQ(blocked("strict", "const h = (a + b) / 2;\nconst s = \"require('child_process')\";\n"), 0);
    ASSERT_EQ(kind_at("x = (a)/2/b + 'q';\ny = 'r';\n", "q", 0), 0);
    ASSERT_EQ(kind_at("x = (a)/2/b + 'q';\ny = 'r';\n", "r", 0), 1);
}

TEST_MAIN("lang_typescript", T(review_ambiguous_slash), T(lexer_marks), T(strict_per_category), T(names_extension_commands))
