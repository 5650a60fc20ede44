/* test_lang_ocaml.c - the ocaml row: its lexer's marks on tricky inputs
 * (nested comments with strings in them, quoted strings, character
 * literals against type variables and primes), the strict preset on each
 * category's idiom in code, in a string and in a comment, its names,
 * extension and command. */
#include "test.h"
#include "lang_test.h"

#include "common/strlist.h"
#include "languages/languages.h"
#include "security/security.h"

static int blocked(const char *policy, const char *code)
{
    return lang_scan("ocaml", policy, code, NULL, NULL, 0);
}

static void marks(const char *src, char *out)
{
    lang_marks("ocaml", src, "csm", out);
}

TEST(lexer_marks)
{
    static const struct {
        const char *src, *want;
    } c[] = {
        {"x (* c *)y", "ccmmmmmmmc"},
        {"(* a (* b *) c *)x", "mmmmmmmmmmmmmmmmmc"},
        {"(* \"*)\" *)x", "mmmmmmmmmmc"},   /* a string in a comment hides its *) */
        {"(* {|*)|} *)x", "mmmmmmmmmmmmc"}, /* a quoted string too */
        {"(* '\"' *)x", "mmmmmmmmmc"},      /* and a character literal */
        {"\"a\\\"(*\"x", "sssssssc"},       /* an escaped quote, no comment */
        {"{|a\"b|}x", "sssssssc"},
        {"{id|x|}y|id}z", "ssssssssssssc"},
        {"{ x = 1 }", "ccccccccc"}, /* a record */
        {"'a' 'b", "sssccc"},       /* a character, a type variable */
        {"'\\'' x", "sssscc"},
        {"'\\065'x", "ssssssc"},
        {"x' 'a list", "cccccccccc"}, /* a prime, a type variable */
        {"'\"'\"s\"", "ssssss"},      /* '"' then a string */
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
        "let _ = Sys.command \"ls\"",
        "let _ = Unix.system \"ls\"",
        "let () = Unix.execv \"/bin/ls\" [||]",
        "let _ = Unix.open_process_in \"ls\"",
        "let _ = Unix.create_process \"ls\" [||] Unix.stdin Unix.stdout Unix.stderr",
        "let () = Sys.remove \"x\"",
        "let _ = Sys.getenv \"HOME\"",
        "external f : int -> int = \"c_f\"",
        "let x : int = Obj.magic \"s\"",
        "let _ = Unix.fork ()",
        "let () = Unix.kill 1 Sys.sigkill",
        "let _ = Unix.socket Unix.PF_INET Unix.SOCK_STREAM 0",
        "#use \"other.ml\"",
        "#load \"unix.cma\"",
    };
    for (size_t i = 0; i < sizeof(idioms) / sizeof(idioms[0]); i++) {
        char str[512], block[512];
        size_t o = 0;

        ASSERT_MSG(blocked("strict", idioms[i]) == 1, idioms[i]);
        /* the same text in a string literal and in a comment */
        o = (size_t)snprintf(str, sizeof(str), "let s = \"");
        for (const char *p = idioms[i]; *p && o + 4 < sizeof(str); p++) {
            if (*p == '"' || *p == '\\')
                str[o++] = '\\';
            str[o++] = *p;
        }
        snprintf(str + o, sizeof(str) - o, "\"\n");
        snprintf(block, sizeof(block), "(* %s (* nested *) *)\nlet () = ()\n", idioms[i]);
        ASSERT_MSG(blocked("strict", str) == 0, str);
        ASSERT_MSG(blocked("strict", block) == 0, block);
        snprintf(str, sizeof(str), "let s = {|%s|}\n", idioms[i]);
        ASSERT_MSG(blocked("strict", str) == 0, str);
    }
    /* ordinary MultiPL-E code passes */
    ASSERT_EQ(blocked("strict", "let add (x : int) (y : int) : int = x + y\n"
                                "let assertions = assert (List.length [1] = 1)\n"),
              0);
}

TEST(strict_modules)
{
    ASSERT_EQ(blocked("strict", "open Unix\nlet () = ()\n"), 1);
    ASSERT_EQ(blocked("strict", "let t = Unix.gettimeofday ()\n"), 1);
    ASSERT_EQ(blocked("strict", "module U = Unix\n"), 1);
    ASSERT_EQ(blocked("strict", "let f x = Obj.repr x\n"), 1);
    ASSERT_EQ(blocked("strict", "(* open Unix *)\nlet () = ()\n"), 0);
    ASSERT_EQ(blocked("strict", "let s = \"open Unix\"\n"), 0);
    ASSERT_EQ(blocked("strict", "let unix_time = 1\nopen List\n"), 0);
}

TEST(names_extension_command)
{
    const struct language *l = language_find("ocaml");
    static const struct lang_source src = {"main.ml", ""};
    char **argv;
    size_t n;

    ASSERT(l != NULL);
    ASSERT(language_find("ml") == l);
    ASSERT(language_find("OCaml") == l);
    ASSERT(language_from_path("a/b.ml") == l);
    ASSERT_STR(l->image, "llmsb/ocaml");
    ASSERT(l->compile[0] == NULL); /* the toplevel: no compile step */
    ASSERT(language_argv(l->run, &src, NULL, &argv, &n) == 2);
    ASSERT_STR(argv[0], "ocaml");
    ASSERT_STR(argv[1], "main.ml");
    strlist_free(argv, n);
    ASSERT(l->install[0] == NULL); /* no libraries */
}

/* review: Sys renamed, opened, or opened locally ran Sys.command as
 * S.command, command, Sys.(command ...) */
TEST(review_sys_renamed)
{
    ASSERT_EQ(blocked("strict", "module S = Sys\nlet () = ignore (S.command \"id\")\n"), 1);
    ASSERT_EQ(blocked("strict", "let () = ignore Sys.(command \"id\")\n"), 1);
    ASSERT_EQ(blocked("strict", "open Sys\nlet () = ignore (command \"id\")\n"), 1);
    ASSERT_EQ(blocked("strict", "let () = Printf.printf \"%d %f\\n\" (Array.length Sys.argv) (Sys.time ())\n"), 0);
}

TEST_MAIN("lang_ocaml", T(review_sys_renamed), T(lexer_marks), T(strict_blocks_code_not_strings_or_comments),
          T(strict_modules), T(names_extension_command))
