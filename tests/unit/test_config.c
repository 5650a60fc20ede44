/* test_config.c - the YAML config (file:line errors, bounds, unknown keys)
 * and the job's limits and flags against the config's ceilings. */
#include "test.h"
#include "images/images.h"

#include "common/json.h"
#include "config/config.h"
#include "job/job.h"
#include "job/result.h"

static int load(struct config *c, const char *yaml, struct llmsb_err *err)
{
    config_defaults(c);
    return config_load_string(c, yaml, strlen(yaml), "t.yaml", err);
}

TEST(defaults_are_sane)
{
    struct config c;
    config_defaults(&c);
    ASSERT_STR(c.backend, "docker");
    ASSERT_EQ(c.defaults.timeout_ms, 10000);
    ASSERT(c.defaults.memory_mb <= c.max.memory_mb);
    ASSERT_EQ(c.sandbox_uid, 10001);
}

TEST(valid_file_loads)
{
    struct config c;
    struct llmsb_err err = {0};
    const char *y = "backend: docker\n"
                    "docker:\n  runtime: runsc\n"
                    "limits:\n  defaults:\n    timeout: 2.5\n    memory: 256\n"
                    "  max:\n    timeout: 60\n    cpus: 1.5\n"
                    "images:\n  python: my/python:3\n";
    char img[256];

    ASSERT_EQ(load(&c, y, &err), 0);
    ASSERT_STR(c.runtime, "runsc");
    ASSERT_EQ(c.defaults.timeout_ms, 2500);
    ASSERT_EQ(c.defaults.memory_mb, 256);
    ASSERT_EQ(c.max.timeout_ms, 60000);
    ASSERT(c.max.cpus == 1.5);
    ASSERT_STR(config_image(&c, language_find("python"), img, sizeof(img)), "my/python:3");
    ASSERT_STR(config_image(&c, language_find("go"), img, sizeof(img)), "llmsb/go:latest");

    /* the backend-neutral keys */
    ASSERT_EQ(
        load(&c, "backend:\n  name: docker\n  host: unix:///tmp/e.sock\n  runtime: runc\n", &err),
        0);
    ASSERT_STR(c.backend, "docker");
    ASSERT_STR(c.backend_host, "unix:///tmp/e.sock");
    ASSERT_STR(c.runtime, "runc");
    ASSERT_EQ(load(&c, "docker:\n  host: tcp://h:2375\n", &err), 0); /* deprecated, still read */
    ASSERT_STR(c.backend_host, "tcp://h:2375");
}

TEST(errors_carry_file_line_and_bounds)
{
    struct config c;
    struct llmsb_err err = {0};

    ASSERT(load(&c, "limits:\n  max:\n    memory: 1\n", &err) != 0);
    ASSERT_CONTAINS(err.msg, "t.yaml:3:");
    ASSERT_CONTAINS(err.msg, "limits.max.memory must be an integer between 16 and");
    ASSERT_CONTAINS(err.msg, "(got \"1\")");

    ASSERT(load(&c, "backend: docker\nbogus: 1\n", &err) != 0);
    ASSERT_CONTAINS(err.msg, "t.yaml:2: unknown key \"bogus\"");

    ASSERT(load(&c, "backend: lxc\n", &err) != 0);
    ASSERT_CONTAINS(err.msg, "t.yaml:1: backend.name must be one of docker");
    ASSERT(load(&c, "backend:\n  name: lxc\n", &err) != 0);
    ASSERT_CONTAINS(err.msg, "t.yaml:2: backend.name must be one of docker");

    ASSERT(load(&c, "limits: [1, 2]\n", &err) != 0);
    ASSERT_CONTAINS(err.msg, "lists are not allowed");

    ASSERT(load(&c, "a: [\n", &err) != 0);
    ASSERT_CONTAINS(err.msg, "t.yaml:");

    ASSERT(load(&c, "limits:\n  defaults:\n    timeout: 100\n  max:\n    timeout: 50\n", &err) !=
           0);
    ASSERT_CONTAINS(err.msg, "limits.defaults.timeout is above limits.max.timeout");

    ASSERT(load(&c, "images:\n  cobol: x\n", &err) != 0);
    ASSERT_CONTAINS(err.msg, "unknown key \"images.cobol\"");

    ASSERT(load(&c, "worker:\n  slots: 2\nworker:\n  slots: 9\n", &err) != 0);
    ASSERT_CONTAINS(err.msg, "t.yaml:3: duplicate key \"worker\"");
    ASSERT(load(&c, "worker: {slots: 2, slots: 9}\n", &err) != 0);
    ASSERT_CONTAINS(err.msg, "duplicate key \"slots\"");
    ASSERT(load(&c, "limits: {timeout: 0x10}\n", &err) != 0); /* no hex */

    /* an alias bomb in a config is stopped like one in a job file */
    {
        struct buf y;
        buf_init(&y, 1 << 20);
        buf_append_str(&y, "security:\n  policies:\n    p:\n      patterns: &a0 [{pattern: x}, "
                           "{pattern: x}, {pattern: x}, {pattern: x}]\n");
        for (int i = 1; i <= 8; i++)
            buf_printf(&y,
                       "    p%d:\n      patterns: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, "
                       "*a%d, *a%d]\n",
                       i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
        ASSERT(load(&c, y.data, &err) != 0);
        ASSERT_CONTAINS(err.msg, "expands to more than");
        config_release(&c); /* the policies read before the bomb */
        buf_release(&y);
    }
}

TEST(security_policies_in_config)
{
    struct config c;
    struct llmsb_err err = {0};
    const char *y = "security:\n"
                    "  default_policy: mine\n"
                    "  minimum: development\n"
                    "  policies:\n"
                    "    mine:\n"
                    "      extends: production\n"
                    "      threshold: high\n"
                    "      patterns:\n"
                    "        - {pattern: 'forbidden_call\\(', severity: high, description: no}\n"
                    "      restricted_modules: [json]\n";

    ASSERT_EQ(load(&c, y, &err), 0);
    ASSERT_STR(c.default_policy, "mine");
    ASSERT_STR(c.minimum_policy, "development");
    ASSERT(config_policy(&c, "mine") != NULL);
    ASSERT_CONTAINS(config_policy(&c, "mine"), "\"extends\":\"production\"");
    config_release(&c);
    ASSERT(config_policy(&c, "mine") == NULL);
    ASSERT(load(&c, "security: {default_policy: nope}\n", &err) != 0);
    ASSERT_CONTAINS(err.msg, "security.default_policy \"nope\" is neither a preset");
    ASSERT(load(&c, "security: {minimum: nope}\n", &err) != 0);
    ASSERT_CONTAINS(err.msg, "security.minimum \"nope\"");
    ASSERT_EQ(load(&c, "security: {minimum: none}\n", &err), 0);
    ASSERT(load(&c, "security:\n  policies:\n    x: [1]\n", &err) != 0);
    ASSERT_CONTAINS(err.msg, "security.policies.x must be a map");
    config_release(&c);
}

TEST(empty_file_is_defaults)
{
    struct config c;
    struct llmsb_err err = {0};
    ASSERT_EQ(load(&c, "", &err), 0);
    ASSERT_EQ(c.defaults.timeout_ms, 10000);
}

TEST(job_limits_against_ceilings)
{
    struct config c;
    struct job j;
    struct llmsb_err err = {0};

    config_defaults(&c);
    c.max.timeout_ms = 30000;
    job_init(&j, &c);
    ASSERT_EQ(job_set_limit(&j, &c, "timeout", "2.5", &err), 0);
    ASSERT_EQ(j.limits.timeout_ms, 2500);
    ASSERT(job_set_limit(&j, &c, "timeout", "31", &err) != 0);
    ASSERT_CONTAINS(err.msg, "timeout: 31 s is above the ceiling of 30 s (limits.max.timeout)");
    ASSERT(job_set_limit(&j, &c, "timeout", "abc", &err) != 0);
    ASSERT_CONTAINS(err.msg, "\"abc\" is not a number");
    ASSERT(job_set_limit(&j, &c, "memory", "-5", &err) != 0);
    ASSERT_CONTAINS(err.msg, "below the minimum of 16 MB");
    ASSERT(job_set_limit(&j, &c, "memory", "1.5", &err) != 0);
    ASSERT_CONTAINS(err.msg, "not an integer");
    ASSERT_EQ(job_set_limit(&j, &c, "memory", "256", &err), 0);
    ASSERT_EQ(j.limits.memory_mb, 256);
    ASSERT_EQ(job_set_limit(&j, &c, "cpus", "0.5", &err), 0);
    ASSERT(j.limits.cpus == 0.5);
    ASSERT(job_set_limit(&j, &c, "cpus", "64", &err) != 0);
    ASSERT(job_set_limit(&j, &c, "colour", "1", &err) != 0);
    job_release(&j);
}

TEST(job_fields_validate)
{
    struct config c;
    struct job j;
    struct llmsb_err err = {0};

    config_defaults(&c);
    job_init(&j, &c);
    ASSERT(job_set_language(&j, "brainfuck", &err) != 0);
    ASSERT_CONTAINS(err.msg, "lang: unknown language \"brainfuck\" (known: python");
    ASSERT_EQ(job_set_language(&j, "python", &err), 0);
    ASSERT(job_add_env(&j, "1BAD=x", &err) != 0);
    ASSERT(job_add_env(&j, "NOVALUE", &err) != 0);
    ASSERT_EQ(job_add_env(&j, "GOOD_1=x=y", &err), 0);
    ASSERT(job_add_file(&j, "../escape", "x", 1, &err) != 0);
    ASSERT(job_add_file(&j, "/etc/x", "x", 1, &err) != 0);
    ASSERT_EQ(job_add_file(&j, "data/in.txt", "x", 1, &err), 0);
    ASSERT_EQ(job_set_code(&j, "print(1)", 8, &err), 0);
    {
        struct proto_job pj;
        ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
        ASSERT_STR(pj.files[0].path, "main.py");
        ASSERT_STR(pj.files[1].path, "data/in.txt");
        ASSERT_STR(pj.run_argv[0], "python3");
        ASSERT_STR(pj.run_argv[1], "main.py");
        ASSERT_STR(pj.env[pj.nenv - 1], "GOOD_1=x=y");
        ASSERT_EQ(pj.timeout_ms, 10000u);
        proto_job_release(&pj);
    }
    ASSERT_EQ(job_add_file(&j, "main.py", "x", 1, &err), 0);
    {
        struct proto_job pj;
        ASSERT(job_to_proto(&j, &pj, &err) != 0);
        ASSERT_CONTAINS(err.msg, "overwrite");
    }
    job_release(&j);
}

TEST(expectations_decide_passed)
{
    struct config c;
    struct job j;
    struct job_result r;

    config_defaults(&c);
    job_init(&j, &c);
    job_result_init(&r, &j);
    r.r.status = STATUS_OK;
    buf_append_str(&r.r.out, "hi  \n\n");
    job_result_check(&r, &j);
    ASSERT_EQ(r.passed, -1); /* no expectations: not set */
    j.expect_stdout = strdup("hi\n");
    job_result_check(&r, &j);
    ASSERT_EQ(r.passed, 1);
    free(j.expect_stdout);
    j.expect_stdout = strdup("ho");
    job_result_check(&r, &j);
    ASSERT_EQ(r.passed, 0);
    free(j.expect_stdout);
    j.expect_stdout = NULL;
    j.has_expect_exit = 1;
    j.expect_exit = 3;
    r.r.status = STATUS_RUNTIME_ERROR;
    r.r.exit_code = 3;
    job_result_check(&r, &j);
    ASSERT_EQ(r.passed, 1);
    r.r.status = STATUS_TIMEOUT;
    job_result_check(&r, &j);
    ASSERT_EQ(r.passed, 0);
    job_result_release(&r);
    job_release(&j);
}

TEST(result_json_is_valid_utf8)
{
    struct job_result r;
    char *text;
    cJSON *parsed;

    job_result_init(&r, NULL);
    r.r.status = STATUS_OK;
    buf_append(&r.r.out, "a\xff\x00z\xe2\x82\xac", 7);
    parsed = job_result_json(&r);
    ASSERT(parsed != NULL);
    text = cJSON_PrintUnformatted(parsed);
    ASSERT(text != NULL);
    cJSON_Delete(parsed);
    parsed = cJSON_Parse(text);
    ASSERT(parsed != NULL);
    ASSERT_STR(cJSON_GetObjectItem(parsed, "stdout")->valuestring,
               "a\xef\xbf\xbd\xef\xbf\xbdz\xe2\x82\xac");
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(parsed, "signal")));
    ASSERT(cJSON_GetObjectItem(parsed, "passed") == NULL);
    ASSERT(cJSON_IsArray(cJSON_GetObjectItem(parsed, "artifacts")));
    cJSON_Delete(parsed);
    free(text);
    job_result_release(&r);
}

TEST(strict_number_parsing)
{
    long long v;
    double d;
    ASSERT_EQ(parse_ll("42", 0, 100, &v), 0);
    ASSERT_EQ(v, 42);
    ASSERT(parse_ll("42x", 0, 100, &v) != 0);
    ASSERT(parse_ll(" 4", 0, 100, &v) != 0);
    ASSERT(parse_ll("", 0, 100, &v) != 0);
    ASSERT(parse_ll("101", 0, 100, &v) != 0);
    ASSERT(parse_ll("99999999999999999999", 0, 100, &v) != 0);
    ASSERT(parse_double("nan", 0, 10, &d) != 0);
    ASSERT(parse_double("inf", 0, 10, &d) != 0);
    ASSERT_EQ(parse_double("2.5", 0, 10, &d), 0);
}

/* pool.preinstall.<lang>: lists of names, checked like a job's; a job's
 * libraries count as preinstalled only when every one is in the set; the
 * image recipe installs them with an exec-form RUN. */
TEST(preinstall_sets)
{
    struct llmsb_err err = {0};
    struct config c;
    char *libs[] = {"requests", "tabulate==0.9"}, *other[] = {"requests", "numpy"};
    char *df;

    config_defaults(&c);
    ASSERT_EQ(load(&c,
                   "pool:\n  preinstall:\n    python: [requests, \"tabulate==0.9\"]\n"
                   "libraries:\n  pip_index_url: http://mirror:3141/simple\n",
                   &err),
              0);
    ASSERT_EQ(c.npreinstall[0], (size_t)2);
    ASSERT_EQ(config_preinstalled(&c, language_find("python"), libs, 2), 1);
    ASSERT_EQ(config_preinstalled(&c, language_find("python"), other, 2), 0);
    ASSERT_EQ(config_preinstalled(&c, language_find("ruby"), libs, 1), 0);
    ASSERT_EQ(config_preinstalled(&c, language_find("python"), libs, 0), 0);
    df = images_dockerfile(language_find("python"), "b", 10001, 0, &c);
    ASSERT_CONTAINS(df, "RUN [\"python3\",\"-m\",\"pip\",\"install\",\"--break-system-packages\"");
    ASSERT_CONTAINS(df, "ENV PIP_INDEX_URL=http://mirror:3141/simple\nENV PIP_TRUSTED_HOST=mirror\n"
                        "RUN [\"python3\"");
    ASSERT_CONTAINS(df, "\"--no-input\",\"--\",\"requests\",\"tabulate==0.9\"]\n");
    free(df);
    config_release(&c);

    config_defaults(&c);
    ASSERT(load(&c, "pool:\n  preinstall:\n    go: [golang.org/x/text]\n", &err) != 0);
    ASSERT_CONTAINS(err.msg, "t.yaml:3: pool.preinstall.go: go libraries cannot be baked");
    config_release(&c);
    config_defaults(&c);
    ASSERT(load(&c, "pool:\n  preinstall:\n    python: [ok, \"--extra-index-url=x\"]\n", &err) !=
           0);
    ASSERT_CONTAINS(err.msg,
                    "pool.preinstall.python: \"--extra-index-url=x\" is not a package name");
    config_release(&c);
    config_defaults(&c);
    ASSERT(load(&c, "pool:\n  preinstall:\n    cobol: [x]\n", &err) != 0);
    ASSERT_CONTAINS(err.msg, "must be a list of library names under a language's name");
    config_release(&c);
}

TEST_MAIN("config", T(defaults_are_sane), T(valid_file_loads), T(errors_carry_file_line_and_bounds),
          T(security_policies_in_config), T(empty_file_is_defaults), T(job_limits_against_ceilings),
          T(job_fields_validate), T(expectations_decide_passed), T(result_json_is_valid_utf8),
          T(strict_number_parsing), T(preinstall_sets))
