/* test_lang_ada.c - the Ada row: its lexer's marks (-- comments, strings
 * with doubled quotes, character literals beside attributes), the strict
 * preset on each category's idiom in code and not in a literal or a
 * comment, its names and its commands. */
#include "test.h"
#include "lang_test.h"

#include "common/strlist.h"
#include "languages/languages.h"
#include "security/security.h"

static const struct language *ada(void)
{
    return language_find("ada");
}

static int blocked(const char *policy, const char *code)
{
    return lang_scan("ada", policy, code, NULL, NULL, 0);
}

static int mark(const char *src, const char *what)
{
    return lang_kind_at("ada", src, what, 0);
}

TEST(lexer_marks)
{
    ASSERT_EQ(mark("X := 1; -- Spawn (\"ls\")\n", "Spawn"), 2);
    ASSERT_EQ(mark("S : String := \"-- not a comment\"; Y := 2;\n", "not"), 1);
    ASSERT_EQ(mark("S : String := \"-- not a comment\"; Y := 2;\n", "Y :="), 0);
    /* "" is a quote inside a string */
    ASSERT_EQ(mark("S := \"say \"\"Spawn\"\" now\"; Z := 1;\n", "Spawn"), 1);
    ASSERT_EQ(mark("S := \"say \"\"Spawn\"\" now\"; Z := 1;\n", "Z :="), 0);
    /* a string ends at its line */
    ASSERT_EQ(mark("S := \"open\nSpawn (X);\n", "Spawn"), 0);
    /* character literals, the quote one and the dash one */
    ASSERT_EQ(mark("C := '\"'; Spawn (X);\n", "Spawn"), 0);
    ASSERT_EQ(mark("C := '-'; D := '-'; Spawn (X);\n", "Spawn"), 0);
    ASSERT_EQ(mark("if C = 'a' then Spawn (X); end if;\n", "a'"), 1);
    /* attributes and qualified expressions are code */
    ASSERT_EQ(mark("N := A'First + A'Last; Spawn (X);\n", "First"), 0);
    ASSERT_EQ(mark("Put (Integer'Image (N)); Spawn (X);\n", "Spawn"), 0);
    ASSERT_EQ(mark("C := Character'('x'); Spawn (X);\n", "Spawn"), 0);
    ASSERT_EQ(mark("C := Character'('x'); Spawn (X);\n", "x'"), 1);
    ASSERT_EQ(mark("L := F (X)'Length; Spawn (X);\n", "Length"), 0);
}

TEST(strict_blocks_code_not_literals)
{
    static const char *const idioms[] = {
        "GNAT.OS_Lib.Spawn (\"/bin/ls\", Args, Ok);",
        "Pid := Non_Blocking_Spawn (\"/bin/ls\", Args);",
        "pragma Import (C, Sys, \"system\");",
        "Ada.Directories.Delete_File (\"x\");",
        "GNAT.Sockets.Create_Socket (S);",
        "V := Ada.Environment_Variables.Value (\"HOME\");",
        "pragma Import (C, F, \"f\");",
        "function F return Integer with Import => True, Convention => C;",
        "GNAT.OS_Lib.OS_Exit (3);",
    };
    char code[512];

    for (size_t i = 0; i < sizeof(idioms) / sizeof(idioms[0]); i++) {
        snprintf(code, sizeof(code), "procedure Main is\nbegin\n   %s\nend Main;\n", idioms[i]);
        ASSERT_MSG(blocked("strict", code) == 1, idioms[i]);
        snprintf(code, sizeof(code), "procedure Main is\nbegin\n   -- %s\n   null;\nend Main;\n",
                 idioms[i]);
        ASSERT_MSG(blocked("strict", code) == 0, idioms[i]);
    }
    /* in a string (doubled quotes inside it) */
    ASSERT_EQ(blocked("strict", "with Ada.Text_IO;\nprocedure Main is\nbegin\n"
                                "   Ada.Text_IO.Put_Line (\"GNAT.OS_Lib.Spawn (\"\"ls\"\")\");\n"
                                "end Main;\n"),
              0);
    /* case does not matter to Ada, nor to the scanner */
    ASSERT_EQ(
        blocked("strict", "procedure Main is begin gnat.os_lib.spawn (P, A, Ok); end Main;\n"), 1);
    ASSERT_EQ(blocked("development", "procedure Main is begin Spawn (P, A, Ok); end Main;\n"), 1);
    /* restricted modules: a with clause */
    ASSERT_EQ(blocked("strict", "with GNAT.OS_Lib;\nprocedure Main is begin null; end Main;\n"), 1);
    ASSERT_EQ(blocked("strict", "with Ada.Text_IO, Interfaces.C;\nprocedure Main is begin null; "
                                "end Main;\n"),
              1);
    ASSERT_EQ(blocked("strict", "with Ada.Text_IO; use Ada.Text_IO;\nprocedure Main is begin "
                                "Put_Line (Integer'Image (1)); end Main;\n"),
              0);
}

TEST(names_and_commands)
{
    char **argv = NULL;
    size_t n = 0;
    struct lang_source src;
    struct llmsb_err err = {0};

    ASSERT_STR(language_find("adb")->name, "ada");
    ASSERT_STR(language_find("GNAT")->name, "ada");
    ASSERT_STR(language_from_path("src/main.adb")->name, "ada");
    ASSERT_EQ(language_source(ada(), "", 0, &src, &err), 0);
    ASSERT_STR(src.file, "main.adb");
    ASSERT(language_argv(ada()->compile, &src, NULL, &argv, &n) == 5);
    ASSERT_STR(argv[0], "sh");
    ASSERT_STR(argv[1], "-c");
    ASSERT_CONTAINS(argv[2], "gnatchop -w");
    ASSERT_CONTAINS(argv[2], "gnatmake -gnatW8 \"$m\" -o main -g -j0 -gnata -gnateE -bargs -Es");
    ASSERT_STR(argv[4], "main.adb");
    strlist_free(argv, n);
    ASSERT(language_argv(ada()->run, &src, NULL, &argv, &n) == 1);
    ASSERT_STR(argv[0], "./main_tmp/main");
    strlist_free(argv, n);
    ASSERT(ada()->install[0] == NULL);
}

TEST_MAIN("lang_ada", T(lexer_marks), T(strict_blocks_code_not_literals), T(names_and_commands))
