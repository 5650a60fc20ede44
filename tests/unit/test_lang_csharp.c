/* test_lang_csharp.c - C#: the lexer's marks (verbatim and interpolated
 * strings, chars, comments), the strict preset on each category's idiom in
 * code and not in a string or comment, the names and the commands. */
#include "test.h"
#include "lang_test.h"

#include "common/strlist.h"
#include "security/security.h"

static int marks(const char *src, const char *want)
{
    return lang_marks_are("csharp", src, want);
}

static int blocked(const char *policy, const char *code)
{
    return lang_scan("csharp", policy, code, NULL, NULL, 0);
}

TEST(lexer_marks)
{
    ASSERT(marks("a/*x/*y*/z*/b", "cmmmmmmmmcccc"));
    ASSERT(marks("a//x\nb", "cmmmcc"));
    ASSERT(marks("\"a\\\"b\"c", "ssssssc"));
    ASSERT(marks("@\"a\\\"\"b\"c", "ssssssssc"));
    ASSERT(marks("@\"x\ny\"c", "ssssssc"));
    ASSERT(marks("$\"a{f(\"}\")}\"c", "ccccccccccccc"));
    ASSERT(marks("$@\"{x}\"\"\"c", "cccccccccc"));
    ASSERT(marks("'\"'+\"x\"", "ssscsss"));
    ASSERT(marks("'\\''c", "ssssc"));
}

TEST(strict_blocks_each_category_in_code_only)
{
    static const struct {
        const char *code, *in_string, *in_comment;
    } c[] = {
        {"Process.Start(\"ls\");\n", "var s = \"Process.Start(x)\";\n", "// Process.Start(x)\n"},
        {"var p = new Process { StartInfo = i };\n", "var s = @\"new Process()\";\n",
         "/* new ProcessStartInfo() */\n"},
        {"var a = Assembly.Load(b);\n", "var s = \"Assembly.Load(b)\";\n", "// Assembly.Load(b)\n"},
        {"File.Delete(\"x\");\n", "var s = \"File.Delete(x)\";\n", "// File.Delete(x)\n"},
        {"var c = new TcpClient();\n", "var s = \"new TcpClient()\";\n", "// new TcpClient()\n"},
        {"var h = Environment.GetEnvironmentVariable(\"HOME\");\n",
         "var s = \"Environment.GetEnvironmentVariable(x)\";\n",
         "// Environment.GetEnvironmentVariable(x)\n"},
        {"[DllImport(\"libc\")] static extern int getpid();\n", "var s = \"[DllImport(x)]\";\n",
         "// [DllImport(x)] unsafe\n"},
        {"Environment.Exit(1);\n", "var s = \"Environment.Exit(1)\";\n",
         "// Environment.Exit(1)\n"},
        {"using System.Net.Sockets;\n", "var s = \"using System.Net;\";\n",
         "// using System.IO;\n"},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        if (blocked("strict", c[i].code) != 1 || blocked("strict", c[i].in_string) != 0 ||
            blocked("strict", c[i].in_comment) != 0)
            fprintf(stderr, "  case %zu: %s\n", i, c[i].code);
        ASSERT_EQ(blocked("strict", c[i].code), 1);
        ASSERT_EQ(blocked("strict", c[i].in_string), 0);
        ASSERT_EQ(blocked("strict", c[i].in_comment), 0);
    }
    /* an interpolated string's holes run */
    ASSERT_EQ(blocked("strict", "var s = $\"{Process.Start(\"ls\")}\";\n"), 1);
    /* MultiPL-E's own prompt (Debug.Assert) passes strict */
    ASSERT_EQ(blocked("strict", "using System;\nusing System.Numerics;\nusing System.Diagnostics;\n"
                                "using System.Collections.Generic;\nusing System.Linq;\nusing "
                                "System.Text;\nusing System.Security.Cryptography;\nclass Problem "
                                "{\n    public static void Main(string[] args) {\n    "
                                "Debug.Assert(1 != 2);\n    }\n}\n"),
              0);
}

TEST(names_and_commands)
{
    const struct language *l = language_find("csharp");
    struct lang_source src;
    struct llmsb_err err = {0};
    char **argv;
    size_t n;

    ASSERT(l != NULL);
    ASSERT(language_find("cs") == l);
    ASSERT(language_find("C#") == l);
    ASSERT(language_find("mono") == l);
    ASSERT(language_from_path("x/Program.cs") == l);
    ASSERT_EQ(language_source(l, "class A {}", 10, &src, &err), 0);
    ASSERT_STR(src.file, "main.cs");
    /* MultiPL-E: csc /d:DEBUG -r:System.Numerics.dll FILE /out:BASE.exe; mono BASE.exe */
    ASSERT(language_argv(l->compile, &src, NULL, &argv, &n) == 5);
    ASSERT_STR(argv[0], "mcs");
    ASSERT_STR(argv[1], "-d:DEBUG");
    ASSERT_STR(argv[2], "-r:System.Numerics.dll");
    ASSERT_STR(argv[3], "main.cs");
    ASSERT_STR(argv[4], "-out:main.exe");
    strlist_free(argv, n);
    ASSERT(language_argv(l->run, &src, NULL, &argv, &n) == 5);
    ASSERT_STR(argv[0], "bash");
    ASSERT_CONTAINS(argv[2], "mono \"$1\"");
    ASSERT_CONTAINS(argv[2], "DefaultTraceListener.Fail");
    ASSERT_STR(argv[4], "main.exe");
    strlist_free(argv, n);
    ASSERT_STR(l->env[0], "MONO_TRACE_LISTENER=Console.Error");
}

/* review: Process under an alias or spelt with an escape
 * (\u0050rocess) started a program unflagged */
TEST(review_process_renamed)
{
    ASSERT_EQ(blocked("strict", "using P = System.Diagnostics.Process;\n"
                                "class M { static void Main() { P.Start(\"sh\", \"-c id\"); } }\n"), 1);
    ASSERT_EQ(blocked("strict", "class M { static void Main() { System.Diagnostics.\\u0050rocess.Start(\"sh\"); } }\n"), 1);
    ASSERT_EQ(blocked("strict", "using System.Diagnostics;\nclass M { static void Main() { var s = \"\\u00e9\"; Debug.Assert(s.Length == 1); } }\n"), 0);
}

TEST_MAIN("lang_csharp", T(review_process_renamed), T(lexer_marks), T(strict_blocks_each_category_in_code_only),
          T(names_and_commands))
