/* k8s_int.h - shared inside the Kubernetes backend (kubernetes.c,
 * k8s_config.c): who we are to the API server. */
#ifndef LLMSB_K8S_INT_H
#define LLMSB_K8S_INT_H

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

#endif
