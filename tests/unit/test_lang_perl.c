/* test_lang_perl.c - Perl as a language of the table: its lexer's marks on
 * tricky inputs (POD, q{} and qq{}, regexes holding quotes, $#, here-
 * documents, s => 1), the strict preset on each category's idiom in code
 * and the same text in strings, POD and comments, its names, extension
 * and argv. */
#include "test.h"
#include "lang_test.h"

#include "common/strlist.h"
#include "languages/languages.h"
#include "security/security.h"

static const struct language *perl(void)
{
    return language_find("perl");
}

static int span_is(const char *src, const char *needle, int k)
{
    return lang_span_is("perl", src, needle, k);
}

static int blocked(const char *policy, const char *code, const char *rule)
{
    return lang_scan("perl", policy, code, rule, NULL, 0);
}

TEST(lexer_comments_pod_data)
{
    ASSERT(span_is("# system('x')\nprint 1;\n", "# system('x')", 2));
    ASSERT(span_is("# system('x')\nprint 1;\n", "print 1;", 0));
    ASSERT(span_is("=pod\nsystem('x')\n=cut\nprint 2;\n", "system('x')\n", 2));
    ASSERT(span_is("=pod\nsystem('x')\n=cut\nprint 2;\n", "print 2;", 0));
    ASSERT(span_is("=head1 NAME\n\nexec\n\n=cut\nfork;\n", "exec", 2));
    ASSERT(span_is("=head1 NAME\n\nexec\n\n=cut\nfork;\n", "fork;", 0));
    ASSERT(span_is("print 1;\n__END__\nsystem('x')\n", "system('x')", 1));
    /* $# is a variable, not a comment */
    ASSERT(span_is("my $n = $#a; system('ls');\n", "system(", 0));
    ASSERT(span_is("my $n = $#{$r}; system('ls');\n", "system(", 0));
}

TEST(lexer_strings_and_quote_operators)
{
    ASSERT(span_is("my $s = 'system(1)'; f();\n", "system(1)", 1));
    ASSERT(span_is("my $s = 'it\\'s'; system(1);\n", "system(1)", 0));
    ASSERT(span_is("my $s = q{a {nested} system(1)} . f();\n", "a {nested} system(1)", 1));
    ASSERT(span_is("my $s = q{a {nested} system(1)} . f();\n", "f();", 0));
    ASSERT(span_is("my $s = q (x) . system(1);\n", "system(1)", 0));
    ASSERT(span_is("my @w = qw(exec fork);\nkill 1;\n", "exec fork", 1));
    ASSERT(span_is("my @w = qw(exec fork);\nkill 1;\n", "kill 1;", 0));
    /* interpolating: code */
    ASSERT(span_is("my $s = qq{system(1)};\n", "system(1)", 0));
    ASSERT(span_is("print \"@{[ system('ls') ]}\";\n", "system('ls')", 0));
    ASSERT(span_is("my $o = `ls`; my $p = qx{ls};\n", "ls", 0));
    /* quote-like words that are not operators */
    ASSERT(span_is("my %h = (s => 1, q => 2); system(1);\n", "system(1)", 0));
    ASSERT(span_is("$h{s} = 1; $h{ q } = 2; system(1);\n", "system(1)", 0));
    ASSERT(span_is("if (-s $file) { system(1) }\n", "system(1)", 0));
    ASSERT(span_is("$obj->s('x'); system(1);\n", "system(1)", 0));
}

TEST(lexer_regexes)
{
    /* a quote or # inside a regex opens nothing */
    ASSERT(span_is("$x =~ s/'//g; system('ls');\n", "system(", 0));
    ASSERT(span_is("$x =~ /#/ and system('ls');\n", "system(", 0));
    ASSERT(span_is("my @p = split /'/, $x; system(1);\n", "system(1)", 0));
    ASSERT(span_is("$x =~ s{#}{'}g; system(1);\n", "system(1)", 0));
    ASSERT(span_is("$x =~ tr/'#//d; system(1);\n", "system(1)", 0));
    ASSERT(span_is("if ($x =~ m!'!) { system(1) }\n", "system(1)", 0));
    /* a division is no regex: the comment after it is one */
    ASSERT(span_is("my $r = $a / $b; # system(1)\n", "# system(1)", 2));
    ASSERT(span_is("my $r = f($a) / 2; # system(1)\n", "# system(1)", 2));
}

TEST(lexer_heredocs)
{
    ASSERT(span_is("print <<'EOF';\nsystem('x')\nEOF\nprint 3;\n", "system('x')", 1));
    ASSERT(span_is("print <<'EOF';\nsystem('x')\nEOF\nprint 3;\n", "print 3;", 0));
    ASSERT(span_is("print <<\"EOF\";\n@{[ system('x') ]}\nEOF\n", "system('x')", 0));
    ASSERT(span_is("print <<EOF;\nit's\nEOF\nsystem(1);\n", "system(1);", 0));
    ASSERT(span_is("print <<~EOF;\n  it's\n  EOF\nsystem(1);\n", "system(1);", 0));
    ASSERT(span_is("print <<'A', <<'B';\nx\nA\nsystem(2)\nB\nfork;\n", "system(2)", 1));
    ASSERT(span_is("print <<'A', <<'B';\nx\nA\nsystem(2)\nB\nfork;\n", "fork;", 0));
    /* a shift is no here-document */
    ASSERT(span_is("my $x = 1 << 2; system(1);\n", "system(1)", 0));
}

TEST(strict_blocks_each_category)
{
    static const struct {
        const char *code, *rule;
    } c[] = {
        {"system('ls');\n", "runs a shell command"},
        {"my $o = `ls`;\n", "runs a shell command"},
        {"my $o = qx{ls};\n", "runs a shell command"},
        {"exec 'ls';\n", "runs a shell command"},
        {"open(my $fh, '-|', 'ls') or die;\n", "runs a shell command"},
        {"open(FH, \"ls |\");\n", "runs a shell command"},
        {"my $v = eval \"1 + 1\";\n", "runs code built at run time"},
        {"unlink 'f';\n", "deletes files"},
        {"use IO::Socket::INET;\n", "opens network connections"},
        {"print $ENV{HOME};\n", "environment variables"},
        {"syscall(39);\n", "native code"},
        {"my $pid = fork();\n", "forks, signals"},
        {"kill 9, $pid;\n", "forks, signals"},
        {"$SIG{ALRM} = sub { die };\n", "forks, signals"},
        {"use POSIX qw(floor);\n", "imports restricted module \"POSIX\""},
        {"require File::Path;\n", "imports restricted module \"File::Path\""},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
        ASSERT_MSG(blocked("strict", c[i].code, c[i].rule) == 1, c[i].code);
    ASSERT(blocked("development", "system('ls');\n", NULL) == 1);
    ASSERT(blocked("development", "unlink 'f';\n", NULL) == 0);
}

TEST(strict_spares_strings_pod_and_comments)
{
    static const char *const c[] = {
        "print 'system(\"ls\") and fork()';\n# unlink $f\n",
        "=pod\n\nexec 'ls'; `ls`\n\n=cut\nprint 1;\n",
        "my @w = qw(kill fork unlink);\nmy $s = q{eval \"x\"};\n",
        "print <<'EOF';\nsystem('ls') $ENV{HOME}\nEOF\n",
        /* eval BLOCK is exception handling, not eval of a string */
        "my $ok = eval { 1 };\n",
        /* MultiPL-E's own harness */
        "use Test::Deep;\n\nsub testhumaneval {\n    my $candidate = \\&add;\n"
        "        if(eq_deeply($candidate->(0, 1),1)) {\n        print \"ok!\" }else{\n"
        "        exit 1;\n        }\n}\n\ntesthumaneval();",
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
        ASSERT_MSG(blocked("strict", c[i], NULL) == 0, c[i]);
}

TEST(names_extension_argv)
{
    struct lang_source src;
    struct llmsb_err err = {0};
    char **argv = NULL;
    size_t n = 0;

    ASSERT(perl() != NULL);
    ASSERT(language_find("pl") == perl());
    ASSERT(language_find("perl5") == perl());
    ASSERT(language_find("Perl") == perl());
    ASSERT(language_from_path("x/solution.pl") == perl());
    ASSERT(language_source(perl(), "print 1;", 8, &src, &err) == 0);
    ASSERT_STR(src.file, "main.pl");
    ASSERT(language_argv(perl()->run, &src, NULL, &argv, &n) == 2);
    ASSERT_STR(argv[0], "perl");
    ASSERT_STR(argv[1], "main.pl");
    strlist_free(argv, n);
    ASSERT(perl()->compile[0] == NULL);
    ASSERT(language_argv(perl()->install, NULL, NULL, &argv, &n) == 2);
    ASSERT_STR(argv[1], "/work/.llmsb-lib/perl");
    strlist_free(argv, n);
    ASSERT(language_library_ok(perl(), "libjson-perl"));
    ASSERT(!language_library_ok(perl(), "JSON::PP"));
}

/* review: after a bareword (a sub's name) or a block's }, Perl may read a
 * slash as a regex where the lexer read a division, and the quote or # in
 * it hid the call after it */
TEST(review_slash_after_bareword_or_block)
{
    ASSERT_EQ(blocked("strict", "sub f { 1 }\nf /'/; system(\"id\"); my $z = '/';\n", NULL), 1);
    ASSERT_EQ(blocked("strict", "sub f { 1 }\nf /#/; system(\"id\");\n", NULL), 1);
    ASSERT_EQ(blocked("strict", "{ } /#/; system(\"id\");\n", NULL), 1);
    ASSERT_EQ(blocked("strict", "sub f { 1 }\nf #\n/#/; system(\"id\");\n", NULL), 1);
    /* one slash on the line: a division, the comment after it one */
    ASSERT(span_is("my $r = $h{a} / 2; # system(1)\n", "# system(1)", 2));
}

TEST_MAIN("lang_perl", T(review_slash_after_bareword_or_block), T(lexer_comments_pod_data), T(lexer_strings_and_quote_operators),
          T(lexer_regexes), T(lexer_heredocs), T(strict_blocks_each_category),
          T(strict_spares_strings_pod_and_comments), T(names_extension_argv))
