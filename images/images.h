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
#include <stdint.h>
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

/* ---- custom images (custom.c) ------------------------------------------------ */

/* A user's Dockerfile to build as llmsb/custom/<name> for language lang. */
struct images_custom {
    const char *dockerfile; /* a file */
    const char *name;       /* images_custom_name_ok */
    const char *lang;       /* a language name or alias */
    const char *context;    /* a directory (the caller defaults it to the Dockerfile's) */
};

/* What a build made: repo "llmsb/custom/<name>", its content hash, the
 * tag of the image built but not yet checked (outside "llmsb/", so no job
 * can name it: "llmsb-unchecked/<name>:<hash>-<pid>"), and the image id
 * the build made, resolved once right after it: every check and the final
 * tags use the id, never a name another build could move.  The nonce and
 * the agent's size and hash are what the image's files must show
 * (images_custom_tree_judge). */
struct images_custom_tags {
    char repo[128];
    char hash[16];
    char unchecked[160];
    char id[160];
    char lang[32];  /* the language's own name */
    int up_to_date; /* 1: <repo>:<hash> existed (and :latest now names it) */
    char nonce[33]; /* this build's, in each mark of our layer's steps */
    long long agent_bytes;
    uint64_t agent_hash; /* FNV-1a of the agent copied in */
};

/* 1 when name is one path component of an image name: 1 to 64 of a-z,
 * 0-9, with single '.', '_' or '-' between them. */
int images_custom_name_ok(const char *name);

/* 0 when the sandbox layer can follow the Dockerfile df (n bytes, read
 * from path): its last instruction must not end in a line continuation
 * (the escape character, '\\' or a "# escape=" directive's), which would
 * swallow our first line; else LLMSB_ERR_INVALID naming path:line. */
int images_custom_dockerfile_check(const char *df, size_t n, const char *path,
                                   struct llmsb_err *err);

/* The sandbox layer appended to a user's Dockerfile for l (new string).
 * Each of its RUN steps ends by adding the line "<step> <nonce>" to
 * IMAGES_CUSTOM_MARKS, the first one starting the file afresh. */
char *images_custom_layer(const struct language *l, const char *name, int64_t uid,
                          const char *nonce);

#define IMAGES_CUSTOM_MARKS "/usr/local/lib/llmsb/custom-steps"

/* The text IMAGES_CUSTOM_MARKS holds when every RUN step of l's layer ran
 * with nonce, into out (at most outsz - 1 bytes and a NUL). */
void images_custom_marks(const struct language *l, const char *nonce, char *out, size_t outsz);

/* Builds c as t->unchecked, unless <repo>:<hash> exists (then t->up_to_date
 * and <repo>:latest names it).  The hash covers the context (the user's
 * tree and Dockerfile, our layer but for t->nonce, the agent, the hooks)
 * and the ids of the local images its FROM lines name; t->nonce is new.  Bad input: LLMSB_ERR_INVALID naming
 * the option, the value and why; a failed check of our layer says what is
 * missing; a failed build says so (the engine's output went to
 * o->progress). */
int images_custom_build(struct backend *be, const struct config *cfg, const struct images_custom *c,
                        const struct images_opts *o, struct images_custom_tags *t,
                        struct llmsb_err *err);

/* Appends to findings a line for each thing the image's configuration
 * gets wrong (a VOLUME, a loader variable in ENV, a USER other than root,
 * another entrypoint, another llmsb.lang).  Nothing when the engine cannot
 * say (no image_config). */
int images_custom_audit(struct backend *be, const char *image, const char *lang,
                        struct buf *findings, struct llmsb_err *err);

/* The audit of the image's files from outside, as root (tree.c): the
 * engine's export of container id (one of t->id, created and never
 * started) read as a tar stream.  Appends to findings a line for each
 * setuid or setgid file, file with capabilities, world-writable file and
 * world-writable directory without the sticky bit, each step of our layer
 * that left no mark, and each file our layer copied in (the agent, the
 * hooks) that is missing or not the one copied.  An engine without an
 * export, or an export that fails, is an error: the image is not tagged. */
int images_custom_tree_audit(struct backend *be, const char *id, const struct images_custom_tags *t,
                             struct buf *findings, struct llmsb_err *err);

/* The judging part of images_custom_tree_audit, over a tar reader a the
 * caller opened (it reads a to its end): the findings as above; an error
 * only when a is not a readable tar. */
struct archive;
int images_custom_tree_judge(struct archive *a, const struct images_custom_tags *t,
                             struct buf *findings, struct llmsb_err *err);

/* Tags the image t->id as <repo>:<hash> and <repo>:latest (it passed)
 * and drops the unchecked tag. */
int images_custom_accept(struct backend *be, const struct images_custom_tags *t,
                         struct llmsb_err *err);

/* Drops the unchecked tag of a build that was refused or failed; the
 * engine deletes the image with its last tag. */
void images_custom_discard(struct backend *be, const struct images_custom_tags *t);

#endif
