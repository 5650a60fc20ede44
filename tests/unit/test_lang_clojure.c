/* test_lang_clojure.c - Clojure's row and lexer: ; comments, #_ on a
 * datum, strings, #"regex" and \ characters marked; the strict preset on
 * each category's idiom, in code and not in a string or comment; its
 * names, extension, command and library names. */
#include "test.h"
#include "lang_test.h"

#include "security/security.h"

#include "eval_jobs.h"

#include "eval/convert.h"

static const char *marks(const char *lang, const char *src)
{
    static char out[4096];
    return strlen(src) < sizeof(out) ? lang_marks(lang, src, "csm", out) : "";
}

static int blocked(const char *lang, const char *code, char *rule, size_t rulesz)
{
    return lang_scan(lang, "strict", code, NULL, rule, rulesz);
}

TEST(lexer_marks)
{
    ASSERT_STR(marks("clojure", "(a \"x;\\\"y\") ; z"), "cccsssssssccmmm");
    /* \" and \; are characters */
    ASSERT_STR(marks("clojure", "(str \\\" \\; x)"), "cccccsscssccc");
    ASSERT_STR(marks("clojure", "\\newline x"), "sssssssscc");
    ASSERT_STR(marks("clojure", "\\u0041\\("), "ssssssss");
    /* #_ hides the next datum; #_#_ two */
    ASSERT_STR(marks("clojure", "#_(a (b)) c"), "mmmmmmmmmcc");
    ASSERT_STR(marks("clojure", "#_ abc d"), "mmmmmmcc");
    ASSERT_STR(marks("clojure", "#_#_a b c"), "mmmmmmmcc");
    ASSERT_STR(marks("clojure", "#_'(x) y"), "mmmmmmcc");
    /* a regex with an escaped quote and a ; */
    ASSERT_STR(marks("clojure", "(re-find #\"a\\\"b;\" s) ;x"), "cccccccccssssssssccccmm");
    /* maps, sets, fn literals: code; (comment ...) is code too */
    ASSERT_STR(marks("clojure", "{:a 1, :b \"c\"} #{1}"), "ccccccccccssscccccc");
    ASSERT_STR(marks("clojure", "(comment (sh \"ls\"))"), "cccccccccccccsssscc");
}

TEST(strict_blocks_each_category_in_code_only)
{
    static const struct {
        const char *code, *rule;
    } c[] = {
        {"(clojure.java.shell/sh \"ls\")", "runs a shell command"},
        {"(sh \"ls\")", "runs a shell command"},
        {"(.exec (Runtime/getRuntime) \"ls\")", "runs a shell command"},
        {"(.start (ProcessBuilder. [\"ls\"]))", "runs a shell command"},
        {"(eval '(+ 1 2))", "runs code built at run time"},
        {"(load-string \"(+ 1 2)\")", "runs code built at run time"},
        {"(io/delete-file \"x\")", "deletes files"},
        {"(.delete (java.io.File. \"x\"))", "deletes files"},
        {"(java.net.Socket. \"example.com\" 80)", "opens network connections"},
        {"(slurp \"http://example.com\")", "opens network connections"},
        {"(System/getenv \"HOME\")", "environment variables"},
        {"(System/loadLibrary \"x\")", "native code"},
        {"(System/exit 3)", "forks, signals or ends processes"},
        {"(require '[clojure.java.shell :as shell])", "runs a shell command"},
        {"(ns a (:require [java.lang.reflect]))",
         "imports restricted module \"java.lang.reflect\""},
        {"(ns a (:import (java.net URI)))", "opens network connections"},
    };
    char rule[2048];

    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        char code[256], in_comment[256], in_datum[256];
        snprintf(code, sizeof(code), "%s\n", c[i].code);
        ASSERT_MSG(blocked("clojure", code, rule, sizeof(rule)) == 1, c[i].code);
        ASSERT_MSG(strstr(rule, c[i].rule) != NULL, rule);
        snprintf(in_comment, sizeof(in_comment), ";; %s\n", c[i].code);
        ASSERT_MSG(blocked("clojure", in_comment, NULL, 0) == 0, in_comment);
        snprintf(in_datum, sizeof(in_datum), "#_%s\n(println 1)\n", c[i].code);
        ASSERT_MSG(blocked("clojure", in_datum, NULL, 0) == 0, in_datum);
    }
    /* in strings and regexes; names that only begin like one */
    ASSERT_EQ(blocked("clojure", "(println \"(sh \\\"ls\\\") (System/exit 1)\")", NULL, 0), 0);
    ASSERT_EQ(blocked("clojure", "(re-find #\"(eval x)\" s)", NULL, 0), 0);
    ASSERT_EQ(blocked("clojure", "(defn shape [x] x) (evaluate 1) (loader)", NULL, 0), 0);
    ASSERT_EQ(blocked("clojure", "(str \\\" (sh \"ls\"))", NULL, 0), 1);
    ASSERT_EQ(blocked("clojure", "(require '[clojure.test :refer [deftest is run-test]])", NULL, 0),
              0);
}

TEST(names_extension_command)
{
    const struct language *l = language_find("clojure");
    struct lang_source src;
    struct llmsb_err err = {0};
    char **argv = NULL;
    size_t n = 0;

    ASSERT(l != NULL);
    ASSERT(language_find("clj") == l);
    ASSERT(language_from_path("src/core.clj") == l);
    ASSERT_EQ(language_source(l, "", 0, &src, &err), 0);
    ASSERT_STR(src.file, "main.clj");
    ASSERT_EQ(language_argv(l->run, &src, NULL, &argv, &n), 9);
    ASSERT_STR(argv[0], "java");
    ASSERT_STR(argv[1], "-Dclojure.main.report=stderr");
    ASSERT_STR(argv[3], "-XX:TieredStopAtLevel=1");
    ASSERT_STR(argv[7], "clojure.main");
    ASSERT_STR(argv[8], "main.clj");
    for (size_t i = 0; i < n; i++)
        free(argv[i]);
    free(argv);
    ASSERT(l->compile[0] == NULL);
    /* libraries: Debian packages of jars */
    ASSERT_EQ(language_library_ok(l, "libmath-combinatorics-clojure"), 1);
    ASSERT_EQ(language_library_ok(l, "http://x/y.jar"), 0);
    ASSERT_EQ(language_library_ok(l, "Foo"), 0);
}

/* MultiPL-E's "clj" rows: the job is the runner that grades as its
 * evaluator does, the program (prompt + completion + "\n" + tests) its
 * file program.clj; 15 s, safe_subprocess's default. */
TEST(multiple_job_is_the_runner)
{
    const char *row = "{\"name\": \"HumanEval_53_add\", \"language\": \"clj\", \"prompt\": "
                      "\"P\\n\", \"tests\": \"T\\n\", \"completions\": [\"C\"]}";
    struct llmsb_err err = {0};
    struct convert_set *s = convert_set_read("d.json", row, &err);
    struct convert_out o = {.name = "mem"};
    struct jobs j = {0};

    ASSERT_MSG(s != NULL, err.msg);
    o.out = open_memstream(&j.text, &j.len);
    ASSERT_EQ(convert_write_references(s, &o, &err), 0);
    fclose(o.out);
    convert_set_free(s);
    jobs_parse(&j);
    ASSERT_EQ(j.n, 1);
    ASSERT_STR(str(j.job[0], "lang"), "clojure");
    ASSERT_CONTAINS(str(j.job[0], "code"), "(load-file \"program.clj\")");
    ASSERT_STR(cJSON_GetStringValue(
                   cJSON_GetObjectItemCaseSensitive(get(j.job[0], "files"), "program.clj")),
               "P\nC\nT\n");
    ASSERT_EQ(get(j.job[0], "timeout")->valueint, 15);
    jobs_release(&j);
}

/* review: the . and .. forms call exec without (.exec */
TEST(review_dot_forms)
{
    ASSERT_EQ(blocked("clojure", "(. (Runtime/getRuntime) exec \"id\")\n", NULL, 0), 1);
    ASSERT_EQ(blocked("clojure", "(.. Runtime getRuntime (exec \"id\"))\n", NULL, 0), 1);
    ASSERT_EQ(blocked("clojure", "(defn execute [x] x)\n(println (execute 1) \"exec\")\n", NULL, 0), 0);
}

TEST_MAIN("lang_clojure", T(review_dot_forms), T(lexer_marks), T(strict_blocks_each_category_in_code_only),
          T(names_extension_command), T(multiple_job_is_the_runner))
