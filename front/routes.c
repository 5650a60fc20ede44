/* routes.c - what every route set of the HTTP front shares: an error
 * answer, a request body as a JSON object. */
#include "front/routes.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"

__attribute__((format(printf, 4, 0))) static void
error_as(struct front_answer *a, int status, const char *key, const char *fmt, va_list ap)
{
    char msg[1024];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    cJSON_Delete(a->json);
    a->status = status;
    a->json = cJSON_CreateObject();
    /* a client's text in it is made valid UTF-8 (U+FFFD) */
    if (a->json)
        json_add_text(a->json, key, msg, strlen(msg));
}

void front_error(struct front_answer *a, int status, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    error_as(a, status, "error", fmt, ap);
    va_end(ap);
}

void front_error_key(struct front_answer *a, int status, const char *key, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    error_as(a, status, key, fmt, ap);
    va_end(ap);
}

cJSON *front_body_object(const struct front_req *r, struct front_answer *a)
{
    const char *end = NULL;
    cJSON *o;

    if (r->len == 0) {
        front_error(a, 400, "the request has no body: a JSON object is expected");
        return NULL;
    }
    o = cJSON_ParseWithLengthOpts(r->body, r->len, &end, 0);
    /* nothing but white space after the value */
    while (o && end && end < r->body + r->len &&
           (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
        end++;
    if (o && end != r->body + r->len) {
        cJSON_Delete(o);
        o = NULL;
    }
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
