/* test_lang_elixir.c - the Elixir row: its lexer's marks (comments,
 * strings, charlists, heredocs, sigils, ?c, interpolation as code), the
 * strict preset on each category's idiom in code and not in a literal or
 * a comment, its names and its commands. */
#include "test.h"
#include "lang_test.h"

#include "common/strlist.h"
#include "languages/languages.h"
#include "security/security.h"

static const struct language *ex(void)
{
    return language_find("elixir");
}

static int blocked(const char *policy, const char *code)
{
    return lang_scan("elixir", policy, code, NULL, NULL, 0);
}

static int mark(const char *src, const char *what)
{
    return lang_kind_at("elixir", src, what, 0);
}

TEST(lexer_marks)
{
    /* comments, and # in a string */
    ASSERT_EQ(mark("x = 1 # System.cmd\n", "System"), 2);
    ASSERT_EQ(mark("s = \"# not a comment\" <> y\n", "not"), 1);
    ASSERT_EQ(mark("s = \"# not a comment\" <> y\n", "y\n"), 0);
    /* ?# is a character, ?" too: neither starts anything */
    ASSERT_EQ(mark("c = ?#; d = System.cmd(\"ls\", [])\n", "System"), 0);
    ASSERT_EQ(mark("c = ?\"; d = System.cmd(\"ls\", [])\n", "System"), 0);
    /* valid? is a name: the ? is not a character literal */
    ASSERT_EQ(mark("valid?(x) && System.cmd(\"ls\", [])\n", "System"), 0);
    /* escapes, charlists, interpolation */
    ASSERT_EQ(mark("s = \"a\\\"b System.cmd\" <> c\n", "System"), 1);
    ASSERT_EQ(mark("s = 'System.cmd' ++ c\n", "System"), 1);
    ASSERT_EQ(mark("s = \"#{System.cmd(\"id\", [])}\"\n", "System"), 0);
    ASSERT_EQ(mark("s = \"#{%{a: \"}\"}} System.halt\"\n", "System"), 1);
    ASSERT_EQ(mark("s = 'x#{System.cmd(\"id\", [])}'\n", "System"), 0);
    /* heredocs: text, and interpolation in them */
    ASSERT_EQ(mark("@doc \"\"\"\nSystem.cmd \"here\"\n\"\"\"\nx = 1\n", "System"), 1);
    ASSERT_EQ(mark("@doc \"\"\"\nSystem.cmd \"here\"\n\"\"\"\nx = 1\n", "x = 1"), 0);
    ASSERT_EQ(mark("s = '''\n#{System.cmd(\"id\", [])}\n'''\n", "System"), 0);
    /* sigils: every delimiter; lower case interpolates, upper case not */
    ASSERT_EQ(mark("r = ~r/System.cmd/i; y\n", "System"), 1);
    ASSERT_EQ(mark("r = ~r/System.cmd/i; y\n", "y\n"), 0);
    ASSERT_EQ(mark("w = ~w(a (System.cmd) b) ++ y\n", "System"), 1);
    ASSERT_EQ(mark("w = ~w(a (b) c) ++ System.halt\n", "System"), 0);
    ASSERT_EQ(mark("s = ~s{#{System.cmd(\"id\", [])}}\n", "System"), 0);
    ASSERT_EQ(mark("s = ~S{#{System.cmd(\"id\", [])}}\n", "System"), 1);
    ASSERT_EQ(mark("s = ~s|System.halt| <> ~c<System.halt> <> x\n", "x\n"), 0);
    ASSERT_EQ(mark("s = ~S\"\"\"\nSystem.cmd\n\"\"\"\nx\n", "System"), 1);
    /* a quoted atom is a literal, and ~ alone is code */
    ASSERT_EQ(mark("a = :\"System.cmd\"; b = 1 ~~~ 2\n", "System"), 1);
    ASSERT_EQ(mark("a = :\"System.cmd\"; b = 1 ~~~ 2\n", "2\n"), 0);
}

/* Each category's idiom is blocked by strict in code; the same text in a
 * string, charlist, heredoc, sigil or comment is not. */
TEST(strict_blocks_code_not_literals)
{
    static const char *const idioms[] = {
        "System.cmd(\"ls\", [])",
        "System.shell(\"ls\")",
        "Port.open({:spawn, \"ls\"}, [])",
        ":os.cmd('ls')",
        "Code.eval_string(\"1 + 1\")",
        "apply(:os, :cmd, ['ls'])",
        "File.rm!(\"x\")",
        "File.rm_rf(\"/work/x\")",
        ":gen_tcp.connect('a', 80, [])",
        ":httpc.request('http://a')",
        "System.get_env(\"HOME\")",
        ":os.getenv('HOME')",
        ":erlang.load_nif('x', 0)",
        "System.halt(1)",
        ":init.stop()",
    };
    char code[256];

    for (size_t i = 0; i < sizeof(idioms) / sizeof(idioms[0]); i++) {
        snprintf(code, sizeof(code), "x = %s\n", idioms[i]);
        ASSERT_MSG(blocked("strict", code) == 1, idioms[i]);
        snprintf(code, sizeof(code), "# %s\nIO.puts(\"ok\")\n", idioms[i]);
        ASSERT_MSG(blocked("strict", code) == 0, idioms[i]);
        snprintf(code, sizeof(code), "IO.puts(~S\"\"\"\n%s\n\"\"\")\n", idioms[i]);
        ASSERT_MSG(blocked("strict", code) == 0, idioms[i]);
        snprintf(code, sizeof(code), "IO.puts(~S[%s])\n", idioms[i]);
        ASSERT_MSG(blocked("strict", code) == 0, idioms[i]);
    }
    ASSERT_EQ(blocked("strict", "IO.puts(\"System.cmd(\\\"ls\\\", [])\")\n"), 0);
    ASSERT_EQ(blocked("strict", "IO.puts('File.rm!(x)')\n"), 0);
    /* the development preset: spawning yes, reading HOME no */
    ASSERT_EQ(blocked("development", "System.cmd(\"ls\", [])\n"), 1);
    ASSERT_EQ(blocked("development", "System.get_env(\"HOME\")\n"), 0);
    /* restricted modules: an alias or import of one */
    ASSERT_EQ(blocked("strict", "alias System, as: S\n"), 1);
    ASSERT_EQ(blocked("strict", "import :os\n"), 1);
    ASSERT_EQ(blocked("strict", "import Enum\nIO.puts(Enum.sum([1]))\n"), 0);
    /* a MultiPL-E program passes strict */
    ASSERT_EQ(blocked("strict",
                      "defmodule HumanEval do\n  def add(x, y), do: x + y\nend\n"
                      "ExUnit.start()\ndefmodule T do\n  use ExUnit.Case\n"
                      "  test 'add' do\n    assert 2 == HumanEval.add(1, 1)\n  end\nend\n"),
              0);
}

TEST(names_and_commands)
{
    char **argv = NULL;
    size_t n = 0;
    struct lang_source src;
    struct llmsb_err err = {0};

    ASSERT_STR(language_find("ex")->name, "elixir");
    ASSERT_STR(language_find("EXS")->name, "elixir");
    ASSERT_STR(language_find("elixir")->name, "elixir");
    ASSERT_STR(language_from_path("t/prog.exs")->name, "elixir");
    ASSERT(ex()->compile[0] == NULL);
    ASSERT_EQ(language_source(ex(), "", 0, &src, &err), 0);
    ASSERT_STR(src.file, "main.exs");
    ASSERT(language_argv(ex()->run, &src, NULL, &argv, &n) == 2);
    ASSERT_STR(argv[0], "elixir");
    ASSERT_STR(argv[1], "main.exs");
    strlist_free(argv, n);
    ASSERT_CONTAINS(ex()->env[0], "ELIXIR_ERL_OPTIONS=+S 2:2");
    ASSERT(ex()->install[0] == NULL);
}

/* review: a module named by a quoted atom or built from a string ran
 * System.cmd under no name the patterns knew */
TEST(review_quoted_module_names)
{
    ASSERT_EQ(blocked("strict", ":\"Elixir.System\".cmd(\"sh\", [\"-c\", \"id\"])\n"), 1);
    ASSERT_EQ(blocked("strict", "m = String.to_atom(\"Elixir.Sys\" <> \"tem\")\nm.cmd(\"id\", [])\n"), 1);
    ASSERT_EQ(blocked("strict", "m = Module.concat([\"Sys\" <> \"tem\"])\nm.cmd(\"id\", [])\n"), 1);
    ASSERT_EQ(blocked("strict", "x = %{:\"a b\" => 1}\nIO.puts(x[:\"a b\"])\n"), 0);
}

/* review: a sigil ends at its first closing delimiter (Elixir nests
 * none); the lexer nested them and hid the call after ~s(a(b) */
TEST(review_sigil_no_nesting)
{
    ASSERT_EQ(blocked("strict", "IO.puts(~s(a(b) <> elem(System.cmd(\"id\", []), 0))\n"), 1);
    ASSERT_EQ(blocked("strict", "IO.puts(~w[a[b] ++ [elem(System.cmd(\"id\", []), 0)])\n"), 1);
    ASSERT_EQ(blocked("strict", "IO.puts(~s(System.cmd))\n"), 0);
}

TEST_MAIN("lang_elixir", T(review_sigil_no_nesting), T(review_quoted_module_names), T(lexer_marks), T(strict_blocks_code_not_literals), T(names_and_commands))
