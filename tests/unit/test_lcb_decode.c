/* test_lcb_decode.c - LiveCodeBench's encoded private_test_cases through
 * convert's decode hook (eval/fmt_stdio.c) with a decoder standing in for
 * the sandbox job (cli/convert_decode.c runs the real one; tests/eval/
 * stdio.sh runs it end to end): what it prints is checked against the
 * tests' schema -- a list of {"input", "output", "testtype": "stdin" |
 * "functional"}, strings only, nothing else -- before any of it is used,
 * and every violation is an error naming the row, the field, the test and
 * why; a row whose tests are JSON already never reaches the decoder. */
#include "test.h"

#include "eval_jobs.h"

#include "eval/convert.h"

#define ROW(priv)                                                                                \
    "{\"question_id\": \"q1\", \"platform\": \"atcoder\", \"metadata\": \"{}\", "                \
    "\"public_test_cases\": \"[{\\\"input\\\": \\\"1\\\\n\\\", \\\"output\\\": \\\"2\\\\n\\\", " \
    "\\\"testtype\\\": \\\"stdin\\\"}]\", \"private_test_cases\": \"" priv "\"}\n"

/* The stand-in: prints what the test set (or says why). */
struct fake {
    const char *print, *why;
    size_t calls, blobs;
    char blob[64]; /* the first blob given */
};

static int fake_decode(void *ud, size_t n, const char *const *blobs, char **out, char **why,
                       struct llmsb_err *err)
{
    struct fake *f = ud;

    (void)err;
    f->calls++;
    f->blobs += n;
    snprintf(f->blob, sizeof(f->blob), "%s", n ? blobs[0] : "");
    for (size_t i = 0; i < n; i++) {
        out[i] = f->print ? strdup(f->print) : NULL;
        why[i] = f->why ? strdup(f->why) : NULL;
    }
    return 0;
}

/* Reads text with f as the decoder; the jobs of one sample into j. */
static int read_with(const char *text, struct fake *f, struct jobs *j, struct llmsb_err *err)
{
    struct convert_opts opts = {.decode = fake_decode, .decode_ud = f};
    struct convert_set *s = convert_set_read_opts("l.jsonl", text, &opts, err);
    struct convert_out o = {.name = "mem"};
    int rc;

    if (!s)
        return err->code;
    o.out = open_memstream(&j->text, &j->len);
    rc = convert_write(s, "s.json", "[{\"question_id\": \"q1\", \"code_list\": [\"print(2)\"]}]",
                       &o, err);
    fclose(o.out);
    convert_set_free(s);
    jobs_parse(j);
    return rc;
}

TEST(decoded_tests_follow_the_public_ones)
{
    struct fake f = {.print =
                         "[{\"input\": \"3\\n\", \"output\": \"4\\n\", \"testtype\": \"stdin\"}]"};
    struct llmsb_err err = {0};
    struct jobs j = {0};
    const cJSON *cases;

    ASSERT_EQ(read_with(ROW("eJxLTEoGAAJNASc="), &f, &j, &err), 0);
    ASSERT_EQ(f.calls, 1);
    ASSERT_STR(f.blob, "eJxLTEoGAAJNASc=");
    ASSERT_EQ(j.n, 1);
    cases = get(j.job[0], "cases");
    ASSERT_EQ(cJSON_GetArraySize(cases), 2);
    ASSERT_STR(str(cJSON_GetArrayItem(cases, 0), "stdin"), "1\n");
    ASSERT_STR(str(cJSON_GetArrayItem(cases, 1), "stdin"), "3\n");
    ASSERT_STR(str(cJSON_GetArrayItem(cases, 1), "expect_stdout"), "4\n");
    jobs_release(&j);
    /* tests that are JSON already never reach the decoder */
    f.calls = 0;
    ASSERT_EQ(read_with(ROW("[]"), &f, &j, &err), 0);
    ASSERT_EQ(f.calls, 0);
    jobs_release(&j);
}

TEST(decoded_tests_checked_against_the_schema)
{
    static const struct {
        const char *print, *why, *msg;
    } bad[] = {
        {"{\"input\": \"1\"}", NULL, "private_test_cases (decoded in the sandbox) is not a list"},
        {"not json", NULL, "private_test_cases (decoded in the sandbox) is not JSON"},
        {"[{\"input\": 1, \"output\": \"2\", \"testtype\": \"stdin\"}]", NULL,
         "private_test_cases[0] (decoded in the sandbox) has a member that is not a string"},
        {"[{\"input\": \"1\", \"output\": \"2\", \"testtype\": \"stdin\", \"x\": \"\"}]", NULL,
         "private_test_cases[0] (decoded in the sandbox) has a member other than input"},
        {"[{\"input\": \"1\", \"testtype\": \"stdin\"}]", NULL,
         "private_test_cases[0] (decoded in the sandbox) lacks input or output"},
        {"[{\"input\": \"1\", \"output\": \"2\"}]", NULL,
         "private_test_cases[0] (decoded in the sandbox) has a testtype that is neither"},
        {"[{\"input\": \"1\", \"output\": \"2\", \"testtype\": \"stdin\"}, 7]", NULL,
         "private_test_cases[1] (decoded in the sandbox) is not an object"},
        {"[{\"input\": \"1\", \"output\": \"2\", \"testtype\": \"functional\"}]", NULL,
         "private_test_cases has a functional test but metadata names no func_name"},
        {"[{\"input\": \"\\u0000\", \"output\": \"2\", \"testtype\": \"stdin\"}]", NULL,
         "holds a NUL character"},
        {NULL, "the decoder ended runtime_error: the pickle holds an object of type int",
         "private_test_cases could not be decoded in the sandbox: the decoder ended "
         "runtime_error: the pickle holds an object of type int"},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct fake f = {.print = bad[i].print, .why = bad[i].why};
        struct llmsb_err err = {0};
        struct jobs j = {0};

        ASSERT_MSG(read_with(ROW("eJxLTEoGAAJNASc="), &f, &j, &err) == LLMSB_ERR_INVALID,
                   bad[i].msg);
        ASSERT_MSG(strstr(err.msg, "l.jsonl:1: ") == err.msg, err.msg);
        ASSERT_MSG(strstr(err.msg, bad[i].msg) != NULL, err.msg);
        ASSERT_EQ(j.n, 0);
        jobs_release(&j);
    }
}

TEST(too_many_decoded_tests)
{
    struct buf b;
    struct fake f = {0};
    struct llmsb_err err = {0};
    struct jobs j = {0};

    buf_init(&b, 1 << 20);
    ASSERT_EQ(buf_append_str(&b, "["), 0);
    for (int i = 0; i < 1000; i++)
        ASSERT_EQ(buf_printf(&b, "%s{\"input\": \"\", \"output\": \"\", \"testtype\": \"stdin\"}",
                             i ? "," : ""),
                  0);
    ASSERT_EQ(buf_append(&b, "]", 2), 0);
    f.print = b.data;
    /* the public test and 1000 decoded ones: over a job's 1000 cases */
    ASSERT_EQ(read_with(ROW("eJxLTEoGAAJNASc="), &f, &j, &err), LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "has 1001 tests; a job takes at most 1000 cases");
    jobs_release(&j);
    buf_release(&b);
}

TEST(no_decoder_refuses_as_before)
{
    struct llmsb_err err = {0};
    struct convert_set *s = convert_set_read("l.jsonl", ROW("eJxLTEoGAAJNASc="), &err);

    ASSERT(!s);
    ASSERT_CONTAINS(err.msg, "l.jsonl:1: task \"q1\": private_test_cases is not JSON");
    ASSERT_CONTAINS(err.msg, "--no-decode");
}

TEST_MAIN("lcb_decode", T(decoded_tests_follow_the_public_ones),
          T(decoded_tests_checked_against_the_schema), T(too_many_decoded_tests),
          T(no_decoder_refuses_as_before))
