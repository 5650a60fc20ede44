/* internal.h - shared inside the Kubernetes backend (kubernetes.c,
 * config.c): who we are to the API server, and what a pod's status
 * says of its start. */
#ifndef LLMSB_KUBERNETES_INTERNAL_H
#define LLMSB_KUBERNETES_INTERNAL_H

#include <cjson/cJSON.h>
#include <errno.h>
#include "backends/backend.h"
#include "backends/http/http.h"

/* The backend's state (b->priv). */
struct kubernetes {
    struct http_client http;
    char ns[64];
    char node[254];
    char pull[16];
    int64_t start_ms;
    char source[600];
};

/* The pod of a sandbox: the hardening spec of s (hardening.h) in the pod
 * API's words, in k's namespace, on k's node.  Returns a new string,
 * caller frees; NULL out of memory. */
char *kubernetes_pod_body(const struct kubernetes *k, const struct container_spec *s);

struct kubernetes_auth {
    char server[256]; /* https://host:port */
    char ns[64];      /* the context's or the pod's namespace; "" if none */
    char *ca_pem, *cert_pem, *key_pem, *token;
    int insecure;
    char source[600]; /* where this came from, for messages */
};

/* Loads kubeconfig (a path; NULL or "": $KUBECONFIG, the pod's service
 * account, ~/.kube/config, in that order). */
int kubernetes_auth_load(const char *kubeconfig, struct kubernetes_auth *a, struct llmsb_err *err);
void kubernetes_auth_release(struct kubernetes_auth *a);

/* Reads a pod object (kubernetes.c): st as a container_state; fatal gets
 * why it will never start by itself ("" if it may: an image it cannot get,
 * a container that ended, a Failed pod, an eviction), pending why it is not
 * running (yet), in the pod's own words: the container's waiting reason,
 * the False conditions (Unschedulable and the scheduler's message), the
 * pod's reason, or that no node was assigned and no scheduler answered. */
void kubernetes_pod_state(const cJSON *pod, struct container_state *st, char *fatal, size_t fsz,
                          char *pending, size_t psz);
/* From a pod list (GET .../pods): the imageID the kubelet reports for a
 * container whose spec names image, of a pod not being deleted.  Returns
 * 0 with out set, or LLMSB_ERR_NOTFOUND when no such container runs. */
int kubernetes_pods_image_id(const cJSON *list, const char *image, char *out, size_t outsz);

/* What a RuntimeClass object (GET /apis/node.k8s.io/v1/runtimeclasses/N)
 * runs, by its handler: gVisor for runsc's or "gvisor"
 * (backend_runtime_is_runsc), the host's (or a VM's) kernel for another,
 * unknown without one.  An enum backend_runtime_kind. */
int kubernetes_runtime_class_kind(const cJSON *rc);

#endif
