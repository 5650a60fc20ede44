/* test_lang_rust.c - the Rust row: its lexer's marks (nested comments, raw
 * strings, byte strings, char literals against lifetimes), the strict
 * preset on each category's idiom in code and not in a string or a
 * comment, its aliases, extension and command templates. */
#include "test.h"
#include "lang_test.h"

#include "common/strlist.h"
#include "languages/languages.h"
#include "security/security.h"

static int blocked(const char *policy, const char *code, char *rule, size_t rulesz)
{
    return lang_scan("rust", policy, code, NULL, rule, rulesz);
}

static void marks(const char *src, char *out)
{
    lang_marks("rust", src, "cs#", out);
}

TEST(lexer_marks)
{
    char m[512];
    marks("a /* x /* y */ z */ b", m);
    ASSERT_STR(m, "cc#################cc"); /* comments nest */
    marks("r#\"a\"b\"# c", m);
    ASSERT_STR(m, "sssssssscc"); /* a quote inside r#"..."# */
    marks("br##\"x\"#\"## c", m);
    ASSERT_STR(m, "ssssssssssscc");
    marks("b\"\\\"\" c", m);
    ASSERT_STR(m, "ssssscc");
    marks("'a' '\\'' 'x", m); /* char, escaped quote, a lifetime */
    ASSERT_STR(m, "ssscssssccc");
    marks("fn f<'a>(s: &'a str) -> char { 'z' }", m);
    ASSERT_STR(m, "cccccccccccccccccccccccccccccccssscc");
    marks("'outer: loop { break 'outer; } // x", m);
    ASSERT_STR(m, "ccccccccccccccccccccccccccccccc####");
    marks("let r#match = 1; \"a\nb\"", m); /* a raw identifier is code; strings span lines */
    ASSERT_STR(m, "cccccccccccccccccsssss");
    marks("'\\u{1F600}' '\xc3\xa9'", m);
    ASSERT_STR(m, "ssssssssssscssss");
}

/* Each category's idiom is blocked by strict in code, not in a string or
 * a comment. */
TEST(strict_blocks_code_not_strings)
{
    static const struct {
        const char *code, *rule;
    } c[] = {
        {"fn main() { let o = Command::new(\"ls\").output(); }", "shell command"},
        {"fn main() { std::process::Command::new(\"ls\"); }", "shell command"},
        {"fn main() { let h = dlopen(p, 1); }", "run time"},
        {"fn main() { fs::remove_file(\"x\").unwrap(); }", "deletes files"},
        {"fn main() { TcpStream::connect(\"1.1.1.1:53\"); }", "network"},
        {"fn main() { let h = env::var(\"HOME\"); }", "environment"},
        {"fn main() { unsafe { libc_call(); } }", "native code"},
        {"extern \"C\" { fn system(c: *const u8) -> i32; }", "native code"},
        {"fn main() { std::process::exit(3); }", "processes"},
        {"use std::process;\nfn main() {}", "restricted module \"process\""},
        {"use std::{collections::HashMap, net::TcpStream};\n", "restricted module \"net\""},
    };
    char rule[1024];
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        char s[512], k[512];
        ASSERT_MSG(blocked("strict", c[i].code, rule, sizeof(rule)) == 1, c[i].code);
        ASSERT_MSG(strstr(rule, c[i].rule) != NULL, c[i].code);
        snprintf(s, sizeof(s), "fn main() { let s = r#\"%s\"#; }\n", c[i].code);
        ASSERT_MSG(blocked("strict", s, NULL, 0) == 0, s);
        snprintf(k, sizeof(k), "/* %s */\n// %s\nfn main() {}\n", c[i].code, c[i].code);
        ASSERT_MSG(blocked("strict", k, NULL, 0) == 0, k);
    }
    /* ordinary HumanEval code passes strict */
    ASSERT_EQ(blocked("strict",
                      "use std::collections::HashMap;\nfn f<'a>(s: &'a str) -> usize { "
                      "s.chars().filter(|c| *c == '\"').count() }\n",
                      NULL, 0),
              0);
}

TEST(names_extension_commands)
{
    const struct language *l = language_find("rust");
    struct lang_source src;
    struct llmsb_err err = {0};
    char **argv;
    size_t n;

    ASSERT(l != NULL);
    ASSERT(language_find("rs") == l);
    ASSERT(language_find("RUST") == l);
    ASSERT(language_from_path("x/main.rs") == l);
    ASSERT_EQ(language_source(l, "", 0, &src, &err), 0);
    ASSERT_STR(src.file, "main.rs");
    ASSERT_EQ(language_argv(l->compile, &src, NULL, &argv, &n), 4);
    ASSERT_STR(argv[0], "rustc");
    ASSERT_STR(argv[1], "main.rs");
    ASSERT_STR(argv[2], "-o");
    ASSERT_STR(argv[3], "main");
    strlist_free(argv, n);
    ASSERT_EQ(language_argv(l->run, &src, NULL, &argv, &n), 1);
    ASSERT_STR(argv[0], "./main");
    strlist_free(argv, n);
    ASSERT(l->install[0] == NULL); /* no crates: libraries are refused */
}

/* review: std under another name, and Command::new taken as a value or
 * through <...>::new, spawned a process with nothing the patterns knew */
TEST(review_renamed_std)
{
    ASSERT_EQ(blocked("strict", "extern crate std as s;\nuse s::process::{self as p};\n"
                                "fn main() { let f = p::Command::new; let _ = f(\"sh\").status(); }\n", NULL, 0), 1);
    ASSERT_EQ(blocked("strict", "use std::{self as s};\n"
                                "fn main() { let _ = <s::process::Command>::new(\"sh\").status(); }\n", NULL, 0), 1);
    ASSERT_EQ(blocked("strict", "fn main() { let v: Vec<i32> = Vec::new(); let s = String::new(); }\n", NULL, 0), 0);
}

TEST_MAIN("lang_rust", T(review_renamed_std), T(lexer_marks), T(strict_blocks_code_not_strings),
          T(names_extension_commands))
