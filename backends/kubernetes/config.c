/* config.c - where the Kubernetes API server is and who we are to it:
 * a kubeconfig file (its current context: cluster server and CA, user
 * token or client certificate, namespace), or, inside a pod, the service
 * account's files.  Certificates are kept as PEM text (the http client
 * hands them to libcurl as blobs); nothing is written to disk. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "common/base64.h"

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define FILE_CAP ((size_t)1 << 20)

/* Reads a whole small file (a token, a PEM). NULL with err set. */
static char *slurp(const char *path, const char *what, struct llmsb_err *err)
{
    FILE *f = fopen(path, "re");
    struct buf b;
    char chunk[4096];
    size_t n;

    if (!f) {
        llmsb_err_set(err, LLMSB_ERR_INVALID, "kubernetes: cannot read %s %s: %s", what, path,
                      strerror(errno));
        return NULL;
    }
    buf_init(&b, FILE_CAP);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        if (buf_append(&b, chunk, n) != 0) {
            llmsb_err_set(err, LLMSB_ERR_LIMIT, "kubernetes: %s %s is over %zu bytes", what, path,
                          FILE_CAP);
            fclose(f);
            buf_release(&b);
            return NULL;
        }
    fclose(f);
    if (buf_append(&b, "", 1) != 0 || !b.data) {
        buf_release(&b);
        llmsb_err_set(err, LLMSB_ERR_NOMEM, "kubernetes: out of memory");
        return NULL;
    }
    return b.data; /* the buf's storage, NUL-terminated; the caller frees */
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        s[--n] = '\0';
}

/* ---- a kubeconfig, through libyaml's document API ---------------------------- */

static yaml_node_t *map_get(yaml_document_t *d, yaml_node_t *m, const char *key)
{
    if (!m || m->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(d, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp((char *)k->data.scalar.value, key) == 0)
            return yaml_document_get_node(d, p->value);
    }
    return NULL;
}

static const char *scalar(yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The entry of list `list` whose name is name, then its `field` mapping. */
static yaml_node_t *named(yaml_document_t *d, yaml_node_t *root, const char *list, const char *name,
                          const char *field)
{
    yaml_node_t *seq = map_get(d, root, list);

    if (!seq || seq->type != YAML_SEQUENCE_NODE || !name)
        return NULL;
    for (yaml_node_item_t *i = seq->data.sequence.items.start; i < seq->data.sequence.items.top;
         i++) {
        yaml_node_t *e = yaml_document_get_node(d, *i);
        const char *n = scalar(map_get(d, e, "name"));
        if (n && strcmp(n, name) == 0)
            return map_get(d, e, field);
    }
    return NULL;
}

/* A PEM from KEY-data (base64) or KEY (a file, relative to the kubeconfig's
 * directory). *out stays NULL when neither is there. */
static int pem_of(yaml_document_t *d, yaml_node_t *m, const char *key, const char *dir, char **out,
                  struct llmsb_err *err)
{
    char dkey[80], path[1024];
    const char *v;
    size_t n;

    snprintf(dkey, sizeof(dkey), "%s-data", key);
    if ((v = scalar(map_get(d, m, dkey))) != NULL) {
        if (!(*out = base64_decode(v, strlen(v), &n)))
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "kubernetes: kubeconfig %s is not base64",
                                 dkey);
        return 0;
    }
    if ((v = scalar(map_get(d, m, key))) != NULL) {
        snprintf(path, sizeof(path), "%s%s%s", v[0] == '/' ? "" : dir, v[0] == '/' ? "" : "/", v);
        return (*out = slurp(path, key, err)) ? 0 : err->code;
    }
    return 0;
}

static int load_kubeconfig(const char *path, struct k8s_auth *a, struct llmsb_err *err)
{
    FILE *f = fopen(path, "re");
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_node_t *root, *ctx, *cluster, *user;
    const char *cur, *v;
    char dir[1024];
    int rc = 0;

    if (!f)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "kubernetes: cannot read kubeconfig %s: %s",
                             path, strerror(errno));
    snprintf(dir, sizeof(dir), "%s", path);
    if (strrchr(dir, '/'))
        *strrchr(dir, '/') = '\0';
    else
        snprintf(dir, sizeof(dir), ".");
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, &doc)) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "kubernetes: kubeconfig %s:%zu: %s", path,
                           parser.problem_mark.line + 1,
                           parser.problem ? parser.problem : "not YAML");
        yaml_parser_delete(&parser);
        fclose(f);
        return rc;
    }
    yaml_parser_delete(&parser);
    fclose(f);
    root = yaml_document_get_root_node(&doc);
    cur = scalar(map_get(&doc, root, "current-context"));
    ctx = named(&doc, root, "contexts", cur, "context");
    if (!cur || !ctx) {
        rc = llmsb_err_set(
            err, LLMSB_ERR_INVALID, "kubernetes: kubeconfig %s: current-context %s%s%s", path,
            cur ? "\"" : "", cur ? cur : "is not set", cur ? "\" is not among its contexts" : "");
        goto out;
    }
    cluster = named(&doc, root, "clusters", scalar(map_get(&doc, ctx, "cluster")), "cluster");
    user = named(&doc, root, "users", scalar(map_get(&doc, ctx, "user")), "user");
    if (!cluster || !(v = scalar(map_get(&doc, cluster, "server")))) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "kubernetes: kubeconfig %s: context \"%s\" names no cluster with a "
                           "server",
                           path, cur);
        goto out;
    }
    snprintf(a->server, sizeof(a->server), "%s", v);
    if ((v = scalar(map_get(&doc, ctx, "namespace"))) != NULL)
        snprintf(a->ns, sizeof(a->ns), "%s", v);
    v = scalar(map_get(&doc, cluster, "insecure-skip-tls-verify"));
    a->insecure = v && strcmp(v, "true") == 0;
    if ((rc = pem_of(&doc, cluster, "certificate-authority", dir, &a->ca_pem, err)) != 0 ||
        (rc = pem_of(&doc, user, "client-certificate", dir, &a->cert_pem, err)) != 0 ||
        (rc = pem_of(&doc, user, "client-key", dir, &a->key_pem, err)) != 0)
        goto out;
    if ((v = scalar(map_get(&doc, user, "token"))) != NULL) {
        if (!(a->token = strdup(v)))
            rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "kubernetes: out of memory");
    } else if ((v = scalar(map_get(&doc, user, "tokenFile"))) != NULL) {
        if ((a->token = slurp(v, "tokenFile", err)) == NULL)
            rc = err->code;
        else
            trim(a->token);
    } else if (map_get(&doc, user, "exec") || map_get(&doc, user, "auth-provider")) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "kubernetes: kubeconfig %s: user of context \"%s\" authenticates with "
                           "an exec or auth-provider plugin, which llm-sandbox does not run: give "
                           "it a token or a client certificate (a ServiceAccount token works)",
                           path, cur);
    }
    snprintf(a->source, sizeof(a->source), "kubeconfig %s, context %s", path, cur);
out:
    yaml_document_delete(&doc);
    return rc;
}

static int load_in_cluster(struct k8s_auth *a, struct llmsb_err *err)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    char *ns;

    if (!port || !*port)
        port = "443";
    snprintf(a->server, sizeof(a->server), strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s",
             host, port);
    if (!(a->token = slurp(SA_DIR "/token", "service account token", err)) ||
        !(a->ca_pem = slurp(SA_DIR "/ca.crt", "service account CA", err)))
        return err->code;
    trim(a->token);
    if ((ns = slurp(SA_DIR "/namespace", "service account namespace", err)) != NULL) {
        trim(ns);
        snprintf(a->ns, sizeof(a->ns), "%s", ns);
        free(ns);
    }
    memset(err, 0, sizeof(*err));
    snprintf(a->source, sizeof(a->source), "the pod's service account (%s)", SA_DIR);
    return 0;
}

int k8s_auth_load(const char *kubeconfig, struct k8s_auth *a, struct llmsb_err *err)
{
    const char *env = getenv("KUBECONFIG"), *home = getenv("HOME"),
               *svc = getenv("KUBERNETES_SERVICE_HOST");
    char path[1024];
    struct stat st;

    memset(a, 0, sizeof(*a));
    if (kubeconfig && *kubeconfig)
        return load_kubeconfig(kubeconfig, a, err);
    if (env && *env) { /* a list: the first file of it */
        snprintf(path, sizeof(path), "%.*s", (int)strcspn(env, ":"), env);
        return load_kubeconfig(path, a, err);
    }
    if (svc && *svc && stat(SA_DIR "/token", &st) == 0)
        return load_in_cluster(a, err);
    if (home && *home) {
        snprintf(path, sizeof(path), "%s/.kube/config", home);
        if (stat(path, &st) == 0)
            return load_kubeconfig(path, a, err);
    }
    return llmsb_err_set(err, LLMSB_ERR_INVALID,
                         "kubernetes: no cluster to talk to: set kubernetes.kubeconfig or "
                         "$KUBECONFIG, run inside a pod with a service account, or write "
                         "~/.kube/config");
}

void k8s_auth_release(struct k8s_auth *a)
{
    free(a->ca_pem);
    free(a->cert_pem);
    free(a->key_pem);
    free(a->token);
    memset(a, 0, sizeof(*a));
}
