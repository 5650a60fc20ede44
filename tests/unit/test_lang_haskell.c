/* test_lang_haskell.c - the haskell row: its lexer's marks on tricky
 * inputs (operators that look like comments, nested comments, pragmas,
 * primes and character literals, string gaps), the strict preset on each
 * category's idiom in code, in a string and in a comment, its names,
 * extension and command. */
#include "test.h"
#include "lang_test.h"

#include "common/strlist.h"
#include "languages/languages.h"
#include "security/security.h"

static int blocked(const char *policy, const char *code)
{
    return lang_scan("haskell", policy, code, NULL, NULL, 0);
}

static void marks(const char *src, char *out)
{
    lang_marks("haskell", src, "csm", out);
}

TEST(lexer_marks)
{
    static const struct {
        const char *src, *want;
    } c[] = {
        {"x -- c", "ccmmmm"},
        {"a-->b", "ccccc"},     /* an operator, not a comment */
        {"a|--b", "ccccc"},     /* ditto */
        {"a --- c", "ccmmmmm"}, /* three dashes: a comment */
        {"a --| b", "ccccccc"}, /* --| is an operator */
        {"{- a {- b -} c -}x", "mmmmmmmmmmmmmmmmmc"},
        {"{-# LANGUAGE X #-}", "cccccccccccccccccc"}, /* a pragma is code */
        {"\"a\\\"b\"c", "ssssssc"},
        {"\"{- x -}\"", "sssssssss"},   /* no comment inside a string */
        {"\"a\\  \\b\"c", "ssssssssc"}, /* a string gap */
        {"f' x'", "ccccc"},             /* primes */
        {"foldl' 'a'", "cccccccsss"},
        {"'\\''x", "ssssc"},
        {"'\\n' '\\SOH'", "sssscssssss"},
        {"''T 'f", "cccccc"}, /* TH quotes stay code */
        {"'['", "sss"},
        {"'[]", "ccc"}, /* a promoted constructor */
    };
    char got[512];
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        marks(c[i].src, got);
        if (strcmp(got, c[i].want) != 0)
            fprintf(stderr, "  %s: got %s want %s\n", c[i].src, got, c[i].want);
        ASSERT_MSG(strcmp(got, c[i].want) == 0, c[i].src);
    }
}

/* Each category's idiom is blocked by strict in code, never in a string
 * literal or a comment. */
TEST(strict_blocks_code_not_strings_or_comments)
{
    static const char *const idioms[] = {
        "main = callCommand \"ls\"",
        "main = readProcess \"ls\" [] \"\" >>= putStr",
        "main = system \"ls\" >> pure ()",
        "main = spawnProcess \"ls\" [] >> pure ()",
        "main = createProcess (proc \"ls\" []) >> pure ()",
        "main = executeFile \"/bin/ls\" False [] Nothing",
        "main = removeFile \"x\"",
        "main = getEnv \"HOME\" >>= putStrLn",
        "foreign import ccall \"exit\" c_exit :: Int -> IO ()",
        "x = unsafePerformIO (pure 1)",
        "main = forkProcess (pure ()) >> pure ()",
        "main = signalProcess 9 1",
        "main = connectTo \"h\" 80",
        "{-# LANGUAGE TemplateHaskell #-}\nmain = pure ()",
    };
    for (size_t i = 0; i < sizeof(idioms) / sizeof(idioms[0]); i++) {
        char str[512], line[512], block[512];
        size_t o = 0, k = 0;

        ASSERT_MSG(blocked("strict", idioms[i]) == 1, idioms[i]);
        /* the same text in a string literal, a line comment, a block comment */
        o = (size_t)snprintf(str, sizeof(str), "main = putStrLn \"");
        k = (size_t)snprintf(line, sizeof(line), "-- ");
        for (const char *p = idioms[i]; *p && o + 4 < sizeof(str); p++) {
            if (*p == '"' || *p == '\\')
                str[o++] = '\\';
            str[o++] = *p == '\n' ? ' ' : *p;
            line[k++] = *p == '\n' ? ' ' : *p;
        }
        snprintf(str + o, sizeof(str) - o, "\"\n");
        snprintf(line + k, sizeof(line) - k, "\nmain = pure ()\n");
        snprintf(block, sizeof(block), "{- %s {- nested -} -}\nmain = pure ()\n", idioms[i]);
        ASSERT_MSG(blocked("strict", str) == 0, str);
        ASSERT_MSG(blocked("strict", line) == 0, line);
        ASSERT_MSG(blocked("strict", block) == 0, block);
    }
    /* ordinary MultiPL-E code passes */
    ASSERT_EQ(blocked("strict", "import Data.List (sort)\nimport qualified Data.Map as M\n"
                                "f :: [Int] -> Int\nf xs = foldl' (+) 0 (sort xs) -- sum\n"),
              0);
}

TEST(strict_modules)
{
    ASSERT_EQ(blocked("strict", "import System.Process\nmain = pure ()\n"), 1);
    ASSERT_EQ(blocked("strict", "import qualified System.Process as P\n"), 1);
    ASSERT_EQ(blocked("strict", "import System.Posix.Process (forkProcess)\n"), 1);
    ASSERT_EQ(blocked("strict", "import \"process\" System.Process\n"), 1);
    ASSERT_EQ(blocked("strict", "import Foreign.C.Types\n"), 1);
    ASSERT_EQ(blocked("strict", "import System.ProcessX\n"), 0); /* another module */
    ASSERT_EQ(blocked("strict", "-- import System.Process\nmain = pure ()\n"), 0);
    ASSERT_EQ(blocked("strict", "{- import System.Process -}\nmain = pure ()\n"), 0);
    ASSERT_EQ(blocked("strict", "main = putStrLn \"import System.Process\"\n"), 0);
    ASSERT_EQ(blocked("strict", "import Data.Char (ord)\n"), 0);
}

TEST(names_extension_command)
{
    const struct language *l = language_find("haskell");
    static const struct lang_source src = {"main.hs", ""};
    char **argv;
    size_t n;

    ASSERT(l != NULL);
    ASSERT(language_find("hs") == l);
    ASSERT(language_find("ghc") == l);
    ASSERT(language_find("runghc") == l);
    ASSERT(language_find("HASKELL") == l);
    ASSERT(language_from_path("x/Main.hs") == l);
    ASSERT_STR(l->image, "llmsb/haskell");
    ASSERT(l->compile[0] == NULL); /* runghc: no compile step */
    ASSERT(language_argv(l->run, &src, NULL, &argv, &n) == 2);
    ASSERT_STR(argv[0], "runghc");
    ASSERT_STR(argv[1], "main.hs");
    strlist_free(argv, n);
    ASSERT(l->install[0] == NULL); /* no libraries */
}

/* review: an import after where { or with a comment before the name was
 * not seen; CPP pastes names (callComm-comment-and) and -F -pgmF runs a
 * program at compile time */
TEST(review_imports_and_preprocessors)
{
    ASSERT_EQ(blocked("strict", "module Main where { import{- x -}System.Process; main = let c = \"id\" in system c >> return () }\n"), 1);
    ASSERT_EQ(blocked("strict", "{-# LANGUAGE CPP #-}\nmodule Main where\n#define CC callComm/**/and\nmain = return ()\n"), 1);
    ASSERT_EQ(blocked("strict", "{-# OPTIONS_GHC -F -pgmF ./x.sh #-}\nmain = return ()\n"), 1);
    ASSERT_EQ(blocked("strict", "{-# LANGUAGE BangPatterns #-}\nimport Data.List (sort)\nmain = print (sort [2, 1])\n"), 0);
}

TEST_MAIN("lang_haskell", T(review_imports_and_preprocessors), T(lexer_marks), T(strict_blocks_code_not_strings_or_comments),
          T(strict_modules), T(names_extension_command))
