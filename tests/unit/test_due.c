/* test_due.c - delayed jobs' fields (job/due.c: not_before, delay_ms,
 * --delay's durations, the fields a deferred job is kept with), the
 * parser's checks of them, and the dead letter's requeued job
 * (queue_dead_job_fields: its fields and history). */
#include "test.h"

#include <cjson/cJSON.h>

#include "job/job.h"
#include "queue/queue.h"

TEST(not_before_takes_epoch_ms_and_rfc3339_utc)
{
    static const struct {
        const char *v;
        int64_t ms;
    } ok[] = {
        {"0", 0},
        {"1767225600000", 1767225600000LL},
        {"2026-01-01T00:00:00Z", 1767225600000LL},
        {"2026-01-01t00:00:00z", 1767225600000LL},
        {"2026-01-01T00:00:00.5Z", 1767225600500LL},
        {"2026-01-01T00:00:00.123456Z", 1767225600123LL},
        {"2026-01-01T00:00:00+00:00", 1767225600000LL},
        {"2024-02-29T12:34:56Z", 1709210096000LL},
        {"1970-01-01T00:00:00Z", 0},
        {"9999-12-31T23:59:59.999Z", 253402300799999LL},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        struct llmsb_err err = {0};
        int64_t ms = -1;
        ASSERT_MSG(job_not_before_parse(ok[i].v, strlen(ok[i].v), &ms, &err) == 0, ok[i].v);
        ASSERT_MSG(ms == ok[i].ms, ok[i].v);
    }
}

TEST(not_before_refuses_what_is_not_a_utc_time_by_name)
{
    static const char *const bad[] = {
        "",
        "-5",
        "1.5",
        "soon",
        "2026-01-01",
        "2026-01-01T00:00:00",       /* no zone */
        "2026-01-01T00:00:00+02:00", /* not UTC */
        "2025-02-29T00:00:00Z",      /* no such day */
        "2026-13-01T00:00:00Z",
        "2026-01-01T24:00:00Z",
        "2026-01-01T00:00:00.Z",
        "1969-12-31T23:59:59Z",
        "9999999999999999", /* past year 9999 */
        "1767225600000 ",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct llmsb_err err = {0};
        int64_t ms;
        ASSERT_MSG(job_not_before_parse(bad[i], strlen(bad[i]), &ms, &err) != 0, bad[i]);
        ASSERT_MSG(strncmp(err.msg, "not_before: \"", 13) == 0, err.msg);
    }
}

TEST(delay_ms_is_whole_milliseconds_up_to_a_year)
{
    struct llmsb_err err = {0};
    int64_t ms = -1;

    ASSERT(job_delay_parse("1500", 4, &ms, &err) == 0 && ms == 1500);
    ASSERT(job_delay_parse("0", 1, &ms, &err) == 0 && ms == 0);
    ASSERT(job_delay_parse("31622400000", 11, &ms, &err) == 0 && ms == JOB_DELAY_MAX_MS);
    ASSERT(job_delay_parse("31622400001", 11, &ms, &err) != 0);
    ASSERT_CONTAINS(err.msg, "delay_ms: \"31622400001\" is over the longest delay, 366 days");
    ASSERT(job_delay_parse("1.5", 3, &ms, &err) != 0);
    ASSERT_CONTAINS(err.msg, "delay_ms: \"1.5\" is not a whole number of milliseconds");
    ASSERT(job_delay_parse("-1", 2, &ms, &err) != 0);
    ASSERT(job_delay_parse("", 0, &ms, &err) != 0);
}

TEST(durations_take_a_unit)
{
    struct llmsb_err err = {0};
    int64_t ms = -1;

    ASSERT(job_duration_parse("--delay", "30s", &ms, &err) == 0 && ms == 30000);
    ASSERT(job_duration_parse("--delay", "500ms", &ms, &err) == 0 && ms == 500);
    ASSERT(job_duration_parse("--delay", "1.5h", &ms, &err) == 0 && ms == 5400000);
    ASSERT(job_duration_parse("--delay", "2m", &ms, &err) == 0 && ms == 120000);
    ASSERT(job_duration_parse("--delay", "1d", &ms, &err) == 0 && ms == 86400000);
    ASSERT(job_duration_parse("--delay", "30", &ms, &err) != 0);
    ASSERT_CONTAINS(err.msg, "--delay: \"30\" is not a duration");
    ASSERT(job_duration_parse("--delay", "-1s", &ms, &err) != 0);
    ASSERT(job_duration_parse("--delay", "5y", &ms, &err) != 0);
    ASSERT(job_duration_parse("--delay", "400d", &ms, &err) != 0);
    ASSERT_CONTAINS(err.msg, "over the longest delay");
}

TEST(due_time_from_the_fields)
{
    struct llmsb_err err = {0};
    struct fields f;
    int64_t due = -1;

    fields_init(&f, 8);
    fields_adds(&f, "lang", "python");
    ASSERT(job_due_ms(&f, 1000, &due, &err) == 0 && due == 0);
    fields_adds(&f, "delay_ms", "2500");
    ASSERT(job_due_ms(&f, 1000, &due, &err) == 0 && due == 3500);
    fields_adds(&f, "not_before", "9000");
    ASSERT(job_due_ms(&f, 1000, &due, &err) != 0);
    ASSERT_CONTAINS(err.msg, "delay_ms: not with not_before");
    fields_release(&f);
    fields_init(&f, 8);
    fields_adds(&f, "not_before", "2026-01-01T00:00:00Z");
    ASSERT(job_due_ms(&f, 1000, &due, &err) == 0 && due == 1767225600000LL);
    fields_release(&f);
}

TEST(deferred_fields_keep_the_id_and_are_never_deferred_twice)
{
    struct fields in, out;
    int64_t due = 0;
    struct llmsb_err err = {0};

    fields_init(&in, 8);
    fields_adds(&in, "lang", "python");
    fields_adds(&in, "code", "print(1)");
    fields_adds(&in, "delay_ms", "60000");
    ASSERT(job_due_fields(&in, "1700000000000-3", 1700000060000LL, &out) == 0);
    ASSERT_STR(fields_get(&out, "id", NULL), "1700000000000-3");
    ASSERT_STR(fields_get(&out, "not_before", NULL), "1700000060000");
    ASSERT(fields_get(&out, "delay_ms", NULL) == NULL);
    ASSERT_STR(fields_get(&out, "code", NULL), "print(1)");
    ASSERT(out.n == 4);
    /* read again: due at the time stored, whatever the new entry's time */
    ASSERT(job_due_ms(&out, 1800000000000LL, &due, &err) == 0 && due == 1700000060000LL);
    fields_release(&out);
    fields_release(&in);
}

TEST(the_parser_checks_the_time_fields_by_name)
{
    static const struct {
        const char *name, *value, *msg;
    } cases[] = {
        {"not_before", "tomorrow", "not_before: \"tomorrow\" is not a time"},
        {"delay_ms", "10s", "delay_ms: \"10s\" is not a whole number of milliseconds"},
        {"history", "{}", "history: \"{}\" is not a JSON array"},
        {"history", "[1]", "history: element 0 is not an object"},
    };
    struct config cfg;

    config_defaults(&cfg);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct llmsb_err err = {0};
        struct fields f;
        struct job j;
        fields_init(&f, 8);
        fields_adds(&f, "lang", "python");
        fields_adds(&f, "code", "print(1)");
        fields_adds(&f, cases[i].name, cases[i].value);
        job_init(&j, &cfg);
        ASSERT_MSG(job_from_fields(&j, &cfg, &f, "1-0", &err) == LLMSB_ERR_INVALID, cases[i].msg);
        ASSERT_CONTAINS(err.msg, cases[i].msg);
        job_release(&j);
        fields_release(&f);
    }
}

TEST(the_parser_takes_one_time_field_and_a_history)
{
    struct config cfg;
    struct llmsb_err err = {0};
    struct fields f;
    struct job j;

    config_defaults(&cfg);
    fields_init(&f, 8);
    fields_adds(&f, "lang", "python");
    fields_adds(&f, "code", "print(1)");
    fields_adds(&f, "not_before", "2026-01-01T00:00:00Z");
    fields_adds(&f, "history", "[{\"attempts\":2,\"reason\":\"x\"}]");
    job_init(&j, &cfg);
    ASSERT(job_from_fields(&j, &cfg, &f, "1-0", &err) == 0);
    ASSERT_STR(j.history, "[{\"attempts\":2,\"reason\":\"x\"}]");
    job_release(&j);
    fields_adds(&f, "delay_ms", "5");
    job_init(&j, &cfg);
    ASSERT(job_from_fields(&j, &cfg, &f, "1-0", &err) == LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "delay_ms: not with not_before");
    job_release(&j);
    fields_release(&f);
}

TEST(a_requeued_dead_letter_keeps_its_job_and_adds_to_its_history)
{
    struct queue_entry d = {0};
    struct llmsb_err err = {0};
    struct fields out;
    cJSON *h;

    snprintf(d.id, sizeof(d.id), "1700000000123-0");
    fields_init(&d.f, 16);
    fields_adds(&d.f, "id", "job-7");
    fields_adds(&d.f, "lang", "python");
    fields_adds(&d.f, "code", "print(1)");
    fields_adds(&d.f, "history", "[{\"attempts\":2,\"reason\":\"first\"}]");
    fields_adds(&d.f, "reason", "infrastructure failed 2 times");
    fields_adds(&d.f, "attempts", "2");
    fields_adds(&d.f, "last_worker", "w1");
    ASSERT(queue_dead_job_fields(&d, &out, &err) == 0);
    ASSERT(out.n == 4);
    ASSERT_STR(fields_get(&out, "id", NULL), "job-7");
    ASSERT(!fields_get(&out, "reason", NULL) && !fields_get(&out, "attempts", NULL) &&
           !fields_get(&out, "last_worker", NULL));
    h = cJSON_Parse(fields_get(&out, "history", NULL));
    ASSERT(cJSON_GetArraySize(h) == 2);
    ASSERT_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(h, 0), "reason")->valuestring, "first");
    ASSERT_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(h, 1), "reason")->valuestring,
               "infrastructure failed 2 times");
    ASSERT(cJSON_GetObjectItem(cJSON_GetArrayItem(h, 1), "attempts")->valuedouble == 2);
    ASSERT(cJSON_GetObjectItem(cJSON_GetArrayItem(h, 1), "dead_at_ms")->valuedouble ==
           1700000000123.0);
    ASSERT_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(h, 1), "last_worker")->valuestring, "w1");
    cJSON_Delete(h);
    fields_release(&out);
    fields_release(&d.f);
    /* a dead letter without a job id cannot keep it */
    fields_init(&d.f, 4);
    fields_adds(&d.f, "lang", "python");
    ASSERT(queue_dead_job_fields(&d, &out, &err) == LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "names no job id");
    fields_release(&out);
    fields_release(&d.f);
}

TEST_MAIN("due", T(not_before_takes_epoch_ms_and_rfc3339_utc),
          T(not_before_refuses_what_is_not_a_utc_time_by_name),
          T(delay_ms_is_whole_milliseconds_up_to_a_year), T(durations_take_a_unit),
          T(due_time_from_the_fields), T(deferred_fields_keep_the_id_and_are_never_deferred_twice),
          T(the_parser_checks_the_time_fields_by_name),
          T(the_parser_takes_one_time_field_and_a_history),
          T(a_requeued_dead_letter_keeps_its_job_and_adds_to_its_history))
