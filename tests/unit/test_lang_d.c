/* test_lang_d.c - the D row: its lexer's marks (nesting comments,
 * WYSIWYG, hex and delimited strings, heredocs, token strings as code),
 * the strict preset on each category's idiom in code and not in a string
 * or a comment, its aliases, extension and command templates. */
#include "test.h"
#include "lang_test.h"

#include "common/strlist.h"
#include "languages/languages.h"
#include "security/security.h"

static int blocked(const char *code, char *rule, size_t rulesz)
{
    return lang_scan("d", "strict", code, NULL, rule, rulesz);
}

static void marks(const char *src, char *out)
{
    lang_marks("d", src, "cs#", out);
}

TEST(lexer_marks)
{
    char m[512];
    marks("a /+ x /+ y +/ z +/ b", m);
    ASSERT_STR(m, "cc#################cc"); /* /+ +/ nests */
    marks("a /* x /* y */ b", m);
    ASSERT_STR(m, "cc############cc"); /* slash-star does not */
    marks("r\"a\\\" c", m);
    ASSERT_STR(m, "ssssscc"); /* no escapes in r"..." */
    marks("`a\\` c", m);
    ASSERT_STR(m, "sssscc");
    marks("x\"0A\" c", m);
    ASSERT_STR(m, "ssssscc");
    marks("q\"(a(b)c)\" d", m);
    ASSERT_STR(m, "sssssssssscc");
    marks("q\"/a\"b/\" c", m);
    ASSERT_STR(m, "sssssssscc");
    marks("q\"EOS\nx\"y\nEOS\" z", m);
    ASSERT_STR(m, "sssssssssssssscc");
    marks("q{ f(\"ls\"); } c", m); /* a token string is code */
    ASSERT_STR(m, "cccccsssscccccc");
    marks("'a' '\\'' c", m);
    ASSERT_STR(m, "ssscsssscc");
    marks("i\"$(x)\" c", m); /* interpolates: code */
    ASSERT_STR(m, "ccccccccc");
    marks("seq\"x\" c", m); /* no q prefix inside a word */
    ASSERT_STR(m, "cccssscc");
}

TEST(strict_blocks_code_not_strings)
{
    static const struct {
        const char *code, *rule;
    } c[] = {
        {"void main() { auto r = executeShell(\"ls\"); }", "shell command"},
        {"void main() { auto p = spawnProcess([\"ls\"]); }", "shell command"},
        {"void main() { auto r = \"ls\".executeShell; }", "shell command"},
        {"void main() { mixin(\"int x;\"); }", "run time"},
        {"void main() { rmdirRecurse(\"d\"); }", "deletes files"},
        {"void main() { std.file.remove(\"x\"); }", "deletes files"},
        {"void main() { auto s = new TcpSocket(); }", "network"},
        {"void main() { auto h = environment.get(\"HOME\"); }", "environment"},
        {"void main() { asm { nop; } }", "native code"},
        {"extern (C) int system(const char *);", "native code"},
        {"void main() { exit(3); }", "processes"},
        {"import std.process;\nvoid main() {}", "restricted module \"std.process\""},
        {"import std.stdio, p = std.socket : TcpSocket;\n", "restricted module \"std.socket\""},
        {"import core.sys.posix.unistd : fork;\n", "restricted module \"core.sys\""},
    };
    char rule[1024];
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        char s[512], k[512];
        ASSERT_MSG(blocked(c[i].code, rule, sizeof(rule)) == 1, c[i].code);
        ASSERT_MSG(strstr(rule, c[i].rule) != NULL, c[i].code);
        snprintf(s, sizeof(s), "void main() { auto s = q\"[%s]\"; }\n", c[i].code);
        ASSERT_MSG(blocked(s, NULL, 0) == 0, s);
        snprintf(k, sizeof(k), "/+ %s /+ +/ +/\n// %s\nvoid main() {}\n", c[i].code, c[i].code);
        ASSERT_MSG(blocked(k, NULL, 0) == 0, k);
    }
    /* a token string is code: what mixin() would compile is scanned */
    ASSERT_EQ(blocked("void main() { enum s = q{ executeShell(\"ls\"); }; }", NULL, 0), 1);
    /* ordinary HumanEval code passes strict (std.algorithm's remove too) */
    ASSERT_EQ(blocked("import std.math;\nimport std.typecons;\nimport std.algorithm;\n"
                      "long[] f(long[] a) { return a.remove(0); }\nvoid main(){}\n",
                      NULL, 0),
              0);
}

TEST(names_extension_commands)
{
    const struct language *l = language_find("d");
    struct lang_source src;
    struct llmsb_err err = {0};
    char **argv;
    size_t n;

    ASSERT(l != NULL);
    ASSERT(language_find("dlang") == l);
    ASSERT(language_find("D") == l);
    ASSERT(language_find("ldc") == l);
    ASSERT(language_find("D_ut") == l); /* SandboxFusion's id */
    ASSERT(language_from_path("x/main.d") == l);
    ASSERT_EQ(language_source(l, "", 0, &src, &err), 0);
    ASSERT_STR(src.file, "main.d");
    ASSERT_EQ(language_argv(l->compile, &src, NULL, &argv, &n), 4);
    ASSERT_STR(argv[0], "ldmd2");
    ASSERT_STR(argv[1], "-unittest");
    ASSERT_STR(argv[2], "-main");
    ASSERT_STR(argv[3], "main.d");
    strlist_free(argv, n);
    ASSERT_EQ(language_argv(l->run, &src, NULL, &argv, &n), 1);
    ASSERT_STR(argv[0], "./main");
    strlist_free(argv, n);
    ASSERT(l->install[0] == NULL);
}

/* review: import std; (all of Phobos), a spaced dot or a comment in an
 * import's path kept std.process and std.file out of the strict check */
TEST(review_import_forms)
{
    ASSERT_EQ(blocked("import std;\nvoid main() { auto f = \"x\"; remove(f); }\n", NULL, 0), 1);
    ASSERT_EQ(blocked("import std . process;\nvoid main() { }\n", NULL, 0), 1);
    ASSERT_EQ(blocked("import /**/ std.process;\nvoid main() { }\n", NULL, 0), 1);
    ASSERT_EQ(blocked("import std.stdio, std.algorithm;\nvoid main() { writeln(1); }\n", NULL, 0), 0);
}

TEST_MAIN("lang_d", T(review_import_forms), T(lexer_marks), T(strict_blocks_code_not_strings), T(names_extension_commands))
