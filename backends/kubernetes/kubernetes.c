/* kubernetes.c - sandboxes as pods, through the API server's REST API and
 * its attach WebSocket (stream.c), on libcurl; no client library and
 * no kubectl.
 *
 * A pod is one sandbox: the agent as its only container, started by the
 * kubelet as soon as the pod is bound, so the stream is opened on a running
 * container (attach_after_start: the sandbox asks for the HELLO again).
 * The pod renders the hardening spec every backend renders (hardening.h):
 * the agent as root with SETUID, SETGID and KILL only, no privilege
 * escalation, read-only root, memory-backed emptyDirs with size limits for
 * /work, /tmp, /var/tmp and /dev/shm, memory and CPU limits, no service
 * account token, no service links; what a pod cannot express is
 * hardening_gap's list.  Jobs run as the sandbox uid, as everywhere.
 *
 * Networks: every pod has one; a NetworkPolicy (deploy/kubernetes) denies
 * all traffic to and from pods labelled llmsb.kind, and lets pods labelled
 * llmsb.network=egress reach the public internet.  "Taking a pod off the
 * install network" relabels it llmsb.network=none, which the policy then
 * denies.  Without a CNI that enforces NetworkPolicy none of this holds:
 * see docs/kubernetes.md.
 *
 * Label values must be short and plain; the llmsb.* values (a queue name
 * may hold ':') are also kept verbatim as annotations, which list() reads. */
#include "internal.h"
#include "backends/kubernetes/kubernetes.h"
#include "stream.h"
#include "backends/hardening.h"
#include "backends/http/http.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RESP_CAP ((size_t)4 << 20)
#define LIST_CAP ((size_t)64 << 20)
#define POLL_MS 250
#define POD_WARN_MS 10000 /* a pod not running yet after this is reported */
#define CONTAINER "agent"

static struct kubernetes *kubernetes_of(struct backend *b)
{
    return b->priv;
}

/* A DNS-1123 label (dots 0) or subdomain (dots 1) of at most max: what a
 * namespace, node or pod name may be.  Everything that goes into a path or
 * the hand-written request line of a WebSocket passes this. */
static int dns_name(const char *s, size_t max, int dots)
{
    size_t n = strlen(s);

    if (n == 0 || n > max || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-' ||
              (dots && s[i] == '.')))
            return 0;
    return 1;
}

static int kubernetes_open(struct backend *b, const char *host, struct llmsb_err *err)
{
    struct kubernetes_auth a;
    struct kubernetes *k;
    struct http_tls tls;
    int rc;

    if ((rc = kubernetes_auth_load(b->opts.client_config, &a, err)) != 0) {
        kubernetes_auth_release(&a); /* what was read before the failure */
        return rc;
    }
    if (!(k = calloc(1, sizeof(*k)))) {
        kubernetes_auth_release(&a);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "kubernetes: out of memory");
    }
    if (!host)
        host = a.server;
    snprintf(b->host, sizeof(b->host), "%s", host);
    snprintf(k->ns, sizeof(k->ns), "%s", b->opts.ns[0] ? b->opts.ns : a.ns[0] ? a.ns : "default");
    /* $LLMSB_K8S_NODE (scripts/k8s-up.sh exports it) when the config names
     * no node: a cluster without a scheduler */
    snprintf(k->node, sizeof(k->node), "%s",
             b->opts.node[0]            ? b->opts.node
             : getenv("LLMSB_K8S_NODE") ? getenv("LLMSB_K8S_NODE")
                                        : "");
    if (!dns_name(k->ns, 63, 0) || (k->node[0] && !dns_name(k->node, 253, 1))) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "kubernetes: namespace \"%.63s\" or node \"%.100s\" is not a DNS name "
                           "(lower-case letters, digits and '-'; '.' too in a node's)",
                           k->ns, k->node);
        kubernetes_auth_release(&a);
        free(k);
        return rc;
    }
    snprintf(k->pull, sizeof(k->pull), "%s",
             b->opts.pull_policy[0] ? b->opts.pull_policy : "IfNotPresent");
    k->start_ms = b->opts.start_timeout_ms > 0 ? b->opts.start_timeout_ms : 120000;
    snprintf(k->source, sizeof(k->source), "%s", a.source);
    tls = (struct http_tls){a.ca_pem, a.cert_pem, a.key_pem, a.token, a.insecure};
    if (strncmp(host, "https://", 8) != 0)
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "kubernetes: API server \"%s\" (from %s) is not an https:// URL", host,
                           a.source);
    else if ((rc = http_client_init(&k->http, host, "", err)) == 0 &&
             (rc = http_client_set_tls(&k->http, &tls, err)) != 0)
        http_client_release(&k->http);
    kubernetes_auth_release(&a);
    if (rc != 0) {
        free(k);
        return rc;
    }
    b->priv = k;
    return 0;
}

static void kubernetes_close(struct backend *b)
{
    struct kubernetes *k = b->priv;

    if (k) {
        http_client_release(&k->http);
        free(k);
    }
    b->priv = NULL;
}

static int call(struct backend *b, const char *method, const char *path, const char *ctype,
                const char *body, long ok, long ok2, struct buf *resp, long *status_out,
                const char *what, struct llmsb_err *err)
{
    long status = 0;
    int rc = http_request(&kubernetes_of(b)->http, method, path, body ? ctype : NULL, body,
                          body ? strlen(body) : 0, &status, resp, err);
    if (rc != 0)
        return llmsb_err_wrap(err, "kubernetes: %s (API server %s)", what, b->host);
    if (status_out)
        *status_out = status;
    if (status != ok && (!ok2 || status != ok2)) {
        char msg[300];
        http_error_message(resp, msg, sizeof(msg)); /* a Status object */
        /* a 403 of a ResourceQuota or LimitRange says so itself */
        int rights = status == 401 || (status == 403 && !strstr(msg, "quota") &&
                                       !strstr(msg, "maximum") && !strstr(msg, "minimum"));
        return llmsb_err_set(err, status == 404 ? LLMSB_ERR_NOTFOUND : LLMSB_ERR_BACKEND,
                             "kubernetes: %s: HTTP %ld: %s%s", what, status, msg,
                             rights ? " (check the credentials and the Role of deploy/kubernetes)"
                                    : "");
    }
    return 0;
}

static int kubernetes_ping(struct backend *b, char *version, size_t vsz, struct llmsb_err *err)
{
    struct buf resp;
    cJSON *j = NULL;
    int rc;

    buf_init(&resp, RESP_CAP);
    rc = call(b, "GET", "/version", NULL, NULL, 200, 0, &resp, NULL, "version", err);
    if (rc == 0) {
        j = cJSON_ParseWithLength(resp.data, resp.len);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "gitVersion");
        snprintf(version, vsz, "%s", cJSON_IsString(v) ? v->valuestring : "unknown");
        /* /version answers anyone: what jobs need is the right to pods */
        char path[200];
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods?limit=1", kubernetes_of(b)->ns);
        rc = call(b, "GET", path, NULL, NULL, 200, 0, &resp, NULL, "list pods (a preflight)", err);
        if (rc != 0)
            llmsb_err_wrap(err,
                           "the Kubernetes API server answers, but not to us in namespace %s "
                           "(credentials from %s)",
                           kubernetes_of(b)->ns, kubernetes_of(b)->source);
    } else {
        llmsb_err_wrap(err, "cannot reach the Kubernetes API server (from %s)",
                       kubernetes_of(b)->source);
    }
    cJSON_Delete(j);
    buf_release(&resp);
    return rc;
}

int kubernetes_runtime_class_kind(const cJSON *rc)
{
    const char *handler = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rc, "handler"));

    if (!handler)
        return BACKEND_RUNTIME_UNKNOWN;
    return backend_runtime_is_runsc(handler) ? BACKEND_RUNTIME_GVISOR : BACKEND_RUNTIME_KERNEL;
}

/* backend.runtime names a RuntimeClass: its handler says what the nodes
 * run.  One we may not read (no ClusterRole for runtimeclasses, or none by
 * that name) is BACKEND_RUNTIME_UNKNOWN: every pod runs one job. */
static int kubernetes_runtime_kind(struct backend *b, const char *runtime, struct llmsb_err *err)
{
    struct buf resp;
    char path[200], what[120];
    cJSON *j = NULL;
    long status = 0;
    int rc;

    if (!runtime || !*runtime)
        return BACKEND_RUNTIME_KERNEL; /* the cluster's default: the agent's HELLO tells */
    if (!dns_name(runtime, 253, 1))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "kubernetes: backend.runtime \"%.60s\" is not a RuntimeClass name",
                             runtime);
    buf_init(&resp, RESP_CAP);
    snprintf(path, sizeof(path), "/apis/node.k8s.io/v1/runtimeclasses/%s", runtime);
    snprintf(what, sizeof(what), "get RuntimeClass %s", runtime);
    rc = call(b, "GET", path, NULL, NULL, 200, 0, &resp, &status, what, err);
    if (rc == 0) {
        j = cJSON_ParseWithLength(resp.data, resp.len);
        rc = kubernetes_runtime_class_kind(j);
    } else if (status == 401 || status == 403 || status == 404) {
        rc = BACKEND_RUNTIME_UNKNOWN;
    }
    cJSON_Delete(j);
    buf_release(&resp);
    return rc;
}

/* Images live on the nodes or in a registry, which the API server does not
 * list (a node's status names only its 50 largest images): the pod's own
 * start tells instead (ErrImageNeverPull, ImagePullBackOff: attach). */
static int kubernetes_image_exists(struct backend *b, const char *image, struct llmsb_err *err)
{
    (void)b, (void)image, (void)err;
    return 1;
}

int kubernetes_pods_image_id(const cJSON *list, const char *image, char *out, size_t outsz)
{
    const cJSON *pod, *c, *st;

    cJSON_ArrayForEach(pod, cJSON_GetObjectItemCaseSensitive(list, "items")) {
        const cJSON *md = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
        const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(pod, "status");
        if (cJSON_GetObjectItemCaseSensitive(md, "deletionTimestamp"))
            continue;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "containers")) {
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
            const cJSON *im = cJSON_GetObjectItemCaseSensitive(c, "image");
            if (!cJSON_IsString(name) || !cJSON_IsString(im) || strcmp(im->valuestring, image))
                continue;
            /* the status of the same container, by name: its imageID */
            cJSON_ArrayForEach(st, cJSON_GetObjectItemCaseSensitive(status, "containerStatuses")) {
                const cJSON *sn = cJSON_GetObjectItemCaseSensitive(st, "name");
                const cJSON *id = cJSON_GetObjectItemCaseSensitive(st, "imageID");
                if (cJSON_IsString(sn) && strcmp(sn->valuestring, name->valuestring) == 0 &&
                    cJSON_IsString(id) && id->valuestring[0]) {
                    snprintf(out, outsz, "%s", id->valuestring);
                    return 0;
                }
            }
        }
    }
    return LLMSB_ERR_NOTFOUND;
}

/* An image's id as the kubelet pulled it: asked of the sandbox pods that
 * run it now (the API server lists no node's images in full, and a
 * registry may not be reachable from here). */
static int kubernetes_image_digest(struct backend *b, const char *image, char *out, size_t outsz,
                                   struct llmsb_err *err)
{
    struct buf resp;
    char path[300];
    cJSON *j = NULL;
    int rc;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods?labelSelector=llmsb.managed%%3D1",
             kubernetes_of(b)->ns);
    buf_init(&resp, LIST_CAP);
    rc = call(b, "GET", path, NULL, NULL, 200, 0, &resp, NULL, "list pods", err);
    if (rc == 0 && (j = cJSON_ParseWithLength(resp.data, resp.len)) == NULL)
        rc = llmsb_err_set(err, LLMSB_ERR_PROTO, "kubernetes: list pods: the answer is not JSON");
    if (rc == 0 && kubernetes_pods_image_id(j, image, out, outsz) != 0)
        rc = llmsb_err_set(err, LLMSB_ERR_NOTFOUND,
                           "kubernetes: no sandbox pod in namespace %s runs \"%s\" now; its "
                           "imageID is known only from a running pod's status",
                           kubernetes_of(b)->ns, image);
    cJSON_Delete(j);
    buf_release(&resp);
    return rc;
}

/* A label value: at most 63 of [A-Za-z0-9._-], alphanumeric at both ends. */
static void label_value(const char *v, char *out, size_t outsz)
{
    size_t n = 0;

    for (; *v && n + 1 < outsz && n < 63; v++)
        out[n++] = isalnum((unsigned char)*v) || *v == '.' || *v == '_' || *v == '-' ? *v : '_';
    while (n && !isalnum((unsigned char)out[n - 1]))
        n--;
    out[n] = '\0';
    if (n && !isalnum((unsigned char)out[0]))
        out[0] = 'x';
}

/* A hardening mount as a memory-backed emptyDir: its size is the
 * sizeLimit; its flags and mode have no field (hardening_gap). */
static void add_volume(cJSON *vols, cJSON *mounts, const struct hardening_mount *hm)
{
    cJSON *v = cJSON_CreateObject(), *ed, *m = cJSON_CreateObject();
    char q[32];

    cJSON_AddStringToObject(v, "name", hm->name);
    ed = cJSON_AddObjectToObject(v, "emptyDir");
    cJSON_AddStringToObject(ed, "medium", "Memory");
    snprintf(q, sizeof(q), "%lld", (long long)hm->bytes);
    cJSON_AddStringToObject(ed, "sizeLimit", q);
    cJSON_AddItemToArray(vols, v);
    cJSON_AddStringToObject(m, "name", hm->name);
    cJSON_AddStringToObject(m, "mountPath", hm->path);
    cJSON_AddItemToArray(mounts, m);
}

/* metadata: the spec's labels (values cut to what a label may hold, and
 * verbatim as annotations), and llmsb.network for the NetworkPolicy. */
static void render_metadata(cJSON *md, const struct kubernetes *k, const struct container_spec *s,
                            const struct hardening *h)
{
    cJSON *labels, *ann;
    char v[64];

    cJSON_AddStringToObject(md, "generateName", "llmsb-");
    cJSON_AddStringToObject(md, "namespace", k->ns);
    labels = cJSON_AddObjectToObject(md, "labels");
    ann = cJSON_AddObjectToObject(md, "annotations");
    for (int i = 0; i < s->nlabels; i++) {
        label_value(s->labels[i][1], v, sizeof(v));
        cJSON_AddStringToObject(labels, s->labels[i][0], v);
        cJSON_AddStringToObject(ann, s->labels[i][0], s->labels[i][1]);
    }
    cJSON_AddStringToObject(labels, "llmsb.network", h->network ? "egress" : "none");
}

/* The pod's own fields: nothing of the host's or the API server's. */
static void render_pod_spec(cJSON *spec, const struct kubernetes *k, const struct hardening *h)
{
    cJSON *sc;

    cJSON_AddStringToObject(spec, "restartPolicy", "Never");
    cJSON_AddBoolToObject(spec, "automountServiceAccountToken", h->engine_credentials);
    cJSON_AddBoolToObject(spec, "enableServiceLinks", h->engine_credentials);
    cJSON_AddNumberToObject(spec, "terminationGracePeriodSeconds", 1);
    cJSON_AddBoolToObject(spec, "hostNetwork", h->host_namespaces);
    cJSON_AddBoolToObject(spec, "hostPID", h->host_namespaces);
    cJSON_AddBoolToObject(spec, "hostIPC", h->host_namespaces);
    if (k->node[0])
        cJSON_AddStringToObject(spec, "nodeName", k->node);
    if (h->runtime)
        cJSON_AddStringToObject(spec, "runtimeClassName", h->runtime);
    /* the runtime's default profile, also for seccomp_own (hardening_gap) */
    sc = cJSON_AddObjectToObject(spec, "securityContext");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(sc, "seccompProfile"), "type",
                            "RuntimeDefault");
}

static void render_container_security(cJSON *c, const struct hardening *h)
{
    cJSON *sc = cJSON_AddObjectToObject(c, "securityContext"), *cap, *arr;

    cJSON_AddNumberToObject(sc, "runAsUser", (double)h->uid);
    cJSON_AddNumberToObject(sc, "runAsGroup", (double)h->gid);
    cJSON_AddBoolToObject(sc, "allowPrivilegeEscalation", !h->no_new_privileges);
    cJSON_AddBoolToObject(sc, "privileged", h->privileged);
    cJSON_AddBoolToObject(sc, "readOnlyRootFilesystem", h->read_only_root);
    cap = cJSON_AddObjectToObject(sc, "capabilities");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(cap, "drop"), cJSON_CreateString(h->cap_drop));
    arr = cJSON_AddArrayToObject(cap, "add");
    for (int i = 0; i < h->ncap_add; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(h->cap_add[i]));
}

/* requests: all the memory (what is promised is not taken back), a
 * quarter of a CPU at most, so a node packs sandboxes as a Docker host
 * does; the limit caps each */
static void render_resources(cJSON *c, const struct hardening *h)
{
    cJSON *res = cJSON_AddObjectToObject(c, "resources"), *lim, *req;
    char q[32];

    lim = cJSON_AddObjectToObject(res, "limits");
    snprintf(q, sizeof(q), "%lld", (long long)h->memory_bytes);
    cJSON_AddStringToObject(lim, "memory", q);
    snprintf(q, sizeof(q), "%lldm", (long long)(h->cpus * 1000 + 0.5));
    cJSON_AddStringToObject(lim, "cpu", q);
    req = cJSON_AddObjectToObject(res, "requests");
    snprintf(q, sizeof(q), "%lld", (long long)h->memory_bytes);
    cJSON_AddStringToObject(req, "memory", q);
    snprintf(q, sizeof(q), "%lldm", (long long)(h->cpus < 0.25 ? h->cpus * 1000 + 0.5 : 250));
    cJSON_AddStringToObject(req, "cpu", q);
}

/* The one container: the agent, with the hardening spec's process,
 * privileges, resources and mounts (the pod's volumes, in vols). */
static void render_container(cJSON *c, cJSON *vols, const struct kubernetes *k, const char *image,
                             const struct hardening *h)
{
    cJSON *arr, *e, *mounts;

    cJSON_AddStringToObject(c, "name", CONTAINER);
    cJSON_AddStringToObject(c, "image", image);
    cJSON_AddStringToObject(c, "imagePullPolicy", k->pull);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(c, "command"), cJSON_CreateString(h->entrypoint));
    cJSON_AddStringToObject(c, "workingDir", h->workdir);
    cJSON_AddBoolToObject(c, "stdin", 1);
    cJSON_AddBoolToObject(c, "stdinOnce", 0);
    cJSON_AddBoolToObject(c, "tty", 0);
    arr = cJSON_AddArrayToObject(c, "env");
    for (int i = 0; i < h->nenv; i++) {
        e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", h->env[i].name);
        cJSON_AddStringToObject(e, "value", h->env[i].value);
        cJSON_AddItemToArray(arr, e);
    }
    render_container_security(c, h);
    render_resources(c, h);
    mounts = cJSON_AddArrayToObject(c, "volumeMounts");
    for (int i = 0; i < h->nmounts; i++)
        add_volume(vols, mounts, &h->mounts[i]);
}

char *kubernetes_pod_body(const struct kubernetes *k, const struct container_spec *s)
{
    struct hardening h;
    cJSON *root = cJSON_CreateObject(), *spec, *c;
    char *out;

    hardening_from_spec(&h, s);
    cJSON_AddStringToObject(root, "apiVersion", "v1");
    cJSON_AddStringToObject(root, "kind", "Pod");
    render_metadata(cJSON_AddObjectToObject(root, "metadata"), k, s, &h);
    spec = cJSON_AddObjectToObject(root, "spec");
    render_pod_spec(spec, k, &h);
    c = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(spec, "containers"), c);
    render_container(c, cJSON_AddArrayToObject(spec, "volumes"), k, s->image, &h);
    out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return out;
}

static int kubernetes_create(struct backend *b, const struct container_spec *spec, char *id,
                             size_t idsz, struct llmsb_err *err)
{
    struct kubernetes *k = kubernetes_of(b);
    struct buf resp;
    char *body = kubernetes_pod_body(k, spec);
    char path[200], what[300];
    cJSON *j = NULL;
    int rc;

    if (!body)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "kubernetes: out of memory");
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", k->ns);
    snprintf(what, sizeof(what), "create pod from image \"%s\" in namespace %s", spec->image,
             k->ns);
    buf_init(&resp, RESP_CAP);
    rc = call(b, "POST", path, "application/json", body, 201, 0, &resp, NULL, what, err);
    if (rc == 0) {
        j = cJSON_ParseWithLength(resp.data, resp.len);
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(j, "metadata"), "name");
        if (!cJSON_IsString(n) || strlen(n->valuestring) >= idsz ||
            !dns_name(n->valuestring, 253, 1))
            rc = llmsb_err_set(err, LLMSB_ERR_PROTO,
                               "kubernetes: %s: no pod name (a DNS name) in the answer", what);
        else
            snprintf(id, idsz, "%s", n->valuestring);
    }
    cJSON_Delete(j);
    free(body);
    buf_release(&resp);
    return rc;
}

/* "[WHAT: ]REASON: MESSAGE" (or the one there is) appended to out after a
 * "; "; nothing when there is neither. */
static void add_reason(char *out, size_t osz, const char *what, const cJSON *reason,
                       const cJSON *msg)
{
    const char *r = cJSON_IsString(reason) ? reason->valuestring : "";
    const char *m = cJSON_IsString(msg) ? msg->valuestring : "";

    if (!*r && !*m)
        return;
    llmsb_append(out, osz, "%s%s%s%s%s%s", *out ? "; " : "", what, *what ? ": " : "", r,
                 *r && *m ? ": " : "", m);
}

/* Why a pod that is not running is not, in its own words: the container's
 * waiting reason, the conditions that are False (PodScheduled's
 * Unschedulable names the scheduler's reasons) but the readiness ones,
 * which only repeat the container's, the pod's own reason; a pod no
 * scheduler has looked at says so. */
static void pod_pending(const cJSON *pod, const cJSON *waiting, char *out, size_t osz)
{
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(pod, "status"), *c;
    const cJSON *phase = cJSON_GetObjectItemCaseSensitive(status, "phase");
    const cJSON *node =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pod, "spec"), "nodeName");
    int scheduled_known = 0;
    char what[64];

    snprintf(out, osz, "%s", "");
    if (waiting)
        add_reason(out, osz, "", cJSON_GetObjectItemCaseSensitive(waiting, "reason"),
                   cJSON_GetObjectItemCaseSensitive(waiting, "message"));
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(status, "conditions")) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(c, "type");
        const cJSON *cst = cJSON_GetObjectItemCaseSensitive(c, "status");
        if (!cJSON_IsString(type))
            continue;
        if (strcmp(type->valuestring, "PodScheduled") == 0)
            scheduled_known = 1;
        if (!cJSON_IsString(cst) || strcmp(cst->valuestring, "False") != 0 ||
            strcmp(type->valuestring, "Ready") == 0 ||
            strcmp(type->valuestring, "ContainersReady") == 0)
            continue;
        snprintf(what, sizeof(what), "%.40s false", type->valuestring);
        add_reason(out, osz, what, cJSON_GetObjectItemCaseSensitive(c, "reason"),
                   cJSON_GetObjectItemCaseSensitive(c, "message"));
    }
    add_reason(out, osz, "", cJSON_GetObjectItemCaseSensitive(status, "reason"),
               cJSON_GetObjectItemCaseSensitive(status, "message"));
    if (!(cJSON_IsString(node) && node->valuestring[0]) && !scheduled_known)
        llmsb_append(out, osz,
                     "%snot scheduled: no node is assigned and no scheduler has reported on "
                     "the pod (a cluster without a scheduler needs kubernetes.node, or "
                     "$LLMSB_K8S_NODE)",
                     *out ? "; " : "");
    else if (!*out && cJSON_IsString(node))
        llmsb_append(out, osz, "on node %s, whose kubelet has not reported on it",
                     node->valuestring);
    if (!*out)
        llmsb_append(out, osz, "phase %s", cJSON_IsString(phase) ? phase->valuestring : "unknown");
}

void kubernetes_pod_state(const cJSON *pod, struct container_state *st, char *fatal, size_t fsz,
                          char *pending, size_t psz)
{
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(pod, "status");
    const cJSON *phase = cJSON_GetObjectItemCaseSensitive(status, "phase");
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(status, "reason");
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(status, "message");
    const cJSON *cs =
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(status, "containerStatuses"), 0);
    const cJSON *state = cJSON_GetObjectItemCaseSensitive(cs, "state"), *t, *w, *v;

    memset(st, 0, sizeof(*st));
    fatal[0] = '\0';
    snprintf(st->status, sizeof(st->status), "%s", cJSON_IsString(phase) ? phase->valuestring : "");
    if (cJSON_IsString(reason) && strcmp(reason->valuestring, "Evicted") == 0) {
        /* over a memory-backed emptyDir's sizeLimit, or node pressure */
        st->oom_killed = 1;
        snprintf(st->error, sizeof(st->error), "evicted: %s",
                 cJSON_IsString(msg) ? msg->valuestring : "");
        snprintf(fatal, fsz, "the pod was evicted: %s",
                 cJSON_IsString(msg) ? msg->valuestring : "");
    }
    if (cJSON_GetObjectItemCaseSensitive(state, "running"))
        st->running = 1;
    if ((t = cJSON_GetObjectItemCaseSensitive(state, "terminated")) != NULL) {
        v = cJSON_GetObjectItemCaseSensitive(t, "exitCode");
        st->exit_code = cJSON_IsNumber(v) ? v->valueint : 0;
        v = cJSON_GetObjectItemCaseSensitive(t, "reason");
        if (cJSON_IsString(v) && strcmp(v->valuestring, "OOMKilled") == 0)
            st->oom_killed = 1;
        if (cJSON_IsString(v))
            snprintf(st->error, sizeof(st->error), "%s", v->valuestring);
        snprintf(fatal, fsz, "its container ended (%s, exit %d) before the agent answered",
                 cJSON_IsString(v) ? v->valuestring : "terminated", st->exit_code);
    }
    if ((w = cJSON_GetObjectItemCaseSensitive(state, "waiting")) != NULL) {
        static const char *const stuck[] = {
            "ErrImageNeverPull", "ImagePullBackOff",           "ErrImagePull",
            "InvalidImageName",  "CreateContainerConfigError", "CreateContainerError",
            "RunContainerError"};
        v = cJSON_GetObjectItemCaseSensitive(w, "reason");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(w, "message");
        for (size_t i = 0; cJSON_IsString(v) && i < sizeof(stuck) / sizeof(stuck[0]); i++)
            if (strcmp(v->valuestring, stuck[i]) == 0)
                snprintf(fatal, fsz, "%s: %s", v->valuestring,
                         cJSON_IsString(m) ? m->valuestring : "");
    }
    if (!fatal[0] && cJSON_IsString(phase) &&
        (strcmp(phase->valuestring, "Failed") == 0 || strcmp(phase->valuestring, "Succeeded") == 0))
        snprintf(fatal, fsz, "the pod is %s%s%s", phase->valuestring,
                 cJSON_IsString(msg) ? ": " : "", cJSON_IsString(msg) ? msg->valuestring : "");
    pod_pending(pod, w, pending, psz);
}

static int get_pod(struct backend *b, const char *id, struct container_state *st, char *fatal,
                   size_t fsz, char *pending, size_t psz, struct llmsb_err *err)
{
    struct buf resp;
    char path[300], what[200];
    cJSON *j;
    int rc;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", kubernetes_of(b)->ns, id);
    snprintf(what, sizeof(what), "read pod %s", id);
    buf_init(&resp, RESP_CAP);
    rc = call(b, "GET", path, NULL, NULL, 200, 0, &resp, NULL, what, err);
    if (rc == 0) {
        j = cJSON_ParseWithLength(resp.data, resp.len);
        kubernetes_pod_state(j, st, fatal, fsz, pending, psz);
        cJSON_Delete(j);
    }
    buf_release(&resp);
    return rc;
}

static int kubernetes_inspect(struct backend *b, const char *id, struct container_state *st,
                              struct llmsb_err *err)
{
    char fatal[300], pending[300];
    return get_pod(b, id, st, fatal, sizeof(fatal), pending, sizeof(pending), err);
}

/* Waits for the pod's container to run, then opens the attach stream.  A
 * pod that will not start ends the attempt at once; one still pending is
 * reported (a warning after POD_WARN_MS, the error at the start timeout)
 * in its own words: the scheduler's, the kubelet's. */
static int kubernetes_attach(struct backend *b, const char *id, struct backend_stream **out,
                             struct llmsb_err *err)
{
    struct kubernetes *k = kubernetes_of(b);
    struct container_state st;
    char fatal[400], pending[400], path[400];
    int64_t started = clock_mono_ms(), deadline = started + k->start_ms;
    int rc, warned = 0;

    for (;;) {
        if ((rc = get_pod(b, id, &st, fatal, sizeof(fatal), pending, sizeof(pending), err)) != 0)
            return rc;
        if (st.running)
            break;
        if (fatal[0])
            return llmsb_err_set(err, LLMSB_ERR_BACKEND, "kubernetes: pod %s did not start: %s%s",
                                 id, fatal,
                                 strstr(fatal, "Image") ? " (build the image on the node with "
                                                          "`llm-sandbox images build`, or push it "
                                                          "to a registry the nodes pull from)"
                                                        : "");
        if (clock_mono_ms() >= deadline)
            return llmsb_err_set(err, LLMSB_ERR_TIMEOUT,
                                 "kubernetes: pod %s not running after %lld s "
                                 "(kubernetes.pod_start_timeout): %s: %s",
                                 id, (long long)(k->start_ms / 1000),
                                 st.status[0] ? st.status : "unknown phase", pending);
        if (!warned && clock_mono_ms() - started >= POD_WARN_MS) {
            log_warn("kubernetes: pod %s not running after %d s: %s: %s; waiting up to %lld s "
                     "(kubernetes.pod_start_timeout)",
                     id, POD_WARN_MS / 1000, st.status[0] ? st.status : "unknown phase", pending,
                     (long long)(k->start_ms / 1000));
            warned = 1;
        }
        if (llmsb_interrupted)
            return llmsb_err_set(err, LLMSB_ERR_INTERRUPTED, "interrupted");
        usleep(POLL_MS * 1000);
    }
    snprintf(path, sizeof(path),
             "/api/v1/namespaces/%s/pods/%s/attach?container=" CONTAINER
             "&stdin=true&stdout=true&stderr=true",
             k->ns, id);
    if ((rc = kubernetes_stream_open(&k->http, path, out, err)) != 0)
        return llmsb_err_wrap(err, "kubernetes: attach to pod %s", id);
    return 0;
}

static int kubernetes_start(struct backend *b, const char *id, struct llmsb_err *err)
{
    (void)b, (void)id, (void)err;
    return 0; /* the kubelet started it; attach waited for that */
}

static int delete_pod(struct backend *b, const char *id, const char *verb, struct llmsb_err *err)
{
    struct buf resp;
    char path[300], what[200];
    long status = 0;
    int rc;

    /* 1 s, not 0: a grace of 0 takes the object out of etcd at once, while
     * its container may still run where the reaper can no longer see it */
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s?gracePeriodSeconds=1",
             kubernetes_of(b)->ns, id);
    snprintf(what, sizeof(what), "%s pod %s", verb, id);
    buf_init(&resp, RESP_CAP);
    rc = call(b, "DELETE", path, NULL, NULL, 200, 404, &resp, &status, what, err);
    if (rc != 0 && status == 202) { /* accepted: deletion under way */
        memset(err, 0, sizeof(*err));
        rc = 0;
    }
    buf_release(&resp);
    return rc;
}

static int kubernetes_stop(struct backend *b, const char *id, struct llmsb_err *err)
{
    return delete_pod(b, id, "stop", err);
}

static int kubernetes_remove(struct backend *b, const char *id, struct llmsb_err *err)
{
    return delete_pod(b, id, "remove", err);
}

static const char *annotation(const cJSON *md, const char *name)
{
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(md, "annotations"), name);
    if (!cJSON_IsString(v))
        v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(md, "labels"), name);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static int kubernetes_list(struct backend *b, const char *label,
                           void (*fn)(void *, const struct container_info *), void *ud,
                           struct llmsb_err *err)
{
    struct buf resp;
    char sel[200], val[64], path[600];
    const char *eq = strchr(label, '=');
    char *esc;
    cJSON *j = NULL, *it;
    int rc;

    if (!eq)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "kubernetes: label \"%s\" is not k=v", label);
    label_value(eq + 1, val, sizeof(val));
    snprintf(sel, sizeof(sel), "%.*s=%s", (int)(eq - label), label, val);
    if (!(esc = http_escape(sel)))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "kubernetes: out of memory");
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods?labelSelector=%s",
             kubernetes_of(b)->ns, esc);
    free(esc);
    buf_init(&resp, LIST_CAP);
    rc = call(b, "GET", path, NULL, NULL, 200, 0, &resp, NULL, "list pods", err);
    if (rc == 0 && (j = cJSON_ParseWithLength(resp.data, resp.len)) == NULL)
        rc = llmsb_err_set(err, LLMSB_ERR_PROTO, "kubernetes: list pods: the answer is not JSON");
    if (rc == 0) {
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "items")) {
            const cJSON *md = cJSON_GetObjectItemCaseSensitive(it, "metadata");
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(md, "name");
            const cJSON *ts = cJSON_GetObjectItemCaseSensitive(md, "creationTimestamp");
            struct container_info ci = {NULL,
                                        annotation(md, "llmsb.worker"),
                                        annotation(md, "llmsb.kind"),
                                        annotation(md, "llmsb.pid"),
                                        annotation(md, "llmsb.host"),
                                        annotation(md, "llmsb.queue"),
                                        0};
            struct tm tm = {0};
            /* A pod whose deletion is under way (the 1 s grace) is gone
             * for us as it is on Docker after a forced remove: not a
             * sandbox to count, reuse or reap again. */
            if (cJSON_GetObjectItemCaseSensitive(md, "deletionTimestamp"))
                continue;
            if (cJSON_IsString(ts) && strptime(ts->valuestring, "%Y-%m-%dT%H:%M:%SZ", &tm))
                ci.created_s = (long long)timegm(&tm);
            if (cJSON_IsString(name)) {
                ci.id = name->valuestring;
                fn(ud, &ci);
            }
        }
    }
    cJSON_Delete(j);
    buf_release(&resp);
    return rc;
}

/* The engine's own exec, for benchmarks: a WebSocket on .../exec whose
 * status channel ends it; the exit code is in the status's message. */
static int kubernetes_exec(struct backend *b, const char *id, const char *const *argv,
                           const char *user, struct buf *out, int *exit_code, struct llmsb_err *err)
{
    struct kubernetes *k = kubernetes_of(b);
    struct backend_stream *s = NULL;
    struct buf path;
    char chunk[65536];
    ssize_t n;
    int rc;

    (void)user; /* exec runs as the container's user (root): benchmarks only */
    buf_init(&path, 8192);
    buf_printf(&path,
               "/api/v1/namespaces/%s/pods/%s/exec?container=" CONTAINER "&stdout=true"
               "&stderr=true",
               k->ns, id);
    for (size_t i = 0; argv[i]; i++) {
        char *e = http_escape(argv[i]);
        if (!e) {
            buf_release(&path);
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "kubernetes: out of memory");
        }
        buf_printf(&path, "&command=%s", e);
        free(e);
    }
    rc = kubernetes_stream_open(&k->http, path.data, &s, err);
    buf_release(&path);
    if (rc != 0)
        return llmsb_err_wrap(err, "kubernetes: exec in pod %s", id);
    buf_reset(out);
    while ((n = s->ops->read(s, chunk, sizeof(chunk), 60000, err)) > 0)
        if (buf_append(out, chunk, (size_t)n) != 0) {
            s->ops->close(s);
            return llmsb_err_set(err, LLMSB_ERR_LIMIT, "kubernetes: exec output over %zu bytes",
                                 out->cap);
        }
    if (n < 0) {
        s->ops->close(s);
        return (int)n;
    }
    *exit_code = kubernetes_stream_exit_code(s);
    s->ops->close(s);
    return 0;
}

static int no_images(struct llmsb_err *err)
{
    return llmsb_err_set(err, LLMSB_ERR_INVALID,
                         "kubernetes: images are not built through the API server: build them "
                         "with `llm-sandbox images build` on each node's engine (or push them to a "
                         "registry the nodes pull from); see docs/kubernetes.md");
}

static int kubernetes_image_import(struct backend *b, const char *repo, const char *tag,
                                   backend_read_cb rd, void *ud, backend_progress_cb cb, void *pud,
                                   struct llmsb_err *err)
{
    (void)b, (void)repo, (void)tag, (void)rd, (void)ud, (void)cb, (void)pud;
    return no_images(err);
}

static int kubernetes_image_build(struct backend *b, const char *const *tags, size_t ntags,
                                  backend_read_cb rd, void *ud, backend_progress_cb cb, void *pud,
                                  struct llmsb_err *err)
{
    (void)b, (void)tags, (void)ntags, (void)rd, (void)ud, (void)cb, (void)pud;
    return no_images(err);
}

static int kubernetes_image_pull(struct backend *b, const char *repo, const char *tag,
                                 backend_progress_cb cb, void *pud, struct llmsb_err *err)
{
    (void)b, (void)repo, (void)tag, (void)cb, (void)pud;
    return no_images(err);
}

static int kubernetes_image_tag(struct backend *b, const char *image, const char *repo,
                                const char *tag, struct llmsb_err *err)
{
    (void)b, (void)image, (void)repo, (void)tag;
    return no_images(err);
}

/* The egress NetworkPolicy of deploy/kubernetes is what filters: nothing
 * to make here. */
static int kubernetes_egress_ensure(struct backend *b, struct llmsb_err *err)
{
    (void)b, (void)err;
    return 0;
}

/* Off the install network: the pod is relabelled llmsb.network=none, which
 * the deny-all NetworkPolicy covers. */
static int kubernetes_network_disconnect(struct backend *b, const char *name, const char *id,
                                         struct llmsb_err *err)
{
    struct buf resp;
    char path[300], what[200];
    int rc;

    (void)name;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", kubernetes_of(b)->ns, id);
    snprintf(what, sizeof(what), "relabel pod %s llmsb.network=none", id);
    buf_init(&resp, RESP_CAP);
    rc = call(b, "PATCH", path, "application/merge-patch+json",
              "{\"metadata\":{\"labels\":{\"llmsb.network\":\"none\"}}}", 200, 0, &resp, NULL, what,
              err);
    buf_release(&resp);
    return rc;
}

const struct backend_ops kubernetes_ops = {
    .name = "kubernetes",
    .open = kubernetes_open,
    .close = kubernetes_close,
    .ping = kubernetes_ping,
    .image_exists = kubernetes_image_exists,
    .image_digest = kubernetes_image_digest,
    .create = kubernetes_create,
    .attach = kubernetes_attach,
    .start = kubernetes_start,
    .inspect = kubernetes_inspect,
    .stop = kubernetes_stop,
    .remove = kubernetes_remove,
    .list = kubernetes_list,
    .exec = kubernetes_exec,
    .image_import = kubernetes_image_import,
    .image_build = kubernetes_image_build,
    .image_pull = kubernetes_image_pull,
    .image_tag = kubernetes_image_tag,
    .egress_ensure = kubernetes_egress_ensure,
    .network_disconnect = kubernetes_network_disconnect,
    .runtime_kind = kubernetes_runtime_kind,
    .attach_after_start = 1,
    .cluster_wide = 1,
};
