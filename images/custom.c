/* custom.c - a user's Dockerfile made into a sandbox image (images.h,
 * images_custom_build).  One build through the engine's build API: the
 * user's Dockerfile with the sandbox layer appended to its last stage
 * (root again, the language's commands checked, the sandbox user, the
 * language's hooks and setup, setuid and setgid bits stripped, the agent
 * as the entrypoint, the llmsb.lang label), in a context of the user's
 * directory plus our files under .llmsb/.  The image's configuration is
 * then audited (images_custom_audit); the caller runs the checks that need
 * a container and, when they pass, images_custom_accept tags it. */
#include "images.h"
#include "images_int.h"

#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#define CUSTOM_DIR ".llmsb"                     /* our files in the context */
#define CUSTOM_DOCKERFILE_MAX ((size_t)1 << 20) /* the user's Dockerfile */
#define CUSTOM_CONTEXT_MAX ((size_t)256 << 20)  /* the whole context tar */
#define CUSTOM_NAME_MAX 64

int images_custom_name_ok(const char *name)
{
    size_t n = strlen(name);

    if (n == 0 || n > CUSTOM_NAME_MAX || !isalnum((unsigned char)name[0]) ||
        !isalnum((unsigned char)name[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (isdigit(c) || (c >= 'a' && c <= 'z'))
            continue;
        if (!strchr("._-", c) || !isalnum((unsigned char)name[i + 1]))
            return 0; /* a separator is single, between letters or digits */
    }
    return 1;
}

/* Our layer's RUN steps, in order; "setup" only for a language with one.
 * Each ends by adding "<step> <nonce>" to IMAGES_CUSTOM_MARKS, so the
 * image's files, read from outside after the build, show which ran: a
 * step a Dockerfile switched off (a SHELL of its own, a /bin/sh that does
 * nothing, a continuation that swallowed our SHELL line) leaves no mark,
 * and the nonce, new for each build, makes a mark of an earlier build (an
 * image built FROM a custom one) not count. */
static const char *const layer_steps[] = {"tools", "user", "setup", "strip"};

static int layer_has(const struct language *l, size_t step)
{
    return strcmp(layer_steps[step], "setup") != 0 || l->image_setup;
}

/* The end of a RUN step: its mark (the first step starts the file afresh). */
static void layer_mark(struct buf *b, size_t step, const char *nonce)
{
    if (step == 0)
        buf_printf(b,
                   " && mkdir -p /usr/local/lib/llmsb && rm -f " IMAGES_CUSTOM_MARKS
                   " && echo \"%s %s\" >" IMAGES_CUSTOM_MARKS "\n",
                   layer_steps[step], nonce);
    else
        buf_printf(b, " && echo \"%s %s\" >>" IMAGES_CUSTOM_MARKS "\n", layer_steps[step], nonce);
}

void images_custom_marks(const struct language *l, const char *nonce, char *out, size_t outsz)
{
    size_t o = 0;

    if (outsz)
        out[0] = '\0';
    for (size_t i = 0; i < sizeof(layer_steps) / sizeof(layer_steps[0]) && o < outsz; i++)
        if (layer_has(l, i)) {
            int n = snprintf(out + o, outsz - o, "%s %s\n", layer_steps[i], nonce);
            o += n > 0 ? (size_t)n : 0;
        }
}

/* The sandbox layer, appended to the user's last stage.  Its checks print
 * a line starting "llmsb: " and fail the build; the caller shows that line.
 * It takes nothing from the stage it must not: the shell is set back
 * (a SHELL of the user's would make our steps no-ops), root is uid 0 by
 * number (not the name through the image's /etc/passwd), and every strip
 * fails the build when it fails.  The steps still run the image's
 * /bin/sh, find, chmod and setcap: its contents are trusted as root
 * (docs/security.md); what matters is looked at again after the build,
 * from outside the image (tree.c: every file's mode and capabilities, the
 * steps' marks, our files) and from inside a sandbox (exec/image_check.c). */
char *images_custom_layer(const struct language *l, const char *name, int64_t uid,
                          const char *nonce)
{
    struct buf b;

    buf_init(&b, 16384);
    buf_printf(&b,
               "\n# ---- the sandbox layer of llm-sandbox (images build --dockerfile) ----\n"
               "SHELL [\"/bin/sh\", \"-c\"]\n"
               "USER 0:0\n"
               "RUN for c in %s; do command -v \"$c\" >/dev/null 2>&1 || { echo \"llmsb: --lang "
               "%s needs the command $c on PATH, and this image has none (install it in the "
               "Dockerfile)\"; exit 1; }; done",
               l->tools, l->name);
    layer_mark(&b, 0, nonce);
    buf_printf(&b,
               "RUN command -v useradd >/dev/null 2>&1 || { echo \"llmsb: the image has no "
               "useradd: build FROM a Debian or Ubuntu image\"; exit 1; }; "
               "(getent group %lld >/dev/null || groupadd -g %lld sandbox) && "
               "(getent passwd %lld >/dev/null || useradd -u %lld -g %lld -M -d /tmp "
               "-s /usr/sbin/nologin sandbox) && mkdir -p /work && chmod 1777 /work",
               (long long)uid, (long long)uid, (long long)uid, (long long)uid, (long long)uid);
    layer_mark(&b, 1, nonce);
    for (int i = 0; i < LANG_MAX_HOOKS && l->hooks[i].file; i++)
        buf_printf(&b, "COPY " CUSTOM_DIR "/hooks/%s %s\n", l->hooks[i].file, l->hooks[i].dest);
    if (l->image_setup) { /* a subshell: the mark follows the whole setup */
        buf_printf(&b, "RUN (%s)", l->image_setup);
        layer_mark(&b, 2, nonce);
    }
    /* no_new_privileges already makes a setuid bit or a file capability
     * grant nothing; none is left either (a chmod or setcap that fails
     * fails the build; the image's files are looked at again after it) */
    buf_printf(&b, "RUN set -e; s=/tmp/.llmsb-strip; "
                   "find / -xdev -type f -perm /6000 -print -exec chmod ug-s {} + >$s; "
                   "sed 's/^/llmsb-stripped: /' $s; "
                   "if find / -xdev -type f -perm /6000 | grep -q .; then "
                   "echo 'llmsb: a setuid or setgid file is left'; exit 1; fi; "
                   "if command -v getcap >/dev/null 2>&1; then "
                   "find / -xdev -type f -exec getcap {} + | sed -n 's/ [^ ]*=[^ ]*$//p' >$s; "
                   "while read -r f; do setcap -r \"$f\"; echo \"llmsb-stripped: capabilities of "
                   "$f\"; done <$s; "
                   "if find / -xdev -type f -exec getcap {} + | grep -q .; then "
                   "echo 'llmsb: a file with capabilities is left'; exit 1; fi; fi; rm -f $s");
    layer_mark(&b, 3, nonce);
    buf_printf(&b,
               "COPY " CUSTOM_DIR "/llmsb-agent " IMAGES_AGENT_PATH "\n"
               "LABEL llmsb.lang=\"%s\" llmsb.custom=\"%s\"\n"
               "HEALTHCHECK NONE\n"
               "WORKDIR /work\n"
               "ENTRYPOINT [\"" IMAGES_AGENT_PATH "\"]\n"
               "CMD []\n",
               l->name, name);
    return buf_steal(&b);
}

/* ---- the user's Dockerfile, read as the engines' parsers read it ------------ */

/* The length of the white space at p (Go's unicode.IsSpace, with which
 * every engine's parser trims a line: ASCII's, NEL, NBSP and the Unicode
 * spaces, as UTF-8), 0 if none. */
static size_t df_space(const unsigned char *p, const unsigned char *e)
{
    size_t n = (size_t)(e - p);

    if (n >= 1 && (*p == ' ' || (*p >= '\t' && *p <= '\r')))
        return 1;
    if (n >= 2 && p[0] == 0xc2 && (p[1] == 0x85 || p[1] == 0xa0))
        return 2;
    if (n < 3 || p[2] < 0x80)
        return 0;
    if ((p[0] == 0xe1 && p[1] == 0x9a && p[2] == 0x80) || /* U+1680 */
        (p[0] == 0xe2 && p[1] == 0x80 &&                  /* U+2000-200A, 2028, 2029, 202F */
         (p[2] <= 0x8a || p[2] == 0xa8 || p[2] == 0xa9 || p[2] == 0xaf)) ||
        (p[0] == 0xe2 && p[1] == 0x81 && p[2] == 0x9f) || /* U+205F */
        (p[0] == 0xe3 && p[1] == 0x80 && p[2] == 0x80))   /* U+3000 */
        return 3;
    return 0;
}

/* The parsers that may read the file, each with its rule for a parser
 * directive (a "# name=value" line before any comment, blank line or
 * instruction): moby/buildkit's (Docker; names escape and syntax, and
 * check in later releases; a value trimmed, exactly ` or \ for escape) and
 * openshift/imagebuilder's (Podman's buildah, and Docker before 20.10:
 * only "# escape=" and its first character). */
enum df_parser { DF_BUILDKIT, DF_BUILDKIT_CHECK, DF_IMAGEBUILDER, DF_PARSERS };

struct df_directives {
    char esc;     /* the escape character, '\\' unless a directive set it */
    int esc_line; /* the line of that directive */
    int done;     /* no directive can follow */
    int failed;   /* the parser refuses the file (a bad or repeated directive) */
    unsigned seen;
};

static int df_re_space(char c) /* RE2's \s */
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

/* Reads line s..e (its leading white space trimmed) as parser p does while
 * directives may come: 1 a directive, 0 not one (none may follow), -1 one
 * the parser refuses; *esc is set by an escape directive. */
static int df_directive(enum df_parser p, const char *s, const char *e, char *esc, unsigned *seen)
{
    static const char *const names[] = {"escape", "syntax", "check"};
    size_t nnames = p == DF_BUILDKIT ? 2 : 3, k, len;
    const char *name;

    if (s == e || *s != '#')
        return 0;
    for (s++; s < e && (p == DF_IMAGEBUILDER ? (*s == ' ' || *s == '\t') : df_re_space(*s));)
        s++;
    if (p == DF_IMAGEBUILDER) { /* ^#[ \t]*escape[ \t]*=[ \t]*(.) */
        if ((size_t)(e - s) < 6 || strncasecmp(s, "escape", 6) != 0)
            return 0;
        for (s += 6; s < e && (*s == ' ' || *s == '\t');)
            s++;
        if (s == e || *s++ != '=')
            return 0;
        while (s < e && (*s == ' ' || *s == '\t'))
            s++;
        if (s == e)
            return 0;
        if ((*s != '`' && *s != '\\') || (*seen & 1))
            return -1;
        *seen |= 1;
        *esc = *s;
        return 1;
    }
    /* ^#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.+?)\s*$, the name a known one */
    for (name = s;
         s < e && (isalpha((unsigned char)*s) || (s > name && isdigit((unsigned char)*s)));)
        s++;
    len = (size_t)(s - name);
    while (s < e && df_re_space(*s))
        s++;
    if (len == 0 || s == e || *s++ != '=' || s == e) /* (.+?) needs a character */
        return 0;
    for (k = 0; k < nnames; k++)
        if (strlen(names[k]) == len && strncasecmp(name, names[k], len) == 0)
            break;
    if (k == nnames)
        return 0;
    while (s < e && df_re_space(*s))
        s++;
    while (e > s && df_re_space(e[-1]))
        e--;
    if (*seen & (1u << k))
        return -1; /* only one of each */
    *seen |= 1u << k;
    if (k == 0 && (e - s != 1 || (*s != '`' && *s != '\\')))
        return -1;
    if (k == 0)
        *esc = *s;
    return 1;
}

int images_custom_dockerfile_check(const char *df, size_t n, const char *path,
                                   struct llmsb_err *err)
{
    struct df_directives d[DF_PARSERS];
    const char *p = df, *end = df + n, *last = NULL, *last_end = NULL;
    int lineno = 0, last_no = 0, esc_line = 0;
    char esc = 0, note[64] = "";

    for (int i = 0; i < DF_PARSERS; i++)
        d[i] = (struct df_directives){'\\', 0, 0, 0, 0};
    if (n >= 3 && memcmp(df, "\xef\xbb\xbf", 3) == 0)
        p += 3; /* every parser drops a byte-order mark from the first line */
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end, *q = p;
        size_t k;
        lineno++;
        if (e > p && e[-1] == '\r')
            e--; /* the parsers' line scanner drops a CR before the LF */
        while ((k = df_space((const unsigned char *)q, (const unsigned char *)e)) != 0)
            q += k;
        for (int i = 0; i < DF_PARSERS; i++) {
            char c = 0;
            int r = d[i].done ? 0 : df_directive((enum df_parser)i, q, e, &c, &d[i].seen);
            if (r <= 0)
                d[i].done = 1;
            d[i].failed |= r < 0;
            if (r > 0 && c)
                d[i].esc = c, d[i].esc_line = lineno;
        }
        /* comment and blank lines do not end a continuation: they are skipped */
        if (q < e && *q != '#')
            last = q, last_end = e, last_no = lineno;
        p = nl ? nl + 1 : end;
    }
    while (last && last_end > last && isspace((unsigned char)last_end[-1]))
        last_end--;
    /* refused when any parser that accepts the file would continue it */
    for (int i = 0; last && last_end > last && i < DF_PARSERS && !esc; i++)
        if (!d[i].failed && last_end[-1] == d[i].esc)
            esc = d[i].esc, esc_line = d[i].esc_line;
    if (!esc)
        return 0;
    if (esc_line)
        snprintf(note, sizeof(note), ", the escape character of line %d's \"# escape=\"", esc_line);
    return llmsb_err_set(err, LLMSB_ERR_INVALID,
                         "images build: --dockerfile \"%s\":%d: the last instruction ends in a "
                         "line continuation ('%c'%s), which would swallow the first line of the "
                         "sandbox layer appended after it",
                         path, last_no, esc, note);
}

/* A context tar being written: a into out, from the user's tree at dir;
 * how many of its entries and how many bytes of their contents so far,
 * for an error that names them. */
struct ctx_tar {
    struct archive *a;
    struct buf *out;
    const char *dir;
    size_t entries, bytes;
};

/* The error of a failed write to the tar: past the cap (images_ctx_write
 * says EFBIG), the cap, the figure reached and what was in it by then; a
 * tar header of 512 bytes or more per file counts too, so many empty
 * files fill it as surely as a few big ones. */
static int ctx_tar_error(const struct ctx_tar *c, struct llmsb_err *err)
{
    const char *why = archive_error_string(c->a);

    if (archive_errno(c->a) != EFBIG)
        return llmsb_err_set(err, LLMSB_ERR_SYS, "images build: --context \"%s\": the tar: %s",
                             c->dir, why ? why : "write failed");
    return llmsb_err_set(err, LLMSB_ERR_LIMIT,
                         "images build: --context \"%s\": the context tar passes its cap of %zu "
                         "MB: %zu bytes written and the next block does not fit, with %zu files "
                         "and directories of the context in it (%zu bytes of contents; each "
                         "takes a tar header of 512 bytes or more)",
                         c->dir, c->out->cap >> 20, c->out->len, c->entries, c->bytes);
}

/* Writes a file of the user's tree (e, read from disk) and its bytes. */
static int tree_entry_write(struct ctx_tar *c, struct archive_entry *e, struct llmsb_err *err)
{
    const char *src = archive_entry_sourcepath(e);
    char chunk[65536];
    ssize_t n = 0;
    int in = -1, rc = 0;

    if (archive_write_header(c->a, e) < ARCHIVE_WARN)
        return ctx_tar_error(c, err);
    c->entries++;
    if (archive_entry_filetype(e) != AE_IFREG || archive_entry_size(e) == 0)
        return 0;
    if ((in = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
        return llmsb_err_set(err, LLMSB_ERR_SYS, "images build: --context file \"%s\": %s", src,
                             strerror(errno));
    while (rc == 0 && (n = read(in, chunk, sizeof(chunk))) > 0)
        if (archive_write_data(c->a, chunk, (size_t)n) != n)
            rc = ctx_tar_error(c, err);
    if (rc == 0 && n < 0)
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "images build: read \"%s\": %s", src,
                           strerror(errno));
    close(in);
    return rc;
}

/* The top-level names of the user's tree not sent: the Dockerfile and
 * .llmsb (ours take their place), and the ignore files, which Podman's
 * build reads from the context (it could leave out our .llmsb) and
 * Docker's does not: the whole tree is sent on both. */
static int ctx_left_out(const char *rel)
{
    static const char *const names[] = {"Dockerfile", CUSTOM_DIR, ".dockerignore",
                                        ".containerignore"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(rel, names[i]) == 0)
            return 1;
    return 0;
}

/* Adds the tree at c->dir, paths relative to it, times zeroed (the hash
 * and the engine's cache see contents, not when a file was touched), less
 * what ctx_left_out names. */
static int ctx_add_tree(struct ctx_tar *c, struct llmsb_err *err)
{
    struct archive *disk = archive_read_disk_new();
    struct archive_entry *e;
    size_t dl = strlen(c->dir);
    int rc = 0, r;

    archive_read_disk_set_symlink_physical(disk);
    archive_read_disk_set_standard_lookup(disk);
    if (archive_read_disk_open(disk, c->dir) != ARCHIVE_OK) {
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "images build: --context \"%s\": %s", c->dir,
                           archive_error_string(disk));
        goto out;
    }
    while (rc == 0) {
        const char *path, *rel;
        e = archive_entry_new();
        if ((r = archive_read_next_header2(disk, e)) == ARCHIVE_EOF) {
            archive_entry_free(e);
            break;
        }
        path = archive_entry_pathname(e);
        rel = path + (strncmp(path, c->dir, dl) == 0 ? dl : 0);
        while (*rel == '/')
            rel++;
        if (r < ARCHIVE_WARN) {
            rc = llmsb_err_set(err, LLMSB_ERR_SYS, "images build: --context \"%s\": %s", c->dir,
                               archive_error_string(disk));
        } else if (*rel && !ctx_left_out(rel)) {
            archive_read_disk_descend(disk);
            archive_entry_set_pathname(e, rel);
            archive_entry_set_mtime(e, 0, 0);
            archive_entry_unset_atime(e);
            archive_entry_unset_ctime(e);
            archive_entry_unset_birthtime(e);
            archive_entry_set_uname(e, NULL);
            archive_entry_set_gname(e, NULL);
            /* a sparse file is sent whole (the engine unpacks it whole):
             * its logical size counts against the cap, holes and all */
            archive_entry_sparse_clear(e);
            c->bytes += archive_entry_size(e) > 0 ? (size_t)archive_entry_size(e) : 0;
            if (c->bytes > CUSTOM_CONTEXT_MAX)
                rc = llmsb_err_set(err, LLMSB_ERR_LIMIT,
                                   "images build: --context \"%s\": with \"%s\" (%lld bytes) "
                                   "its files pass %zu MB",
                                   c->dir, rel, (long long)archive_entry_size(e),
                                   CUSTOM_CONTEXT_MAX >> 20);
            else
                rc = tree_entry_write(c, e, err);
        } else if (!*rel) {
            archive_read_disk_descend(disk);
        }
        archive_entry_free(e);
    }
out:
    archive_read_free(disk);
    return rc;
}

/* The context: the user's tree, our files, then the combined Dockerfile;
 * *hashed is the length of what comes before the Dockerfile (the tar is
 * written unblocked, so that length is exact): the content hash covers
 * that, and the Dockerfile without this build's nonce. */
static int custom_context(struct buf *out, const char *dir, const char *df, const struct buf *agent,
                          const struct language *l, size_t *hashed, struct llmsb_err *err)
{
    struct ctx_tar c = {archive_write_new(), out, dir, 0, 0};
    int rc = 0;

    archive_write_set_format_pax_restricted(c.a);
    archive_write_set_bytes_per_block(c.a, 0);
    if (archive_write_open(c.a, out, NULL, images_ctx_write, NULL) != ARCHIVE_OK)
        rc = ctx_tar_error(&c, err);
    if (rc == 0)
        rc = ctx_add_tree(&c, err);
    if (rc == 0 &&
        (images_ctx_add(c.a, CUSTOM_DIR "/llmsb-agent", agent->data, agent->len, 0755) != 0 ||
         images_ctx_add_hooks(c.a, l, CUSTOM_DIR "/hooks") != 0))
        rc = ctx_tar_error(&c, err);
    *hashed = out->len;
    if (rc == 0 && (images_ctx_add(c.a, "Dockerfile", df, strlen(df), 0644) != 0 ||
                    archive_write_close(c.a) != ARCHIVE_OK))
        rc = ctx_tar_error(&c, err);
    archive_write_free(c.a);
    return rc;
}

/* Mixes into h the id of each image a FROM line names that the engine has
 * (a stage's name or an ARG it does not know is left out): a base image
 * that moved makes a new hash. */
static uint64_t hash_from_images(struct backend *be, const char *df, uint64_t h)
{
    for (const char *p = df; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        char img[256], id[512];
        const char *q = p;
        size_t n = 0;
        struct llmsb_err e2 = {0};
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncasecmp(q, "FROM", 4) != 0 || (q[4] != ' ' && q[4] != '\t'))
            continue;
        for (q += 4;;) {
            while (*q == ' ' || *q == '\t')
                q++;
            if (strncmp(q, "--", 2) != 0)
                break;
            while (*q && !isspace((unsigned char)*q))
                q++;
        }
        while (q[n] && !isspace((unsigned char)q[n]) && n < sizeof(img) - 1)
            n++;
        snprintf(img, sizeof(img), "%.*s", (int)n, q);
        if (n && be->ops->image_digest && be->ops->image_digest(be, img, id, sizeof(id), &e2) == 0)
            h = hash_fnv1a(h, id, strlen(id));
    }
    return h;
}

struct custom_say {
    struct say_ctx sc;
    char check[256]; /* the last "llmsb: " line of the build */
};

static void custom_progress(void *ud, const char *line)
{
    struct custom_say *c = ud;
    const char *m = strstr(line, "llmsb: ");
    /* a step's own text ("Step 3/17 : RUN …", Podman's "STEP 3/17: …")
     * holds our messages too: only what a step printed counts */
    if (m && strncasecmp(line, "Step ", 5) != 0)
        snprintf(c->check, sizeof(c->check), "%s", m + 7);
    images_progress(&c->sc, line);
}

static int custom_check_input(const struct images_custom *c, const struct language **l,
                              struct stat *st, struct llmsb_err *err)
{
    char names[256];

    if (!images_custom_name_ok(c->name))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "images build: --name \"%s\" is not an image name component "
                             "(1 to %d of a-z, 0-9, with single . _ - between them)",
                             c->name, CUSTOM_NAME_MAX);
    if (!(*l = language_find(c->lang))) {
        language_names(names, sizeof(names));
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "images build: --lang \"%s\" is not a language (known: %s)", c->lang,
                             names);
    }
    if (stat(c->dockerfile, st) != 0)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "images build: --dockerfile \"%s\" cannot be read: %s", c->dockerfile,
                             strerror(errno));
    if (!S_ISREG(st->st_mode))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "images build: --dockerfile \"%s\" is not a file", c->dockerfile);
    if (stat(c->context, st) != 0 || !S_ISDIR(st->st_mode))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "images build: --context \"%s\" is not a directory", c->context);
    return 0;
}

/* The id of the image just built under t->unchecked, into t->id. */
static int custom_resolve(struct backend *be, struct images_custom_tags *t, struct llmsb_err *err)
{
    char id[512];
    int rc;

    if (!be->ops->image_digest)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "images build: the %s backend cannot name an image by its id",
                             be->ops->name);
    if ((rc = be->ops->image_digest(be, t->unchecked, id, sizeof(id), err)) != 0)
        return llmsb_err_wrap(err, "images build: the image just built");
    id[strcspn(id, " ")] = '\0'; /* "<id> (<repo digest>)" */
    snprintf(t->id, sizeof(t->id), "%.150s", id);
    return 0;
}

/* This build's nonce: 128 random bits in hex (no weaker fallback). */
static int custom_nonce(char *out, size_t outsz, struct llmsb_err *err)
{
    unsigned char r[16];

    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
        return llmsb_err_set(err, LLMSB_ERR_SYS,
                             "images build: getrandom for the build's nonce: %s", strerror(errno));
    for (size_t i = 0; i < sizeof(r) && 2 * i + 2 < outsz; i++)
        snprintf(out + 2 * i, 3, "%02x", r[i]);
    return 0;
}

/* The context into ctx (the user's tree and Dockerfile, our layer with
 * this build's nonce, the agent, the hooks) and the content hash into
 * t->hash: the context but for the nonce, and the ids of the local images
 * the FROM lines name. */
static int custom_prepare(struct backend *be, const struct config *cfg,
                          const struct images_custom *c, const struct language *l,
                          const struct buf *user, const struct buf *agent, struct buf *ctx,
                          struct images_custom_tags *t, struct llmsb_err *err)
{
    const char *u = user->data ? user->data : "";
    char *layer = NULL, *plain = NULL;
    struct buf df;
    size_t hashed = 0;
    uint64_t h;
    int rc;

    buf_init(&df, CUSTOM_DOCKERFILE_MAX + 65536);
    if ((rc = custom_nonce(t->nonce, sizeof(t->nonce), err)) != 0)
        goto out;
    layer = images_custom_layer(l, c->name, cfg->sandbox_uid, t->nonce);
    plain = images_custom_layer(l, c->name, cfg->sandbox_uid, "");
    if (!layer || !plain || buf_append(&df, u, user->len) != 0 || buf_append_str(&df, layer) != 0 ||
        buf_append(&df, "", 1) != 0) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "images build: out of memory");
        goto out;
    }
    if ((rc = custom_context(ctx, c->context, df.data, agent, l, &hashed, err)) != 0)
        goto out;
    h = hash_fnv1a(0, ctx->data, hashed);
    h = hash_fnv1a(h, u, user->len);
    h = hash_fnv1a(h, plain, strlen(plain));
    h = hash_from_images(be, u, h);
    snprintf(t->hash, sizeof(t->hash), "%012llx", (unsigned long long)(h & 0xffffffffffffULL));
    t->agent_bytes = (long long)agent->len;
    t->agent_hash = hash_fnv1a(0, agent->data ? agent->data : "", agent->len);
out:
    free(plain);
    free(layer);
    buf_release(&df);
    return rc;
}

/* The failed build's error: our layer's check in its own words, else the
 * engine's (its output went to the progress lines). */
static int custom_build_failed(const struct images_custom *c, const struct custom_say *cs,
                               struct llmsb_err *err)
{
    if (cs->check[0])
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "images build: --dockerfile \"%s\": %s",
                             c->dockerfile, cs->check);
    return llmsb_err_wrap(
        err, "images build: --dockerfile \"%s\" failed to build (its output above)", c->dockerfile);
}

int images_custom_build(struct backend *be, const struct config *cfg, const struct images_custom *c,
                        const struct images_opts *o, struct images_custom_tags *t,
                        struct llmsb_err *err)
{
    const struct language *l = NULL;
    struct custom_say cs = {{o, "custom"}, ""};
    char agent_path[PATH_MAX], ref[300];
    struct buf user, agent, ctx;
    struct mem_reader mr;
    struct stat st;
    const char *tags[1];
    int rc;

    buf_init(&user, CUSTOM_DOCKERFILE_MAX);
    buf_init(&agent, (size_t)64 << 20);
    buf_init(&ctx, CUSTOM_CONTEXT_MAX);
    memset(t, 0, sizeof(*t));
    if ((rc = custom_check_input(c, &l, &st, err)) != 0)
        goto out;
    if ((rc = images_read_file(c->dockerfile, "Dockerfile", &user, err)) != 0 ||
        (rc = images_custom_dockerfile_check(user.data ? user.data : "", user.len, c->dockerfile,
                                             err)) != 0)
        goto out;
    if (o->agent_path)
        snprintf(agent_path, sizeof(agent_path), "%s", o->agent_path);
    else
        images_agent_path(agent_path, sizeof(agent_path));
    if ((rc = images_read_file(agent_path, "the agent (run make first)", &agent, err)) != 0 ||
        (rc = custom_prepare(be, cfg, c, l, &user, &agent, &ctx, t, err)) != 0)
        goto out;
    snprintf(t->repo, sizeof(t->repo), "llmsb/custom/%s", c->name);
    snprintf(t->unchecked, sizeof(t->unchecked), "llmsb-unchecked/%s:%s-%ld", c->name, t->hash,
             (long)getpid());
    snprintf(t->lang, sizeof(t->lang), "%s", l->name);
    snprintf(ref, sizeof(ref), "%s:%s", t->repo, t->hash);
    if (!o->force && (rc = be->ops->image_exists(be, ref, err)) != 0) {
        if (rc > 0) {
            t->up_to_date = 1;
            rc = be->ops->image_tag(be, ref, t->repo, "latest", err);
            images_say(o, "[custom] %s is up to date", ref);
        }
        goto out;
    }
    images_say(o, "[custom] building %s:%s from %s (context %s, --lang %s)", t->repo, t->hash,
               c->dockerfile, c->context, l->name);
    tags[0] = t->unchecked;
    mr = (struct mem_reader){ctx.data, ctx.len, 0};
    if ((rc = be->ops->image_build(be, tags, 1, images_mem_read, &mr, custom_progress, &cs, err)) !=
        0) {
        rc = custom_build_failed(c, &cs, err);
        images_custom_discard(be, t); /* a failed step may still have tagged */
    } else if ((rc = custom_resolve(be, t, err)) != 0) {
        images_custom_discard(be, t);
    }
out:
    buf_release(&ctx);
    buf_release(&agent);
    buf_release(&user);
    return rc;
}

void images_finding(struct buf *f, const char *fmt, ...)
{
    char line[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    buf_printf(f, "  - %s\n", line);
}

/* The audit of what the image says it is: a volume would be a writable
 * place outside the size-limited tmpfs mounts.  A loader variable reaches
 * no job (the agent is static and builds the environment of every process
 * it starts from the job's) but would reach an exec into the container,
 * as the audit's shell: a mistake, refused. */
int images_custom_audit(struct backend *be, const char *image, const char *lang,
                        struct buf *findings, struct llmsb_err *err)
{
    static const char *const loader[] = {"LD_PRELOAD=", "LD_LIBRARY_PATH=", "LD_AUDIT="};
    struct buf text;
    cJSON *cfgj = NULL;
    const cJSON *v, *e;
    int rc;

    if (!be->ops->image_config)
        return 0; /* the engine cannot say (docs/images.md) */
    buf_init(&text, (size_t)4 << 20);
    if ((rc = be->ops->image_config(be, image, &text, err)) <= 0) {
        if (rc == 0)
            rc = llmsb_err_set(err, LLMSB_ERR_NOTFOUND, "images build: no image \"%s\"", image);
        goto out;
    }
    rc = 0;
    cfgj = cJSON_ParseWithLength(text.data, text.len);
    v = cJSON_GetObjectItemCaseSensitive(cfgj, "Volumes");
    cJSON_ArrayForEach(e, v) {
        images_finding(findings,
                       "VOLUME %.200s: a writable mount beside the size-limited tmpfs mounts",
                       e->string);
    }
    v = cJSON_GetObjectItemCaseSensitive(cfgj, "Env");
    cJSON_ArrayForEach(e, v) {
        for (size_t i = 0; cJSON_IsString(e) && i < sizeof(loader) / sizeof(loader[0]); i++)
            if (strncmp(e->valuestring, loader[i], strlen(loader[i])) == 0)
                images_finding(
                    findings,
                    "ENV %.200s: a loader variable (it reaches an exec into the container)",
                    e->valuestring);
    }
    v = cJSON_GetObjectItemCaseSensitive(cfgj, "User");
    if (cJSON_IsString(v) && v->valuestring[0] && strcmp(v->valuestring, "0:0") != 0)
        images_finding(findings, "USER %s: the agent must start as root (0:0)", v->valuestring);
    v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cfgj, "Entrypoint"), 0);
    if (!cJSON_IsString(v) || strcmp(v->valuestring, IMAGES_AGENT_PATH) != 0)
        images_finding(findings, "ENTRYPOINT is not " IMAGES_AGENT_PATH);
    v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cfgj, "Labels"),
                                         "llmsb.lang");
    if (!cJSON_IsString(v) || strcmp(v->valuestring, lang) != 0)
        images_finding(findings, "label llmsb.lang is not \"%s\"", lang);
out:
    cJSON_Delete(cfgj);
    buf_release(&text);
    return rc;
}

int images_custom_accept(struct backend *be, const struct images_custom_tags *t,
                         struct llmsb_err *err)
{
    int rc = be->ops->image_tag(be, t->id, t->repo, t->hash, err);

    if (rc == 0)
        rc = be->ops->image_tag(be, t->id, t->repo, "latest", err);
    images_custom_discard(be, t); /* the name only: the image keeps its two */
    return rc;
}

void images_custom_discard(struct backend *be, const struct images_custom_tags *t)
{
    struct llmsb_err e2 = {0};
    if (t->unchecked[0] && be->ops->image_remove)
        be->ops->image_remove(be, t->unchecked, &e2);
}
