/* test_lang_php.c - the PHP row: its lexer's marks (inline HTML, both
 * comment forms and ?> ending one, the string forms, interpolations and
 * heredocs as code, nowdocs as strings), the strict preset per category
 * in code and not in strings or comments, names, extension, command. */
#include "test.h"
#include "lang_test.h"

#include "common/strlist.h"
#include "languages/languages.h"
#include "security/security.h"

static int blocked(const char *policy, const char *code)
{
    return lang_scan("php", policy, code, NULL, NULL, 0);
}

static int kind_at(const char *src, const char *what, size_t offset)
{
    return lang_kind_at("php", src, what, offset);
}

TEST(lexer_marks)
{
    const char *src = "<p>system(1)</p>\n<?php\n"
                      "$a = 'sq \\' system(2)'; // lc system(3) ?>html system(4)<?php\n"
                      "# hc system(5)\n#[Attr] class A {}\n/* bc system(6) */\n"
                      "$b = \"dq {$obj->run()} ${x} $name[k] text system(7)\";\n"
                      "$c = <<<EOT\n  hd {$z->go()} system(8)\n  EOT;\n"
                      "$d = <<<'NOW'\n  nd {$z->go()} system(9)\n  NOW;\n"
                      "$e = `ls`; ?>tail system(10)";

    ASSERT_EQ(kind_at(src, "system(1)", 0), 1); /* inline HTML */
    ASSERT_EQ(kind_at(src, "<?php", 0), 0);
    ASSERT_EQ(kind_at(src, "$a", 0), 0);
    ASSERT_EQ(kind_at(src, "system(2)", 0), 1); /* past \' */
    ASSERT_EQ(kind_at(src, "system(3)", 0), 2);
    ASSERT_EQ(kind_at(src, "?>html", 0), 0);    /* ?> ends the comment */
    ASSERT_EQ(kind_at(src, "system(4)", 0), 1); /* HTML again */
    ASSERT_EQ(kind_at(src, "system(5)", 0), 2);
    ASSERT_EQ(kind_at(src, "#[Attr]", 0), 0); /* an attribute, not a comment */
    ASSERT_EQ(kind_at(src, "class A", 0), 0);
    ASSERT_EQ(kind_at(src, "system(6)", 0), 2);
    ASSERT_EQ(kind_at(src, "dq", 0), 1);
    ASSERT_EQ(kind_at(src, "run()", 0), 0); /* {$...} is code */
    ASSERT_EQ(kind_at(src, "${x}", 2), 0);
    ASSERT_EQ(kind_at(src, "$name[k]", 6), 0);
    ASSERT_EQ(kind_at(src, "system(7)", 0), 1);
    ASSERT_EQ(kind_at(src, " hd", 1), 1);
    ASSERT_EQ(kind_at(src, "go()} system(8)", 0), 0); /* heredoc interpolates */
    ASSERT_EQ(kind_at(src, "system(8)", 0), 1);
    ASSERT_EQ(kind_at(src, "EOT;", 4), 0);            /* after the closing identifier */
    ASSERT_EQ(kind_at(src, "go()} system(9)", 0), 1); /* nowdoc does not */
    ASSERT_EQ(kind_at(src, "system(9)", 0), 1);
    ASSERT_EQ(kind_at(src, "NOW;", 4), 0);
    ASSERT_EQ(kind_at(src, "`ls`", 1), 0); /* backticks run a command */
    ASSERT_EQ(kind_at(src, "system(10)", 0), 1);
}

/* Each category's idiom is blocked by strict in code, not in a string
 * literal or a comment. */
TEST(strict_per_category)
{
    static const char *const idioms[] = {
        "exec('ls')",
        "shell_exec('ls')",
        "system('ls')",
        "passthru('ls')",
        "proc_open('ls', [], $p)",
        "popen('ls', 'r')",
        "pcntl_fork()",
        "SYSTEM('ls')",
        "\\system('ls')",
        "eval('1;')",
        "create_function('', '')",
        "unlink('/work/x')",
        "rmdir('/work/d')",
        "fsockopen('h', 80)",
        "curl_init('x')",
        "file_get_contents('http://h/')",
        "getenv('HOME')",
        "$_ENV['x']",
        "putenv('A=1')",
        "FFI::cdef('')",
        "posix_kill(1, 9)",
        "pcntl_signal(1, 'f')",
    };
    char code[256];

    for (size_t i = 0; i < sizeof(idioms) / sizeof(idioms[0]); i++) {
        snprintf(code, sizeof(code), "<?php\n$r = %s;\n", idioms[i]);
        if (blocked("strict", code) != 1)
            fprintf(stderr, "  not blocked: %s\n", code);
        ASSERT_EQ(blocked("strict", code), 1);
        snprintf(code, sizeof(code), "<?php\n// $r = %s;\n# %s\n/* %s */\n", idioms[i], idioms[i],
                 idioms[i]);
        ASSERT_EQ(blocked("strict", code), 0);
    }
    /* in strings: single-quoted, double-quoted, nowdoc, HTML */
    ASSERT_EQ(blocked("strict", "<?php\necho \"system('ls')\";\n"), 0);
    ASSERT_EQ(blocked("strict", "<?php\necho 'shell_exec(\"ls\")';\n"), 0);
    ASSERT_EQ(blocked("strict", "<?php\n$s = <<<'X'\nexec('ls')\nX;\n"), 0);
    ASSERT_EQ(blocked("strict", "system('ls')\n<?php echo 1;\n"), 0);
    /* but what runs in them is code */
    ASSERT_EQ(blocked("strict", "<?php\necho \"{$x(system('ls'))}\";\n"), 1);
    ASSERT_EQ(blocked("strict", "<?php\n$s = <<<X\n{$f(exec('ls'))}\nX;\n"), 1);
    ASSERT_EQ(blocked("strict", "<?php\n$o = `ls`;\n"), 1);
    /* a method or static of that name is not the built-in */
    ASSERT_EQ(blocked("strict", "<?php\n$pdo->exec('x'); Foo::system(1);\n"), 0);
    ASSERT_EQ(blocked("strict", "<?php\nfunction my_exec($x) { return $x; }\n"), 0);
}

TEST(names_extension_command)
{
    const struct language *l = language_find("php");
    struct lang_source src;
    struct llmsb_err err = {0};
    char **argv;
    size_t n;

    ASSERT(l != NULL);
    ASSERT_STR(l->name, "php");
    ASSERT(language_find("PHP") == l);
    ASSERT(language_find("php8") == l);
    ASSERT(language_from_path("x/a.php") == l);
    ASSERT(l->compile[0] == NULL); /* eval_php.py: php FILE, no other step */
    ASSERT_EQ(language_source(l, "<?php\n", 6, &src, &err), 0);
    ASSERT_STR(src.file, "main.php");
    ASSERT_EQ(language_argv(l->run, &src, NULL, &argv, &n), 2);
    ASSERT_STR(argv[0], "php");
    ASSERT_STR(argv[1], "main.php");
    strlist_free(argv, n);
}

/* review: a "}" in a string in a {$...} interpolation closed it early in
 * the lexer's reading, and the string's real closing quote then opened one
 * that hid the call after it */
TEST(review_brace_interpolation)
{
    ASSERT_EQ(blocked("strict", "<?php $a = [\"}\" => 1]; echo \"{$a[\"}\"]}\"; system(\"id\"); echo \"\";\n"), 1);
    ASSERT_EQ(blocked("strict", "<?php $a = ['}' => 1]; echo \"${a['}']}\"; system('id'); echo \"\";\n"), 1);
    ASSERT_EQ(blocked("strict", "<?php echo \"{$a /* } */}\"; system('id'); echo \"\";\n"), 1);
    ASSERT_EQ(blocked("strict", "<?php $a = ['k' => 1]; echo \"{$a['k']} system('id')\";\n"), 0);
}

/* review: a call through a variable or a string ran any function under
 * a name the patterns never saw in code */
TEST(review_dynamic_calls)
{
    ASSERT_EQ(blocked("strict", "<?php $f = 'system'; $f('id');\n"), 1);
    ASSERT_EQ(blocked("strict", "<?php 'system'('id');\n"), 1);
    ASSERT_EQ(blocked("strict", "<?php ('sys'.'tem')('id');\n"), 1);
    ASSERT_EQ(blocked("strict", "<?php array_map('system', ['id']);\n"), 1);
    ASSERT_EQ(blocked("strict", "<?php $a = array_map(function($x) { return $x * 2; }, [1, 2]);\n"
                                "echo strlen('abc') . implode(',', $a) . f('x', 'y');\n"), 0);
}

TEST_MAIN("lang_php", T(review_dynamic_calls), T(review_brace_interpolation), T(lexer_marks), T(strict_per_category), T(names_extension_command))
