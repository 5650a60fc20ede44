/* fuzz_judge0_route.c - the Judge0 route set (judge0_route) over any bytes
 * taken for a request: the first byte picks the route and its arguments,
 * the rest is the body (or the token).  A host stub answers every job with
 * one result; every answer has a status and a body, never a crash. */
#include "front/routes.h"

#include <stdlib.h>
#include <string.h>

static const char *stub_result =
    "{\"status\": \"runtime_error\", \"exit_code\": 139, \"signal\": 11,"
    " \"stdout\": \"x\", \"cpu_ms\": 3, \"meta\": {\"language_id\": 71,"
    " \"source_code\": \"eA==\"}, \"id\": \"judge0-x\"}";

static int stub_run(void *ud, const struct fields *jobs, size_t n, cJSON **results,
                    struct llmsb_err *err)
{
    (void)ud;
    (void)jobs;
    (void)err;
    for (size_t i = 0; i < n; i++)
        results[i] = cJSON_Parse(stub_result);
    return 0;
}

static int stub_start(void *ud, const struct fields *jobs, size_t n, const char *callback,
                      front_render_fn render, void *rud, void (*rud_free)(void *),
                      struct llmsb_err *err)
{
    (void)ud;
    (void)jobs;
    (void)n;
    (void)err;
    if (callback && render) {
        cJSON *r = cJSON_Parse(stub_result), *body = render(r, rud);
        cJSON_Delete(body);
        cJSON_Delete(r);
    }
    if (rud_free)
        rud_free(rud);
    return 0;
}

static enum front_state stub_lookup(void *ud, const char *id, cJSON **result)
{
    (void)ud;
    *result = id[7] == '0' ? cJSON_Parse(stub_result) : NULL;
    return id[7] == '0' ? FRONT_DONE : id[7] == '1' ? FRONT_QUEUED : FRONT_UNKNOWN;
}

static int stub_random_hex(void *ud, char *buf, size_t bufsz, size_t n, struct llmsb_err *err)
{
    (void)ud;
    (void)err;
    memset(buf, 'a', 2 * n < bufsz ? 2 * n : bufsz - 1);
    buf[2 * n < bufsz ? 2 * n : bufsz - 1] = '\0';
    return 0;
}

struct fuzz_req {
    struct front_req r;
    unsigned char sel;
    const char *tokens;
};

static const char *fuzz_arg(const struct front_req *r, const char *name)
{
    const struct fuzz_req *f = (const struct fuzz_req *)r;
    if (strcmp(name, "base64_encoded") == 0)
        return f->sel & 1 ? "true" : NULL;
    if (strcmp(name, "wait") == 0)
        return f->sel & 2 ? "true" : NULL;
    if (strcmp(name, "fields") == 0)
        return f->sel & 4 ? "*" : f->sel & 8 ? "stdout,status,language,bogus" : NULL;
    if (strcmp(name, "tokens") == 0)
        return f->tokens;
    return NULL;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static struct config cfg;
    static int ready;
    struct front_host h = {&cfg, stub_run, stub_start, stub_lookup, stub_random_hex, 0, 3, NULL};
    struct front_answer a = {0};
    struct fuzz_req f;
    char *text, path[160];

    if (!ready) {
        config_defaults(&cfg);
        ready = 1;
    }
    if (size == 0)
        return 0;
    if (!(text = malloc(size)))
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    memset(&f, 0, sizeof(f));
    f.sel = data[0];
    f.tokens = text;
    f.r = (struct front_req){"POST", "/submissions", text, size - 1, fuzz_arg, NULL};
    switch (data[0] >> 4 & 3) {
    case 1:
        f.r.path = "/submissions/batch";
        break;
    case 2:
        f.r.method = "GET";
        snprintf(path, sizeof(path), "/submissions/%.100s", text);
        f.r.path = path;
        break;
    case 3:
        f.r.method = "GET";
        f.r.path = "/submissions/batch";
        break;
    }
    if (judge0_route(&h, &f.r, &a) != 1 || a.status < 200 || a.status > 599 || !a.json)
        __builtin_trap();
    cJSON_Delete(a.json);
    free(text);
    return 0;
}
