/* docker.c - the Docker Engine API (v1.41) backend.  Request bodies are
 * built and responses parsed with cJSON; every non-2xx answer becomes an
 * error naming the call, the object, the HTTP status and the daemon's own
 * message.  Nothing here shells out to the docker CLI.  The attach stream's
 * framing is in stream.c, the egress firewall in egress.c. */
#include "internal.h"
#include "backends/docker/docker.h"
#include "backends/hardening.h"
#include "backends/seccomp.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#define RESP_CAP ((size_t)4 << 20)
#define LIST_CAP ((size_t)64 << 20)
#define PULL_TIMEOUT_MS 600000L

static struct http_client *http_of(struct backend *b)
{
    return &((struct docker *)b->priv)->http;
}

static const struct docker_flavor *flavor_of(struct backend *b)
{
    return ((struct docker *)b->priv)->fl;
}

/* The engine's name for messages ("docker", "podman"). */
static const char *eng(struct backend *b)
{
    return b->priv ? flavor_of(b)->name : "docker";
}

static const struct docker_flavor docker_flavor = {
    .name = "docker",
    .default_host = DOCKER_DEFAULT_HOST,
    .host_env = DOCKER_HOST_ENV,
    .tls_env = 1,
    .daemon_hint = "is dockerd running?",
    .egress_bridge = DOCKER_EGRESS_BRIDGE,
    .egress_forward_chain = "DOCKER-USER",
};

int docker_open_flavor(struct backend *b, const char *host, const struct docker_flavor *fl,
                       struct llmsb_err *err)
{
    struct docker *d = calloc(1, sizeof(*d));
    struct docker_tls tls;
    char url[sizeof(b->host) + 16];

    if (!d)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: out of memory", fl->name);
    d->fl = fl;
    if (!host)
        host = getenv(fl->host_env);
    if (!host || !*host)
        host = fl->default_host;
    if (snprintf(b->host, sizeof(b->host), "%s", host) >= (int)sizeof(b->host)) {
        free(d);
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: host \"%.60s...\" is too long", fl->name,
                             host);
    }
    docker_tls_from_env(&b->opts, fl->tls_env, &tls);
    tls.on = tls.on && strncmp(host, "tcp://", 6) == 0; /* dockerd's sockets: never TLS */
    if (docker_tls_url(host, tls.on, url, sizeof(url), err) != 0 ||
        http_client_init(&d->http, url, DOCKER_API_PREFIX, err) != 0 ||
        (tls.on && docker_tls_apply(&tls, &d->http, d->tls_note, sizeof(d->tls_note), err) != 0)) {
        http_client_release(&d->http);
        free(d);
        return llmsb_err_wrap(err, "%s: %s", fl->name, host);
    }
    b->priv = d;
    return 0;
}

static int docker_open(struct backend *b, const char *host, struct llmsb_err *err)
{
    return docker_open_flavor(b, host, &docker_flavor, err);
}

void docker_close(struct backend *b)
{
    struct docker *d = b->priv;

    if (d) {
        http_client_release(&d->http);
        free(d);
    }
    b->priv = NULL;
}

/* Performs a request and checks the status against ok (and ok2 if non-0). */
static int call(struct backend *b, const char *method, const char *path, const char *body, long ok,
                long ok2, struct buf *resp, long *status_out, const char *what,
                struct llmsb_err *err)
{
    long status = 0;
    int rc = http_request(http_of(b), method, path, body ? "application/json" : NULL, body,
                          body ? strlen(body) : 0, &status, resp, err);
    if (rc != 0)
        return llmsb_err_wrap(err, "%s: %s", eng(b), what);
    if (status_out)
        *status_out = status;
    if (status != ok && (!ok2 || status != ok2)) {
        char msg[200];
        http_error_message(resp, msg, sizeof(msg));
        return llmsb_err_set(err, status == 404 ? LLMSB_ERR_NOTFOUND : LLMSB_ERR_BACKEND,
                             "%s: %s: HTTP %ld: %s", eng(b), what, status, msg);
    }
    return 0;
}

int docker_ping(struct backend *b, char *version, size_t vsz, struct llmsb_err *err)
{
    struct buf resp;
    cJSON *j = NULL;
    int rc;

    buf_init(&resp, RESP_CAP);
    rc = call(b, "GET", "/version", NULL, 200, 0, &resp, NULL, "version", err);
    if (rc == 0) {
        j = cJSON_ParseWithLength(resp.data, resp.len);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "Version");
        snprintf(version, vsz, "%s", cJSON_IsString(v) ? v->valuestring : "unknown");
    } else {
        const char *note = ((struct docker *)b->priv)->tls_note;
        char cause[sizeof(err->msg)];
        const char *hint = flavor_of(b)->daemon_hint;
        /* dockerd's answer to plain HTTP on its TLS port */
        if (!*note && strstr(err->msg, "HTTP request to an HTTPS server"))
            hint = "it speaks TLS: set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH, or "
                   "backend.tls_verify and backend.cert_path";
        else if (*note && strstr(err->msg, "SSL")) /* curl's words for a TLS failure */
            hint = "the TLS handshake failed";
        memcpy(cause, err->msg, sizeof(cause));
        llmsb_fmt(err->msg, sizeof(err->msg), "cannot reach the %s engine at %s (%s): %s%s%s",
                  eng(b), b->host, hint, cause, *note ? "; " : "", note);
    }
    cJSON_Delete(j);
    buf_release(&resp);
    return rc;
}

int docker_info_runtime_kind(const char *info, size_t n, const char *runtime)
{
    cJSON *j = cJSON_ParseWithLength(info, n);
    const cJSON *def = cJSON_GetObjectItemCaseSensitive(j, "DefaultRuntime");
    const cJSON *rts = cJSON_GetObjectItemCaseSensitive(j, "Runtimes");
    const cJSON *r, *path, *type;
    const char *name = runtime && *runtime ? runtime : cJSON_GetStringValue(def);
    int kind = BACKEND_RUNTIME_UNKNOWN;

    if (!cJSON_IsObject(j)) {
        kind = -1;
        goto out;
    }
    if (!name)
        goto out;
    r = cJSON_GetObjectItemCaseSensitive(rts, name);
    path = cJSON_GetObjectItemCaseSensitive(r, "path");
    /* Docker 23+ registers a containerd shim by its runtimeType, no path */
    type = cJSON_GetObjectItemCaseSensitive(r, "runtimeType");
    if (backend_runtime_is_runsc(name) ||
        (cJSON_IsString(path) && backend_runtime_is_runsc(path->valuestring)) ||
        (cJSON_IsString(type) && backend_runtime_is_runsc(type->valuestring)))
        kind = BACKEND_RUNTIME_GVISOR;
    else if (cJSON_IsString(path) || cJSON_IsString(type) ||
             strchr(name, '/')) /* Podman takes a runtime's path */
        kind = BACKEND_RUNTIME_KERNEL;
out:
    cJSON_Delete(j);
    return kind;
}

/* The engine's runtimes from GET /info: a runtime registered under any
 * name (or the default one) is gVisor when its binary, or its containerd
 * shim (runtimeType io.containerd.runsc.v1), is runsc. */
int docker_runtime_kind(struct backend *b, const char *runtime, struct llmsb_err *err)
{
    struct buf resp;
    int rc;

    buf_init(&resp, RESP_CAP);
    rc = call(b, "GET", "/info", NULL, 200, 0, &resp, NULL, "info (its runtimes)", err);
    if (rc == 0 && (rc = docker_info_runtime_kind(resp.data, resp.len, runtime)) < 0)
        rc = llmsb_err_set(err, LLMSB_ERR_BACKEND, "%s: info: not a JSON object", eng(b));
    buf_release(&resp);
    return rc;
}

/* GET /images/NAME/json into resp; *status 200 or 404. */
static int image_inspect(struct backend *b, const char *image, struct buf *resp, long *status,
                         struct llmsb_err *err)
{
    char path[600], what[300];
    char *esc = http_escape(image);

    if (!esc)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: out of memory", eng(b));
    snprintf(path, sizeof(path), "/images/%s/json", esc);
    snprintf(what, sizeof(what), "inspect image \"%s\"", image);
    free(esc);
    return call(b, "GET", path, NULL, 200, 404, resp, status, what, err);
}

int docker_image_exists(struct backend *b, const char *image, struct llmsb_err *err)
{
    struct buf resp;
    long status = 0;
    int rc;

    buf_init(&resp, RESP_CAP);
    rc = image_inspect(b, image, &resp, &status, err);
    buf_release(&resp);
    if (rc)
        return rc;
    return status == 200;
}

int docker_image_config(struct backend *b, const char *image, struct buf *out,
                        struct llmsb_err *err)
{
    struct buf resp;
    long status = 0;
    cJSON *j = NULL;
    char *text = NULL;
    int rc;

    buf_init(&resp, RESP_CAP);
    if ((rc = image_inspect(b, image, &resp, &status, err)) != 0 || status != 200)
        goto out;
    j = cJSON_ParseWithLength(resp.data, resp.len);
    text = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(j, "Config"));
    buf_reset(out);
    if (!text || buf_append_str(out, text) != 0)
        rc = llmsb_err_set(err, LLMSB_ERR_PROTO,
                           "%s: inspect image \"%s\": no Config, or over %zu bytes", eng(b), image,
                           out->cap);
out:
    free(text);
    cJSON_Delete(j);
    buf_release(&resp);
    return rc ? rc : status == 200;
}

int docker_image_digest(struct backend *b, const char *image, char *out, size_t outsz,
                        struct llmsb_err *err)
{
    struct buf resp;
    long status = 0;
    cJSON *j = NULL;
    const cJSON *id, *rd;
    int rc;

    buf_init(&resp, RESP_CAP);
    if ((rc = image_inspect(b, image, &resp, &status, err)) != 0)
        goto out;
    if (status != 200) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOTFOUND, "%s: no image \"%s\"", eng(b), image);
        goto out;
    }
    j = cJSON_ParseWithLength(resp.data, resp.len);
    id = cJSON_GetObjectItemCaseSensitive(j, "Id");
    rd = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "RepoDigests"), 0);
    if (!cJSON_IsString(id)) {
        rc = llmsb_err_set(err, LLMSB_ERR_PROTO, "%s: inspect image \"%s\": no Id", eng(b), image);
        goto out;
    }
    /* an image built here has no repo digest: its id is what identifies it */
    snprintf(out, outsz, "%s%s%s%s", id->valuestring, cJSON_IsString(rd) ? " (" : "",
             cJSON_IsString(rd) ? rd->valuestring : "", cJSON_IsString(rd) ? ")" : "");
out:
    cJSON_Delete(j);
    buf_release(&resp);
    return rc;
}

static void add_ulimit(cJSON *arr, const char *name, int64_t v)
{
    cJSON *u = cJSON_CreateObject();
    cJSON_AddStringToObject(u, "Name", name);
    cJSON_AddNumberToObject(u, "Soft", (double)v);
    cJSON_AddNumberToObject(u, "Hard", (double)v);
    cJSON_AddItemToArray(arr, u);
}

/* SecurityOpt "seccomp=<profile>": Docker's API takes the profile itself,
 * not a path. Returns 0, or -1 out of memory. */
static int seccomp_inline(char **out)
{
    *out = seccomp_profile_json();
    return *out ? 0 : -1;
}

static int add_seccomp(const struct docker_flavor *fl, cJSON *security_opt)
{
    char *profile = NULL, *opt = NULL;
    size_t n;
    cJSON *item = NULL;

    if ((fl->seccomp_opt ? fl->seccomp_opt : seccomp_inline)(&profile) != 0)
        return -1;
    n = strlen(profile) + sizeof("seccomp=");
    if ((opt = malloc(n)) != NULL) {
        snprintf(opt, n, "seccomp=%s", profile);
        item = cJSON_CreateString(opt);
    }
    free(profile);
    free(opt);
    if (!item || !cJSON_AddItemToArray(security_opt, item)) {
        cJSON_Delete(item);
        return -1;
    }
    return 0;
}

/* The agent's process and the container around it: the hardening spec
 * (hardening.h) in the Engine API's words. */
static void render_process(cJSON *root, const struct hardening *h)
{
    char v[128];
    cJSON *arr;

    arr = cJSON_AddArrayToObject(root, "Entrypoint");
    cJSON_AddItemToArray(arr, cJSON_CreateString(h->entrypoint));
    cJSON_AddItemToObject(root, "Cmd", cJSON_CreateArray());
    arr = cJSON_AddArrayToObject(root, "Env");
    for (int i = 0; i < h->nenv; i++) {
        snprintf(v, sizeof(v), "%s=%s", h->env[i].name, h->env[i].value);
        cJSON_AddItemToArray(arr, cJSON_CreateString(v));
    }
    snprintf(v, sizeof(v), "%lld:%lld", (long long)h->uid, (long long)h->gid);
    cJSON_AddStringToObject(root, "User", v);
    cJSON_AddStringToObject(root, "WorkingDir", h->workdir);
}

/* HostConfig: resources, filesystems, privileges, isolation.  Returns 0,
 * or -1 when the seccomp profile could not be added (never without it). */
static int render_host_config(const struct docker_flavor *fl, cJSON *hc, const struct hardening *h)
{
    cJSON *arr, *tmpfs, *lc;
    char opts[160];

    cJSON_AddNumberToObject(hc, "Memory", (double)h->memory_bytes);
    cJSON_AddNumberToObject(hc, "MemorySwap", (double)(h->memory_bytes + h->swap_bytes));
    cJSON_AddNumberToObject(hc, "NanoCpus", (double)(int64_t)(h->cpus * 1e9));
    cJSON_AddNumberToObject(hc, "PidsLimit", (double)h->pids);
    arr = cJSON_AddArrayToObject(hc, "Ulimits");
    for (int i = 0; i < h->nulimits; i++)
        add_ulimit(arr, h->ulimits[i].name, h->ulimits[i].value);
    cJSON_AddBoolToObject(hc, "ReadonlyRootfs", h->read_only_root);
    tmpfs = cJSON_AddObjectToObject(hc, "Tmpfs");
    for (int i = 0; i < h->nmounts; i++)
        if (h->mounts[i].kind == HARDENING_TMPFS) {
            hardening_mount_options(&h->mounts[i], opts, sizeof(opts));
            cJSON_AddStringToObject(tmpfs, h->mounts[i].path, opts);
        }
    /* the engine's own /dev/shm is noexec, nosuid, nodev, 1777, as asked */
    for (int i = 0; i < h->nmounts; i++)
        if (h->mounts[i].kind == HARDENING_SHM)
            cJSON_AddNumberToObject(hc, "ShmSize", (double)h->mounts[i].bytes);
    cJSON_AddStringToObject(hc, "NetworkMode",
                            h->network ? (h->network_name ? h->network_name : "bridge") : "none");
    arr = cJSON_AddArrayToObject(hc, "CapDrop");
    cJSON_AddItemToArray(arr, cJSON_CreateString(h->cap_drop));
    arr = cJSON_AddArrayToObject(hc, "CapAdd");
    for (int i = 0; i < h->ncap_add; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(h->cap_add[i]));
    arr = cJSON_AddArrayToObject(hc, "SecurityOpt");
    if (h->no_new_privileges)
        cJSON_AddItemToArray(arr, cJSON_CreateString("no-new-privileges"));
    if (h->seccomp_own && add_seccomp(fl, arr) != 0)
        return -1;
    cJSON_AddBoolToObject(hc, "Privileged", h->privileged);
    cJSON_AddNumberToObject(hc, "OomScoreAdj", h->oom_score_adj);
    /* host_namespaces 0 and engine_credentials 0 are the engine's default:
     * no PidMode/IpcMode "host", no Binds or Mounts */
    lc = cJSON_AddObjectToObject(hc, "LogConfig");
    cJSON_AddStringToObject(lc, "Type", h->engine_log ? "json-file" : "none");
    cJSON_AddBoolToObject(hc, "AutoRemove", 0);
    if (h->runtime)
        cJSON_AddStringToObject(hc, "Runtime", h->runtime);
    return 0;
}

char *docker_create_body(const struct docker_flavor *fl, const struct container_spec *s)
{
    struct hardening h;
    cJSON *root = cJSON_CreateObject(), *labels;
    char *out;

    hardening_from_spec(&h, s);
    cJSON_AddStringToObject(root, "Image", s->image);
    render_process(root, &h);
    cJSON_AddBoolToObject(root, "Tty", 0);
    cJSON_AddBoolToObject(root, "OpenStdin", 1);
    cJSON_AddBoolToObject(root, "StdinOnce", 0);
    cJSON_AddBoolToObject(root, "AttachStdin", 1);
    cJSON_AddBoolToObject(root, "AttachStdout", 1);
    cJSON_AddBoolToObject(root, "AttachStderr", 1);
    cJSON_AddBoolToObject(root, "NetworkDisabled", !h.network);
    labels = cJSON_AddObjectToObject(root, "Labels");
    for (int i = 0; i < s->nlabels; i++)
        cJSON_AddStringToObject(labels, s->labels[i][0], s->labels[i][1]);
    if (render_host_config(fl, cJSON_AddObjectToObject(root, "HostConfig"), &h) != 0) {
        cJSON_Delete(root);
        return NULL;
    }
    out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return out;
}

int docker_create(struct backend *b, const struct container_spec *spec, char *id, size_t idsz,
                  struct llmsb_err *err)
{
    struct buf resp;
    char *body = docker_create_body(flavor_of(b), spec);
    char what[300];
    cJSON *j = NULL;
    int rc;

    if (!body)
        return llmsb_err_set(err, LLMSB_ERR_SYS, "%s: cannot build the create request (%s)", eng(b),
                             flavor_of(b)->seccomp_opt
                                 ? "out of memory, or the seccomp profile file could not be "
                                   "written to a private directory of this user: docs/podman.md"
                                 : "out of memory");
    snprintf(what, sizeof(what), "create container from image \"%s\"", spec->image);
    buf_init(&resp, RESP_CAP);
    rc = call(b, "POST", "/containers/create", body, 201, 0, &resp, NULL, what, err);
    if (rc == 0) {
        j = cJSON_ParseWithLength(resp.data, resp.len);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "Id");
        if (!cJSON_IsString(v) || strlen(v->valuestring) >= idsz)
            rc = llmsb_err_set(err, LLMSB_ERR_PROTO, "%s: %s: no Id in the answer", eng(b), what);
        else
            snprintf(id, idsz, "%s", v->valuestring);
    }
    cJSON_Delete(j);
    free(body);
    buf_release(&resp);
    return rc;
}

int docker_attach(struct backend *b, const char *id, struct backend_stream **out,
                  struct llmsb_err *err)
{
    struct http_conn conn;
    char path[256];

    snprintf(path, sizeof(path), "/containers/%.*s/attach?stream=1&stdin=1&stdout=1&stderr=1",
             BACKEND_ID_MAX, id);
    if (http_hijack(http_of(b), "POST", path, NULL, &conn, err) != 0)
        return llmsb_err_wrap(err, "%s: attach to container %.12s", eng(b), id);
    return docker_stream_new(&conn, out, err);
}

/* method /containers/<id><suffix>, expecting ok or ok2 */
static int simple_post(struct backend *b, const char *method, const char *id, const char *suffix,
                       long ok, long ok2, const char *verb, struct llmsb_err *err)
{
    struct buf resp;
    char path[256], what[128];
    int rc;

    snprintf(path, sizeof(path), "/containers/%s%s", id, suffix);
    snprintf(what, sizeof(what), "%s container %.12s", verb, id);
    buf_init(&resp, RESP_CAP);
    rc = call(b, method, path, NULL, ok, ok2, &resp, NULL, what, err);
    buf_release(&resp);
    return rc;
}

int docker_start(struct backend *b, const char *id, struct llmsb_err *err)
{
    return simple_post(b, "POST", id, "/start", 204, 304, "start", err);
}

int docker_stop(struct backend *b, const char *id, struct llmsb_err *err)
{
    /* 409: not running, which is what we wanted */
    return simple_post(b, "POST", id, "/kill?signal=SIGKILL", 204, 409, "kill", err);
}

int docker_remove(struct backend *b, const char *id, struct llmsb_err *err)
{
    return simple_post(b, "DELETE", id, "?force=1&v=1", 204, 404, "remove", err);
}

int docker_inspect(struct backend *b, const char *id, struct container_state *st,
                   struct llmsb_err *err)
{
    struct buf resp;
    char path[256], what[64];
    cJSON *j = NULL;
    const cJSON *s, *v;
    int rc;

    memset(st, 0, sizeof(*st));
    snprintf(path, sizeof(path), "/containers/%s/json", id);
    snprintf(what, sizeof(what), "inspect container %.12s", id);
    buf_init(&resp, RESP_CAP);
    rc = call(b, "GET", path, NULL, 200, 0, &resp, NULL, what, err);
    if (rc == 0) {
        j = cJSON_ParseWithLength(resp.data, resp.len);
        s = cJSON_GetObjectItemCaseSensitive(j, "State");
        st->running = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "Running"));
        st->oom_killed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "OOMKilled"));
        v = cJSON_GetObjectItemCaseSensitive(s, "ExitCode");
        st->exit_code = cJSON_IsNumber(v) ? v->valueint : 0;
        v = cJSON_GetObjectItemCaseSensitive(s, "Status");
        snprintf(st->status, sizeof(st->status), "%s", cJSON_IsString(v) ? v->valuestring : "");
        v = cJSON_GetObjectItemCaseSensitive(s, "Error");
        snprintf(st->error, sizeof(st->error), "%s", cJSON_IsString(v) ? v->valuestring : "");
    }
    cJSON_Delete(j);
    buf_release(&resp);
    return rc;
}

static const char *label_of(const cJSON *labels, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(labels, name);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* GET path + "filters=" the label filter; *out the parsed answer (NULL
 * when it does not parse), the caller's to delete. */
static int list_labelled(struct backend *b, const char *path, const char *label, const char *what,
                         cJSON **out, struct llmsb_err *err)
{
    struct buf resp;
    char filt[512], full[1024];
    char *esc;
    int rc;

    *out = NULL;
    snprintf(filt, sizeof(filt), "{\"label\":[\"%s\"]}", label);
    if (!(esc = http_escape(filt)))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: out of memory", eng(b));
    snprintf(full, sizeof(full), "%sfilters=%s", path, esc);
    free(esc);
    buf_init(&resp, LIST_CAP);
    if ((rc = call(b, "GET", full, NULL, 200, 0, &resp, NULL, what, err)) == 0)
        *out = cJSON_ParseWithLength(resp.data, resp.len);
    buf_release(&resp);
    return rc;
}

int docker_list(struct backend *b, const char *label,
                void (*fn)(void *, const struct container_info *), void *ud, struct llmsb_err *err)
{
    cJSON *j = NULL, *it;
    int rc = list_labelled(b, "/containers/json?all=1&", label, "list containers", &j, err);

    if (rc == 0 && j) {
        cJSON_ArrayForEach(it, j) {
            const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "Id");
            const cJSON *labels = cJSON_GetObjectItemCaseSensitive(it, "Labels");
            struct container_info ci = {NULL,
                                        label_of(labels, "llmsb.worker"),
                                        label_of(labels, "llmsb.kind"),
                                        label_of(labels, "llmsb.pid"),
                                        label_of(labels, "llmsb.host"),
                                        label_of(labels, "llmsb.queue"),
                                        0};
            const cJSON *created = cJSON_GetObjectItemCaseSensitive(it, "Created");
            if (cJSON_IsNumber(created))
                ci.created_s = (long long)created->valuedouble;
            if (cJSON_IsString(id)) {
                ci.id = id->valuestring;
                fn(ud, &ci);
            }
        }
    }
    cJSON_Delete(j);
    return rc;
}

/* ---- images ---------------------------------------------------------------- */

int docker_image_list(struct backend *b, const char *label,
                      void (*fn)(void *, const struct image_info *), void *ud,
                      struct llmsb_err *err)
{
    cJSON *j = NULL, *it, *tag;
    int rc = list_labelled(b, "/images/json?", label, "list images", &j, err);

    if (rc == 0 && j) {
        cJSON_ArrayForEach(it, j) {
            const cJSON *labels = cJSON_GetObjectItemCaseSensitive(it, "Labels");
            const cJSON *created = cJSON_GetObjectItemCaseSensitive(it, "Created");
            const cJSON *size = cJSON_GetObjectItemCaseSensitive(it, "Size");
            struct image_info ii = {NULL, label_of(labels, "llmsb.lang"),
                                    label_of(labels, "llmsb.custom"),
                                    cJSON_IsNumber(created) ? (long long)created->valuedouble : 0,
                                    cJSON_IsNumber(size) ? (long long)size->valuedouble : 0};
            cJSON_ArrayForEach(tag, cJSON_GetObjectItemCaseSensitive(it, "RepoTags")) {
                if (cJSON_IsString(tag) && strcmp(tag->valuestring, "<none>:<none>") != 0) {
                    ii.tag = tag->valuestring;
                    fn(ud, &ii);
                }
            }
        }
    }
    cJSON_Delete(j);
    return rc;
}

int docker_image_remove(struct backend *b, const char *image, struct llmsb_err *err)
{
    char path[600], what[300];
    char *esc = http_escape(image);
    struct buf resp;
    long status = 0;
    int rc;

    if (!esc)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: out of memory", eng(b));
    snprintf(path, sizeof(path), "/images/%s?noprune=0", esc);
    snprintf(what, sizeof(what), "remove image \"%s\"", image);
    free(esc);
    buf_init(&resp, RESP_CAP);
    rc = call(b, "DELETE", path, NULL, 200, 404, &resp, &status, what, err);
    buf_release(&resp);
    if (rc == 0 && status == 404)
        rc = llmsb_err_set(err, LLMSB_ERR_NOTFOUND, "%s: no image \"%s\"", eng(b), image);
    return rc;
}

/* Build, import and pull answer HTTP 200 and report failure inside the
 * JSON-lines body: {"error": "...", "errorDetail": {...}}. */
struct progress {
    struct buf line;
    backend_progress_cb cb;
    void *ud;
    char error[200];
};

static void progress_line(struct progress *p, const char *s, size_t n)
{
    cJSON *j = cJSON_ParseWithLength(s, n);
    const cJSON *v;

    if (!j)
        return;
    if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(j, "error")) ||
        cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(j, "message")))
        llmsb_escape(p->error, sizeof(p->error), v->valuestring, strlen(v->valuestring));
    else if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(j, "stream")) ||
             cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(j, "status"))) {
        /* one JSON line may carry several output lines, with \r\n */
        const char *t = v->valuestring;
        while (*t && p->cb) {
            size_t l = strcspn(t, "\r\n");
            if (l) {
                char shown[300];
                llmsb_escape(shown, sizeof(shown), t, l);
                p->cb(p->ud, shown);
            }
            t += l;
            t += strspn(t, "\r\n");
        }
    }
    cJSON_Delete(j);
}

static int progress_write(void *ud, const char *data, size_t len)
{
    struct progress *p = ud;
    char *nl;

    if (buf_append(&p->line, data, len) != 0)
        buf_reset(&p->line); /* one absurd line: drop it, keep going */
    while (p->line.len && (nl = memchr(p->line.data, '\n', p->line.len)) != NULL) {
        size_t n = (size_t)(nl - p->line.data);
        progress_line(p, p->line.data, n);
        buf_consume(&p->line, n + 1);
    }
    return 0;
}

static int image_stream(struct backend *b, const char *path, const char *ctype, backend_read_cb rd,
                        void *ud, backend_progress_cb cb, void *pud, const char *what,
                        long timeout_ms, struct llmsb_err *err)
{
    struct progress p = {.cb = cb, .ud = pud};
    long status = 0;
    int rc;

    buf_init(&p.line, 1 << 20);
    rc = http_request_stream(http_of(b), "POST", path, ctype, rd, ud, progress_write, &p,
                             timeout_ms, &status, err);
    if (p.line.len)
        progress_line(&p, p.line.data, p.line.len);
    buf_release(&p.line);
    if (rc != 0)
        return llmsb_err_wrap(err, "%s: %s", eng(b), what);
    if (status != 200)
        return llmsb_err_set(err, LLMSB_ERR_BACKEND, "%s: %s: HTTP %ld%s%s", eng(b), what, status,
                             p.error[0] ? ": " : "", p.error);
    if (p.error[0])
        return llmsb_err_set(err, LLMSB_ERR_BACKEND, "%s: %s: %s", eng(b), what, p.error);
    return 0;
}

/* The export's body goes to the caller's sink as it arrives; its first
 * bytes are kept too, for the message of an answer that is not a tar. */
struct export_ctx {
    int (*sink)(void *ud, const char *p, size_t n);
    void *ud;
    struct buf head;
};

static int export_write(void *ud, const char *p, size_t n)
{
    struct export_ctx *x = ud;
    buf_append_some(&x->head, p, n);
    return x->sink(x->ud, p, n);
}

int docker_container_export(struct backend *b, const char *id,
                            int (*sink)(void *ud, const char *p, size_t n), void *ud,
                            struct llmsb_err *err)
{
    struct export_ctx x = {sink, ud, {0}};
    char path[256], msg[200];
    long status = 0;
    int rc;

    snprintf(path, sizeof(path), "/containers/%.*s/export", BACKEND_ID_MAX, id);
    buf_init(&x.head, 1024);
    rc = http_request_stream(http_of(b), "GET", path, NULL, NULL, NULL, export_write, &x, 0,
                             &status, err);
    if (rc != 0) {
        rc = llmsb_err_wrap(err, "%s: export container %.12s", eng(b), id);
    } else if (status != 200) {
        http_error_message(&x.head, msg, sizeof(msg));
        rc = llmsb_err_set(err, status == 404 ? LLMSB_ERR_NOTFOUND : LLMSB_ERR_BACKEND,
                           "%s: export container %.12s: HTTP %ld: %s", eng(b), id, status, msg);
    }
    buf_release(&x.head);
    return rc;
}

int docker_image_import(struct backend *b, const char *repo, const char *tag, backend_read_cb rd,
                        void *ud, backend_progress_cb cb, void *pud, struct llmsb_err *err)
{
    char path[512], what[256];
    char *r = http_escape(repo), *t = http_escape(tag);
    int rc;

    if (!r || !t) {
        free(r), free(t);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: out of memory", eng(b));
    }
    snprintf(
        path, sizeof(path), "/images/create?fromSrc=-&repo=%s%s%s&changes=%s&changes=%s", r,
        flavor_of(b)->import_tag_in_repo ? "%3A" : "&tag=", t,
        "ENV%20PATH%3D%2Fusr%2Flocal%2Fsbin%3A%2Fusr%2Flocal%2Fbin%3A%2Fusr%2Fsbin%3A%2Fusr%2Fbin%3A%2Fsbin%3A%2Fbin",
        "CMD%20%5B%22bash%22%5D");
    snprintf(what, sizeof(what), "import image %s:%s", repo, tag);
    free(r), free(t);
    rc = image_stream(b, path, "application/x-tar", rd, ud, cb, pud, what, 0, err);
    return rc;
}

int docker_image_build(struct backend *b, const char *const *tags, size_t ntags, backend_read_cb rd,
                       void *ud, backend_progress_cb cb, void *pud, struct llmsb_err *err)
{
    struct buf path;
    char what[256];
    int rc;

    buf_init(&path, 8192);
    buf_append_str(&path, "/build?rm=1&forcerm=1");
    for (size_t i = 0; i < ntags; i++) {
        char *e = http_escape(tags[i]);
        if (!e) {
            buf_release(&path);
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: out of memory", eng(b));
        }
        buf_printf(&path, "&t=%s", e);
        free(e);
    }
    snprintf(what, sizeof(what), "build image %s", ntags ? tags[0] : "");
    rc = image_stream(b, path.data, "application/x-tar", rd, ud, cb, pud, what, 0, err);
    buf_release(&path);
    return rc;
}

int docker_image_pull(struct backend *b, const char *repo, const char *tag, backend_progress_cb cb,
                      void *pud, struct llmsb_err *err)
{
    char path[512], what[256];
    char *r = http_escape(repo), *t = http_escape(tag);

    if (!r || !t) {
        free(r), free(t);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: out of memory", eng(b));
    }
    snprintf(path, sizeof(path), "/images/create?fromImage=%s&tag=%s", r, t);
    snprintf(what, sizeof(what), "pull %s:%s", repo, tag);
    free(r), free(t);
    return image_stream(b, path, NULL, NULL, NULL, cb, pud, what, PULL_TIMEOUT_MS, err);
}

int docker_image_tag(struct backend *b, const char *image, const char *repo, const char *tag,
                     struct llmsb_err *err)
{
    char path[768], what[300];
    char *i = http_escape(image), *r = http_escape(repo), *t = http_escape(tag);
    struct buf resp;
    int rc;

    if (!i || !r || !t) {
        free(i), free(r), free(t);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: out of memory", eng(b));
    }
    snprintf(path, sizeof(path), "/images/%s/tag?repo=%s&tag=%s", i, r, t);
    snprintf(what, sizeof(what), "tag %s as %s:%s", image, repo, tag);
    free(i), free(r), free(t);
    buf_init(&resp, RESP_CAP);
    rc = call(b, "POST", path, NULL, 201, 200, &resp, NULL, what, err);
    buf_release(&resp);
    return rc;
}

int docker_network_ensure(struct backend *b, const char *name, const char *bridge,
                          struct llmsb_err *err)
{
    struct buf resp;
    char path[300], what[128];
    cJSON *body;
    char *text;
    long status = 0;
    int rc;

    snprintf(path, sizeof(path), "/networks/%s", name);
    snprintf(what, sizeof(what), "inspect network %s", name);
    buf_init(&resp, RESP_CAP);
    rc = call(b, "GET", path, NULL, 200, 404, &resp, &status, what, err);
    if (rc == 0 && status == 404) {
        body = cJSON_CreateObject();
        cJSON_AddStringToObject(body, "Name", name);
        cJSON_AddStringToObject(body, "Driver", "bridge");
        cJSON_AddBoolToObject(body, "CheckDuplicate", 1);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(body, "Options"),
                                "com.docker.network.bridge.name", bridge);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(body, "Labels"), "llmsb.managed", "1");
        text = cJSON_PrintUnformatted(body);
        cJSON_Delete(body);
        snprintf(what, sizeof(what), "create network %s", name);
        rc = text ? call(b, "POST", "/networks/create", text, 201, 409, &resp, NULL, what, err)
                  : llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: out of memory", eng(b));
        free(text);
    }
    buf_release(&resp);
    return rc;
}

int docker_network_disconnect(struct backend *b, const char *name, const char *id,
                              struct llmsb_err *err)
{
    struct buf resp;
    char path[300], what[200];
    cJSON *body = cJSON_CreateObject();
    char *text;
    int rc;

    cJSON_AddStringToObject(body, "Container", id);
    cJSON_AddBoolToObject(body, "Force", 1);
    text = cJSON_PrintUnformatted(body);
    cJSON_Delete(body);
    snprintf(path, sizeof(path), "/networks/%s/disconnect", name);
    snprintf(what, sizeof(what), "disconnect container %.12s from network %s", id, name);
    buf_init(&resp, RESP_CAP);
    rc = text ? call(b, "POST", path, text, 200, 200, &resp, NULL, what, err)
              : llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: out of memory", eng(b));
    free(text);
    buf_release(&resp);
    return rc;
}

/* ---- exec (the engine's own, for benchmarks) ------------------------------ */

struct exec_sink {
    struct buf *out;
    int over;
};

static int exec_frame(void *ud, int stream, const char *data, size_t len)
{
    struct exec_sink *s = ud;
    if (stream == 1 && buf_append(s->out, data, len) != 0)
        s->over = 1;
    return 0;
}

int docker_exec(struct backend *b, const char *id, const char *const *argv, const char *user,
                struct buf *out, int *exit_code, struct llmsb_err *err)
{
    struct buf resp;
    struct demux d;
    struct exec_sink sink = {out, 0};
    char path[256], exec_id[BACKEND_ID_MAX];
    cJSON *body = cJSON_CreateObject(), *cmd, *j = NULL;
    const cJSON *v;
    char *text = NULL;
    int rc;

    buf_init(&resp, RESP_CAP);
    cJSON_AddBoolToObject(body, "AttachStdout", 1);
    cJSON_AddBoolToObject(body, "AttachStderr", 1);
    cJSON_AddBoolToObject(body, "Tty", 0);
    cJSON_AddStringToObject(body, "User", user);
    cJSON_AddStringToObject(body, "WorkingDir", "/work");
    cmd = cJSON_AddArrayToObject(body, "Cmd");
    for (size_t i = 0; argv[i]; i++)
        cJSON_AddItemToArray(cmd, cJSON_CreateString(argv[i]));
    if (!(text = cJSON_PrintUnformatted(body))) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: out of memory", eng(b));
        goto out;
    }
    snprintf(path, sizeof(path), "/containers/%.*s/exec", BACKEND_ID_MAX, id);
    if ((rc = call(b, "POST", path, text, 201, 0, &resp, NULL, "create exec", err)) != 0)
        goto out;
    j = cJSON_ParseWithLength(resp.data, resp.len);
    v = cJSON_GetObjectItemCaseSensitive(j, "Id");
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= sizeof(exec_id)) {
        rc = llmsb_err_set(err, LLMSB_ERR_PROTO, "%s: create exec: no Id in the answer", eng(b));
        goto out;
    }
    snprintf(exec_id, sizeof(exec_id), "%s", v->valuestring);
    snprintf(path, sizeof(path), "/exec/%s/start", exec_id);
    if ((rc = call(b, "POST", path, "{\"Detach\":false,\"Tty\":false}", 200, 0, &resp, NULL,
                   "start exec", err)) != 0)
        goto out;
    buf_reset(out);
    demux_init(&d);
    if (demux_feed(&d, resp.data ? resp.data : "", resp.len, exec_frame, &sink) != 0 || sink.over) {
        rc = llmsb_err_set(err, LLMSB_ERR_PROTO, "%s: exec output malformed or over %zu bytes",
                           eng(b), out->cap);
        goto out;
    }
    snprintf(path, sizeof(path), "/exec/%s/json", exec_id);
    if ((rc = call(b, "GET", path, NULL, 200, 0, &resp, NULL, "inspect exec", err)) != 0)
        goto out;
    cJSON_Delete(j);
    j = cJSON_ParseWithLength(resp.data, resp.len);
    v = cJSON_GetObjectItemCaseSensitive(j, "ExitCode");
    *exit_code = cJSON_IsNumber(v) ? v->valueint : -1;
out:
    cJSON_Delete(body);
    cJSON_Delete(j);
    free(text);
    buf_release(&resp);
    return rc;
}

const struct backend_ops docker_ops = {
    .name = "docker",
    .open = docker_open,
    .stop = docker_stop,
    .remove = docker_remove,
    .runtime_kind = docker_runtime_kind,
    DOCKER_OPS_SHARED,
};
