/* images_int.h - what images.c shares with custom.c: progress lines, the
 * in-memory build context, reading a file, where the agent is. */
#ifndef LLMSB_IMAGES_INT_H
#define LLMSB_IMAGES_INT_H

#include <archive.h>
#include <sys/types.h>
#include "images.h"
#include "languages/languages.h"

/* Where the agent goes in every image. */
#define IMAGES_AGENT_PATH "/usr/local/bin/llmsb-agent"

/* A progress line (nothing when o->progress is NULL). */
void images_say(const struct images_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The engine's progress lines, prefixed "[tag] ". */
struct say_ctx {
    const struct images_opts *o;
    const char *tag;
};
void images_progress(void *ud, const char *line);

/* Appends one finding of an audit to f, as a line "  - <text>". */
void images_finding(struct buf *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An upload read from memory (backend_read_cb). */
struct mem_reader {
    const char *p;
    size_t len, off;
};
ssize_t images_mem_read(void *ud, char *dst, size_t max);

/* libarchive's writer into a struct buf (ud); a write past the buffer's
 * cap fails with archive_errno EFBIG. */
la_ssize_t images_ctx_write(struct archive *a, void *ud, const void *p, size_t n);
/* One regular file of the context, mtime 0. */
int images_ctx_add(struct archive *a, const char *name, const char *data, size_t len, int mode);
/* l's hook files, under dir/ in the context. */
int images_ctx_add_hooks(struct archive *a, const struct language *l, const char *dir);
/* Reads a whole file into b (bounded by b's cap); what names it in errors. */
int images_read_file(const char *path, const char *what, struct buf *b, struct llmsb_err *err);
/* The agent binary: $LLMSB_AGENT, else next to this executable. */
void images_agent_path(char *out, size_t outsz);

#endif
