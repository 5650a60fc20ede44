/* routes.c - what every route set of the HTTP front shares: an error
 * answer, a request body as a JSON object. */
#include "front/routes.h"

#include <stdarg.h>
#include <stdio.h>

void front_error(struct front_answer *a, int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cJSON_Delete(a->json);
    a->status = status;
    a->json = cJSON_CreateObject();
    if (a->json)
        cJSON_AddStringToObject(a->json, "error", msg);
}

cJSON *front_body_object(const struct front_req *r, struct front_answer *a)
{
    const char *end = NULL;
    cJSON *o;

    if (r->len == 0) {
        front_error(a, 400, "the request has no body: a JSON object is expected");
        return NULL;
    }
    /* r->len + 1: the body's NUL, which cJSON's check for trailing bytes
     * needs to see within the length it is given */
    o = cJSON_ParseWithLengthOpts(r->body, r->len + 1, &end, 1);
    if (!o) {
        front_error(a, 400, "the body is not JSON (at byte %zu)",
                    end && end >= r->body ? (size_t)(end - r->body) : (size_t)0);
        return NULL;
    }
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        front_error(a, 400, "the body is JSON but not an object");
        return NULL;
    }
    return o;
}
