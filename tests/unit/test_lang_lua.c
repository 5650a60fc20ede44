/* test_lang_lua.c - Lua as a language of the table: its lexer's marks on
 * tricky inputs, the strict preset on each category's idiom in code and
 * the same text in strings and comments, its names, extension and argv. */
#include "test.h"
#include "lang_test.h"

#include "common/strlist.h"
#include "languages/languages.h"
#include "security/security.h"

static const struct language *lua(void)
{
    return language_find("lua");
}

static int span_is(const char *src, const char *needle, int k)
{
    return lang_span_is("lua", src, needle, k);
}

static int blocked(const char *policy, const char *code, const char *rule)
{
    return lang_scan("lua", policy, code, rule, NULL, 0);
}

TEST(lexer_marks)
{
    ASSERT(span_is("x = 1 -- os.execute('a')\ny = 2\n", "os.execute('a')", 2));
    ASSERT(span_is("x = 1 -- os.execute('a')\ny = 2\n", "y = 2", 0));
    /* block comments, of any level; ]] does not close a level-2 one */
    ASSERT(span_is("--[[ os.execute('a')\n ]] f()\n", "os.execute('a')\n", 2));
    ASSERT(span_is("--[[ os.execute('a')\n ]] f()\n", "f()", 0));
    ASSERT(span_is("--[==[ a ]] still ]=] ]==] z()\n", " still ]=] ", 2));
    ASSERT(span_is("--[==[ a ]] still ]=] ]==] z()\n", "z()", 0));
    /* --[ is a line comment, not a block */
    ASSERT(span_is("--[ not a block\nos.exit(1)\n", "os.exit(1)", 0));
    /* long strings */
    ASSERT(span_is("s = [[ os.execute('x') ]] .. t()\n", " os.execute('x') ", 1));
    ASSERT(span_is("s = [[ os.execute('x') ]] .. t()\n", "t()", 0));
    ASSERT(span_is("s = [=[ a ]] b ]=] c()\n", " b ", 1));
    ASSERT(span_is("s = [=[ a ]] b ]=] c()\n", "c()", 0));
    /* quotes: escapes, the other quote inside, a line break ends them */
    ASSERT(span_is("s = \"a\\\"b -- c\" .. d()\n", "-- c", 1));
    ASSERT(span_is("s = \"a\\\"b -- c\" .. d()\n", "d()", 0));
    ASSERT(span_is("s = 'it\"s' .. e()\n", "e()", 0));
    ASSERT(span_is("s = 'a\\\\' .. g()\n", "g()", 0));
    ASSERT(span_is("s = 'open\nos.execute('x')\n", "os.execute(", 0));
    /* indexing is not a long string */
    ASSERT(span_is("v = a[b[1]] os.exit(1)\n", "a[b[1]] os.exit(1)", 0));
    /* a -- inside a string is no comment */
    ASSERT(span_is("s = '--' os.execute('x')\n", "os.execute(", 0));
}

TEST(strict_blocks_each_category)
{
    static const struct {
        const char *code, *rule;
    } c[] = {
        {"os.execute('ls')\n", "runs a shell command"},
        {"local f = io.popen('ls')\n", "runs a shell command"},
        {"local f = load('return 1')\n", "runs code built at run time"},
        {"dofile('x.lua')\n", "runs code built at run time"},
        {"debug.sethook(print, 'l')\n", "runs code built at run time"},
        {"os.remove('f')\n", "deletes files"},
        {"local s = require('socket')\n", "opens network connections"},
        {"print(os.getenv('HOME'))\n", "environment variables"},
        {"local f = package.loadlib('x.so', 'f')\n", "native code"},
        {"posix.fork()\n", "forks, signals"},
        {"local lfs = require 'lfs'\n", "imports restricted module \"lfs\""},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        ASSERT_MSG(blocked("strict", c[i].code, c[i].rule) == 1, c[i].code);
    }
    /* development blocks spawning only */
    ASSERT(blocked("development", "os.execute('ls')\n", NULL) == 1);
    ASSERT(blocked("development", "os.remove('f')\n", NULL) == 0);
}

TEST(strict_spares_strings_and_comments)
{
    static const char *const c[] = {
        "print(\"os.execute('ls')\") -- io.popen('x')\n",
        "--[[ os.remove('f')\nload('x') ]]\nprint(1)\n",
        "local s = [==[ require('socket') os.getenv('HOME') ]==]\n",
        "local t = 'package.loadlib(x) posix.fork()'\n",
        /* a field named like a function is not the function */
        "local m = {load = 1}\nprint(m.load)\n",
        /* MultiPL-E's own harness */
        "lu = require('luaunit')\nfunction test_humaneval()\n"
        "    lu.assertEquals(1, 1)\nend\nos.exit(lu.LuaUnit.run())\n",
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

    ASSERT(lua() != NULL);
    ASSERT(language_find("lua5.4") == lua());
    ASSERT(language_find("LUA") == lua());
    ASSERT(language_from_path("/x/solution.lua") == lua());
    ASSERT(language_source(lua(), "print(1)", 8, &src, &err) == 0);
    ASSERT_STR(src.file, "main.lua");
    ASSERT(language_argv(lua()->run, &src, NULL, &argv, &n) == 2);
    ASSERT_STR(argv[0], "lua");
    ASSERT_STR(argv[1], "main.lua");
    strlist_free(argv, n);
    ASSERT(lua()->compile[0] == NULL);
    ASSERT(language_argv(lua()->install, NULL, NULL, &argv, &n) == 2);
    ASSERT_STR(argv[1], "/work/.llmsb-lib/lua");
    strlist_free(argv, n);
    ASSERT(language_library_ok(lua(), "lua-cjson"));
    ASSERT(!language_library_ok(lua(), "../x"));
}

/* review: os.execute reached by index or under another name */
TEST(review_os_by_index)
{
    ASSERT_EQ(blocked("strict", "os[\"execute\"](\"id\")\n", NULL), 1);
    ASSERT_EQ(blocked("strict", "local o = os\no.execute(\"id\")\n", NULL), 1);
    ASSERT_EQ(blocked("strict", "_G[\"o\"..\"s\"][\"exe\"..\"cute\"](\"id\")\n", NULL), 1);
    ASSERT_EQ(blocked("strict", "local t = {1, 2}\nio.write(tostring(os.clock()))\nprint(#t)\n", NULL), 0);
}

TEST_MAIN("lang_lua", T(review_os_by_index), T(lexer_marks), T(strict_blocks_each_category),
          T(strict_spares_strings_and_comments), T(names_extension_argv))
