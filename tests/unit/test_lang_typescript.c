/* test_lang_typescript.c - the TypeScript row: JavaScript's lexer on
 * TypeScript (comments, quotes, template literals as code), the strict
 * preset per category in code and not in strings or comments, ES and
 * `import x = require()` imports, names, extension, tsc and node. */
#include "test.h"

#include "common/strlist.h"
#include "languages/languages.h"
#include "security/security.h"

static int blocked(const char *policy, const char *code)
{
    struct llmsb_err err = {0};
    const struct language *l = language_find("typescript");
    const struct sec_policy *p = sec_preset(policy, l, &err);
    struct sec_result r;
    int rc;

    memset(&r, 0, sizeof(r));
    if (!p) {
        fprintf(stderr, "  %s\n", err.msg);
        return -1;
    }
    rc = sec_scan(p, l, code, strlen(code), &r, &err);
    return rc ? -1 : r.blocked;
}

TEST(lexer_marks)
{
    const char *src = "let s: string = 'a\\'b'; // c\nconst t = `x${f()}`; /* d */ \"e\"";
    unsigned char k[128];
    size_t n = strlen(src);

    sec_lex(language_find("ts"), src, n, k);
    ASSERT_EQ(k[0], 0);                       /* let */
    ASSERT_EQ(k[strstr(src, "b'") - src], 1); /* past the escaped quote */
    ASSERT_EQ(k[strstr(src, "// c") - src], 2);
    ASSERT_EQ(k[strstr(src, "f()") - src], 0); /* a template literal is code */
    ASSERT_EQ(k[strstr(src, "/* d") - src + 3], 2);
    ASSERT_EQ(k[strstr(src, "\"e\"") - src + 1], 1);
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
    /* a template literal's substitutions run: code */
    ASSERT_EQ(blocked("strict", "const s = `${execSync('ls')}`;\n"), 1);
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
    /* eval_ts.py: tsc --target esnext FILE, then node FILE.js */
    ASSERT_EQ(language_argv(l->compile, &src, NULL, &argv, &n), 4);
    ASSERT_STR(argv[0], "tsc");
    ASSERT_STR(argv[1], "--target");
    ASSERT_STR(argv[2], "esnext");
    ASSERT_STR(argv[3], "main.ts");
    strlist_free(argv, n);
    ASSERT_EQ(language_argv(l->run, &src, NULL, &argv, &n), 2);
    ASSERT_STR(argv[0], "node");
    ASSERT_STR(argv[1], "main.js");
    strlist_free(argv, n);
}

TEST_MAIN("lang_typescript", T(lexer_marks), T(strict_per_category), T(names_extension_commands))
