/* opts.h - an engine's settings beyond its address (struct backend_opts),
 * apart from the ops table: config/ holds them in struct config, and what
 * includes config/config.h (job/, eval/) reaches this header, not the
 * engines' whole interface. */
#ifndef LLMSB_BACKEND_OPTS_H
#define LLMSB_BACKEND_OPTS_H

#include <stdint.h>

/* Settings of an engine beyond its address, in words of no engine: the
 * config section of the backend in use (kubernetes.*; backend.tls_verify
 * and backend.cert_path for Docker and Podman over tcp://).  An engine reads those it has and ignores the rest; all
 * zero = every default. */
struct backend_opts {
    char client_config[512]; /* the engine client's config file (a kubeconfig); "" = its search */
    char ns[64];             /* where sandboxes are made (a namespace); "" = the client config's */
    char node[254];          /* the machine sandboxes run on; "" = the engine places them */
    char pull_policy[16]; /* when images are pulled: IfNotPresent, Never, Always; "" = the first */
    int64_t start_timeout_ms; /* created to running; 0 = the engine's default */
    char tls_verify[8];       /* "true", "false" (TLS, server unchecked); "" = the environment's */
    char cert_path[512];      /* ca.pem, cert.pem, key.pem; "" = the environment's */
};

#endif
