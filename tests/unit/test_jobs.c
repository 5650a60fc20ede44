/* test_jobs.c - job files (YAML, JSON Lines), job fields from any source,
 * base64, and the result hash <-> JSON conversions. */
#include "test.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/base64.h"
#include "config/jobfile.h"
#include "eval/passk.h"
#include "exec/exec.h"
#include "exec/scan.h"
#include "exec/runner.h"
#include "job/job.h"
#include "job/result.h"
#include "exec/session.h"
#include "sandbox/sandbox.h"
#include "security/security.h"

static struct config cfg;

/* Parses the i-th job of jf into j. */
static int job_of(const struct jobfile *jf, size_t i, struct job *j, struct llmsb_err *err)
{
    struct fields f;
    int rc;

    fields_init(&f, JOB_MAX_FIELDS);
    job_init(j, &cfg);
    rc = jobfile_fields(jf->jobs[i], &f);
    if (rc == 0)
        rc = job_from_fields(j, &cfg, &f, "entry-1", err);
    fields_release(&f);
    return rc;
}

TEST(yaml_job_file_with_defaults)
{
    const char *y = "defaults: {lang: python, timeout: 5}\n"
                    "jobs:\n"
                    "  - id: hello\n"
                    "    code: print(\"hi\")\n"
                    "    expect_stdout: \"hi\"\n"
                    "  - id: sum\n"
                    "    lang: cpp\n"
                    "    code: |\n"
                    "      int main() {}\n"
                    "    args: [a, 2, \"b c\"]\n"
                    "    env: {K: v}\n"
                    "    files: {\"d/x.txt\": hello, \"b.bin\": {base64: AAEC}}\n"
                    "    expect_exit: 0\n"
                    "    meta: {n: 1, ok: true}\n";
    struct jobfile jf;
    struct llmsb_err err = {0};
    struct job j;

    ASSERT_EQ(jobfile_load_string(&jf, y, strlen(y), "t.yaml", &err), 0);
    ASSERT_EQ(jf.n, (size_t)2);
    ASSERT_EQ(jf.lines[0], (size_t)3);
    ASSERT_EQ(job_of(&jf, 0, &j, &err), 0);
    ASSERT_STR(j.id, "hello");
    ASSERT_STR(j.lang->name, "python");
    ASSERT_EQ(j.limits.timeout_ms, 5000);
    ASSERT_STR(j.expect_stdout, "hi");
    job_release(&j);
    ASSERT(job_of(&jf, 1, &j, &err) != 0); /* args has a number */
    ASSERT_CONTAINS(err.msg, "args: element 1 is not a string");
    job_release(&j);
    cJSON_ReplaceItemInObject(jf.jobs[1], "args", cJSON_Parse("[\"a\", \"b c\"]"));
    ASSERT_EQ(job_of(&jf, 1, &j, &err), 0);
    ASSERT_STR(j.lang->name, "cpp");
    ASSERT_EQ(j.nargs, (size_t)2);
    ASSERT_STR(j.args[1], "b c");
    ASSERT_STR(j.env[0], "K=v");
    ASSERT_EQ(j.nfiles, (size_t)2);
    ASSERT_EQ(j.files[1].len, (size_t)3);
    ASSERT(memcmp(j.files[1].data, "\0\1\2", 3) == 0);
    ASSERT(j.has_expect_exit && j.expect_exit == 0);
    ASSERT_STR(j.meta, "{\"n\":1,\"ok\":true}");
    job_release(&j);
    jobfile_release(&jf);
}

TEST(yaml_job_file_errors_name_the_line)
{
    struct jobfile jf;
    struct llmsb_err err = {0};

    ASSERT(jobfile_load_string(&jf, "jobs: nope\n", 11, "a.yaml", &err) != 0);
    ASSERT_CONTAINS(err.msg, "a.yaml:1: `jobs:` must be a list");
    ASSERT(jobfile_load_string(&jf, "jobs:\n  - 5\n", 12, "a.yaml", &err) != 0);
    ASSERT_CONTAINS(err.msg, "a.yaml:2: each job must be a map");
    ASSERT(jobfile_load_string(&jf, "jbos: []\n", 9, "a.yaml", &err) != 0);
    ASSERT_CONTAINS(err.msg, "unknown top-level key \"jbos\"");
    ASSERT(jobfile_load_string(&jf, "jobs: [\n", 8, "a.yaml", &err) != 0);
    ASSERT_CONTAINS(err.msg, "a.yaml:");
    ASSERT(jobfile_load_string(&jf, "jobs: []\n", 9, "a.yaml", &err) != 0);
    ASSERT_CONTAINS(err.msg, "no jobs");
}

/* 8 levels of 10 aliases: 10^8 nodes from 1.9 KB (it took 13.9 s and 2.7 GB
 * before the bound); a budget the size of the text stops it at once. */
TEST(yaml_alias_bomb_and_duplicate_keys)
{
    struct jobfile jf;
    struct llmsb_err err = {0};
    struct buf y;
    char deep[400];
    size_t n = 0;

    buf_init(&y, 1 << 20);
    buf_append_str(&y, "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for (int i = 1; i <= 8; i++)
        buf_printf(&y, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n",
                   i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
    buf_append_str(&y, "jobs:\n  - {lang: python, code: x, meta: *a8}\n");
    ASSERT(jobfile_load_string(&jf, y.data, y.len, "bomb.yaml", &err) != 0);
    ASSERT_CONTAINS(err.msg, "unknown top-level key"); /* the anchors' keys come first */
    buf_reset(&y);
    buf_append_str(&y, "defaults: {meta: &a0 [x, x, x, x, x, x, x, x, x, x]}\njobs:\n");
    for (int i = 1; i <= 8; i++)
        buf_printf(&y,
                   "  - {lang: python, code: x, meta: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, "
                   "*a%d, *a%d, *a%d, *a%d, *a%d]}\n",
                   i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
    ASSERT(jobfile_load_string(&jf, y.data, y.len, "bomb.yaml", &err) != 0);
    ASSERT_CONTAINS(err.msg, "bomb.yaml:");
    ASSERT_CONTAINS(err.msg, "expands to more than");
    buf_release(&y);

    ASSERT(jobfile_load_string(&jf, "jobs:\n  - {lang: python, code: x, lang: ruby}\n", 45,
                               "d.yaml", &err) != 0);
    ASSERT_CONTAINS(err.msg, "d.yaml:2: duplicate key \"lang\" (first at line 2)");
    ASSERT(jobfile_load_string(&jf, "jobs: []\njobs: []\n", 18, "d.yaml", &err) != 0);
    ASSERT_CONTAINS(err.msg, "d.yaml:2: duplicate key \"jobs\"");

    n += (size_t)snprintf(deep, sizeof(deep), "jobs:\n  - {lang: python, code: x, meta: ");
    for (int i = 0; i < 40; i++)
        deep[n++] = '[';
    for (int i = 0; i < 40; i++)
        deep[n++] = ']';
    n += (size_t)snprintf(deep + n, sizeof(deep) - n, "}\n");
    ASSERT(jobfile_load_string(&jf, deep, n, "deep.yaml", &err) != 0);
    ASSERT_CONTAINS(err.msg, "deep.yaml:2: nested deeper than 32 levels");
}

/* Found by fuzz_jobfile: the loader must not read past an input that is not
 * NUL-terminated (ASan catches a regression under make sanitize). */
TEST(jobfile_input_is_not_nul_terminated)
{
    struct jobfile jf;
    struct llmsb_err err = {0};
    char *one = malloc(1);

    one[0] = '\n';
    ASSERT(jobfile_load_string(&jf, one, 1, "n.yaml", &err) != 0);
    ASSERT_CONTAINS(err.msg, "n.yaml:");
    free(one);
}

TEST(json_lines)
{
    const char *t =
        "{\"id\": \"a\", \"lang\": \"python\", \"code\": \"print(1)\", \"timeout\": 2.5, "
        "\"compile_timeout\": 7}\n"
        "\n"
        "{\"lang\": \"ruby\", \"code\": \"puts 1\", \"network\": false, \"args\": [\"x\"]}\n";
    struct jobfile jf;
    struct llmsb_err err = {0};
    struct job j;

    ASSERT_EQ(jobfile_load_string(&jf, t, strlen(t), "j.jsonl", &err), 0);
    ASSERT_EQ(jf.n, (size_t)2);
    ASSERT_EQ(jf.lines[1], (size_t)3);
    ASSERT_EQ(job_of(&jf, 0, &j, &err), 0);
    ASSERT_EQ(j.limits.timeout_ms, 2500);
    ASSERT_EQ(j.limits.compile_timeout_ms, 7000);
    job_release(&j);
    ASSERT_EQ(job_of(&jf, 1, &j, &err), 0);
    ASSERT_STR(j.id, "entry-1"); /* the default id */
    ASSERT_STR(j.args[0], "x");
    job_release(&j);
    jobfile_release(&jf);
    ASSERT(jobfile_load_string(&jf, "{\"a\":1}\n[1]\n", 12, "k.jsonl", &err) != 0);
    ASSERT_CONTAINS(err.msg, "k.jsonl:2: not a JSON object");
}

static int fields_job(const char *const *kv, struct job *j, struct llmsb_err *err)
{
    struct fields f;
    int rc;

    fields_init(&f, JOB_MAX_FIELDS);
    for (size_t n = 0; kv[2 * n]; n++)
        fields_adds(&f, kv[2 * n], kv[2 * n + 1]);
    job_init(j, &cfg);
    rc = job_from_fields(j, &cfg, &f, "1-0", err);
    fields_release(&f);
    return rc;
}

/* needs: a list of the features this build knows is accepted (and is no
 * part of what runs); a feature it does not know, or a list that is not
 * one, is refused naming the field (a worker hands such a job on before
 * it parses it: docs/jobs.md, needs). */
TEST(needs_names_features_this_build_knows)
{
    static const char *const ok_kv[] = {"lang", "python", "code", "x", "needs", "live,dedup", NULL};
    static const char *const unknown_kv[] = {"lang",  "python",        "code", "x",
                                             "needs", "live,teleport", NULL};
    static const char *const bad_kv[] = {"lang", "python", "code", "x", "needs", "Live", NULL};
    struct llmsb_err err = {0};
    struct job j;

    ASSERT_EQ(fields_job(ok_kv, &j, &err), 0);
    ASSERT(job_given(&j, "needs"));
    job_release(&j);
    ASSERT_EQ(fields_job(unknown_kv, &j, &err), LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "needs: the feature \"teleport\" is not one this build knows "
                             "(dedup,recheck,live)");
    job_release(&j);
    memset(&err, 0, sizeof(err));
    ASSERT_EQ(fields_job(bad_kv, &j, &err), LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "needs: \"Live\" is not a list of feature names");
    job_release(&j);
}

TEST(job_fields_are_validated_by_name)
{
    static const struct {
        const char *kv[8];
        const char *msg;
    } bad[] = {
        {{"lang", "python", NULL}, "code: is required"},
        {{"code", "x", NULL}, "lang: is required"},
        {{"lang", "python", "code", "x", "network", "true", NULL}, "jobs.allow_network"},
        {{"lang", "python", "code", "x", "network", "maybe", NULL},
         "network: \"maybe\" must be true or false"},
        {{"lang", "python", "code", "x", "image", "evil/root", NULL},
         "image: \"evil/root\" is not allowed"},
        {{"lang", "python", "code", "x", "env", "{\"A\": 1}", NULL},
         "env: value of \"A\" is not a string"},
        {{"lang", "python", "code", "x", "files", "{\"/abs\": \"x\"}", NULL}, "absolute"},
        {{"lang", "python", "code", "x", "files", "{\"a\": {\"base64\": \"!!\"}}", NULL},
         "base64 is not valid"},
        {{"lang", "python", "code", "x", "libraries", "[\"numpy; rm -rf /\"]", NULL},
         "libraries: element 0 (\"numpy; rm -rf /\") is not a package name"},
        {{"lang", "python", "code", "x", "libraries", "[\"ok\", \"--index-url=http://evil\"]",
          NULL},
         "libraries: element 1 (\"--index-url=http://evil\") is not a package name"},
        {{"lang", "python", "code", "x", "libraries",
          "[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\",\"m\",\"n\",\"o\",\"p\",\"q\"]",
          NULL},
         "libraries: more than 16 names (libraries.max)"},
        {{"lang", "python", "code", "x", "plots", "sometimes", NULL},
         "plots: \"sometimes\" must be true or false"},
        {{"lang", "python", "code", "x", "artifacts", "[\"../*\"]", NULL},
         "artifacts: \"../*\" must be a relative glob"},
        {{"lang", "python", "code", "x", "artifacts", "[\"/etc/*\"]", NULL},
         "artifacts: \"/etc/*\" must be a relative glob"},
        {{"lang", "python", "code", "x", "artifacts", "[1]", NULL},
         "artifacts: element 0 is not a string"},
        {{"lang", "python", "code", "x", "max_attempts", "0", NULL},
         "max_attempts: \"0\" must be an integer between 1 and 20"},
        {{"lang", "python", "code", "x", "meta", "{bad", NULL}, "meta: \"{bad\" is not JSON"},
        {{"lang", "python", "code", "x", "expect_exit", "300", NULL}, "expect_exit"},
        {{"id", "x\ty", "lang", "python", "code", "x", NULL},
         "id: \"x\\ty\" must be printable UTF-8"},
        {{"id", "a\xff", "lang", "python", "code", "x", NULL}, "must be printable UTF-8"},
        {{"id", "\xc0\xaf", "lang", "python", "code", "x", NULL}, "must be printable UTF-8"},
        /* registry names only: no paths, URLs, file: or git specs */
        {{"lang", "javascript", "code", "x", "libraries", "[\"file:/work/pkg\"]", NULL},
         "libraries: \"file:/work/pkg\" is not a npm package name"},
        {{"libraries", "[\"user/repo\"]", "lang", "javascript", "code", "x", NULL},
         "\"user/repo\" is not a npm package name"},
        {{"lang", "javascript", "code", "x", "libraries", "[\"git+https://h/r.git\"]", NULL},
         "is not a npm package"},
        {{"lang", "javascript", "code", "x", "libraries", "[\"https://h/p.tgz\"]", NULL},
         "is not a npm package"},
        {{"lang", "python", "code", "x", "libraries", "[\"file:/work/pkg\"]", NULL},
         "is not a pip package"},
        {{"lang", "python", "code", "x", "libraries", "[\"pkg@https://h/p.whl\"]", NULL},
         "is not a pip package"},
        {{"lang", "python", "code", "x", "libraries", "[\"git+https://h/r\"]", NULL},
         "is not a pip package"},
        {{"lang", "go", "code", "x", "libraries", "[\"https://github.com/a/b\"]", NULL},
         "is not a go get package"},
        {{"lang", "go", "code", "x", "libraries", "[\"github.com/a/../b\"]", NULL},
         "is not a go get package"},
        {{"lang", "ruby", "code", "x", "libraries", "[\"/tmp/x.gem\"]", NULL},
         "not a package name"},
        {{"lang", "ruby", "code", "x", "libraries", "[\"x.gem/y\"]", NULL}, "is not a gem package"},
        {{"lang", "r", "code", "x", "libraries", "[\"pkg/sub\"]", NULL},
         "is not a install.packages package"},
        {{"lang", "cpp", "code", "x", "libraries", "[\"foo.deb/x\"]", NULL},
         "is not a apt package"},
        /* job faults, not ours (each ended internal_error before) */
        {{"lang", "python", "code", "x", "memory", "1", NULL},
         "memory: 1 MB is below the minimum of 16 MB"},
        {{"lang", "python", "code", "x", "cpus", "0.001", NULL},
         "cpus: 0.001 CPUs is below the minimum of 0.01 CPUs"},
        {{"lang", "python", "code", "x", "pids", "1", NULL},
         "pids: 1 processes is below the minimum of 8 processes"},
        {{"lang", "python", "code", "x", "output", "100", NULL}, "below the minimum of 1024"},
        {{"lang", "python", "code", "x", "image", "llmsb/../evil", NULL},
         "image: \"llmsb/../evil\" is not an image reference"},
        {{"lang", "python", "code", "x", "image", "llmsb/Py", NULL}, "is not an image reference"},
        {{"lang", "python", "code", "x", "image", "llmsb/py:", NULL}, "is not an image reference"},
        /* a custom image by a tag its checks did not make */
        {{"lang", "python", "code", "x", "image", "llmsb/custom/a:unchecked", NULL},
         "image: \"llmsb/custom/a:unchecked\" is not a checked custom image"},
        {{"lang", "python", "code", "x", "image", "llmsb/custom/a:v1", NULL},
         "is not a checked custom image"},
        {{"lang", "python", "code", "x", "image", "llmsb/custom/a:0123456789ab0", NULL},
         "is not a checked custom image"},
        {{"lang", "python", "code", "x", "image", "llmsb/custom/a:0123456789AB", NULL},
         "is not a checked custom image"},
        {{"lang", "python", "code", "x", "image", "llmsb-unchecked/a:x", NULL},
         "is not allowed: images must start with \"llmsb/\""},
        {{"lang", "python", "code", "x", "files", "{\"a\": \"1\", \"a/b\": \"2\"}", NULL},
         "files: \"a/b\" and \"a\": one is a file, the other needs it as a directory"},
        {{"lang", "python", "code", "x", "files", "{\"a\": \"1\", \"a\": \"2\"}", NULL},
         "files: \"a\" is given twice"},
        /* lax parsing */
        {{"lang", "python", "code", "x", "timeout", "0x10", NULL},
         "timeout: \"0x10\" is not a number"},
        {{"lang", "python", "code", "x", "timeout", "inf", NULL}, "is not a number"},
        {{"lang", "cpp", "code", "x", "compile_timeout", "0", NULL},
         "compile_timeout: 0 s is below the minimum"},
        {{"lang", "cpp", "code", "x", "compile_timeout", "601", NULL},
         "compile_timeout: 601 s is above the ceiling of 600 s (limits.max.compile_timeout)"},
        {{"lang", "cpp", "code", "x", "compile_timeout", "ten", NULL},
         "compile_timeout: \"ten\" is not a number"},
        {{"lang", "python", "code", "x", "plots", "yes", NULL},
         "plots: \"yes\" must be true or false"},
        {{"lang", "python", "code", "x", "network", "1", NULL}, "must be true or false"},
        {{"lang", "python", "code", "x", "env", "{\"A=B\": \"c\"}", NULL},
         "env: \"A=B\" is not a variable name"},
        {{"env", "{\"PATH\": \"/x\"}", "lang", "python", "code", "x", NULL},
         "env: PATH is set by the sandbox for python jobs and cannot be replaced"},
        {{"lang", "go", "code", "x", "env", "{\"CGO_ENABLED\": \"1\"}", NULL},
         "env: CGO_ENABLED is set by the sandbox for go jobs"},
        {{"lang", "python", "code", "x", "env", "{\"A\": \"x\\u0000y\"}", NULL},
         "env: a string holds a NUL character"},
        {{"lang", "python", "code", "x", "files", "{\"a\\u0000b\": \"x\"}", NULL},
         "files: a string holds a NUL character"},
        {{"lang", "python", "code", "x", "files", "{\"a\": \"x\\u0000\"}", NULL},
         "send binary files as {\"base64\""},
        {{"lang", "python", "code", "x", "files", "{\"a\\nb\": \"x\"}", NULL},
         "contains a control character (0x0a)"},
        {{"lang", "python", "code", "x", "artifacts", "[\"a\\u0000\"]", NULL},
         "artifacts: a string holds a NUL character"},
        {{"lang", "python", "code", "x", "args", "[\"a\\u0000b\"]", NULL},
         "args: a string holds a NUL character"},
    };
    struct llmsb_err err = {0};
    struct job j;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ASSERT(fields_job(bad[i].kv, &j, &err) != 0);
        ASSERT_CONTAINS(err.msg, bad[i].msg);
        ASSERT(j.id != NULL); /* an invalid job still has an id for its result */
        job_release(&j);
    }
    {
        const char *good[] = {"lang",
                              "go",
                              "code",
                              "package main",
                              "libraries",
                              "[]",
                              "plots",
                              "false",
                              "result_ttl",
                              "60",
                              "max_attempts",
                              "5",
                              "artifacts",
                              "[\"out/*.png\", \"report.csv\"]",
                              NULL};
        ASSERT_EQ(fields_job(good, &j, &err), 0);
        ASSERT_STR(j.id, "1-0");
        ASSERT_EQ(j.result_ttl_s, 60);
        ASSERT_EQ(j.max_attempts, 5);
        ASSERT_EQ(j.nglobs, (size_t)2);
        ASSERT_STR(j.artifact_globs[1], "report.csv");
        job_release(&j);
    }
}

/* The agent is not trusted: artifact names that are not clean relative
 * paths are dropped when the result is decoded. */
/* Registry names of every kind that must still pass. */
TEST(registry_package_names_pass)
{
    static const char *const ok[][2] = {{"python", "requests"},
                                        {"python", "requests==2.31.0"},
                                        {"python", "uvicorn[standard]>=0.2,<1"},
                                        {"python", "zope.interface"},
                                        {"javascript", "left-pad@1.3.0"},
                                        {"javascript", "@types/node@^20.1.0"},
                                        {"javascript", "lodash"},
                                        {"go", "github.com/google/uuid@v1.6.0"},
                                        {"go", "golang.org/x/text"},
                                        {"ruby", "rails:7.0.0"},
                                        {"ruby", "json"},
                                        {"r", "data.table"},
                                        {"cpp", "libssl-dev"},
                                        {"cpp", "libboost1.81-dev=1.81.0-5"},
                                        {"cpp", "g++"}};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        if (!language_library_ok(language_find(ok[i][0]), ok[i][1]))
            fprintf(stderr, "  refused: %s %s\n", ok[i][0], ok[i][1]);
        ASSERT(language_library_ok(language_find(ok[i][0]), ok[i][1]));
    }
}

/* Ids as datasets write them: slashes, spaces, unicode, up to 200 bytes. */
TEST(dataset_ids_are_accepted)
{
    static const char *const ids[] = {"HumanEval/0", "HumanEval/0#3", "MBPP 12 sample",
                                      "tâche/ü/€/\xf0\x9f\x98\x80", "a:b.c-d_e"};
    char long_id[202];
    struct llmsb_err err = {0};
    struct job j;

    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        const char *kv[] = {"id", ids[i], "lang", "python", "code", "x", NULL};
        ASSERT_EQ(fields_job(kv, &j, &err), 0);
        ASSERT_STR(j.id, ids[i]);
        job_release(&j);
    }
    memset(long_id, 'x', sizeof(long_id) - 1);
    long_id[200] = '\0';
    {
        const char *kv[] = {"id", long_id, "lang", "python", "code", "x", NULL};
        ASSERT_EQ(fields_job(kv, &j, &err), 0);
        job_release(&j);
        long_id[200] = 'x';
        long_id[201] = '\0';
        ASSERT(fields_job(kv, &j, &err) != 0);
        ASSERT_CONTAINS(err.msg, "id: 201 bytes is over the 200 byte cap");
        job_release(&j);
    }
    ASSERT(llmsb_printable_utf8("\xe2\x82\xac", 3));
    ASSERT(!llmsb_printable_utf8("\xe2\x82", 2));         /* cut short */
    ASSERT(!llmsb_printable_utf8("\xed\xa0\x80", 3));     /* a surrogate */
    ASSERT(!llmsb_printable_utf8("\xc2\x85", 2));         /* C1 control */
    ASSERT(!llmsb_printable_utf8("\xf4\x90\x80\x80", 4)); /* past U+10FFFF */
}

/* The id is read before anything, whatever its place, so even a job that
 * is wrong elsewhere is filed under its own id; a backslash before "u0000"
 * is not a NUL. */
TEST(id_first_and_nul_escapes)
{
    static const char *const meta_first[] = {"meta",   "{bad", "id", "mine", "lang",
                                             "python", "code", "x",  NULL};
    static const char *const escaped[] = {
        "lang", "python", "code", "x", "env", "{\"A\": \"x\\\\u0000y\"}", NULL};
    struct llmsb_err err = {0};
    struct job j;

    ASSERT(fields_job(meta_first, &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "meta: ");
    ASSERT_STR(j.id, "mine");
    job_release(&j);
    ASSERT_EQ(fields_job(escaped, &j, &err), 0);
    ASSERT_STR(j.env[0], "A=x\\u0000y");
    job_release(&j);
}

/* A field given twice is invalid (which one counts is not a guess), the
 * result still goes under the first id; a bad second image is not a double
 * free of the first (found by fuzz_job_fields). */
TEST(fields_given_twice_are_invalid)
{
    static const char *const two_images[] = {
        "image", "llmsb/python", "image", "llmsb/\\bad", "lang", "python", "code", "x", NULL};
    static const char *const two_ids[] = {"id",     "first", "id", "second", "lang",
                                          "python", "code",  "x",  NULL};
    struct llmsb_err err = {0};
    struct job j;

    ASSERT(fields_job(two_images, &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "image: given twice");
    job_release(&j);
    ASSERT(fields_job(two_ids, &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "id: given twice");
    ASSERT_STR(j.id, "first");
    job_release(&j);
    job_init(&j, &cfg); /* `run --image` sets it on a job that may have one */
    ASSERT_EQ(job_set_image(&j, &cfg, "llmsb/python", 12, &err), 0);
    ASSERT(job_set_image(&j, &cfg, "llmsb/\\bad", 11, &err) != 0);
    ASSERT_STR(j.image, "llmsb/python");
    /* a custom image by :latest or its hash tag */
    ASSERT_EQ(job_set_image(&j, &cfg, "llmsb/custom/a", 14, &err), 0);
    ASSERT_EQ(job_set_image(&j, &cfg, "llmsb/custom/a:latest", 21, &err), 0);
    ASSERT_EQ(job_set_image(&j, &cfg, "llmsb/custom/a:0123456789ab", 27, &err), 0);
    {
        /* an unchecked build's name, even where the prefix would let it by */
        struct config open_cfg = cfg;
        open_cfg.image_prefix[0] = '\0';
        ASSERT(job_set_image(&j, &open_cfg, "llmsb-unchecked/a:0123456789ab-42", 33, &err) != 0);
        ASSERT_CONTAINS(err.msg, "is not a checked custom image");
        ASSERT_EQ(job_set_image(&j, &open_cfg, "other/x", 7, &err), 0);
        /* Docker's normalised spellings of the same names, and image IDs */
        static const char *const aliases[] = {
            "docker.io/llmsb-unchecked/x:0123456789ab-42",
            "index.docker.io/llmsb-unchecked/x:0123456789ab-42",
            "registry-1.docker.io/llmsb-unchecked/x:0123456789ab-42",
            "localhost/llmsb-unchecked/x:0123456789ab-42",
            "docker.io/library/llmsb-unchecked/x:y",
            "docker.io/llmsb/custom/x:unchecked",
            "localhost/llmsb/custom/x:v1",
        };
        for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
            ASSERT(job_set_image(&j, &open_cfg, aliases[i], strlen(aliases[i]), &err) != 0);
            ASSERT_CONTAINS(err.msg, "is not a checked custom image");
        }
        static const char *const ids[] = {
            "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "docker.io/sha256:0123", "0123456789ab", "deadbeef", "sha256"};
        for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
            ASSERT(job_set_image(&j, &open_cfg, ids[i], strlen(ids[i]), &err) != 0);
            ASSERT_CONTAINS(err.msg, "image ID");
        }
        ASSERT_EQ(job_set_image(&j, &open_cfg, "docker.io/llmsb/custom/x:0123456789ab", 37, &err),
                  0);
        ASSERT_EQ(job_set_image(&j, &open_cfg, "docker.io/library/python:3", 26, &err), 0);
        ASSERT_EQ(job_set_image(&j, &open_cfg, "cafe:1", 6, &err), 0);
    }
    job_release(&j);
}

/* compile_flags/link_flags: checked against the language's allowed flags
 * once the whole job is read (the field may come before lang). */
TEST(compile_and_link_flags_checked_against_the_language)
{
    static const char *const ok[] = {"compile_flags",
                                     "[\"-std=c++20\", \"-O0\"]",
                                     "link_flags",
                                     "[\"-lcrypto\"]",
                                     "lang",
                                     "cpp",
                                     "code",
                                     "int main(){}",
                                     NULL};
    static const char *const py[] = {"compile_flags", "[\"-O2\"]", "lang", "python",
                                     "code",          "x",         NULL};
    static const char *const path[] = {"lang",          "cpp",          "code", "x",
                                       "compile_flags", "[\"-I/etc\"]", NULL};
    static const char *const link[] = {"lang",           "cpp", "code", "x", "link_flags",
                                       "[\"-Wl,-T,x\"]", NULL};
    static const char *const notflag[] = {"lang",          "cpp",      "code", "x",
                                          "compile_flags", "[\"O2\"]", NULL};
    struct llmsb_err err = {0};
    struct proto_job pj;
    struct job j;
    int seen = 0;

    ASSERT_EQ(fields_job(ok, &j, &err), 0);
    ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
    for (size_t i = 0; i + 1 < pj.ncompile; i++)
        seen +=
            strcmp(pj.compile_argv[i], "-std=c++20") == 0 || strcmp(pj.compile_argv[i], "-O0") == 0;
    ASSERT_EQ(seen, 2);
    ASSERT_STR(pj.compile_argv[pj.ncompile - 1], "-lcrypto");
    proto_job_release(&pj);
    job_release(&j);
    ASSERT(fields_job(py, &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "compile_flags: python jobs take no compiler flags");
    job_release(&j);
    ASSERT(fields_job(path, &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "compile_flags: \"-I/etc\" is not allowed (allowed: -O0");
    job_release(&j);
    ASSERT(fields_job(link, &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "link_flags: \"-Wl,-T,x\" is not allowed (a link flag is -lNAME");
    job_release(&j);
    ASSERT(fields_job(notflag, &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "compile_flags: \"O2\" is not a flag");
    job_release(&j);
}

/* More fields than a job has: invalid, under its own id, with the count. */
TEST(too_many_fields_are_invalid_not_cut)
{
    struct llmsb_err err = {0};
    struct fields f;
    struct job j;
    char names[80][16];

    fields_init(&f, JOB_MAX_FIELDS);
    fields_adds(&f, "id", "crowded"); /* the queue puts the id first, wherever it was */
    for (int i = 0; i < 70; i++) {
        snprintf(names[i], sizeof(names[i]), "x%d", i);
        fields_adds(&f, names[i], "1");
    }
    ASSERT_EQ(f.dropped, (size_t)(71 - JOB_MAX_FIELDS));
    job_init(&j, &cfg);
    ASSERT(job_from_fields(&j, &cfg, &f, "1-0", &err) != 0);
    ASSERT_CONTAINS(err.msg, "job: more than 64 fields (7 more left out)");
    ASSERT_STR(j.id, "crowded");
    job_release(&j);
    fields_release(&f);
}

/* A field name with a NUL in it is not the name before the NUL. */
TEST(field_names_with_nul_are_unknown)
{
    struct llmsb_err err = {0};
    struct fields f;
    struct job j;

    fields_init(&f, JOB_MAX_FIELDS);
    fields_adds(&f, "lang", "python");
    fields_add_copy(&f, "code\0x", 6, "print(1)", 8);
    job_init(&j, &cfg);
    ASSERT(job_from_fields(&j, &cfg, &f, "1-0", &err) != 0);
    ASSERT_CONTAINS(err.msg, "code\\x00x: unknown job field");
    job_release(&j);
    fields_release(&f);
}

TEST(artifact_names_from_the_agent_are_checked)
{
    struct job_result r;
    cJSON *a;

    job_result_init(&r, NULL);
    proto_put_str(&r.r.artifacts, TAG_ARTIFACT_NAME, "../../etc/cron.d/x");
    proto_put_bytes(&r.r.artifacts, TAG_ARTIFACT_DATA, "evil", 4);
    proto_put_str(&r.r.artifacts, TAG_ARTIFACT_NAME, "x\n\033[2Jy.png"); /* terminal escapes */
    proto_put_bytes(&r.r.artifacts, TAG_ARTIFACT_DATA, "evil", 4);
    proto_put_str(&r.r.artifacts, TAG_ARTIFACT_NAME, "ok/plot.png");
    proto_put_bytes(&r.r.artifacts, TAG_ARTIFACT_DATA, "\x89PNG", 4);
    proto_put_str(&r.r.artifacts, TAG_ARTIFACT_SKIPPED, "link: a symbolic link; not followed");
    ASSERT_EQ(job_result_artifacts(&r), 0);
    a = cJSON_Parse(r.artifacts);
    ASSERT_EQ(cJSON_GetArraySize(a), 2);
    ASSERT_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 0), "name")->valuestring, "ok/plot.png");
    ASSERT_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 0), "mime")->valuestring, "image/png");
    ASSERT_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 0), "base64")->valuestring, "iVBORw==");
    ASSERT_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 1), "skipped")->valuestring,
               "a symbolic link; not followed");
    cJSON_Delete(a);
    job_result_release(&r);
}

TEST(base64_roundtrip_and_rejects)
{
    unsigned char all[256];
    size_t el, dl;
    char *e, *d;

    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    for (size_t n = 0; n < 10; n++) {
        e = base64_encode(all, n, &el);
        d = base64_decode(e, el, &dl);
        ASSERT(d != NULL);
        ASSERT_EQ(dl, n);
        ASSERT(memcmp(d, all, n) == 0);
        free(e), free(d);
    }
    e = base64_encode(all, 256, &el);
    ASSERT_EQ(el, (size_t)344);
    free(e);
    d = base64_decode("aGk=", 4, &dl);
    ASSERT_STR(d, "hi");
    free(d);
    ASSERT(base64_decode("aG!k", 4, &dl) == NULL);
    ASSERT(base64_decode("aGk=x", 5, &dl) == NULL);
}

TEST(result_fields_roundtrip_to_json)
{
    struct job j;
    struct job_result r;
    struct fields f;
    char nums[RESULT_NUMS][32];
    cJSON *o;

    job_init(&j, &cfg);
    j.id = strdup("r1");
    j.meta = strdup("{\"k\":[1,2]}");
    job_result_init(&r, &j);
    r.r.status = STATUS_RUNTIME_ERROR;
    r.r.exit_code = 139;
    r.r.signal = 11;
    r.passed = 0;
    buf_append_str(&r.r.out, "out");
    ASSERT_EQ(job_result_to_fields(&r, nums, &f), 0);
    ASSERT_STR(fields_get(&f, "status", NULL), "runtime_error");
    ASSERT_STR(fields_get(&f, "signal", NULL), "11");
    o = result_fields_json(&f);
    fields_release(&f);
    ASSERT_STR(cJSON_GetObjectItem(o, "id")->valuestring, "r1");
    ASSERT_EQ(cJSON_GetObjectItem(o, "exit_code")->valueint, 139);
    ASSERT_EQ(cJSON_GetObjectItem(o, "signal")->valueint, 11);
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(o, "passed")));
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(o, "stdout_truncated")));
    ASSERT(cJSON_IsArray(cJSON_GetObjectItem(o, "artifacts")));
    ASSERT(cJSON_IsArray(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "meta"), "k")));
    cJSON_Delete(o);
    job_result_release(&r);
    job_release(&j);
}

/* The phases: one hash field holding JSON, read back as an object with
 * the host's and the agent's times; steps that did not run left out, the
 * total the queue wait plus the time held. */
TEST(result_phases_in_hash_and_json)
{
    struct job j;
    struct job_result r;
    struct fields f;
    char nums[RESULT_NUMS][32];
    const char *text;
    cJSON *o, *ph, *back;

    job_init(&j, &cfg);
    j.id = strdup("p1");
    job_result_init(&r, &j);
    r.r.status = STATUS_OK;
    r.queued_at = r.ph.claimed_at - 250; /* waited 250 ms in the queue */
    r.ph.prepare_ms = 1;
    r.ph.acquire_ms = 40;
    r.ph.acquire = RESULT_ACQUIRE_WARM;
    r.ph.agent_ms = 600;
    r.ph.finish_ms = 2;
    r.ph.held_ms = 650;
    r.r.phases.compile_ms = 500;
    r.r.phases.run_ms = 90;
    r.r.phases.collect_ms = 0;
    ASSERT_EQ(job_result_to_fields(&r, nums, &f), 0);
    ASSERT(text = fields_get(&f, "phases", NULL));
    ASSERT(ph = cJSON_Parse(text)); /* the hash holds JSON text, like meta */
    cJSON_Delete(ph);
    o = result_fields_json(&f);
    fields_release(&f);
    ph = cJSON_GetObjectItem(o, "phases");
    ASSERT(cJSON_IsObject(ph));
    ASSERT_EQ(cJSON_GetObjectItem(ph, "queue_wait_ms")->valueint, 250);
    ASSERT_EQ(cJSON_GetObjectItem(ph, "prepare_ms")->valueint, 1);
    ASSERT_EQ(cJSON_GetObjectItem(ph, "acquire_ms")->valueint, 40);
    ASSERT_STR(cJSON_GetObjectItem(ph, "acquire")->valuestring, "warm");
    ASSERT(!cJSON_GetObjectItem(ph, "install_ms")); /* no install step */
    ASSERT_EQ(cJSON_GetObjectItem(ph, "compile_ms")->valueint, 500);
    ASSERT_EQ(cJSON_GetObjectItem(ph, "run_ms")->valueint, 90);
    ASSERT_EQ(cJSON_GetObjectItem(ph, "collect_ms")->valueint, 0);
    ASSERT_EQ(cJSON_GetObjectItem(ph, "agent_ms")->valueint, 600);
    ASSERT_EQ(cJSON_GetObjectItem(ph, "finish_ms")->valueint, 2);
    ASSERT_EQ(cJSON_GetObjectItem(ph, "total_ms")->valueint, 900);
    /* the JSON form straight from the result is the same object */
    back = job_result_json(&r);
    ASSERT(cJSON_Compare(cJSON_GetObjectItem(back, "phases"), ph, 1));
    cJSON_Delete(back);
    cJSON_Delete(o);
    job_result_release(&r);

    /* a result that never ran (invalid): the wait and the total only;
     * a queued_at ahead of the claim (another clock) is no negative wait */
    job_result_init(&r, &j);
    job_result_set_status(&r, STATUS_INVALID, "bad");
    r.queued_at = r.ph.claimed_at + 5000;
    o = job_result_json(&r);
    ph = cJSON_GetObjectItem(o, "phases");
    ASSERT_EQ(cJSON_GetArraySize(ph), 2);
    ASSERT_EQ(cJSON_GetObjectItem(ph, "queue_wait_ms")->valueint, 0);
    ASSERT(cJSON_GetObjectItem(ph, "total_ms")->valueint >= 0);
    cJSON_Delete(o);
    job_result_release(&r);
    job_release(&j);
}

/* pass@k against the closed form, and the default task of an id. */
TEST(passk_estimator_and_task_ids)
{
#define NEAR(a, b) ((a) - (b) < 1e-12 && (b) - (a) < 1e-12)
    ASSERT(NEAR(passk(10, 1, 1), 0.1));
    ASSERT(NEAR(passk(10, 0, 1), 0.0));
    ASSERT(NEAR(passk(10, 10, 10), 1.0));
    ASSERT(NEAR(passk(5, 2, 2), 0.7));                    /* 1 - C(3,2)/C(5,2) */
    ASSERT(NEAR(passk(200, 13, 10), 0.4975511147306061)); /* 1 - C(187,10)/C(200,10) */
    ASSERT(passk(5, 2, 10) < 0);                          /* n < k: not defined */
#undef NEAR
    ASSERT_EQ(passk_task_len("HumanEval/0#3"), strlen("HumanEval/0"));
    ASSERT_EQ(passk_task_len("HumanEval/10"), strlen("HumanEval/10")); /* "/N" is the task's */
    ASSERT_EQ(passk_task_len("a#b"), (size_t)3);
    ASSERT_EQ(passk_task_len("#7"), (size_t)2);
    ASSERT_EQ(passk_task_len("x#"), (size_t)2);
}

/* 1 when got matches want under mode (as a job's compare field). */
static int same(const char *mode, const char *got, const char *want)
{
    struct compare c;
    const char *why = NULL;

    return compare_parse(mode, strlen(mode), &c, &why) == 0 &&
           compare_output(&c, got, strlen(got), want, strlen(want));
}

/* The comparison modes on the outputs that tell them apart. */
TEST(compare_modes)
{
    struct compare c;
    const char *why = NULL;

    ASSERT(same("trailing_whitespace", "1 2 \n3\t\n\n\n", "1 2\n3"));
    ASSERT(!same("trailing_whitespace", "1  2\n", "1 2\n"));
    ASSERT(!same("trailing_whitespace", "1\n\n2\n", "1\n2\n"));
    ASSERT(!same("exact", "1\n", "1"));
    ASSERT(same("exact", "1\n", "1\n"));
    ASSERT(same("tokens", " 1\n\n 2   3 ", "1 2 3\n"));
    ASSERT(!same("tokens", "1 2", "1 2 3"));
    ASSERT(!same("tokens", "0.30000000000000004", "0.3"));
    ASSERT(same("float", "0.30000000000000004 x", "0.3 x"));
    ASSERT(same("float:1e-2", "100.5", "100"));  /* relative */
    ASSERT(!same("float:1e-9", "1.00001", "1")); /* outside the tolerance */
    ASSERT(same("float", "nan", "nan"));
    ASSERT(!same("float", "inf", "1e308"));
    /* trailing_whitespace: spaces, tabs, CR, VT and FF end a line alike
     * (CRLF output against LF expectations); elsewhere in a line they count */
    ASSERT(same("trailing_whitespace", "1 2\r\n3\r\n", "1 2\n3\n"));
    ASSERT(same("trailing_whitespace", "1\v\f \n", "1"));
    ASSERT(!same("trailing_whitespace", "1\r2\n", "12\n"));
    ASSERT(!same("trailing_whitespace", " 1\n", "1\n"));
    ASSERT(same("tokens", "1\r\n2\v3\f", "1 2 3"));
    ASSERT(compare_parse("float:2", 7, &c, &why) != 0);
    ASSERT_CONTAINS(why, "tolerance");
    ASSERT(compare_parse("fuzzy", 5, &c, &why) != 0);
    ASSERT_CONTAINS(why, "exact, trailing_whitespace, tokens, float");
    ASSERT_CONTAINS(why, "lines_decimal");
}

/* compare: float reads decimal numbers only, by one grammar: an optional
 * sign, digits with an optional fraction (or a fraction alone), an
 * optional exponent; inf, infinity and nan in any case.  Overflow is
 * infinite; NaN equals NaN; anything else is a word, equal only as text. */
TEST(compare_float_numbers_are_decimal)
{
    /* hex integers and C99 hex floats are not numbers, nor is 1_000 */
    ASSERT(!same("float", "0x10", "16"));
    ASSERT(!same("float", "0X1p4", "16"));
    ASSERT(!same("float", "16", "0x10"));
    ASSERT(same("float", "0x10", "0x10")); /* equal as text */
    ASSERT(!same("float", "1_000", "1000"));
    ASSERT(!same("float", "1e", "1"));
    ASSERT(!same("float", "e5", "100000"));
    ASSERT(!same("float", ".", "0"));
    ASSERT(!same("float", "--1", "1"));
    ASSERT(!same("float", "nan(1)", "nan"));
    ASSERT(!same("float", "infinit", "inf"));
    /* decimal forms */
    ASSERT(same("float", "+5 5. .5 1.5E+2 -0", "5 5.0 0.5 150 0"));
    ASSERT(same("float", "1e5", "100000"));
    /* infinities: every spelling, overflow included, sign kept */
    ASSERT(same("float", "Infinity", "inf"));
    ASSERT(same("float", "1e999", "inf"));
    ASSERT(same("float", "-1e999 -INF +inf", "-Infinity -inf inf"));
    ASSERT(!same("float", "-inf", "inf"));
    ASSERT(!same("float", "1.7976931348623157e308", "inf"));
    /* NaN equals NaN in any spelling, and nothing else */
    ASSERT(same("float", "NaN -nan", "nan nan"));
    ASSERT(!same("float", "nan", "0"));
    ASSERT(!same("float", "nan", "inf"));
    /* tokens mode compares text only */
    ASSERT(!same("tokens", "Infinity", "inf"));
    /* a long decimal is still a number */
    ASSERT(same("float", "0.1000000000000000000000000000000000000000000000000000000000000000000001",
                "0.1"));
}

/* Decimals too big for a double compare by value, exactly as written:
 * big-integer answers (10**400, factorials) are where this matters. */
TEST(compare_float_big_decimals_compare_by_value)
{
    char a[1024], b[1024], c[1024];

    /* 10**400, another 401-digit number, and 10**400 again */
    memset(a, '0', 401), a[0] = '1', a[401] = '\0';
    memset(b, '0', 401), b[0] = '2', b[401] = '\0';
    memcpy(c, a, 402);
    ASSERT(!same("float", a, b));
    ASSERT(same("float", a, c));
    ASSERT(same("float", "1e400", a));
    ASSERT(same("float", "+0010.0e399", a));
    /* the last digit of 401 is within the relative tolerance; the fourth is not */
    c[400] = '1';
    ASSERT(same("float", c, a));
    c[400] = '0', c[3] = '1';
    ASSERT(!same("float", c, a));
    ASSERT(same("float:1e-2", c, a));
    ASSERT(!same("float", "1e400", "1e999"));
    ASSERT(!same("float", "1e400", "-1e400"));
    ASSERT(!same("float", "1e309", "1.7976931348623157e308"));
    ASSERT(same("float", "1.0000000001e400", "1e400"));
    ASSERT(!same("float", "1e-400", "1e400"));
    /* an overflow equals an infinity of its sign, as the words do */
    ASSERT(same("float", "1e999", "inf"));
    ASSERT(same("float", a, "Infinity"));
    ASSERT(same("float", "-1e999", "-inf"));
    ASSERT(!same("float", "-1e999", "inf"));
    /* no length at which a decimal becomes a word: 600 digits */
    memset(a, '9', 600), a[600] = '\0';
    memset(b, '9', 600), b[0] = '8', b[600] = '\0';
    ASSERT(!same("float", a, b));
    ASSERT(same("float", a, "1e600"));
    memset(a, '0', 600), a[1] = '.', a[599] = '5', a[600] = '\0';
    ASSERT(same("float", a, "0"));
    ASSERT(same("float", a, "5e-598"));
    /* an exponent of more than 18 digits is a word (the documented cap) */
    ASSERT(!same("float", "1e1000000000000000000", "inf"));
    ASSERT(same("float", "1e0000000000000000000001", "10"));
}

/* float:TOL reads TOL by the same decimal grammar: 0 to 1, no hex, inf
 * or nan, and the reason says which. */
TEST(compare_float_tolerance_is_decimal)
{
    struct compare c;
    const char *why = NULL;
    static const char *const bad[] = {"float:0x1p-3", "float:inf", "float:nan", "float:-1e-3",
                                      "float:2",      "float:1e",  "float:",    "float:1e-3x"};

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why = NULL;
        ASSERT(compare_parse(bad[i], strlen(bad[i]), &c, &why) != 0);
        ASSERT_CONTAINS(why, "tolerance");
    }
    ASSERT(compare_parse("float:0x1p-3", 12, &c, &why) != 0);
    ASSERT_CONTAINS(why, "decimal");
    ASSERT(compare_parse("float:nan", 9, &c, &why) != 0);
    ASSERT_CONTAINS(why, "from 0 to 1");
    ASSERT(compare_parse("float:.125", 10, &c, &why) == 0 && c.tol == 0.125);
    ASSERT(compare_parse("float:1E-9", 10, &c, &why) == 0 && c.tol == 1e-9);
    ASSERT(compare_parse("float:0", 7, &c, &why) == 0 && c.tol == 0);
    ASSERT(compare_parse("float:0.000000000000000000000000000000000000000001", 50, &c, &why) == 0 &&
           c.tol == 1e-42);
}

/* line_token_sets on 16 MiB outputs of 4 Mi lines (past the caps): the
 * same text with other line ends still passes (its first check, in the
 * output's size); the same lines in another order, which only its line
 * sets would pass, fail there; the peak memory of either stays near the
 * outputs' size (it took 500 MB and more). */
TEST(compare_line_token_sets_bounded_on_huge_outputs)
{
    pid_t pid = fork();
    int st = 0;

    ASSERT(pid >= 0);
    if (pid == 0) {
        size_t n = (size_t)4 << 20, len = 2 * n;
        char *got = malloc(len + 1), *want = malloc(len + 1), *crlf = malloc(2 * len + 1);
        struct compare c = {.mode = COMPARE_LINE_TOKEN_SETS};
        struct rusage before, after;
        int fail = !got || !want || !crlf;

        for (size_t i = 0; !fail && i < n; i++) {
            got[2 * i] = i % 2 ? 'b' : 'a';
            want[2 * i] = i % 2 ? 'a' : 'b';
            got[2 * i + 1] = want[2 * i + 1] = '\n';
            crlf[3 * i] = got[2 * i];
            memcpy(crlf + 3 * i + 1, "\r\n", 2);
        }
        getrusage(RUSAGE_SELF, &before);
        fail = fail || !compare_output(&c, crlf, 3 * n, got, len);
        fail = fail || compare_output(&c, got, len, want, len);
        getrusage(RUSAGE_SELF, &after);
        fail = fail || after.ru_maxrss - before.ru_maxrss > 96 * 1024; /* KiB */
        _exit(fail);
    }
    ASSERT(waitpid(pid, &st, 0) == pid);
    ASSERT_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "over the caps: wrong verdict or memory");
}

/* The stdin/stdout benchmarks' rules, on the outputs where they differ
 * from each other: trailing spaces, blank lines, letter case, 1.0 against
 * 1, 1e-9 against 0.000000001, order. */
TEST(compare_harness_modes_where_they_differ)
{
    struct compare c;
    const char *why = NULL;
    char big[64];

    /* trailing spaces and a missing last newline: all three pass */
    ASSERT(same("lines_decimal", "1 2  \n3", "1 2\n3\n"));
    ASSERT(same("tokens_icase_abs", "1 2  \n3", "1 2\n3\n"));
    ASSERT(same("line_token_sets", "1 2  \n3", "1 2\n3\n"));
    /* a blank line inside: LiveCodeBench counts lines, CodeContests and
     * APPS do not */
    ASSERT(!same("lines_decimal", "1\n\n2\n", "1\n2\n"));
    ASSERT(same("tokens_icase_abs", "1\n\n2\n", "1\n2\n"));
    ASSERT(same("line_token_sets", "1\n\n2\n", "1\n2\n"));
    /* tokens split over lines otherwise: only CodeContests */
    ASSERT(!same("lines_decimal", "1\n2", "1 2"));
    ASSERT(same("tokens_icase_abs", "1\n2", "1 2"));
    ASSERT(!same("line_token_sets", "1\n2", "1 2"));
    /* letter case: only CodeContests ignores it */
    ASSERT(!same("lines_decimal", "YES", "yes"));
    ASSERT(same("tokens_icase_abs", "YES", "yes"));
    ASSERT(!same("line_token_sets", "YES", "yes"));
    /* 1.0 against 1, 1e-9 against 0.000000001: equal decimals, doubles
     * within 1e-5, floats */
    ASSERT(same("lines_decimal", "1.0 1e-9", "1 0.000000001"));
    ASSERT(same("tokens_icase_abs", "1.0 1e-9", "1 0.000000001"));
    ASSERT(same("line_token_sets", "1.0 1e-9", "1 0.000000001"));
    /* close but not equal: Decimal is exact; CodeContests within 1e-5
     * absolute (strictly); APPS rounds to 3 decimals or numpy.allclose */
    ASSERT(!same("lines_decimal", "0.30000000000000004", "0.3"));
    ASSERT(same("tokens_icase_abs", "0.30000000000000004", "0.3"));
    ASSERT(same("line_token_sets", "0.30000000000000004", "0.3"));
    ASSERT(!same("tokens_icase_abs", "0.00001", "0"));
    ASSERT(same("tokens_icase_abs", "0.0000099", "0"));
    ASSERT(same("line_token_sets", "0.12341 1", "0.1234 1")); /* both round to 0.123 */
    ASSERT(!same("line_token_sets", "0.1236 1", "0.1234 1"));
    ASSERT(same("line_token_sets", "100000.5", "100000.6")); /* allclose: relative 1e-5 */
    ASSERT(!same("line_token_sets", "100000.5 x", "100000.6 x"));
    /* big integers: Decimal exact, doubles not */
    ASSERT(!same("lines_decimal", "50000000000000000", "50000000000000001"));
    ASSERT(same("tokens_icase_abs", "50000000000000000", "50000000000000001"));
    /* APPS: the order of lines and of tokens and repeats are ignored */
    ASSERT(same("line_token_sets", "b a\n1\n1\n", "1\na b\n"));
    ASSERT(!same("line_token_sets", "a\nb", "a c\nb"));
    /* NaN equals nothing by number; inf only as the same text in
     * CodeContests (inf - inf is NaN) */
    ASSERT(!same("lines_decimal", "nan", "NaN"));
    ASSERT(same("lines_decimal", "Infinity", "inf"));
    ASSERT(same("tokens_icase_abs", "inf", "INF"));
    ASSERT(!same("tokens_icase_abs", "inf x", "inf y"));
    ASSERT(!same("tokens_icase_abs", "inf", "infinity"));
    /* words: hex is not a number anywhere; Python reads 1_000, absl not */
    ASSERT(!same("tokens_icase_abs", "0x10", "16"));
    ASSERT(same("line_token_sets", "1_000", "1000"));
    ASSERT(same("lines_decimal", "1_000 in_f", "1000 inf")); /* Decimal drops every '_' */
    ASSERT(!same("tokens_icase_abs", "1_000", "1000"));
    /* CodeContests: FF is not a separator */
    ASSERT(!same("tokens_icase_abs", "1\f2", "1 2"));
    /* empty against white space */
    ASSERT(same("lines_decimal", "", " \n"));
    ASSERT(same("tokens_icase_abs", "", "\n"));
    ASSERT(same("line_token_sets", "", "\n"));
    ASSERT(!same("line_token_sets", "", "0"));
    /* the tolerance: CodeContests' 1e-5 unless given */
    ASSERT(compare_parse("tokens_icase_abs", 16, &c, &why) == 0 && c.tol == 1e-5);
    ASSERT(compare_parse("tokens_icase_abs:0.5", 20, &c, &why) == 0 && c.tol == 0.5);
    ASSERT(same("tokens_icase_abs:0.5", "1.4", "1"));
    compare_format(&c, big, sizeof(big));
    ASSERT_STR(big, "tokens_icase_abs:0.5");
    ASSERT(compare_parse("tokens_icase_abs:2", 18, &c, &why) != 0);
    ASSERT_CONTAINS(why, "tolerance");
    ASSERT(compare_parse("lines_decimal:1", 15, &c, &why) != 0);
    ASSERT_CONTAINS(why, "line_token_sets");
}

/* cases: parsed with errors naming the case and key; the job-level stdin
 * and expectations clash with them; they reach the agent's JOB and back. */
TEST(cases_parse_and_reach_the_agent)
{
    static const char *const good[] = {
        "id",
        "c",
        "lang",
        "python",
        "code",
        "x",
        "compare",
        "tokens",
        "stop_on_failure",
        "true",
        "cases",
        "[{\"stdin\":\"1 2\",\"expect_stdout\":\"3\"},{\"args\":[\"-v\"],\"expect_exit\":4}]",
        NULL};
    static const char *const bad[][2] = {
        {"[]", "cases: must be a list of 1 to 1000"},
        {"[{\"stdin\":1}]", "cases[0].stdin: must be a string"},
        {"[{},{\"output\":\"x\"}]", "cases[1].output: unknown (a case has stdin"},
        {"[{\"expect_exit\":256}]", "cases[0].expect_exit: must be an integer from 0 to 255"},
        {"[{\"args\":[1]}]", "cases[0].args: must be a list of strings"},
        {"[{\"stdin\":\"a\\u0000b\"}]", "cases: a string holds a NUL character"},
        {"{}", "cases: \"{}\" is not a JSON array"},
        {"[{\"stdin\":\"a\",\"stdin\":\"b\"}]", "cases[0].stdin: given twice"},
        {"[{\"expect_exit\":1e10}]", "cases[0].expect_exit: must be an integer"},
    };
    static const char *clash[] = {"lang", "python", "code", "x", "expect_exit",
                                  "0",    "cases",  "[{}]", NULL};
    struct llmsb_err err = {0};
    struct proto_job pj, back;
    struct buf b;
    struct job j;

    ASSERT_EQ(fields_job(good, &j, &err), 0);
    ASSERT_EQ(j.ncases, (size_t)2);
    ASSERT_EQ(j.compare.mode, COMPARE_TOKENS);
    ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
    buf_init(&b, PROTO_MAX_PAYLOAD);
    ASSERT_EQ(proto_job_encode(&pj, &b), 0);
    ASSERT_EQ(proto_job_decode(b.data, b.len, &back, &err), 0);
    ASSERT_EQ(back.ncases, (size_t)2);
    ASSERT_EQ(back.stop_on_failure, (uint64_t)1);
    ASSERT_EQ(back.compare.mode, COMPARE_TOKENS);
    ASSERT_EQ(back.cases[0].stdin_len, (size_t)3);
    ASSERT_EQ(memcmp(back.cases[0].stdin_data, "1 2", 3), 0);
    ASSERT_STR(back.cases[0].expect_stdout, "3");
    ASSERT_STR(back.cases[1].args[0], "-v");
    ASSERT(back.cases[1].expect_stdout == NULL);
    ASSERT_EQ(back.cases[1].expect_exit, (uint64_t)4);
    proto_job_release(&back);
    pj.compare = (struct compare){COMPARE_FLOAT, 1e-9}; /* the tolerance crosses exactly */
    buf_reset(&b);
    ASSERT_EQ(proto_job_encode(&pj, &b), 0);
    ASSERT_EQ(proto_job_decode(b.data, b.len, &back, &err), 0);
    ASSERT_EQ(back.compare.mode, COMPARE_FLOAT);
    ASSERT(back.compare.tol == 1e-9);
    proto_job_release(&back);
    proto_job_release(&pj);
    buf_release(&b);
    job_release(&j);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *kv[] = {"lang", "python", "code", "x", "cases", bad[i][0], NULL};
        memset(&err, 0, sizeof(err));
        ASSERT(fields_job(kv, &j, &err) != 0);
        ASSERT_CONTAINS(err.msg, bad[i][1]);
        job_release(&j);
    }
    ASSERT(fields_job(clash, &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "expect_exit: not with cases");
    job_release(&j);
}

/* The agent's case results become the result's cases, counts and passed;
 * a case the agent did not report (stopped early) is not passed. */
TEST(case_results_make_passed)
{
    static const char *const kv[] = {"lang", "python", "code", "x", "cases", "[{},{}]", NULL};
    struct llmsb_err err = {0};
    struct job_result r;
    struct buf one;
    struct job j;
    cJSON *o;

    ASSERT_EQ(fields_job(kv, &j, &err), 0);
    job_result_init(&r, &j);
    r.r.status = STATUS_OK;
    buf_init(&one, 4096);
    proto_put_str(&one, TAG_STATUS, "ok");
    proto_put_bytes(&one, TAG_STDOUT, "hi\n", 3);
    proto_put_u64(&one, TAG_CASE_PASSED, 1);
    proto_put_bytes(&r.r.cases, TAG_CASE_RESULT, one.data, one.len);
    job_result_check(&r, &j);
    ASSERT_EQ(r.cases_passed, 1);
    ASSERT_EQ(r.cases_total, 2);
    ASSERT_EQ(r.passed, 0);
    proto_put_bytes(&r.r.cases, TAG_CASE_RESULT, one.data, one.len);
    proto_put_bytes(&r.r.cases, TAG_CASE_RESULT, "junk", 4); /* no status: not a case */
    job_result_check(&r, &j);
    ASSERT_EQ(r.cases_passed, 2);
    ASSERT_EQ(r.passed, 1);
    o = job_result_json(&r);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(o, "cases")), 2);
    {
        /* the agent is not trusted: a case more than the job has is not counted */
        struct job_result r3;
        job_result_init(&r3, &j);
        r3.r.status = STATUS_OK;
        for (int k = 0; k < 3; k++)
            proto_put_bytes(&r3.r.cases, TAG_CASE_RESULT, one.data, one.len);
        job_result_check(&r3, &j);
        ASSERT_EQ(r3.cases_run, 2);
        ASSERT_EQ(r3.cases_passed, 2);
        job_result_release(&r3);
        /* an agent that ran no case (an image from before cases) is said so */
        job_result_init(&r3, &j);
        r3.r.status = STATUS_OK;
        job_result_check(&r3, &j);
        ASSERT_EQ(r3.r.status, STATUS_INVALID);
        ASSERT_CONTAINS(r3.error, "rebuild it");
        job_result_release(&r3);
    }
    ASSERT_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "cases"), 0), "stdout")
                   ->valuestring,
               "hi\n");
    ASSERT_EQ(cJSON_GetObjectItem(o, "cases_total")->valueint, 2);
    cJSON_Delete(o);
    buf_release(&one);
    job_result_release(&r);
    job_release(&j);
}

/* Plots on (the default) give the agent a plots dir and the hook's env;
 * plots off give neither. Libraries become the installer's argv, one
 * argument per name after the language's fixed part. */
TEST(plots_and_install_reach_the_agent_job)
{
    const char *on[] = {
        "lang", "python", "code", "print(1)", "libraries", "[\"requests==2.31\", \"numpy\"]", NULL};
    const char *off[] = {"lang", "python", "code", "print(1)", "plots", "false", NULL};
    const char *ruby[] = {"lang", "ruby", "code", "puts 1", NULL};
    const char *java[] = {
        "lang",      "java",        "code", "class Main { public static void main(String[] a) {} }",
        "libraries", "[\"guava\"]", NULL};
    struct llmsb_err err = {0};
    struct proto_job pj;
    struct config c2;
    struct job j;
    int found = 0;

    ASSERT_EQ(fields_job(on, &j, &err), 0);
    ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
    ASSERT_STR(pj.plots_dir, LANG_PLOTS_DIR);
    for (size_t i = 0; i < pj.nenv; i++)
        found |= strcmp(pj.env[i], LANG_PLOTS_ENV) == 0;
    ASSERT(found);
    config_defaults(&c2);
    snprintf(c2.registry[language_index(language_find("python"))], sizeof(c2.registry[0]),
             "http://10.1.2.3:8080/simple");
    ASSERT_EQ(job_add_install(&j, &c2, &pj, &err), 0);
    ASSERT_STR(pj.install_argv[0], "python3");
    ASSERT_STR(pj.install_argv[pj.ninstall - 3], "--");
    ASSERT_STR(pj.install_argv[pj.ninstall - 2], "requests==2.31");
    ASSERT_STR(pj.install_argv[pj.ninstall - 1], "numpy");
    ASSERT_STR(pj.install_env[0], "PIP_INDEX_URL=http://10.1.2.3:8080/simple");
    ASSERT_STR(pj.install_env[1], "PIP_TRUSTED_HOST=10.1.2.3");
    ASSERT_EQ(pj.install_timeout_ms, 180000u);
    proto_job_release(&pj);
    job_release(&j);

    ASSERT_EQ(fields_job(off, &j, &err), 0);
    ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
    ASSERT(pj.plots_dir == NULL);
    for (size_t i = 0; i < pj.nenv; i++)
        ASSERT(strncmp(pj.env[i], "SANDBOX_PLOTS_DIR=", 18) != 0);
    proto_job_release(&pj);
    job_release(&j);

    ASSERT_EQ(fields_job(ruby, &j, &err), 0); /* no plot hooks for ruby */
    ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
    ASSERT(pj.plots_dir == NULL);
    proto_job_release(&pj);
    job_release(&j);

    ASSERT_EQ(fields_job(java, &j, &err), 0);
    ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
    ASSERT_EQ(job_add_install(&j, &cfg, &pj, &err), 0); /* Debian's jars */
    ASSERT_EQ(pj.ninstall, (size_t)3);
    ASSERT_STR(pj.install_argv[1], "/work/.llmsb-lib/java");
    ASSERT_STR(pj.install_argv[2], "guava");
    proto_job_release(&pj);
    job_release(&j);
}

/* Java as benchmarks write it (MultiPL-E, CRUXEval-X: `class Problem`
 * without public): saved under the main class's name and run by it; a
 * public class names the file while another class's main runs; a file
 * with no main has nothing to start (a compile_error, saying why). */
TEST(java_runs_the_class_that_declares_main)
{
    static const struct {
        const char *code, *file, *run;
    } cases[] = {
        {"import org.javatuples.*;\nclass Problem {\n    public static Pair<Long, Long> f(long x)"
         " { return Pair.with(x, x); }\n    public static void main(String[] args) {\n"
         "    assert(f(1L).equals(Pair.with(1L, 1L)));\n    }\n}\n",
         "Problem.java", "Problem"},
        {"public class Solution { int f() { return 1; } }\n"
         "class Main { public static void main(String... a) {} }\n",
         "Solution.java", "Main"},
        {"package app.util;\nclass Tool { static public void main(String args[]) {} }\n",
         "Tool.java", "app.util.Tool"},
    };
    const char *kv[] = {"lang", "java", "code", NULL, NULL};
    struct llmsb_err err = {0};
    struct proto_job pj;
    struct job j;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kv[3] = cases[i].code;
        ASSERT_EQ(fields_job(kv, &j, &err), 0);
        ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
        ASSERT_STR(pj.files[0].path, cases[i].file);
        ASSERT_STR(pj.run_argv[pj.nrun - 1], cases[i].run);
        ASSERT_STR(pj.compile_argv[pj.ncompile - 1], cases[i].file);
        proto_job_release(&pj);
        job_release(&j);
    }
    kv[3] = "class Problem { static int f() { return 1; } }\n";
    ASSERT_EQ(fields_job(kv, &j, &err), 0);
    ASSERT_EQ(job_to_proto(&j, &pj, &err), LLMSB_ERR_NOTFOUND);
    ASSERT_CONTAINS(err.msg,
                    "no top-level class declares `public static void main(String[] args)`");
    job_release(&j);
}

/* Java jobs name the image's warm javac unless they install libraries
 * (their jars could carry annotation processors) or their env switches it
 * off (LLMSB_COMPILE_CACHE=0: then no server runs in their sandbox at all,
 * the plain side of tests/compile-cache/java.sh); other languages none. */
TEST(compile_server_reaches_the_agent_job_when_it_can)
{
    const char *java[] = {"lang", "java", "code",
                          "public class Main { public static void main(String[] a) {} }", NULL};
    const char *libs[] = {
        "lang",      "java",
        "code",      "public class Main { public static void main(String[] a) {} }",
        "libraries", "[\"libgson-java\"]",
        NULL};
    const char *off[] = {"lang", "java",
                         "code", "public class Main { public static void main(String[] a) {} }",
                         "env",  "{\"LLMSB_COMPILE_CACHE\": \"0\"}",
                         NULL};
    const char *cpp[] = {"lang", "cpp", "code", "int main() {}", NULL};
    const char **none[] = {libs, off, cpp};
    struct llmsb_err err = {0};
    struct proto_job pj;
    struct job j;

    ASSERT_EQ(fields_job(java, &j, &err), 0);
    ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
    ASSERT_STR(pj.compile_server, "/usr/local/lib/llmsb/llmsb-javac.jar");
    proto_job_release(&pj);
    job_release(&j);
    for (int k = 0; k < 3; k++) {
        ASSERT_EQ(fields_job(none[k], &j, &err), 0);
        ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
        ASSERT_MSG(pj.compile_server == NULL, none[k][5]);
        proto_job_release(&pj);
        job_release(&j);
    }
}

/* Python jobs name the image's zygote unless they ask for a fresh
 * interpreter, install libraries, or the config turns it off. */
TEST(zygote_reaches_the_agent_job_when_it_can)
{
    const char *plain[] = {"lang", "python", "code", "print(1)", NULL};
    const char *fresh[] = {"lang", "python", "code", "print(1)", "fresh_interpreter", "true", NULL};
    const char *libs[] = {"lang", "python", "code", "print(1)", "libraries", "[\"six\"]", NULL};
    const char *ruby[] = {"lang", "ruby", "code", "puts 1", NULL};
    const char *r[] = {"lang", "r", "code", "library(ggplot2)", NULL};
    const char *node[] = {"lang", "javascript", "code", "console.log(1)", NULL};
    const char *bad[] = {"lang", "python", "code", "1", "fresh_interpreter", "sometimes", NULL};
    const char *data[] = {"lang", "python", "code", "import pandas as pd\nprint(1)", NULL};
    const char *datafile[] = {
        "lang", "python", "code", "import helper", "files", "{\"helper.py\": \"import numpy\"}",
        NULL};
    const char *numpydata[] = {"lang",  "python",
                               "code",  "import numpy as np\nimport helper",
                               "files", "{\"helper.py\": \"import matplotlib\"}",
                               NULL};
    struct llmsb_err err = {0};
    struct proto_job pj;
    struct job j;

    ASSERT_EQ(fields_job(plain, &j, &err), 0);
    ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
    ASSERT_STR(pj.zygote, "/usr/local/lib/llmsb/llmsb_zygote.py");
    ASSERT_STR(pj.zygote_profile, "base");
    proto_job_release(&pj);
    job_release(&j);
    ASSERT_EQ(fields_job(data, &j, &err), 0); /* names pandas: the zygote that preloads it */
    ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
    ASSERT_STR(pj.zygote_profile, "data");
    proto_job_release(&pj);
    job_release(&j);
    /* numpy alone, in a file of the job: the zygote that preloads only it */
    ASSERT_EQ(fields_job(datafile, &j, &err), 0);
    ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
    ASSERT_STR(pj.zygote_profile, "numpy");
    proto_job_release(&pj);
    job_release(&j);
    ASSERT_EQ(fields_job(numpydata, &j, &err), 0); /* numpy and, in a file, matplotlib */
    ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
    ASSERT_STR(pj.zygote_profile, "data");
    proto_job_release(&pj);
    job_release(&j);
    cfg.fresh_interpreter = 1; /* the config's default, which a job may turn back */
    ASSERT_EQ(fields_job(plain, &j, &err), 0);
    ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
    ASSERT(pj.zygote == NULL);
    proto_job_release(&pj);
    job_release(&j);
    cfg.fresh_interpreter = 0;
    for (int k = 0; k < 3; k++) {
        const char **f = k == 0 ? fresh : k == 1 ? libs : node; /* node: none */
        ASSERT_EQ(fields_job(f, &j, &err), 0);
        ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
        ASSERT(pj.zygote == NULL);
        proto_job_release(&pj);
        job_release(&j);
    }
    /* Ruby and R have one profile: nothing preloaded past the interpreter */
    for (int k = 0; k < 2; k++) {
        ASSERT_EQ(fields_job(k == 0 ? ruby : r, &j, &err), 0);
        ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
        ASSERT_STR(pj.zygote, k == 0 ? "/usr/local/lib/llmsb/llmsb_zygote.rb"
                                     : "/usr/local/lib/llmsb/llmsb_zygote.R");
        ASSERT_STR(pj.zygote_profile, "base");
        proto_job_release(&pj);
        job_release(&j);
    }
    ASSERT(fields_job(bad, &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "fresh_interpreter");
    ASSERT_CONTAINS(err.msg, "sometimes");
    job_release(&j);
}

/* JavaScript jobs ask for their run step started ahead (agent/prespawn.c)
 * unless they ask for a fresh interpreter or install libraries; other
 * languages never do. */
TEST(prespawn_reaches_the_agent_job_when_it_can)
{
    const char *node[] = {"lang", "javascript", "code", "console.log(1)", NULL};
    const char *fresh[] = {"lang", "javascript", "code", "console.log(1)", "fresh_interpreter",
                           "true", NULL};
    const char *libs[] = {"lang",      "javascript",   "code", "console.log(1)",
                          "libraries", "[\"lodash\"]", NULL};
    const char *py[] = {"lang", "python", "code", "print(1)", NULL};
    const char *env[] = {"lang", "javascript", "code", "1", "env", "{\"NODE_DEBUG\": \"module\"}",
                         NULL};
    const char *const *never[] = {fresh, libs, py, env};
    struct llmsb_err err = {0};
    struct proto_job pj, view;
    struct job j;

    ASSERT_EQ(fields_job(node, &j, &err), 0);
    ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
    ASSERT_STR(
        pj.prespawn,
        "NODE_OPTIONS=--snapshot-blob /usr/local/lib/llmsb/node.blob --require /usr/local/lib/llmsb/node-wait.js");
    /* the words name the hooks where the image puts them (node-wait.js
     * takes them out of NODE_OPTIONS by its own path) */
    ASSERT(strstr(pj.prespawn, j.lang->hooks[0].dest) != NULL);
    ASSERT_STR(j.lang->hooks[0].file, "node-wait.js");
    proto_job_release(&pj);
    job_release(&j);
    /* a job's own env is never part of what the pool keeps of it */
    ASSERT_EQ(fields_job(env, &j, &err), 0);
    ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
    ASSERT_EQ(pj.nenv_own, (size_t)1);
    ASSERT_EQ(sandbox_start_view(&pj, &view), 0);
    ASSERT_EQ(view.nenv, pj.nenv - 1);
    for (size_t i = 0; i < view.nenv; i++)
        ASSERT(strncmp(view.env[i], "NODE_DEBUG=", 11) != 0);
    proto_job_release(&view);
    proto_job_release(&pj);
    job_release(&j);
    for (int k = 0; k < 4; k++) {
        ASSERT_EQ(fields_job(never[k], &j, &err), 0);
        ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
        ASSERT(pj.prespawn == NULL);
        proto_job_release(&pj);
        job_release(&j);
    }
}

/* A session's fields: checked by name; its calls reach the agent with the
 * session's id and the zygote (whatever fresh_interpreter says); a close
 * needs neither lang nor code; the frame round-trips. */
TEST(session_fields_checked_and_reach_the_agent)
{
    const char *call[] = {"lang", "python", "code", "x = 1", "session", "s-1.a:b@c", NULL};
    const char *close[] = {"session", "s-1", "session_close", "true", NULL};
    const char *js[] = {"lang", "javascript", "code", "1", "session", "s", NULL};
    const char *space[] = {"lang", "python", "code", "1", "session", "a b", NULL};
    const char *libs[] = {"lang", "python",    "code",      "1", "session",
                          "s",    "libraries", "[\"six\"]", NULL};
    const char *cases[] = {"lang", "python", "code", "1", "session", "s", "cases", "[{}]", NULL};
    const char *lone[] = {"lang", "python", "code", "1", "session_close", "true", NULL};
    const char *nocode[] = {"lang", "python", "session", "s", NULL};
    struct llmsb_err err = {0};
    struct proto_job pj, back;
    struct buf b;
    struct job j;

    ASSERT_EQ(fields_job(call, &j, &err), 0);
    ASSERT_STR(j.session, "s-1.a:b@c");
    cfg.fresh_interpreter = 1; /* a session's call goes to its interpreter all the same */
    ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
    cfg.fresh_interpreter = 0;
    ASSERT_STR(pj.session, "s-1.a:b@c");
    ASSERT(pj.zygote != NULL);
    buf_init(&b, PROTO_MAX_PAYLOAD);
    ASSERT_EQ(proto_job_encode(&pj, &b), 0);
    ASSERT_EQ(proto_job_decode(b.data, b.len, &back, &err), 0);
    ASSERT_STR(back.session, "s-1.a:b@c");
    proto_job_release(&back);
    buf_release(&b);
    proto_job_release(&pj);
    job_release(&j);
    ASSERT_EQ(fields_job(close, &j, &err), 0);
    ASSERT(j.session_close && j.lang && j.code);
    job_release(&j);
    ASSERT(fields_job(js, &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "session: \"javascript\" has no sessions");
    job_release(&j);
    ASSERT(fields_job(space, &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "session: \"a b\" may hold only");
    job_release(&j);
    ASSERT(fields_job(libs, &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "libraries: not with session");
    job_release(&j);
    ASSERT(fields_job(cases, &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "cases: not with session");
    job_release(&j);
    ASSERT(fields_job(lone, &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "session_close: needs session");
    job_release(&j);
    ASSERT(fields_job(nocode, &j, &err) != 0); /* a call, not a close: code is required */
    ASSERT_CONTAINS(err.msg, "code: is required");
    job_release(&j);
    cfg.sessions_max = 0;
    ASSERT(fields_job(call, &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "sessions are off");
    job_release(&j);
    cfg.sessions_max = 8;
}

/* A session has one language, policy, environment and set of container
 * limits, fixed by its first call: a later call that names another is
 * invalid, naming the field and both values (a Python session's call sent
 * as Ruby would be scanned as Ruby and run as Python; one under a laxer
 * policy could leave a module for a strict call to use); one that leaves
 * them out takes the session's, and is scanned in it; fresh_interpreter is
 * refused. */
TEST(session_calls_keep_the_sessions_language_env_and_limits)
{
    const char *first[] = {"lang",    "python", "code",   "x = 1",
                           "session", "s",      "env",    "{\"A\": \"1\", \"B\": \"2\"}",
                           "memory",  "512",    "policy", "strict",
                           NULL};
    const char *no_policy[] = {"code", "import subprocess; subprocess.run(['id'])", "session", "s",
                               NULL};
    const char *lax[] = {"code", "1", "session", "s", "policy", "development", NULL};
    const char *inline_sec[] = {
        "code", "1", "session", "s", "security", "{\"restricted_modules\": [\"socket\"]}", NULL};
    /* "" and {} mean "none named": the session's, no crash on the NULL */
    const char *empty_policy[] = {"code", "1",        "session", "s", "policy",
                                  "",     "security", "{}",      NULL};
    const char *sec_first[] = {
        "lang",     "python",
        "code",     "1",
        "session",  "t",
        "security", "{\"restricted_modules\":[\"socket\"],\"threshold\":\"high\"}",
        NULL};
    const char *sec_same[] = {
        "code", "1",        "session",
        "t",    "security", "{ \"threshold\": \"high\", \"restricted_modules\": [\"socket\"] }",
        NULL};
    const char *sec_empty[] = {"code", "1", "session", "t", "security", "", NULL};
    const char *as_ruby[] = {"lang",    "ruby", "policy",
                             "strict",  "code", "import subprocess; subprocess.run(['id'])",
                             "session", "s",    NULL};
    const char *no_lang[] = {
        "policy",  "strict", "code", "import subprocess; subprocess.run(['id'])",
        "session", "s",      NULL};
    const char *same[] = {"lang",    "python", "code", "1",
                          "session", "s",      "env",  "{\"B\": \"2\", \"A\": \"1\"}",
                          "memory",  "512",    NULL};
    const char *env[] = {"code", "1", "session", "s", "env", "{\"A\": \"9\"}", NULL};
    const char *mem[] = {"code", "1", "session", "s", "memory", "256", NULL};
    const char *cpus[] = {"code", "1", "session", "s", "cpus", "0.5", NULL};
    const char *plots[] = {"code", "1", "session", "s", "plots", "false", NULL};
    const char *timeout[] = {"code", "1", "session", "s", "timeout", "3", NULL};
    const char *fresh[] = {"code", "1", "session", "s", "fresh_interpreter", "true", NULL};
    const char *nolang[] = {"code", "1", NULL};
    struct llmsb_err err = {0};
    struct session_conf c;
    struct sec_result *sr = calloc(1, sizeof(*sr));
    struct job j;

    ASSERT(sr != NULL);
    ASSERT_EQ(fields_job(first, &j, &err), 0);
    ASSERT_EQ(session_conf_from_job(&c, &j, cfg.default_policy), 0);
    ASSERT_EQ(session_conf_check(&c, &j, &err), 0);
    job_release(&j);
    ASSERT_EQ(fields_job(as_ruby, &j, &err), 0); /* parses: the session is not known here */
    ASSERT_EQ(session_conf_check(&c, &j, &err), LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "lang: session \"s\" runs python, the call names ruby");
    job_release(&j);
    ASSERT_EQ(fields_job(no_lang, &j, &err), 0);
    ASSERT(j.lang == NULL);
    ASSERT_EQ(session_conf_check(&c, &j, &err), 0);
    j.lang = c.lang; /* as exec.c runs it: scanned as the session's language */
    ASSERT_EQ(job_scan(&cfg, &j, sr, &err), 0);
    ASSERT(sr->blocked);
    job_release(&j);
    ASSERT_EQ(fields_job(same, &j, &err), 0);
    ASSERT_EQ(session_conf_check(&c, &j, &err), 0);
    job_release(&j);
    ASSERT_EQ(fields_job(no_policy, &j, &err), 0);
    ASSERT_EQ(session_conf_check(&c, &j, &err), 0);
    j.lang = c.lang; /* as exec.c runs it: scanned with the session's policy */
    j.policy = c.policy;
    ASSERT_EQ(job_scan(&cfg, &j, sr, &err), 0);
    ASSERT(sr->blocked);
    j.policy = NULL;
    job_release(&j);
    ASSERT_EQ(fields_job(lax, &j, &err), 0);
    ASSERT_EQ(session_conf_check(&c, &j, &err), LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "policy: \"development\", session \"s\"'s calls are scanned with "
                             "\"strict\"");
    job_release(&j);
    ASSERT_EQ(fields_job(inline_sec, &j, &err), 0);
    ASSERT_EQ(session_conf_check(&c, &j, &err), LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "security: differs from the inline policy");
    job_release(&j);
    ASSERT_EQ(fields_job(empty_policy, &j, &err), 0);
    ASSERT_EQ(session_conf_check(&c, &j, &err), 0);
    job_release(&j);
    session_conf_release(&c);
    ASSERT_EQ(fields_job(sec_first, &j, &err), 0); /* a session with an inline policy */
    ASSERT_EQ(session_conf_from_job(&c, &j, cfg.default_policy), 0);
    job_release(&j);
    ASSERT_EQ(fields_job(sec_same, &j, &err), 0); /* the same object written otherwise */
    ASSERT_EQ(session_conf_check(&c, &j, &err), 0);
    job_release(&j);
    ASSERT_EQ(fields_job(sec_empty, &j, &err), 0);
    ASSERT_EQ(session_conf_check(&c, &j, &err), 0);
    job_release(&j);
    ASSERT_EQ(fields_job(inline_sec, &j, &err), 0);
    j.session[0] = 't';
    ASSERT_EQ(session_conf_check(&c, &j, &err), LLMSB_ERR_INVALID);
    job_release(&j);
    session_conf_release(&c);
    ASSERT_EQ(fields_job(first, &j, &err), 0);
    ASSERT_EQ(session_conf_from_job(&c, &j, cfg.default_policy), 0);
    job_release(&j);
    ASSERT_EQ(fields_job(env, &j, &err), 0);
    ASSERT_EQ(session_conf_check(&c, &j, &err), LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "env: differs from the environment");
    job_release(&j);
    ASSERT_EQ(fields_job(mem, &j, &err), 0);
    ASSERT_EQ(session_conf_check(&c, &j, &err), LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "memory: 256 MB, session \"s\"'s sandbox has 512 MB");
    job_release(&j);
    ASSERT_EQ(fields_job(cpus, &j, &err), 0);
    ASSERT_EQ(session_conf_check(&c, &j, &err), LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "cpus: 0.5 CPUs");
    job_release(&j);
    ASSERT_EQ(fields_job(plots, &j, &err), 0);
    ASSERT_EQ(session_conf_check(&c, &j, &err), LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "plots: false, session \"s\" has them on");
    job_release(&j);
    ASSERT_EQ(fields_job(timeout, &j, &err), 0); /* each call's own */
    ASSERT_EQ(session_conf_check(&c, &j, &err), 0);
    job_release(&j);
    ASSERT(fields_job(fresh, &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "fresh_interpreter: not with session");
    job_release(&j);
    ASSERT(fields_job(nolang, &j, &err) != 0); /* only a session's call may leave it out */
    ASSERT_CONTAINS(err.msg, "lang: is required");
    job_release(&j);
    session_conf_release(&c);
    free(sr);
}

/* In-process: a first call without lang starts nothing (invalid); a first
 * call that is refused before it runs leaves no session behind. */
TEST(session_first_call_names_its_language)
{
    const char *no_lang[] = {"code", "1", "session", "t", NULL};
    const char *python[] = {"lang", "python", "code", "1", "session", "t", NULL};
    struct llmsb_err err = {0};
    const struct language *lang = NULL;
    char *policy = NULL, *security = NULL;
    struct sandbox *sb = (struct sandbox *)&lang;
    struct session_table t;
    struct job_result r;
    char owner[64];
    struct job j;

    session_table_init(&t, NULL); /* no call here gets as far as a sandbox */
    ASSERT_EQ(fields_job(no_lang, &j, &err), 0);
    job_result_init(&r, &j);
    ASSERT_EQ(
        session_take(&t, &cfg, &j, &lang, &policy, &security, &sb, &r, owner, sizeof(owner), &err),
        SESSION_FINAL);
    ASSERT_EQ(r.r.status, STATUS_INVALID);
    ASSERT_CONTAINS(r.error, "lang: is required in a session's first call");
    job_result_release(&r);
    job_release(&j);
    for (int k = 0; k < 2; k++) { /* new both times: the first was given up */
        ASSERT_EQ(fields_job(python, &j, &err), 0);
        job_result_init(&r, &j);
        ASSERT_EQ(session_take(&t, &cfg, &j, &lang, &policy, &security, &sb, &r, owner,
                               sizeof(owner), &err),
                  SESSION_GO);
        ASSERT(sb == NULL);
        ASSERT_STR(lang->name, "python");
        session_put(&t, &j, 0, NULL);
        job_result_release(&r);
        job_release(&j);
    }
    ASSERT_EQ(session_count(&t), 0);
    session_table_release(&t);
}

/* exit_code is the program's: null when it never ran (invalid, blocked,
 * session_lost, compile_error, install_error, cancelled, internal_error),
 * a number when it ran, to an exit or killed by a limit. */
TEST(exit_code_is_null_when_the_program_never_ran)
{
    static const struct {
        enum job_status st;
        int has;
    } cases[] = {{STATUS_INVALID, 0},        {STATUS_BLOCKED, 0},
                 {STATUS_SESSION_LOST, 0},   {STATUS_COMPILE_ERROR, 0},
                 {STATUS_INSTALL_ERROR, 0},  {STATUS_CANCELLED, 0},
                 {STATUS_INTERNAL_ERROR, 0}, {STATUS_OK, 1},
                 {STATUS_RUNTIME_ERROR, 1},  {STATUS_TIMEOUT, 1},
                 {STATUS_MEMORY_LIMIT, 1},   {STATUS_OUTPUT_LIMIT, 1}};

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct job_result r;
        cJSON *o, *e;

        job_result_init(&r, NULL);
        r.r.status = cases[i].st;
        r.r.exit_code = cases[i].st == STATUS_COMPILE_ERROR ? 1 : 0; /* the compiler's */
        o = job_result_json(&r);
        ASSERT(o != NULL);
        e = cJSON_GetObjectItem(o, "exit_code");
        ASSERT(e != NULL);
        if (cases[i].has)
            ASSERT(cJSON_IsNumber(e));
        else
            ASSERT(cJSON_IsNull(e));
        cJSON_Delete(o);
        job_result_release(&r);
    }
    { /* the compiler ran out of memory: memory_limit, and nothing ran */
        struct job_result r;
        cJSON *o;

        job_result_init(&r, NULL);
        r.r.status = STATUS_MEMORY_LIMIT;
        r.r.not_run = 1;
        o = job_result_json(&r);
        ASSERT(o && cJSON_IsNull(cJSON_GetObjectItem(o, "exit_code")));
        cJSON_Delete(o);
        job_result_release(&r);
    }
}

/* A session_close is ok, and no program ran: exit_code null. */
TEST(session_close_has_no_exit_code)
{
    static const struct backend_ops ops = {.name = "fake"};
    const char *close[] = {"session", "s-unknown", "session_close", "true", NULL};
    struct llmsb_err err = {0};
    struct runner rn = {.cfg = &cfg, .be = {.ops = &ops}}; /* no pool: a close runs nothing */
    struct job_result r;
    struct job j;
    cJSON *o;

    session_table_init(&rn.sessions, NULL);
    ASSERT_EQ(fields_job(close, &j, &err), 0);
    job_result_init(&r, NULL);
    ASSERT_EQ(exec_job(&rn, &rn.be, &j, NULL, &r, &err), SCHED_OUT_FINAL);
    session_table_release(&rn.sessions);
    o = job_result_json(&r);
    ASSERT(o != NULL);
    ASSERT_STR(cJSON_GetObjectItem(o, "status")->valuestring, "ok");
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(o, "exit_code")));
    cJSON_Delete(o);
    job_result_release(&r);
    job_release(&j);
}

static void setup(void) __attribute__((constructor));
static void setup(void)
{
    config_defaults(&cfg);
}

TEST_MAIN("jobs", T(session_close_has_no_exit_code), T(needs_names_features_this_build_knows),
          T(compare_line_token_sets_bounded_on_huge_outputs), T(yaml_job_file_with_defaults),
          T(yaml_job_file_errors_name_the_line), T(yaml_alias_bomb_and_duplicate_keys),
          T(jobfile_input_is_not_nul_terminated), T(json_lines),
          T(job_fields_are_validated_by_name), T(registry_package_names_pass),
          T(id_first_and_nul_escapes), T(fields_given_twice_are_invalid),
          T(compile_and_link_flags_checked_against_the_language),
          T(too_many_fields_are_invalid_not_cut), T(field_names_with_nul_are_unknown),
          T(artifact_names_from_the_agent_are_checked), T(base64_roundtrip_and_rejects),
          T(result_fields_roundtrip_to_json), T(result_phases_in_hash_and_json),
          T(plots_and_install_reach_the_agent_job), T(java_runs_the_class_that_declares_main),
          T(zygote_reaches_the_agent_job_when_it_can),
          T(prespawn_reaches_the_agent_job_when_it_can),
          T(compile_server_reaches_the_agent_job_when_it_can), T(dataset_ids_are_accepted),
          T(compare_modes), T(compare_float_numbers_are_decimal),
          T(compare_float_big_decimals_compare_by_value), T(compare_float_tolerance_is_decimal),
          T(compare_harness_modes_where_they_differ), T(cases_parse_and_reach_the_agent),
          T(case_results_make_passed), T(passk_estimator_and_task_ids),
          T(session_fields_checked_and_reach_the_agent),
          T(session_calls_keep_the_sessions_language_env_and_limits),
          T(session_first_call_names_its_language), T(exit_code_is_null_when_the_program_never_ran))
