/* test_lang_racket.c - Racket's row and lexer: comments of every form
 * (; #| |# nested, #; on a datum), strings, #\ characters and here strings
 * marked; the strict preset on each category's idiom, in code and not in
 * a string or comment; its names, extension and command. */
#include "test.h"
#include "lang_test.h"

#include "security/security.h"

#include "eval_jobs.h"

#include "eval/convert.h"

static const char *marks(const char *lang, const char *src)
{
    static char out[4096];
    return strlen(src) < sizeof(out) ? lang_marks(lang, src, "csm", out) : "";
}

static int blocked(const char *lang, const char *code, char *rule, size_t rulesz)
{
    return lang_scan(lang, "strict", code, NULL, rule, rulesz);
}

TEST(lexer_marks)
{
    /* ; comment; a string with ; and \" in it */
    ASSERT_STR(marks("racket", "(a \"x;\\\"y\") ; z"), "cccsssssssccmmm");
    /* #\" and #\; are characters: no string, no comment after them */
    ASSERT_STR(marks("racket", "(f #\\\" #\\; x)"), "cccssscsssccc");
    ASSERT_STR(marks("racket", "#\\space x"), "ssssssscc");
    /* nested block comment */
    ASSERT_STR(marks("racket", "#| a #| b |# c |#x"), "mmmmmmmmmmmmmmmmmc");
    /* #; hides the next datum: a list to its close, an atom, a string, a
     * quoted list; #;#; two */
    ASSERT_STR(marks("racket", "#;(a (b)) c"), "mmmmmmmmmcc");
    ASSERT_STR(marks("racket", "#; abc d"), "mmmmmmcc");
    ASSERT_STR(marks("racket", "#;\"s\" d"), "mmmmmcc");
    ASSERT_STR(marks("racket", "#;'(x) y"), "mmmmmmcc");
    ASSERT_STR(marks("racket", "#;#;a b c"), "mmmmmmmcc");
    /* a here string */
    ASSERT_STR(marks("racket", "#<<E\n(system \"x\")\nE\ny"), "ssssssssssssssssssscc");
    /* |a symbol| is code, and a ; in it starts no comment */
    ASSERT_STR(marks("racket", "|a;b| c"), "ccccccc");
    /* a regex and a byte string: strings after their code prefix */
    ASSERT_STR(marks("racket", "#rx\"a\" #\"b\""), "cccsssccsss");
}

/* Datum comments nest; a pile of 100000 of them does not exhaust the
 * stack (past DATUM_DEPTH levels a datum comment is lexed as code), and
 * what follows datums they hide is code. */
TEST(deep_datum_comments)
{
    size_t n = 200000, k = 0;
    char *src = malloc(n + 32);
    unsigned char *kind = malloc(n + 32);

    ASSERT(src && kind);
    while (k + 2 <= n) {
        src[k++] = '#';
        src[k++] = ';';
    }
    memcpy(src + k, "(system \"ls\")", 14);
    k += 13;
    sec_lex(language_find("racket"), src, k, kind);
    free(src);
    free(kind);
    ASSERT_EQ(blocked("racket", "#;#;a b (system \"ls\")", NULL, 0), 1);
    ASSERT_EQ(blocked("racket", "#;#;(a #;(b) c) d (exit 1)", NULL, 0), 1);
    ASSERT_EQ(blocked("racket", "#;#;(a #;(b) c) (exit 1) (displayln 1)", NULL, 0), 0);
}

TEST(strict_blocks_each_category_in_code_only)
{
    static const struct {
        const char *code, *rule;
    } c[] = {
        {"(system \"ls\")", "runs a shell command"},
        {"(process* \"/bin/ls\")", "runs a shell command"},
        {"(subprocess #f #f #f \"/bin/ls\")", "runs a shell command"},
        {"(eval '(+ 1 2) ns)", "runs code built at run time"},
        {"(dynamic-require 'racket/list #f)", "runs code built at run time"},
        {"(delete-file \"x\")", "deletes files"},
        {"(delete-directory/files \"d\")", "deletes files"},
        {"(tcp-connect \"example.com\" 80)", "opens network connections"},
        {"(getenv \"HOME\")", "environment variables"},
        {"(putenv \"A\" \"b\")", "environment variables"},
        {"(ffi-lib \"libc\")", "native code"},
        {"(unsafe-car x)", "native code"},
        {"(exit 3)", "forks, signals or ends processes"},
        {"(require racket/system)", "imports restricted module \"racket/system\""},
        {"(require (only-in ffi/unsafe _int))", "native code"},
        {"(require net/url)", "imports restricted module \"net/url\""},
    };
    char rule[2048];

    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        char code[256], in_string[256], in_comment[256], in_block[256], in_datum[256];
        snprintf(code, sizeof(code), "#lang racket\n%s\n", c[i].code);
        ASSERT_MSG(blocked("racket", code, rule, sizeof(rule)) == 1, c[i].code);
        ASSERT_MSG(strstr(rule, c[i].rule) != NULL, rule);
        snprintf(in_comment, sizeof(in_comment), "#lang racket\n; %s\n", c[i].code);
        ASSERT_MSG(blocked("racket", in_comment, NULL, 0) == 0, in_comment);
        snprintf(in_block, sizeof(in_block), "#lang racket\n#| %s |#\n", c[i].code);
        ASSERT_MSG(blocked("racket", in_block, NULL, 0) == 0, in_block);
        snprintf(in_datum, sizeof(in_datum), "#lang racket\n#;%s\n(displayln 1)\n", c[i].code);
        ASSERT_MSG(blocked("racket", in_datum, NULL, 0) == 0, in_datum);
        snprintf(in_string, sizeof(in_string), "#lang racket\n(displayln #<<T\n%s\nT\n)\n",
                 c[i].code);
        ASSERT_MSG(blocked("racket", in_string, NULL, 0) == 0, in_string);
    }
    /* in a string literal; a name that only begins like one */
    ASSERT_EQ(blocked("racket", "(displayln \"(system \\\"ls\\\") (exit 1)\")", NULL, 0), 0);
    ASSERT_EQ(blocked("racket", "(define (system-of x) x) (exit-code 1) (getenvs)", NULL, 0), 0);
    ASSERT_EQ(blocked("racket", "(displayln #\\() (system \"ls\")", NULL, 0), 1);
    ASSERT_EQ(blocked("racket", "#lang racket\n(require rackunit racket/list)\n", NULL, 0), 0);
}

TEST(names_extension_command)
{
    const struct language *l = language_find("racket");
    struct lang_source src;
    struct llmsb_err err = {0};
    char **argv = NULL;
    size_t n = 0;

    ASSERT(l != NULL);
    ASSERT(language_find("rkt") == l);
    ASSERT(language_find("Racket") == l);
    ASSERT(language_from_path("dir/prog.rkt") == l);
    ASSERT_EQ(language_source(l, "", 0, &src, &err), 0);
    ASSERT_STR(src.file, "main.rkt");
    ASSERT_EQ(language_argv(l->run, &src, NULL, &argv, &n), 2);
    ASSERT_STR(argv[0], "racket");
    ASSERT_STR(argv[1], "main.rkt");
    for (size_t i = 0; i < n; i++)
        free(argv[i]);
    free(argv);
    ASSERT(l->compile[0] == NULL);
    ASSERT(l->install[0] == NULL); /* libraries: none (invalid, naming the field) */
}

/* MultiPL-E's "rkt" rows: the job is the runner that grades as its
 * evaluator does, the program (prompt + completion + "\n" + tests) its
 * file program.rkt; 15 s, safe_subprocess's default. */
TEST(multiple_job_is_the_runner)
{
    const char *row = "{\"name\": \"HumanEval_53_add\", \"language\": \"rkt\", \"prompt\": "
                      "\"P\\n\", \"tests\": \"T\\n\", \"completions\": [\"C\"]}";
    struct llmsb_err err = {0};
    struct convert_set *s = convert_set_read("d.json", row, &err);
    struct convert_out o = {.name = "mem"};
    struct jobs j = {0};

    ASSERT_MSG(s != NULL, err.msg);
    o.out = open_memstream(&j.text, &j.len);
    ASSERT_EQ(convert_write_references(s, &o, &err), 0);
    fclose(o.out);
    convert_set_free(s);
    jobs_parse(&j);
    ASSERT_EQ(j.n, 1);
    ASSERT_STR(str(j.job[0], "lang"), "racket");
    ASSERT_CONTAINS(str(j.job[0], "code"), "(require 'stderr \"program.rkt\")");
    ASSERT_STR(cJSON_GetStringValue(
                   cJSON_GetObjectItemCaseSensitive(get(j.job[0], "files"), "program.rkt")),
               "P\nC\nT\n");
    ASSERT_EQ(get(j.job[0], "timeout")->valueint, 15);
    jobs_release(&j);
}

/* review: system named but not called ((define s system), (apply system
 * ...)) and a #lang with its own reader (at-exp: @system{id}) ran it */
TEST(review_names_not_called)
{
    ASSERT_EQ(blocked("racket", "#lang racket\n(define s system)\n(s \"id\")\n", NULL, 0), 1);
    ASSERT_EQ(blocked("racket", "#lang racket\n(apply system (list \"id\"))\n", NULL, 0), 1);
    ASSERT_EQ(blocked("racket", "#lang at-exp racket\n@system{id}\n", NULL, 0), 1);
    ASSERT_EQ(blocked("racket", "#lang racket\n(define (process-list l) (map add1 l))\n(display \"system\")\n", NULL, 0), 0);
}

TEST_MAIN("lang_racket", T(review_names_not_called), T(lexer_marks), T(deep_datum_comments),
          T(strict_blocks_each_category_in_code_only), T(names_extension_command),
          T(multiple_job_is_the_runner))
