/* internal.h - shared inside the Kubernetes backend (kubernetes.c,
 * config.c): who we are to the API server, and what a pod's status
 * says of its start. */
#ifndef LLMSB_K8S_INT_H
#define LLMSB_K8S_INT_H

#include <cjson/cJSON.h>
#include <errno.h>
#include "backends/backend.h"

struct k8s_auth {
    char server[256]; /* https://host:port */
    char ns[64];      /* the context's or the pod's namespace; "" if none */
    char *ca_pem, *cert_pem, *key_pem, *token;
    int insecure;
    char source[600]; /* where this came from, for messages */
};

/* Loads kubeconfig (a path; NULL or "": $KUBECONFIG, the pod's service
 * account, ~/.kube/config, in that order). */
int k8s_auth_load(const char *kubeconfig, struct k8s_auth *a, struct llmsb_err *err);
void k8s_auth_release(struct k8s_auth *a);

/* Reads a pod object (kubernetes.c): st as a container_state; fatal gets
 * why it will never start by itself ("" if it may: an image it cannot get,
 * a container that ended, a Failed pod, an eviction), pending why it is not
 * running (yet), in the pod's own words: the container's waiting reason,
 * the False conditions (Unschedulable and the scheduler's message), the
 * pod's reason, or that no node was assigned and no scheduler answered. */
void k8s_pod_state(const cJSON *pod, struct container_state *st, char *fatal, size_t fsz,
                   char *pending, size_t psz);

#endif
