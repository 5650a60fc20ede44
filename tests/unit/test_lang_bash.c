/* test_lang_bash.c - Bash as a language of the table: its lexer
 * (security/lex_shell.c) on tricky inputs, the strict preset on each
 * category's idiom in code and the same text in strings, comments and
 * literal here-documents, its names, extension and argv. */
#include "test.h"
#include "lang_test.h"

#include "common/strlist.h"
#include "languages/languages.h"
#include "security/security.h"

static const struct language *bash(void)
{
    return language_find("bash");
}

static int span_is(const char *src, const char *needle, int k)
{
    return lang_span_is("bash", src, needle, k);
}

static int blocked(const char *policy, const char *code, const char *rule)
{
    return lang_scan("bash", policy, code, rule, NULL, 0);
}

TEST(lexer_comments_and_quotes)
{
    ASSERT(span_is("# eval $(ls)\necho hi\n", "# eval $(ls)", 2));
    ASSERT(span_is("# eval $(ls)\necho hi\n", "echo hi", 0));
    ASSERT(span_is("x=1 # eval\n", "# eval", 2));
    /* a # inside a word, after $ or ${, or escaped opens no comment */
    ASSERT(span_is("echo a#b; eval x\n", "eval x", 0));
    ASSERT(span_is("echo $# ${#a[@]} ${v#p}; eval x\n", "eval x", 0));
    ASSERT(span_is("echo \\# no; eval x\n", "eval x", 0));
    /* single quotes: a string; double quotes: a string whose $(...) and
     * backquotes run */
    ASSERT(span_is("echo 'eval $(ls)' \"x $(ls) y\"\n", "eval $(ls)", 1));
    ASSERT(span_is("echo 'eval' \"x $(ls) y\"\n", "$(ls)", 0));
    ASSERT(span_is("echo 'eval $(ls)' \"x $(ls) y\"\n", "x ", 1));
    ASSERT(span_is("echo \"a `ls` b\"\n", "`ls`", 0));
    ASSERT(span_is("echo \"a \\\" b\"; eval x\n", "eval x", 0));
    ASSERT(span_is("echo $'it\\'s'; eval x\n", "eval x", 0));
    /* a quote inside a command substitution inside double quotes does
     * not end it early: the rest of the command is code */
    ASSERT(span_is("echo \"$(echo ')'; rm -rf x)\"\n", "rm -rf x", 0));
    ASSERT(span_is("echo \"$(echo \")\"; rm -rf x)\"\n", "rm -rf x", 0));
    ASSERT(span_is("echo \"$(f $(g ')') ; rm -rf x)\" 'lit'\n", "rm -rf x", 0));
    ASSERT(span_is("echo \"$(f $(g ')') ; rm -rf x)\" 'lit'\n", "lit", 1));
}

TEST(lexer_heredocs)
{
    ASSERT(span_is("cat <<'EOF'\n$(ls)\nEOF\neval x\n", "$(ls)", 1));
    ASSERT(span_is("cat <<'EOF'\n$(ls)\nEOF\neval x\n", "eval x", 0));
    ASSERT(span_is("cat <<\"EOF\"\n$(ls)\nEOF\n", "$(ls)", 1));
    ASSERT(span_is("cat <<EOF\n$(ls)\nEOF\n", "$(ls)", 0));
    ASSERT(span_is("cat <<-EOF\n\tit's\n\tEOF\neval y\n", "eval y", 0));
    ASSERT(span_is("cat <<< \"$(ls)\"\n", "$(ls)", 0));
    /* two on a line: the bodies follow one another */
    ASSERT(span_is("cat <<'A' <<'B'\na\nA\nit's $(ls)\nB\neval x\n", "it's $(ls)", 1));
    ASSERT(span_is("cat <<'A' <<'B'\na\nA\nit's $(ls)\nB\neval x\n", "eval x", 0));
    ASSERT(span_is("cat <<A <<'B'\n$(ls)\nA\nit's\nB\neval x\n", "$(ls)", 0));
    ASSERT(span_is("cat <<A <<'B'\n$(ls)\nA\nit's\nB\neval x\n", "eval x", 0));
}

/* Nesting deeper than the lexer follows ends as code, without recursing
 * down the whole input. */
TEST(lexer_deep_nesting)
{
    size_t reps = 100000, n = reps * 3;
    char *src = malloc(n + 1);
    unsigned char *kind = malloc(n);

    ASSERT(src && kind);
    for (size_t i = 0; i < reps; i++)
        memcpy(src + 3 * i, "\"$(", 3);
    src[n] = '\0';
    sec_lex(bash(), src, n, kind);
    ASSERT_EQ(kind[n - 1], 0);
    free(src);
    free(kind);
}

TEST(strict_blocks_each_category)
{
    static const struct {
        const char *code, *rule;
    } c[] = {
        {"eval \"$x\"\n", "runs a shell command"},
        {"out=$(ls)\n", "runs a shell command"},
        {"out=`ls`\n", "runs a shell command"},
        {"bash -c 'ls'\n", "runs a shell command"},
        {"source ./lib.sh\n", "runs code built at run time"},
        {". ./lib.sh\n", "runs code built at run time"},
        {"rm -f x\n", "deletes files"},
        {"curl http://example.com\n", "opens network connections"},
        {"exec 3<>/dev/tcp/1.1.1.1/53\n", "opens network connections"},
        {"export X=1\n", "environment variables"},
        {"echo $HOME\n", "environment variables"},
        {"gcc x.c\n", "native code"},
        {"kill 1\n", "forks, signals"},
        {"sleep 1 &\n", "forks, signals"},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
        ASSERT_MSG(blocked("strict", c[i].code, c[i].rule) == 1, c[i].code);
    ASSERT(blocked("development", "out=$(ls)\n", NULL) == 1);
    ASSERT(blocked("development", "rm -f x\n", NULL) == 0);
}

TEST(strict_spares_strings_comments_and_literal_heredocs)
{
    static const char *const c[] = {
        "# eval $(ls) rm -rf x\necho hi\n",
        "echo 'eval $(ls) and rm -r x and curl y' \"kill the export\"\n",
        "cat <<'EOF'\n$(ls) `ls` rm -f x $HOME\nEOF\n",
        "echo done 2>&1 >/dev/null\n",
        "[[ 1 -eq 1 && 2 -eq 2 ]] && echo ok\n",
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

    ASSERT(bash() != NULL);
    ASSERT(language_find("sh") == bash());
    ASSERT(language_find("shell") == bash());
    ASSERT(language_from_path("run.sh") == bash());
    ASSERT(language_source(bash(), "echo", 4, &src, &err) == 0);
    ASSERT_STR(src.file, "main.sh");
    ASSERT(language_argv(bash()->run, &src, NULL, &argv, &n) == 2);
    ASSERT_STR(argv[0], "bash");
    ASSERT_STR(argv[1], "main.sh");
    strlist_free(argv, n);
    ASSERT(bash()->compile[0] == NULL);
    ASSERT(bash()->install[0] == NULL); /* no libraries */
}

/* review: a command's name spelt with quotes or a backslash, or held in a
 * variable, a shell reading a pipe, and prompt expansion ran a command
 * unflagged; the arithmetic $((...)) was taken for a command substitution */
TEST(review_command_names)
{
    const char *bad[] = {"\\eval 'id'\n", "\"ev\"al id\n", "e''val id\n", "$'\\x65val' id\n",
                         "x=eval; $x id\n", "echo id | bash\n", "bash <<< 'id'\n",
                         "if \"ev\"al id; then :; fi\n", "x=1 \"ev\"al id\n",
                         "x='$(id)'; y=${x@P}\n", "x=eval; \"$x\" id\n", "${!y} id\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ASSERT_MSG(blocked("strict", bad[i], NULL) == 1, bad[i]);
    ASSERT_EQ(blocked("strict", "x=$((1 + 2)); y=$(( (x + 1) * 2 )); echo \"$x $y\"\n", NULL), 0);
    ASSERT_EQ(blocked("strict", "s='eval it'; echo \"$s\" sh\n", NULL), 0);
}

TEST_MAIN("lang_bash", T(review_command_names), T(lexer_comments_and_quotes), T(lexer_heredocs), T(lexer_deep_nesting),
          T(strict_blocks_each_category), T(strict_spares_strings_comments_and_literal_heredocs),
          T(names_extension_argv))
