/* native.c - the front's own route: POST /llm-sandbox/run takes one job
 * as docs/jobs.md gives its fields (a JSON object, as a line of a JSON
 * Lines job file) and answers our result as docs/statuses.md describes
 * it, every field: for a client that wants what the peers' APIs leave
 * out (memory_limit, output_limit, the phases), and for the tests that
 * compare a shortcut with the plain path field by field.  An "id" is
 * refused: ids are the host's (a caller's could name another's job). */
#include "front/routes.h"

#include <string.h>

#include "config/jobfile.h"

#define NATIVE_PATH "/llm-sandbox/run"

int native_route(const struct front_host *h, const struct front_req *r, struct front_answer *a)
{
    struct llmsb_err err = {0};
    struct fields f;
    cJSON *job, *result = NULL;

    if (strcmp(r->path, NATIVE_PATH) != 0)
        return 0;
    if (strcmp(r->method, "POST") != 0) {
        front_error(a, 405, "Method Not Allowed: POST a job to %s", NATIVE_PATH);
        return 1;
    }
    if (!(job = front_body_object(r, a)))
        return 1;
    if (cJSON_GetObjectItemCaseSensitive(job, "id")) {
        front_error(a, 422, "id: the server names the job; leave it out");
        cJSON_Delete(job);
        return 1;
    }
    fields_init(&f, 64);
    if (jobfile_fields(job, &f) != 0)
        front_error(a, 422, "the job has more than %zu fields", f.max);
    else if (h->run(h->ud, &f, 1, &result, &err) != 0)
        front_error(a, 503, "the job did not run: %s", err.msg);
    else {
        a->status = 200;
        a->json = result;
    }
    fields_release(&f);
    cJSON_Delete(job);
    return 1;
}
