/* test_lang_scala.c - Scala: the lexer's marks (nested comments, """
 * strings, interpolation, chars and symbols), the strict preset on each
 * category's idiom in code and not in a string or comment, the names, the
 * object to run and the commands. */
#include "test.h"
#include "lang_test.h"

#include "common/strlist.h"
#include "security/security.h"

static int marks(const char *src, const char *want)
{
    return lang_marks_are("scala", src, want);
}

static int blocked(const char *policy, const char *code)
{
    return lang_scan("scala", policy, code, NULL, NULL, 0);
}

TEST(lexer_marks)
{
    ASSERT(marks("a/*x/*y*/z*/b", "cmmmmmmmmmmmc"));
    ASSERT(marks("a//x\nb", "cmmmcc"));
    ASSERT(marks("\"a\\\"b\"c", "ssssssc"));
    ASSERT(marks("\"\"\"a\"b\"\"\"\"c", "ssssssssssc"));
    ASSERT(marks("s\"x${\"}\"}\"c", "ccccccccccc"));
    ASSERT(marks("'a' 'b", "sssccc"));
    ASSERT(marks("'\\n'x", "ssssc"));
    ASSERT(marks("f\"$x\"+\"y\"", "ccccccsss"));
}

TEST(strict_blocks_each_category_in_code_only)
{
    static const struct {
        const char *code, *in_string, *in_comment;
    } c[] = {
        {"val o = \"ls\".!!\n", "val o = \"\\\"ls\\\".!!\"\n", "// \"ls\".!!\n"},
        {"val p = Process(\"ls\").run()\n", "val s = \"Process(x)\"\n", "/* Process(x) */\n"},
        {"Seq(\"ls\", \"-l\") !\n", "val s = \"Seq(x) !\"\n", "/* Seq(x) ! /* ! */ */\n"},
        {"new java.lang.ProcessBuilder(\"ls\").start()\n", "val s = \"\"\"ProcessBuilder\"\"\"\n",
         "// ProcessBuilder\n"},
        {"val c = Class.forName(\"x\")\n", "val s = \"Class.forName(x)\"\n",
         "// Class.forName(x)\n"},
        {"new java.io.File(\"x\").delete()\n", "val s = \"f.delete()\"\n", "// f.delete()\n"},
        {"val s = new java.net.Socket(\"h\", 1)\n", "val s = \"new Socket(h)\"\n",
         "// java.net.Socket\n"},
        {"val h = sys.env(\"HOME\")\n", "val s = \"sys.env\"\n", "// System.getenv(x)\n"},
        {"System.loadLibrary(\"x\")\n", "val s = \"System.loadLibrary(x)\"\n", "// @native\n"},
        {"sys.exit(1)\n", "val s = \"sys.exit(1)\"\n", "// System.exit(1)\n"},
        {"import scala.sys.process._\n", "val s = \"import scala.sys.process._\"\n",
         "// import java.net.URL\n"},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        if (blocked("strict", c[i].code) != 1 || blocked("strict", c[i].in_string) != 0 ||
            blocked("strict", c[i].in_comment) != 0)
            fprintf(stderr, "  case %zu: %s\n", i, c[i].code);
        ASSERT_EQ(blocked("strict", c[i].code), 1);
        ASSERT_EQ(blocked("strict", c[i].in_string), 0);
        ASSERT_EQ(blocked("strict", c[i].in_comment), 0);
    }
    /* an interpolated string's ${...} runs */
    ASSERT_EQ(blocked("strict", "println(s\"${\"ls\".!!}\")\n"), 1);
    /* MultiPL-E's own prompt passes strict */
    ASSERT_EQ(blocked("strict", "import scala.math._\nimport scala.collection.mutable._\nobject "
                                "Problem {\n  def main(args: Array[String]) = {\n    assert(1 != "
                                "2);\n  }\n}\n"),
              0);
}

TEST(names_and_commands)
{
    const struct language *l = language_find("scala");
    struct lang_source src;
    struct llmsb_err err = {0};
    const char *code = "package a.b\nimport x._\n// object Fake\nobject Helper { def f = 1 }\n"
                       "object Problem {\n  def main(args: Array[String]) = {}\n}\n";
    char **argv;
    size_t n;

    ASSERT(l != NULL);
    ASSERT(language_find("Scala") == l);
    ASSERT(language_find("scala2") == l);
    ASSERT(language_from_path("x/Main.scala") == l);
    ASSERT_EQ(language_source(l, code, strlen(code), &src, &err), 0);
    ASSERT_STR(src.file, "main.scala");
    ASSERT_STR(src.main_class, "a.b.Problem");
    code = "object App1 extends App { println(1) }\n";
    ASSERT_EQ(language_source(l, code, strlen(code), &src, &err), 0);
    ASSERT_STR(src.main_class, "App1");
    code = "class A\n";
    ASSERT_EQ(language_source(l, code, strlen(code), &src, &err), LLMSB_ERR_NOTFOUND);
    ASSERT_CONTAINS(err.msg, "nothing to run");
    code = "object Problem { def main(args: Array[String]) = {} }\n";
    ASSERT_EQ(language_source(l, code, strlen(code), &src, &err), 0);
    /* MultiPL-E: scalac -d DIR FILE; scala -cp DIR Problem */
    ASSERT(language_argv(l->compile, &src, NULL, &argv, &n) > 0);
    ASSERT_STR(argv[0], "scalac");
    ASSERT_STR(argv[n - 3], "-d");
    ASSERT_STR(argv[n - 2], ".");
    ASSERT_STR(argv[n - 1], "main.scala");
    ASSERT_STR(argv[n - 4], ".:/work/.llmsb-lib/scala/usr/share/java/*");
    strlist_free(argv, n);
    /* libraries: Debian packages of jars */
    ASSERT(language_library_ok(l, "libcommons-lang3-java"));
    ASSERT(!language_library_ok(l, "../x"));
    ASSERT(language_argv(l->run, &src, NULL, &argv, &n) == 4);
    ASSERT_STR(argv[0], "scala");
    ASSERT_STR(argv[1], "-cp");
    ASSERT_STR(argv[2], ".:/work/.llmsb-lib/scala/usr/share/java/*");
    ASSERT_STR(argv[3], "Problem");
    strlist_free(argv, n);
}

/* review: a quote in a backquoted name, a '}' or a comment in an
 * interpolation's hole, hid the call after them in a string */
TEST(review_backquotes_and_holes)
{
    const char *pre = "object Main { def main(a: Array[String]): Unit = { ";
    const char *calls[] = {
        "val `\"` = 1; Runtime.getRuntime.exec(Array(\"id\")); val x = \"`\" } }\n",
        "val q = s\"${ '}' + \"\\\"\" }\"; Runtime.getRuntime.exec(Array(\"id\")); val w = \"\" } }\n",
        "val q = s\"${ /* }\" */ \"x\" }\"; Runtime.getRuntime.exec(Array(\"id\")); val w = \"\" } }\n",
        "val `//` = 1; Runtime.getRuntime.exec(Array(\"id\")) } }\n",
    };
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
        char src[512];
        snprintf(src, sizeof(src), "%s%s", pre, calls[i]);
        ASSERT_EQ(blocked("strict", src), 1);
    }
    ASSERT(marks("`\"`+\"a\"", "ccccsss"));
    ASSERT_EQ(blocked("strict", "object M { val s = \"Runtime.getRuntime.exec(x)\" }\n"), 0);
}

/* review: Scala 2 reads \uXXXX before it lexes: \u000a ends a line
 * comment, \u0022 closes a string */
TEST(review_unicode_escapes)
{
    ASSERT_EQ(blocked("strict", "object M { def main(a: Array[String]): Unit = {\n"
                                "  // \\u000a Runtime.getRuntime.exec(Array(\"id\"))\n} }\n"), 1);
    ASSERT_EQ(blocked("strict", "object M { val a = \"\\u0022; Runtime.getRuntime.exec(Array(\"id\")); val b = \\u0022\" }\n"), 1);
    ASSERT_EQ(blocked("strict", "object M { val s = \"\\u00e9 Runtime.getRuntime.exec(x)\" }\n"), 0);
}

TEST_MAIN("lang_scala", T(review_unicode_escapes), T(review_backquotes_and_holes), T(lexer_marks), T(strict_blocks_each_category_in_code_only),
          T(names_and_commands))
