/* test_security.c - the scanner: every language's lexing (comments ignored,
 * strings neither hide code nor raise false alarms), presets, dynamic
 * imports, inline policies, match limits, libraries. */
#include "test.h"

#include "security/security.h"

static int scan(const char *lang, const char *policy, const char *code, struct sec_result *r)
{
    struct llmsb_err err = {0};
    const struct language *l = language_find(lang);
    const struct sec_policy *p = sec_preset(policy, l, &err);
    memset(r, 0, sizeof(*r));
    if (!p) {
        fprintf(stderr, "  %s\n", err.msg);
        return -1;
    }
    return sec_scan(p, l, code, strlen(code), r, &err);
}

static int blocked(const char *lang, const char *policy, const char *code)
{
    struct sec_result r;
    if (scan(lang, policy, code, &r) != 0)
        return -1;
    return r.blocked;
}

/* For each language: a shell call in code is blocked by "development";
 * the same text in a string literal or a comment is not. */
TEST(each_language_code_string_comment)
{
    static const struct {
        const char *lang, *code, *in_string, *in_comment;
    } c[] = {
        {"python", "import os\nos.system('ls')\n", "x = \"os.system('ls')\"\n",
         "# os.system('ls')\n"},
        {"javascript", "const cp = require('child_process');\n",
         "const s = \"require('child_process')\";\n",
         "// require('child_process')\n/* execSync('x') */\n"},
        {"java", "class A { void f() throws Exception { Runtime.getRuntime().exec(\"ls\"); } }",
         "class A { String s = \"Runtime.getRuntime().exec(x)\"; }",
         "class A { /* new ProcessBuilder() */ }"},
        {"cpp", "#include <cstdlib>\nint main() { system(\"ls\"); }\n",
         "const char *s = \"system(x)\";\n", "// system(\"ls\")\nint main() {}\n"},
        {"go", "package main\nimport \"os/exec\"\nfunc main() { exec.Command(\"ls\").Run() }\n",
         "package main\nvar s = `exec.Command(\"ls\")`\n",
         "package main\n// exec.Command(\"ls\")\n"},
        {"r", "system('ls')\n", "s <- 'system(\"ls\")'\n", "# system('ls')\n"},
        {"ruby", "system('ls')\n", "s = 'system(\"ls\")'\n",
         "# system('ls')\n=begin\nexec('x')\n=end\n"},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        if (blocked(c[i].lang, "development", c[i].code) != 1)
            fprintf(stderr, "  %s: code not blocked\n", c[i].lang);
        ASSERT_EQ(blocked(c[i].lang, "development", c[i].code), 1);
        if (blocked(c[i].lang, "development", c[i].in_string) != 0)
            fprintf(stderr, "  %s: string blocked\n", c[i].lang);
        ASSERT_EQ(blocked(c[i].lang, "development", c[i].in_string), 0);
        ASSERT_EQ(blocked(c[i].lang, "development", c[i].in_comment), 0);
    }
}

TEST(a_hash_in_a_string_hides_nothing)
{
    struct sec_result r;
    ASSERT_EQ(scan("python", "strict", "s = '#'; import os\n", &r), 0);
    ASSERT(r.blocked);
    ASSERT_EQ(r.v[0].line, (size_t)1);
    ASSERT_EQ(r.v[0].column, (size_t)10);
    /* a docstring mentioning an import is not an import */
    ASSERT_EQ(blocked("python", "strict", "\"\"\"import os\"\"\"\nprint(\"import subprocess\")\n"),
              0);
    /* Ruby: "..." interpolates, so code inside counts; '...' does not */
    ASSERT_EQ(blocked("ruby", "development", "puts \"#{system('id')}\"\n"), 1);
    ASSERT_EQ(blocked("ruby", "development", "puts 'system(1)'\n"), 0);
    /* Ruby backticks and JS template literals run code */
    ASSERT_EQ(blocked("ruby", "development", "x = `id`\n"), 1);
    ASSERT_EQ(blocked("python", "strict", "f\"{__import__('os').system('id')}\"\n"), 1);
    ASSERT_EQ(blocked("python", "strict", "\"{__import__('os').system('id')}\"\n"), 0);
}

TEST(dynamic_imports_caught_by_strict)
{
    ASSERT_EQ(blocked("python", "strict", "__import__('o' + 's')\n"), 1);
    ASSERT_EQ(
        blocked("python", "strict", "import importlib\nimportlib.import_module('subprocess')\n"),
        1);
    ASSERT_EQ(blocked("python", "strict", "getattr(__builtins__, 'ev' + 'al')('1')\n"), 1);
    ASSERT_EQ(blocked("python", "strict", "().__class__.__base__.__subclasses__()\n"), 1);
    ASSERT_EQ(blocked("javascript", "strict", "new Function('return 1')()\n"), 1);
    ASSERT_EQ(blocked("javascript", "strict", "import('child_process')\n"), 1);
    ASSERT_EQ(blocked("java", "strict", "class A { Object o = Class.forName(\"x\"); }"), 1);
    ASSERT_EQ(blocked("ruby", "strict", "Kernel.send(:system, 'id')\n"), 1);
}

TEST(presets_grade)
{
    const char *py_env = "import os\nprint(os.environ.get('HOME'))\n";
    /* the default (minimal) lets ordinary code through */
    ASSERT_EQ(blocked("python", "minimal", py_env), 0);
    ASSERT_EQ(blocked("python", "minimal", "import numpy as np\nprint(np.arange(3))\n"), 0);
    ASSERT_EQ(blocked("python", "production", py_env), 1);
    ASSERT_EQ(blocked("python", "data_science", "import pandas as pd\nimport urllib.request\n"), 0);
    ASSERT_EQ(blocked("python", "web_scraping", "import urllib.request\n"), 0);
    ASSERT_EQ(blocked("python", "educational", "import shutil\nshutil.rmtree('x')\n"), 1);
    /* destructive commands count inside strings, for every preset */
    ASSERT_EQ(blocked("python", "minimal", "import os\nos.system(\"rm -rf / \")\n"), 1);
    ASSERT_EQ(blocked("cpp", "minimal", "int main(){ system(\"mkfs.ext4 /dev/sda\"); }"), 1);
    ASSERT_EQ(blocked("ruby", "minimal", "x = ':(){ :|:& };:'\n"), 1);
    ASSERT_EQ(blocked("ruby", "minimal", "`rm -rf /`\n"), 1);
    ASSERT_EQ(blocked("python", "minimal", "os.system('rm -rf /tmp/x')\n"), 0);
    ASSERT_EQ(blocked("python", "minimal", "# rm -rf /\n"), 0);
    ASSERT(!sec_preset_exists("lenient"));
    {
        struct llmsb_err err = {0};
        ASSERT(sec_preset("lenient", language_find("python"), &err) == NULL);
        ASSERT_CONTAINS(err.msg, "unknown preset \"lenient\"");
    }
}

TEST(strict_modules_in_every_language)
{
    ASSERT_EQ(blocked("go", "strict", "package main\nimport (\n  \"fmt\"\n  \"net/http\"\n)\n"), 1);
    ASSERT_EQ(
        blocked("go", "strict", "package main\nimport \"fmt\"\nfunc main() { fmt.Println(1) }\n"),
        0);
    ASSERT_EQ(blocked("cpp", "strict", "#include <sys/socket.h>\n"), 1);
    ASSERT_EQ(blocked("cpp", "strict", "#include <vector>\nint main(){}\n"), 0);
    ASSERT_EQ(blocked("java", "strict", "import java.net.URL;\nclass A {}\n"), 1);
    ASSERT_EQ(blocked("javascript", "strict", "const fs = require('node:fs');\n"), 1);
    ASSERT_EQ(blocked("r", "strict", "library(parallel)\n"), 1);
    ASSERT_EQ(blocked("r", "strict", "x <- processx::run('id')\n"), 1);
    ASSERT_EQ(blocked("ruby", "strict", "require 'open3'\n"), 1);
}

TEST(inline_policies)
{
    const struct language *py = language_find("python");
    struct llmsb_err err = {0};
    struct sec_result r;
    struct sec_policy *p;
    const char *j = "{\"extends\": \"minimal\", \"threshold\": \"medium\", \"patterns\": "
                    "[{\"pattern\": \"\\\\bprint\\\\s*\\\\(\", \"severity\": \"medium\", "
                    "\"description\": \"no printing\"}], \"restricted_modules\": [\"json\", "
                    "{\"name\": \"math\", \"severity\": \"low\"}]}";

    p = sec_policy_from_json(j, strlen(j), "mine", py, &err);
    ASSERT(p != NULL);
    memset(&r, 0, sizeof(r));
    ASSERT_EQ(sec_scan(p, py, "print(1)\n", 9, &r, &err), 0);
    ASSERT(r.blocked);
    ASSERT_STR(r.v[0].rule, "no printing");
    ASSERT_STR(r.v[0].policy, "mine");
    memset(&r, 0, sizeof(r));
    ASSERT_EQ(sec_scan(p, py, "import math\n", 12, &r, &err), 0);
    ASSERT(!r.blocked); /* low is under the medium threshold: reported, not blocked */
    ASSERT_EQ(r.n, (size_t)1);
    {
        const char *libs[] = {"json"};
        memset(&r, 0, sizeof(r));
        sec_scan_libraries(p, libs, 1, &r);
        ASSERT(r.blocked);
    }
    sec_policy_free(p);
    ASSERT(sec_policy_from_json("{\"patterns\": [{\"pattern\": \"(\"}]}", 33, NULL, py, &err) ==
           NULL);
    ASSERT_CONTAINS(err.msg, "does not compile");
    ASSERT(sec_policy_from_json("{\"treshold\": \"low\"}", 19, NULL, py, &err) == NULL);
    ASSERT_CONTAINS(err.msg, "unknown key \"treshold\"");
    ASSERT(sec_policy_from_json("{\"threshold\": \"huge\"}", 21, NULL, py, &err) == NULL);
    ASSERT_CONTAINS(err.msg, "threshold must be low, medium or high");
    ASSERT(sec_policy_from_json("[1]", 3, NULL, py, &err) == NULL);
}

TEST(hostile_regex_input_cannot_stall)
{
    const struct language *py = language_find("python");
    struct llmsb_err err = {0};
    struct sec_result r;
    const char *j = "{\"patterns\": [{\"pattern\": \"^(a+)+$\"}]}";
    struct sec_policy *p = sec_policy_from_json(j, strlen(j), NULL, py, &err);
    char code[20001];
    int64_t t0 = clock_mono_ms();

    ASSERT(p != NULL);
    memset(code, 'a', sizeof(code) - 2);
    code[sizeof(code) - 2] = 'b';
    code[sizeof(code) - 1] = '\0';
    memset(&r, 0, sizeof(r));
    ASSERT(sec_scan(p, py, code, strlen(code), &r, &err) != 0);
    ASSERT_CONTAINS(err.msg, "scanning stopped");
    fprintf(stderr, "  catastrophic pattern stopped after %lld ms\n",
            (long long)(clock_mono_ms() - t0));
    sec_policy_free(p);
}

TEST(lexer_marks)
{
    const char *src = "a='#'#c\n";
    unsigned char k[8];
    sec_lex(language_find("python"), src, 8, k);
    ASSERT_EQ(k[0], 0); /* a */
    ASSERT_EQ(k[2], 1); /* ' */
    ASSERT_EQ(k[3], 1); /* # in the string */
    ASSERT_EQ(k[5], 2); /* the comment */
    ASSERT_EQ(k[7], 0); /* the newline is code */
}

/* Every language's lexer on sources that end inside a construct (an escape,
 * a literal, a comment, an interpolation, a here-document), each prefix
 * of each: the marks are in bounds (the buffer is exactly the source's
 * size: the sanitized run catches a byte past it) and each is a kind. A
 * fuzzer found Scala's interpolated string stepping past a final \. */
TEST(every_lexer_stays_in_bounds_on_cut_sources)
{
    static const char *const tails[] = {
        "s\"a\\", "s\"${\"\\", "\"\\", "'\\", "\"\"\"\\", "$'\\", "q{", "qq{\\", "[==[",
        "--[[", "{-", "(*", "#|", "#;", "/+", "r#\"", "@\"", "$\"{", "<<EOF\n", "<<'E'\n",
        "~s(", "~r/", "?\\", "/*", "//", "`", "#{", "${", "\\", "{|", "{id|", "x'", "'a",
        "=begin", "=pod\n", "<?php \"{$a[\"", "f /", ")/", "\\u00", "#\\", "'\\u",
    };
    for (size_t li = 0; li < languages_count; li++)
        for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++)
            for (size_t n = 1; n <= strlen(tails[t]); n++) {
                char *src = malloc(n);
                unsigned char *kind = malloc(n);
                ASSERT(src && kind);
                memcpy(src, tails[t], n);
                sec_lex(languages[li], src, n, kind);
                for (size_t i = 0; i < n; i++)
                    ASSERT_MSG(kind[i] <= 2, languages[li]->name);
                free(src);
                free(kind);
            }
}

/* javac decodes \uXXXX escapes before it lexes: a "comment" or a "string"
 * that an escape closes hides nothing. */
TEST(java_unicode_escapes_hide_nothing)
{
    ASSERT_EQ(blocked("java", "strict",
                      "class Main { public static void main(String[] a) throws Exception {\n"
                      "// \\u000a Runtime.getRuntime().exec(\"id\");\n} }\n"),
              1);
    ASSERT_EQ(blocked("java", "strict",
                      "class Main { public static void main(String[] a) throws Exception {\n"
                      "String s = \"\\u0022; Runtime.getRuntime().exec(\"id\"); \\u0022\";\n} }\n"),
              1);
    /* an escape of a letter changes nothing; the same text unescaped is a comment */
    ASSERT_EQ(blocked("java", "strict",
                      "class Main { public static void main(String[] a) {\n"
                      "// Runtime.getRuntime().exec(\"id\") \\u0041\nSystem.out.println(1);\n} }\n"),
              0);
}

TEST_MAIN("security", T(each_language_code_string_comment), T(a_hash_in_a_string_hides_nothing),
          T(dynamic_imports_caught_by_strict), T(presets_grade),
          T(strict_modules_in_every_language), T(inline_policies),
          T(hostile_regex_input_cannot_stall), T(lexer_marks), T(every_lexer_stays_in_bounds_on_cut_sources),
          T(java_unicode_escapes_hide_nothing))
