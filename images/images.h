/* images.h - building the sandbox images with no container registry.
 *
 * A Debian bookworm base comes from, in order: an imported base already
 * present, a local copy of config images.base (debian:bookworm-slim), a
 * pull of it if a registry answers, or debootstrap + image import.  Each
 * language image is built on it through the engine's build API from a
 * recipe held in this binary, with the agent copied in, and tagged
 * llmsb/<lang>:<recipe hash> and :latest.  An image whose hash tag exists
 * is not rebuilt.  The base is also tagged llmsb/base:latest, which the
 * worker and Redis images of docker-compose.yml build on. */
#ifndef LLMSB_IMAGES_H
#define LLMSB_IMAGES_H

#include <stddef.h>
#include <stdio.h>
#include "backends/backend.h"
#include "config/config.h"

struct images_opts {
    int force;              /* rebuild even when the hash tag exists */
    FILE *progress;         /* progress lines go here (NULL: silent) */
    const char *agent_path; /* NULL: next to this executable, or $LLMSB_AGENT */
};

/* Builds the images of the named languages (none: all). */
int images_build(struct backend *be, const struct config *cfg, const char *const *langs,
                 size_t nlangs, const struct images_opts *opts, struct llmsb_err *err);

/* The Dockerfile text for a language on a base; with_ca: the context has
 * extra CA certificates under ca/; cfg (may be NULL) brings the
 * pool.preinstall libraries and their registries. Returns a new string. */
char *images_dockerfile(const struct language *l, const char *base, int64_t uid, int with_ca,
                        const struct config *cfg);

#endif
