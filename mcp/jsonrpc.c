/* jsonrpc.c - JSON-RPC 2.0 framing for the MCP server: lines under a cap
 * or whole bodies, messages and batches (JSON-RPC 2.0 batches; MCP 2025-03-26), the
 * envelope's checks and the reply and error objects. */
#include "mcp/jsonrpc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

void jsonrpc_init(struct jsonrpc *rpc, FILE *out, size_t max_message, jsonrpc_method_fn fn,
                  void *ud)
{
    memset(rpc, 0, sizeof(*rpc));
    rpc->out = out;
    rpc->fn = fn;
    rpc->ud = ud;
    rpc->max_message = max_message;
    buf_init(&rpc->line, max_message);
}

void jsonrpc_release(struct jsonrpc *rpc)
{
    buf_release(&rpc->line);
}

void jsonrpc_set_writer(struct jsonrpc *rpc, jsonrpc_write_fn write, void *wud)
{
    rpc->write = write;
    rpc->write_ud = wud;
}

/* Writes msg (consumed) as one line, or to the writer: every message
 * leaves through here.  Returns its size in bytes (0: it could not be
 * made). */
static size_t write_json(struct jsonrpc *rpc, enum jsonrpc_out kind, cJSON *msg)
{
    char *text = cJSON_PrintUnformatted(msg);
    size_t len = text ? strlen(text) : 0;

    if (text && rpc->write) {
        rpc->write(rpc->write_ud, kind, text, len);
    } else if (text) {
        fputs(text, rpc->out);
        fputc('\n', rpc->out);
        fflush(rpc->out);
    }
    free(text);
    cJSON_Delete(msg);
    return len;
}

/* Writes msg (consumed), or adds it to the batch being answered. */
static void send_json(struct jsonrpc *rpc, cJSON *msg)
{
    if (rpc->batch)
        cJSON_AddItemToArray(rpc->batch, msg);
    else
        write_json(rpc, JSONRPC_OUT_ANSWER, msg);
}

size_t jsonrpc_notify(struct jsonrpc *rpc, const char *method, cJSON *params)
{
    cJSON *m = cJSON_CreateObject();

    cJSON_AddStringToObject(m, "jsonrpc", "2.0");
    cJSON_AddStringToObject(m, "method", method);
    if (params)
        cJSON_AddItemToObject(m, "params", params);
    return write_json(rpc, JSONRPC_OUT_NOTIFICATION, m); /* at once, even in a batch: no answer */
}

static cJSON *envelope(const cJSON *id)
{
    cJSON *m = cJSON_CreateObject();

    cJSON_AddStringToObject(m, "jsonrpc", "2.0");
    cJSON_AddItemToObject(m, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
    return m;
}

void jsonrpc_reply(struct jsonrpc *rpc, const cJSON *id, cJSON *result)
{
    cJSON *m = envelope(id);

    cJSON_AddItemToObject(m, "result", result);
    send_json(rpc, m);
}

void jsonrpc_error(struct jsonrpc *rpc, const cJSON *id, int code, const char *fmt, ...)
{
    cJSON *m = envelope(id), *e = cJSON_CreateObject();
    char msg[600];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cJSON_AddNumberToObject(e, "code", code);
    cJSON_AddStringToObject(e, "message", msg);
    cJSON_AddItemToObject(m, "error", e);
    send_json(rpc, m);
}

/* One message: the envelope checked, then a request to rpc->fn. */
static void handle(struct jsonrpc *rpc, const cJSON *msg)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(msg, "jsonrpc");
    int notification = id == NULL;

    if (!cJSON_IsObject(msg) || !cJSON_IsString(ver) || strcmp(ver->valuestring, "2.0") != 0 ||
        (id && !cJSON_IsString(id) && !cJSON_IsNumber(id))) {
        jsonrpc_error(rpc, cJSON_IsString(id) || cJSON_IsNumber(id) ? id : NULL,
                      JSONRPC_INVALID_REQUEST,
                      "Invalid Request: a JSON-RPC 2.0 object is expected");
        return;
    }
    if (!method) {
        return; /* a response to us: we send no requests */
    }
    if (!cJSON_IsString(method)) {
        if (!notification)
            jsonrpc_error(rpc, id, JSONRPC_INVALID_REQUEST,
                          "Invalid Request: method must be a string");
        return;
    }
    if (params && !cJSON_IsObject(params) && !cJSON_IsArray(params)) {
        if (!notification)
            jsonrpc_error(rpc, id, JSONRPC_INVALID_PARAMS, "Invalid params: an object is expected");
        return;
    }
    if (notification)
        return; /* notifications/initialized, notifications/cancelled, ... */
    rpc->fn(rpc->ud, rpc, id, method->valuestring, params);
}

/* One line: a message, or a batch (an array of them; answered as one). */
static void handle_text(struct jsonrpc *rpc, const char *line, size_t len)
{
    const char *end = NULL;
    cJSON *msg = cJSON_ParseWithLengthOpts(line, len, &end, 0), *it;

    /* one value and blanks: cJSON stops at the value's end and would take
     * "{...} junk" or two messages in one HTTP body for the first */
    while (msg && end && end < line + len &&
           (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n'))
        end++;
    if (msg && end != line + len) {
        cJSON_Delete(msg);
        msg = NULL;
    }
    if (!msg) {
        jsonrpc_error(rpc, NULL, JSONRPC_PARSE_ERROR, "Parse error: not JSON");
        return;
    }
    /* cJSON would end a string at a \u0000, and a field (code, a session
     * id) would be cut silently */
    if (json_text_has_nul(line, len)) {
        const cJSON *id = cJSON_IsObject(msg) ? cJSON_GetObjectItemCaseSensitive(msg, "id") : NULL;
        jsonrpc_error(rpc, cJSON_IsString(id) || cJSON_IsNumber(id) ? id : NULL,
                      JSONRPC_INVALID_PARAMS,
                      "Invalid params: a string holds a NUL character (\\u0000), which no "
                      "argument may");
        cJSON_Delete(msg);
        return;
    }
    if (cJSON_IsArray(msg) && cJSON_GetArraySize(msg) == 0) {
        jsonrpc_error(rpc, NULL, JSONRPC_INVALID_REQUEST, "Invalid Request: an empty batch");
    } else if (cJSON_IsArray(msg)) {
        cJSON *answers = cJSON_CreateArray();
        rpc->batch = answers;
        cJSON_ArrayForEach(it, msg)
            handle(rpc, it);
        rpc->batch = NULL;
        if (cJSON_GetArraySize(answers) > 0)
            send_json(rpc, answers); /* none when all were notifications */
        else
            cJSON_Delete(answers);
    } else {
        handle(rpc, msg);
    }
    cJSON_Delete(msg);
}

void jsonrpc_message(struct jsonrpc *rpc, const char *text, size_t len)
{
    handle_text(rpc, text, len);
}

void jsonrpc_line(struct jsonrpc *rpc, const char *line, size_t len)
{
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
        len--;
    if (len)
        handle_text(rpc, line, len);
}

void jsonrpc_feed(struct jsonrpc *rpc, const char *data, size_t n)
{
    size_t start = 0;

    for (size_t k = 0; k <= n && !rpc->closed; k++) {
        int eol = k < n && data[k] == '\n';
        if (k < n && !eol)
            continue;
        if (!rpc->skipping && buf_append(&rpc->line, data + start, k - start) != 0) {
            jsonrpc_error(rpc, NULL, JSONRPC_INVALID_REQUEST,
                          "Invalid Request: a message over %zu bytes", rpc->max_message);
            buf_reset(&rpc->line);
            rpc->skipping = 1;
        }
        if (eol) {
            if (!rpc->skipping)
                jsonrpc_line(rpc, rpc->line.data, rpc->line.len);
            buf_reset(&rpc->line);
            rpc->skipping = 0;
        }
        start = k + 1;
    }
}

void jsonrpc_finish(struct jsonrpc *rpc)
{
    if (!rpc->skipping && !rpc->closed)
        jsonrpc_line(rpc, rpc->line.data, rpc->line.len);
}
