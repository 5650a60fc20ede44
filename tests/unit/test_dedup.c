/* test_dedup.c - submit's dedup: the dedup form of a job (every field but
 * id, meta and submit's own changes it; stateful jobs have none), the
 * grouping of a submission, the copies and recheck fields, and a result's
 * copy. */
#include "test.h"

#include "job/dedup.h"
#include "job/job.h"
#include "job/result.h"

static struct config cfg;

/* The form of the job {lang, code} plus name=value (name NULL: none). */
static int form_with(const char *name, const char *value, struct buf *out)
{
    struct fields f;
    int rc;

    fields_init(&f, JOB_MAX_FIELDS);
    fields_adds(&f, "lang", "python");
    fields_adds(&f, "code", "print(1)");
    if (name && strcmp(name, "lang") != 0 && strcmp(name, "code") != 0)
        fields_adds(&f, name, value);
    else if (name) /* change the one already there */
        for (size_t i = 0; i < f.n; i++)
            if (strcmp(f.v[i].name, name) == 0)
                f.v[i].value = value, f.v[i].len = strlen(value);
    buf_init(out, 1 << 20);
    rc = job_dedup_form(&f, out);
    fields_release(&f);
    return rc;
}

static int ignored(const char *name)
{
    for (size_t i = 0; job_dedup_ignored[i]; i++)
        if (strcmp(job_dedup_ignored[i], name) == 0)
            return 1;
    return 0;
}

static int same(const struct buf *a, const struct buf *b)
{
    return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* Every field the parser knows (so one added later too) is in the form,
 * with two values telling apart, unless it is on the short ignored list;
 * the ones that make a job stateful have no form at all. */
TEST(every_field_but_id_and_meta_changes_the_form)
{
    const char *name;
    int seen_ignored = 0;

    ASSERT_STR(job_dedup_ignored[0], "id");
    ASSERT_STR(job_dedup_ignored[1], "meta");
    for (size_t k = 0; (name = job_field_name(k)) != NULL; k++) {
        struct buf a, b, none;
        int stateful = strcmp(name, "session") == 0 || strcmp(name, "session_close") == 0;
        int ra = form_with(name, "true", &a), rb = form_with(name, "false", &b);
        int rn = form_with(NULL, NULL, &none);

        ASSERT_MSG(rn == 0, name);
        if (stateful) {
            ASSERT_MSG(ra == 1 && rb == 1, name);
        } else if (ignored(name)) {
            seen_ignored++;
            ASSERT_MSG(ra == 0 && rb == 0 && same(&a, &b) && same(&a, &none), name);
        } else if (strcmp(name, "network") == 0) {
            ASSERT_MSG(ra == 1, name); /* the world outside is state */
            ASSERT_MSG(rb == 0 && !same(&b, &none), name);
        } else {
            ASSERT_MSG(ra == 0 && rb == 0, name);
            ASSERT_MSG(!same(&a, &b), name);
            ASSERT_MSG(!same(&a, &none) && !same(&b, &none), name);
        }
        buf_release(&a);
        buf_release(&b);
        buf_release(&none);
    }
    ASSERT_EQ(seen_ignored, 5); /* id, meta, copies, recheck, needs */
}

TEST(the_form_is_the_same_whatever_the_field_order_and_never_ambiguous)
{
    struct fields f, g;
    struct buf a, b;

    fields_init(&f, 8);
    fields_init(&g, 8);
    buf_init(&a, 1 << 20);
    buf_init(&b, 1 << 20);
    fields_adds(&f, "lang", "python");
    fields_adds(&f, "code", "x");
    fields_adds(&f, "stdin", "1");
    fields_adds(&f, "id", "a");
    fields_adds(&g, "stdin", "1");
    fields_adds(&g, "meta", "{\"task_id\": 3}");
    fields_adds(&g, "code", "x");
    fields_adds(&g, "lang", "python");
    ASSERT_EQ(job_dedup_form(&f, &a), 0);
    ASSERT_EQ(job_dedup_form(&g, &b), 0);
    ASSERT(same(&a, &b));
    /* a value that looks like the next field does not make two jobs one */
    fields_release(&f);
    fields_release(&g);
    fields_init(&f, 8);
    fields_init(&g, 8);
    fields_adds(&f, "code", "x5:stdin1:1");
    fields_adds(&g, "code", "x");
    fields_adds(&g, "stdin", "1");
    ASSERT_EQ(job_dedup_form(&f, &a), 0);
    ASSERT_EQ(job_dedup_form(&g, &b), 0);
    ASSERT(!same(&a, &b));
    fields_release(&f);
    fields_release(&g);
    buf_release(&a);
    buf_release(&b);
}

TEST(grouping_runs_the_first_of_each_form)
{
    const char *code[] = {"a", "b", "a", "a", "b", "c"};
    int alone[] = {0, 0, 0, 1, 0, 0};
    size_t rep[6];
    struct buf forms[6];

    for (size_t i = 0; i < 6; i++) {
        buf_init(&forms[i], 64);
        buf_append_str(&forms[i], code[i]);
    }
    ASSERT_EQ(job_dedup_group(forms, alone, 6, rep), 4);
    ASSERT_EQ(rep[0], (size_t)0);
    ASSERT_EQ(rep[1], (size_t)1);
    ASSERT_EQ(rep[2], (size_t)0);
    ASSERT_EQ(rep[3], (size_t)3); /* alone: runs */
    ASSERT_EQ(rep[4], (size_t)1);
    ASSERT_EQ(rep[5], (size_t)5);
    for (size_t i = 0; i < 6; i++)
        buf_release(&forms[i]);
}

static int parse(const char *name, const char *value, struct job *j, struct llmsb_err *err)
{
    struct fields f;
    int rc;

    fields_init(&f, 8);
    fields_adds(&f, "lang", "python");
    fields_adds(&f, "code", "print(1)");
    fields_adds(&f, name, value);
    job_init(j, &cfg);
    rc = job_from_fields(j, &cfg, &f, "e-1", err);
    fields_release(&f);
    return rc;
}

TEST(copies_and_recheck_fields_are_checked)
{
    struct llmsb_err err = {0};
    struct job j;

    ASSERT_EQ(
        parse("copies", "[{\"id\": \"t#1\", \"meta\": {\"s\": 1}}, {\"id\": \"t#2\"}]", &j, &err),
        0);
    ASSERT_EQ(j.ncopies, (size_t)2);
    ASSERT_STR(j.copies[0].id, "t#1");
    ASSERT_STR(j.copies[0].meta, "{\"s\":1}");
    ASSERT(j.copies[1].meta == NULL);
    job_release(&j);
    ASSERT(parse("copies", "[{\"id\": \"ok\"}, {\"id\": \"\"}]", &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "copies[1].id");
    job_release(&j);
    ASSERT(parse("copies", "[{\"id\": \"a\\u0001\"}]", &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "printable");
    job_release(&j);
    ASSERT(parse("copies", "[\"t#1\"]", &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "copies[0]: must be an object");
    job_release(&j);
    ASSERT(parse("copies", "[{\"id\": \"x\", \"other\": 1}]", &j, &err) != 0);
    job_release(&j);
    ASSERT(parse("copies", "[]", &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "copies: must be a list of 1 to");
    job_release(&j);
    ASSERT_EQ(parse("recheck", "timeout", &j, &err), 0);
    ASSERT_EQ(j.recheck, STATUS_TIMEOUT);
    job_release(&j);
    ASSERT(parse("recheck", "running", &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "recheck: \"running\" is not a final status");
    job_release(&j);
}

TEST(a_copy_of_a_result_keeps_all_but_id_meta_and_copy_of)
{
    struct fields f;
    cJSON *r, *c;
    char *text;

    fields_init(&f, 16);
    fields_adds(&f, "id", "t#0");
    fields_adds(&f, "status", "ok");
    fields_adds(&f, "exit_code", "0");
    fields_adds(&f, "stdout", "hi\n");
    fields_adds(&f, "passed", "true");
    fields_adds(&f, "meta", "{\"s\":0}");
    r = result_fields_json(&f);
    c = result_json_copy(r, "t#3", "{\"s\":3}", "t#0");
    text = cJSON_PrintUnformatted(c);
    ASSERT_STR(text,
               "{\"id\":\"t#3\",\"status\":\"ok\",\"exit_code\":0,\"signal\":null,"
               "\"stdout\":\"hi\\n\",\"passed\":true,\"copy_of\":\"t#0\",\"meta\":{\"s\":3}}");
    free(text);
    cJSON_Delete(c);
    c = result_json_copy(r, "t#4", NULL, "t#0");
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(c, "meta")));
    cJSON_Delete(c);
    cJSON_Delete(r);
    fields_release(&f);
}

static void setup(void) __attribute__((constructor));
static void setup(void)
{
    config_defaults(&cfg);
    cfg.sessions_max = 4;
}

TEST_MAIN("dedup", T(every_field_but_id_and_meta_changes_the_form),
          T(the_form_is_the_same_whatever_the_field_order_and_never_ambiguous),
          T(grouping_runs_the_first_of_each_form), T(copies_and_recheck_fields_are_checked),
          T(a_copy_of_a_result_keeps_all_but_id_meta_and_copy_of))
