/* tree.c - a custom image's files, read from outside (images.h,
 * images_custom_tree_audit).  The engine's export of a container of the
 * image, created and never started, is read as a tar stream with
 * libarchive: every file's mode, owner and capabilities are seen, whatever
 * its directories' modes (a mode-711 directory, which the sandbox user
 * cannot list, hides nothing here), and nothing of the image runs to
 * report them (no shell, find or getcap of its own that could lie).  Each setuid or setgid
 * file, file with capabilities, world-writable file and world-writable
 * directory without the sticky bit is a finding; so is each RUN step of our
 * layer that left no mark with this build's nonce, and each file our layer
 * copied in (the agent, the hooks) that is missing or not the one copied. */
#include "images.h"
#include "images_int.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TREE_SHOWN 20       /* findings of one kind listed; the rest counted */
#define TREE_MARKS_MAX 4096 /* the marks file kept to compare */
#define TREE_READ_BLOCK 65536

enum tree_kind { TREE_SETID, TREE_CAPS, TREE_WW_DIR, TREE_WW_FILE, TREE_KINDS };

static const char *const tree_kind_what[TREE_KINDS] = {
    "a setuid or setgid file",
    "a file with capabilities",
    "a world-writable directory without the sticky bit",
    "a world-writable file",
};

/* A file our layer put in the image, as it must be found there. */
struct tree_want {
    const char *what;
    char path[256]; /* without its leading '/' */
    long long size;
    uint64_t hash;
    int mode;  /* its permission bits; -1: any */
    int marks; /* the marks file: kept, judged by its lines */
    int found; /* 0 absent, 1 as wanted, -1 otherwise */
    char why[96];
};

struct tree_judge {
    struct tree_want want[LANG_MAX_HOOKS + 2];
    int nwant;
    int count[TREE_KINDS];
    char expect_marks[256];
    struct buf marks;
    struct buf *findings;
};

static void tree_want_add(struct tree_judge *j, const char *what, const char *path,
                          const char *data, size_t len, int mode, int marks)
{
    struct tree_want *w = &j->want[j->nwant++];

    *w = (struct tree_want){.what = what, .size = (long long)len, .mode = mode, .marks = marks};
    snprintf(w->path, sizeof(w->path), "%s", path + (path[0] == '/'));
    w->hash = hash_fnv1a(0, data, len);
}

/* What t's build put in the image: the agent, l's hooks, the marks. */
static void tree_judge_init(struct tree_judge *j, const struct images_custom_tags *t,
                            struct buf *findings)
{
    const struct language *l = language_find(t->lang);

    memset(j, 0, sizeof(*j));
    j->findings = findings;
    buf_init(&j->marks, TREE_MARKS_MAX);
    tree_want_add(j, "agent", IMAGES_AGENT_PATH, "", 0, 0755, 0);
    j->want[0].size = t->agent_bytes;
    j->want[0].hash = t->agent_hash;
    for (int i = 0; l && i < LANG_MAX_HOOKS && l->hooks[i].file; i++) {
        const struct lang_hook_file *h = language_hook_file(l->hooks[i].file);
        if (h)
            tree_want_add(j, "hook", l->hooks[i].dest, h->data, (size_t)(h->end - h->data),
                          l->hooks[i].mode, 0);
    }
    if (l)
        images_custom_marks(l, t->nonce, j->expect_marks, sizeof(j->expect_marks));
    tree_want_add(j, "marks", IMAGES_CUSTOM_MARKS, j->expect_marks, strlen(j->expect_marks), -1, 1);
}

/* A finding of kind k about the entry at path (escaped: the image's text). */
static void tree_flag(struct tree_judge *j, enum tree_kind k, const char *path,
                      struct archive_entry *e)
{
    char shown[300];

    if (j->count[k]++ >= TREE_SHOWN)
        return;
    llmsb_escape(shown, sizeof(shown), path, strlen(path));
    images_finding(j->findings, "in the image's files: %s: /%s (mode %04o, owner %lld:%lld)",
                   tree_kind_what[k], shown, (unsigned)archive_entry_perm(e) & 07777,
                   (long long)archive_entry_uid(e), (long long)archive_entry_gid(e));
}

static int has_caps(struct archive_entry *e)
{
    const char *name;
    const void *value;
    size_t size;

    archive_entry_xattr_reset(e);
    while (archive_entry_xattr_next(e, &name, &value, &size) == ARCHIVE_OK)
        if (strcmp(name, "security.capability") == 0)
            return 1;
    return 0;
}

/* Reads the data of the entry w names, judging it against w. */
static int tree_want_read(struct tree_judge *j, struct tree_want *w, struct archive *a,
                          struct archive_entry *e, struct llmsb_err *err)
{
    char chunk[TREE_READ_BLOCK];
    long long size = 0;
    uint64_t h = hash_fnv1a(0, "", 0);
    la_ssize_t n;

    if (archive_entry_filetype(e) != AE_IFREG || archive_entry_hardlink(e)) {
        snprintf(w->why, sizeof(w->why), "not a regular file");
        w->found = -1;
        return 0;
    }
    while ((n = archive_read_data(a, chunk, sizeof(chunk))) > 0) {
        h = hash_fnv1a(h, chunk, (size_t)n);
        size += n;
        if (w->marks)
            buf_append_some(&j->marks, chunk, (size_t)n);
    }
    if (n < 0)
        return llmsb_err_set(err, LLMSB_ERR_BACKEND, "images build: the image's files: /%s: %s",
                             w->path, archive_error_string(a));
    w->found = 1;
    if (archive_entry_uid(e) != 0)
        snprintf(w->why, sizeof(w->why), "owner %lld, not root", (long long)archive_entry_uid(e));
    else if (w->mode >= 0 && (int)(archive_entry_perm(e) & 07777) != w->mode)
        snprintf(w->why, sizeof(w->why), "mode %04o, not %04o",
                 (unsigned)archive_entry_perm(e) & 07777, (unsigned)w->mode);
    else if (!w->marks && (size != w->size || h != w->hash))
        snprintf(w->why, sizeof(w->why), "%lld bytes, not the %lld copied in", size, w->size);
    if (w->why[0])
        w->found = -1;
    return 0;
}

/* Judges one entry of the tar. */
static int tree_entry(struct tree_judge *j, struct archive *a, struct archive_entry *e,
                      struct llmsb_err *err)
{
    const char *raw = archive_entry_pathname(e);
    char path[4096];
    size_t n;
    unsigned mode = (unsigned)archive_entry_perm(e);
    int type = (int)archive_entry_filetype(e);

    raw = raw ? raw : "";
    while (raw[0] == '/' || (raw[0] == '.' && raw[1] == '/'))
        raw += raw[0] == '/' ? 1 : 2;
    n = strlen(raw);
    while (n && raw[n - 1] == '/')
        n--;
    n = n < sizeof(path) ? n : sizeof(path) - 1;
    snprintf(path, sizeof(path), "%.*s", (int)n, raw);
    if (type == AE_IFREG && (mode & 06000))
        tree_flag(j, TREE_SETID, path, e);
    if (has_caps(e))
        tree_flag(j, TREE_CAPS, path, e);
    if (type == AE_IFDIR && (mode & 0002) && !(mode & 01000))
        tree_flag(j, TREE_WW_DIR, path, e);
    if (type == AE_IFREG && (mode & 0002))
        tree_flag(j, TREE_WW_FILE, path, e);
    for (int i = 0; i < j->nwant; i++)
        if (strcmp(path, j->want[i].path) == 0 && !j->want[i].found)
            return tree_want_read(j, &j->want[i], a, e, err);
    return archive_read_data_skip(a) == ARCHIVE_FATAL
               ? llmsb_err_set(err, LLMSB_ERR_BACKEND, "images build: the image's files: %s",
                               archive_error_string(a))
               : 0;
}

/* Each step whose line "<step> <nonce>" the marks file lacks. */
static void tree_judge_marks(struct tree_judge *j, const struct tree_want *w)
{
    const char *p = j->expect_marks;

    for (size_t n; *p; p += n + 1) {
        char line[128];
        int has = 0;
        n = strcspn(p, "\n");
        snprintf(line, sizeof(line), "%.*s", (int)n, p);
        for (const char *m = j->marks.data; m && w->found > 0 && !has;) {
            size_t k = strcspn(m, "\n");
            has = k == n && memcmp(m, p, n) == 0;
            m = m[k] ? m + k + 1 : NULL;
        }
        if (!has)
            images_finding(
                j->findings,
                "our layer's step \"%.*s\" left no mark in " IMAGES_CUSTOM_MARKS
                "%s%s%s: it did not run (a SHELL, a /bin/sh or a line continuation of the "
                "Dockerfile's may have switched it off)",
                (int)strcspn(line, " "), line, w->found ? " (" : "",
                w->found ? (w->why[0] ? w->why : "not this build's") : "", w->found ? ")" : "");
        if (!p[n])
            break;
    }
}

/* The findings of what was, or was not, seen by the end. */
static void tree_judge_end(struct tree_judge *j)
{
    for (int k = 0; k < TREE_KINDS; k++)
        if (j->count[k] > TREE_SHOWN)
            images_finding(j->findings, "in the image's files: %d more of: %s",
                           j->count[k] - TREE_SHOWN, tree_kind_what[k]);
    for (int i = 0; i < j->nwant; i++) {
        const struct tree_want *w = &j->want[i];
        if (w->marks)
            tree_judge_marks(j, w);
        else if (w->found == 0)
            images_finding(j->findings, "our layer's %s /%s is not in the image", w->what, w->path);
        else if (w->found < 0)
            images_finding(j->findings, "our layer's %s /%s is not the one it copied in: %s",
                           w->what, w->path, w->why);
    }
}

int images_custom_tree_judge(struct archive *a, const struct images_custom_tags *t,
                             struct buf *findings, struct llmsb_err *err)
{
    struct tree_judge *j = malloc(sizeof(*j));
    struct archive_entry *e;
    int rc = 0, r;

    if (!j)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "images build: out of memory");
    tree_judge_init(j, t, findings);
    while (rc == 0 && (r = archive_read_next_header(a, &e)) != ARCHIVE_EOF) {
        if (r < ARCHIVE_WARN)
            rc = llmsb_err_set(err, LLMSB_ERR_BACKEND, "images build: the image's files: %s",
                               archive_error_string(a) ? archive_error_string(a) : "not a tar");
        else
            rc = tree_entry(j, a, e, err);
    }
    if (rc == 0) {
        buf_append(&j->marks, "", 1); /* a string, for tree_judge_marks */
        tree_judge_end(j);
    }
    buf_release(&j->marks);
    free(j);
    return rc;
}

/* ---- the export, read as it arrives ----------------------------------------- */

/* The engine pushes the export to tree_feed; a thread reads the other end
 * of a socket pair with libarchive (which pulls). */
struct tree_reader {
    int fd;
    const struct images_custom_tags *t;
    struct buf *findings;
    struct llmsb_err err;
    int rc;
};

static void *tree_read_main(void *ud)
{
    struct tree_reader *r = ud;
    struct archive *a = archive_read_new();
    char sink[TREE_READ_BLOCK];

    archive_read_support_format_tar(a);
    if (archive_read_open_fd(a, r->fd, TREE_READ_BLOCK) != ARCHIVE_OK)
        r->rc = llmsb_err_set(&r->err, LLMSB_ERR_BACKEND, "images build: the image's files: %s",
                              archive_error_string(a));
    else
        r->rc = images_custom_tree_judge(a, r->t, r->findings, &r->err);
    archive_read_free(a);
    /* judged: the rest (the tar's padding) is read, so the export ends as
     * sent; not judged: the export is stopped */
    while (r->rc == 0 && read(r->fd, sink, sizeof(sink)) > 0)
        ;
    shutdown(r->fd, SHUT_RDWR);
    return NULL;
}

struct tree_feed {
    int fd;
    int refused; /* the reader stopped taking bytes */
};

static int tree_feed(void *ud, const char *p, size_t n)
{
    struct tree_feed *f = ud;

    while (n > 0) {
        ssize_t w = send(f->fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            f->refused = 1;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int images_custom_tree_audit(struct backend *be, const char *id, const struct images_custom_tags *t,
                             struct buf *findings, struct llmsb_err *err)
{
    int sv[2] = {-1, -1}, rc;
    struct tree_reader r = {.t = t, .findings = findings};
    struct tree_feed f = {-1, 0};
    pthread_t th;

    if (!be->ops->container_export)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "images build: the %s backend cannot export a container's files, so "
                             "%s cannot be audited from outside",
                             be->ops->name, t->unchecked);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return llmsb_err_set(err, LLMSB_ERR_SYS, "images build: socketpair: %s", strerror(errno));
    r.fd = sv[0];
    f.fd = sv[1];
    if ((rc = pthread_create(&th, NULL, tree_read_main, &r)) != 0) {
        close(sv[0]);
        close(sv[1]);
        return llmsb_err_set(err, LLMSB_ERR_SYS, "images build: pthread_create: %s", strerror(rc));
    }
    rc = be->ops->container_export(be, id, tree_feed, &f, err);
    shutdown(sv[1], SHUT_WR); /* the end of the tar for the reader */
    pthread_join(th, NULL);
    close(sv[0]);
    close(sv[1]);
    /* the reader's error when it stopped the export, else the export's */
    if (r.rc != 0 && (rc == 0 || f.refused)) {
        *err = r.err;
        return r.rc;
    }
    if (rc != 0)
        return llmsb_err_wrap(err, "images build: the files of %s", t->unchecked);
    return 0;
}
