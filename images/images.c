/* images.c - offline-capable image builds (see images.h).  Tarballs are
 * written with libarchive: the build context in memory, the debootstrap
 * root file system to a temporary file that is then streamed to the
 * engine's import endpoint. */
#include "images.h"
#include "images_int.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "languages/languages.h"

extern char **environ;

#define BASE_REPO "llmsb/base"
#define BASE_RECIPE "debootstrap --variant=minbase bookworm"

/* The preinstall layer: the registry settings as ENV (the agent gives
 * jobs an environment of their own, so these reach only the build), then
 * RUN in exec form (a JSON array: no shell sees the names) of the
 * language's system-wide installer with the names. */
static void preinstall_run(struct buf *b, const struct language *l, const struct config *cfg)
{
    size_t li = language_index(l);
    cJSON *argv = cJSON_CreateArray();
    char env[CONFIG_MAX_REGISTRY_ENV][320], *text;
    int nenv = config_registry_env(cfg, l, env);

    for (int i = 0; i < LANG_MAX_ARGV && l->preinstall[i]; i++)
        cJSON_AddItemToArray(argv, cJSON_CreateString(l->preinstall[i]));
    for (size_t k = 0; k < cfg->npreinstall[li]; k++)
        cJSON_AddItemToArray(argv, cJSON_CreateString(cfg->preinstall[li][k]));
    text = cJSON_PrintUnformatted(argv);
    cJSON_Delete(argv);
    for (int i = 0; i < nenv; i++)
        buf_printf(b, "ENV %s\n", env[i]);
    if (l->preinstall_before)
        buf_printf(b, "RUN %s\n", l->preinstall_before);
    buf_printf(b, "RUN %s\n", text ? text : "[\"false\"]");
    if (l->preinstall_before)
        buf_printf(b, "RUN apt-get clean && rm -rf /var/lib/apt/lists/*\n");
    free(text);
}

char *images_dockerfile(const struct language *l, const char *base, int64_t uid, int with_ca,
                        const struct config *cfg)
{
    struct buf b;

    buf_init(&b, 16384);
    buf_printf(
        &b,
        "FROM %s\n"
        "ENV DEBIAN_FRONTEND=noninteractive\n"
        "RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates %s "
        "&& apt-get clean && rm -rf /var/lib/apt/lists/*\n"
        "RUN groupadd -g %lld sandbox && useradd -u %lld -g %lld -M -d /tmp "
        "-s /usr/sbin/nologin sandbox && mkdir -p /work && chmod 1777 /work && "
        /* no set-uid or set-gid program: no_new_privs already makes the
         * bits do nothing in a job; without them nothing depends on that */
        "find / -xdev -type f -perm /6000 -exec chmod ug-s {} +\n",
        base, l->packages, (long long)uid, (long long)uid, (long long)uid);
    if (with_ca) /* a TLS-inspecting proxy's CA: installers must trust it */
        buf_printf(&b, "COPY ca/ /usr/local/share/ca-certificates/llmsb/\n"
                       "RUN update-ca-certificates\n");
    for (int i = 0; i < LANG_MAX_HOOKS && l->hooks[i].file; i++)
        buf_printf(&b, "COPY hooks/%s %s\n", l->hooks[i].file, l->hooks[i].dest);
    if (l->image_setup)
        buf_printf(&b, "RUN %s\n", l->image_setup);
    if (cfg && cfg->npreinstall[language_index(l)])
        preinstall_run(&b, l, cfg);
    /* last of the layers: a new agent rebuilds only this one, not the
     * slow setup above (precompiled headers, build caches) */
    buf_printf(&b,
               "COPY llmsb-agent /usr/local/bin/llmsb-agent\n"
               "LABEL llmsb.lang=\"%s\"\n"
               "WORKDIR /work\n"
               "ENTRYPOINT [\"/usr/local/bin/llmsb-agent\"]\n",
               l->name);
    return buf_steal(&b);
}

void images_say(const struct images_opts *o, const char *fmt, ...)
{
    va_list ap;
    if (!o->progress)
        return;
    va_start(ap, fmt);
    vfprintf(o->progress, fmt, ap);
    va_end(ap);
    fputc('\n', o->progress);
    fflush(o->progress);
}

void images_progress(void *ud, const char *line)
{
    struct say_ctx *c = ud;
    images_say(c->o, "[%s] %s", c->tag, line);
}

/* ---- reading a buffer or a file as an upload --------------------------- */

ssize_t images_mem_read(void *ud, char *dst, size_t max)
{
    struct mem_reader *m = ud;
    size_t n = m->len - m->off < max ? m->len - m->off : max;
    memcpy(dst, m->p + m->off, n);
    m->off += n;
    return (ssize_t)n;
}

static ssize_t fd_read(void *ud, char *dst, size_t max)
{
    int fd = *(int *)ud;
    ssize_t n;
    do
        n = read(fd, dst, max);
    while (n < 0 && errno == EINTR);
    return n;
}

/* ---- build context --------------------------------------------------------- */

la_ssize_t images_ctx_write(struct archive *a, void *ud, const void *p, size_t n)
{
    struct buf *b = ud;

    if (buf_append(b, p, n) == 0)
        return (la_ssize_t)n;
    if (n > b->cap - b->len)
        archive_set_error(a, EFBIG, "the tar passes its cap of %zu MB", b->cap >> 20);
    else
        archive_set_error(a, ENOMEM, "out of memory");
    return -1;
}

int images_ctx_add(struct archive *a, const char *name, const char *data, size_t len, int mode)
{
    struct archive_entry *e = archive_entry_new();
    int rc;

    archive_entry_set_pathname(e, name);
    archive_entry_set_size(e, (la_int64_t)len);
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, mode);
    archive_entry_set_mtime(e, 0, 0);
    rc = archive_write_header(a, e);
    if (rc == ARCHIVE_OK && archive_write_data(a, data, len) != (la_ssize_t)len)
        rc = ARCHIVE_FATAL;
    archive_entry_free(e);
    return rc == ARCHIVE_OK ? 0 : -1;
}

/* The hook files a language's image copies in (languages/hooks/). */
int images_ctx_add_hooks(struct archive *a, const struct language *l, const char *dir)
{
    for (int i = 0; i < LANG_MAX_HOOKS && l->hooks[i].file; i++) {
        const struct lang_hook_file *h = language_hook_file(l->hooks[i].file);
        char name[160];
        if (!h)
            return -1;
        snprintf(name, sizeof(name), "%s/%s", dir, h->name);
        if (images_ctx_add(a, name, h->data, (size_t)(h->end - h->data), l->hooks[i].mode) != 0)
            return -1;
    }
    return 0;
}

/* Reads a whole file into b (bounded by b's cap); what names it in errors. */
int images_read_file(const char *path, const char *what, struct buf *b, struct llmsb_err *err)
{
    char chunk[65536];
    ssize_t n;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return llmsb_err_set(err, LLMSB_ERR_NOTFOUND, "images: cannot open %s \"%s\": %s", what,
                             path, strerror(errno));
    while ((n = read(fd, chunk, sizeof(chunk))) > 0)
        if (buf_append(b, chunk, (size_t)n) != 0) {
            close(fd);
            return llmsb_err_set(err, LLMSB_ERR_LIMIT, "images: %s \"%s\" too large", what, path);
        }
    close(fd);
    return n < 0
               ? llmsb_err_set(err, LLMSB_ERR_SYS, "images: read \"%s\": %s", path, strerror(errno))
               : 0;
}

/* Extra CA certificates: the *.crt files of a directory, names and contents. */
#define CA_MAX_FILES 64
#define CA_MAX_BYTES (1u << 20)

struct ca_set {
    int n;
    char name[CA_MAX_FILES][256];
    struct buf data[CA_MAX_FILES];
};

static void ca_release(struct ca_set *c)
{
    for (int i = 0; i < c->n; i++)
        buf_release(&c->data[i]);
    c->n = 0;
}

static int ca_name_cmp(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* Reads dir's *.crt files (sorted, so the image hash is stable); a missing
 * dir is no certificates. */
static int ca_load(const char *dir, struct ca_set *c, struct llmsb_err *err)
{
    char names[CA_MAX_FILES][256];
    int n = 0;
    DIR *d;
    struct dirent *e;

    c->n = 0;
    if (!dir[0] || !(d = opendir(dir)))
        return 0;
    while ((e = readdir(d)) != NULL && n < CA_MAX_FILES) {
        size_t len = strlen(e->d_name);
        if (len > 4 && len < sizeof(names[0]) && strcmp(e->d_name + len - 4, ".crt") == 0)
            snprintf(names[n++], sizeof(names[0]), "%s", e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof(names[0]), ca_name_cmp);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        int len = snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        buf_init(&c->data[c->n], CA_MAX_BYTES);
        if (len < 0 || (size_t)len >= sizeof(path)) {
            llmsb_err_set(err, LLMSB_ERR_INVALID, "path %s/%s is too long", dir, names[i]);
            ca_release(c);
            return llmsb_err_wrap(err, "images.ca_certificates");
        }
        if (images_read_file(path, "CA certificate", &c->data[c->n], err) != 0) {
            buf_release(&c->data[c->n]);
            ca_release(c);
            return llmsb_err_wrap(err, "images.ca_certificates");
        }
        memcpy(c->name[c->n], names[i], sizeof(c->name[0])); /* both sized alike */
        c->n++;
    }
    return 0;
}

static int ctx_add_cas(struct archive *a, const struct ca_set *c)
{
    for (int i = 0; i < c->n; i++) {
        char name[300];
        snprintf(name, sizeof(name), "ca/%s", c->name[i]);
        if (images_ctx_add(a, name, c->data[i].data ? c->data[i].data : "", c->data[i].len, 0644) !=
            0)
            return -1;
    }
    return 0;
}

static int build_context(struct buf *out, const struct language *l, const char *dockerfile,
                         const struct buf *agent, const struct ca_set *cas, struct llmsb_err *err)
{
    struct archive *a = archive_write_new();
    int rc = 0;

    archive_write_set_format_pax_restricted(a);
    if (archive_write_open(a, out, NULL, images_ctx_write, NULL) != ARCHIVE_OK ||
        images_ctx_add(a, "Dockerfile", dockerfile, strlen(dockerfile), 0644) != 0 ||
        images_ctx_add(a, "llmsb-agent", agent->data, agent->len, 0755) != 0 ||
        images_ctx_add_hooks(a, l, "hooks") != 0 || ctx_add_cas(a, cas) != 0 ||
        archive_write_close(a) != ARCHIVE_OK)
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "images: build context tar: %s",
                           archive_error_string(a) ? archive_error_string(a) : "failed");
    archive_write_free(a);
    return rc;
}

void images_agent_path(char *out, size_t outsz)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    const char *env = getenv("LLMSB_AGENT");

    if (env && *env) {
        snprintf(out, outsz, "%s", env);
        return;
    }
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            if (snprintf(out, outsz, "%s/llmsb-agent", exe) < (int)outsz)
                return;
        }
    }
    snprintf(out, outsz, "bin/llmsb-agent");
}

/* ---- base image -------------------------------------------------------------- */

static int run_cmd(char *const argv[], struct llmsb_err *err)
{
    pid_t pid;
    int st, rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);

    if (rc != 0)
        return llmsb_err_set(err, LLMSB_ERR_SYS,
                             "images: cannot run %s: %s (install it with "
                             "apt-get install %s)",
                             argv[0], strerror(rc), argv[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return llmsb_err_set(err, LLMSB_ERR_SYS, "images: %s failed (status %d)", argv[0],
                             WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    return 0;
}

/* Writes a tar of the tree at dir (paths relative, owners numeric) to fd. */
static int tar_tree(const char *dir, int fd, struct llmsb_err *err)
{
    struct archive *disk = archive_read_disk_new(), *out = archive_write_new();
    struct archive_entry *e;
    char cwd[PATH_MAX];
    int rc = 0, r;

    if (!getcwd(cwd, sizeof(cwd)) || chdir(dir) != 0) {
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "images: chdir %s: %s", dir, strerror(errno));
        goto out;
    }
    archive_read_disk_set_symlink_physical(disk);
    archive_read_disk_set_standard_lookup(disk);
    archive_write_set_format_pax_restricted(out);
    if (archive_write_open_fd(out, fd) != ARCHIVE_OK ||
        archive_read_disk_open(disk, ".") != ARCHIVE_OK) {
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "images: tar %s: %s", dir,
                           archive_error_string(disk) ? archive_error_string(disk) : "open failed");
        goto back;
    }
    for (;;) {
        e = archive_entry_new();
        r = archive_read_next_header2(disk, e);
        if (r == ARCHIVE_EOF) {
            archive_entry_free(e);
            break;
        }
        if (r < ARCHIVE_WARN) {
            rc = llmsb_err_set(err, LLMSB_ERR_SYS, "images: tar %s: %s", dir,
                               archive_error_string(disk));
            archive_entry_free(e);
            break;
        }
        archive_read_disk_descend(disk);
        archive_entry_set_uname(e, NULL);
        archive_entry_set_gname(e, NULL);
        if (archive_write_header(out, e) < ARCHIVE_WARN) {
            rc = llmsb_err_set(err, LLMSB_ERR_SYS, "images: tar: %s", archive_error_string(out));
            archive_entry_free(e);
            break;
        }
        if (archive_entry_filetype(e) == AE_IFREG && archive_entry_size(e) > 0) {
            int in = open(archive_entry_sourcepath(e), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
            char chunk[65536];
            ssize_t n;
            while (in >= 0 && (n = read(in, chunk, sizeof(chunk))) > 0)
                archive_write_data(out, chunk, (size_t)n);
            if (in >= 0)
                close(in);
        }
        archive_entry_free(e);
    }
back:
    if (chdir(cwd) != 0 && rc == 0)
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "images: chdir back: %s", strerror(errno));
out:
    archive_read_free(disk);
    archive_write_close(out);
    archive_write_free(out);
    return rc;
}

static int debootstrap_import(struct backend *be, const struct config *cfg, const char *tag,
                              const struct images_opts *o, struct llmsb_err *err)
{
    char dir[] = "/var/tmp/llmsb-rootfs-XXXXXX", tarpath[64], root[80];
    struct say_ctx sc = {o, "base"};
    int fd = -1, rc;
    int64_t t0 = clock_mono_ms();

    if (!mkdtemp(dir))
        return llmsb_err_set(err, LLMSB_ERR_SYS, "images: mkdtemp: %s", strerror(errno));
    snprintf(root, sizeof(root), "%s/root", dir);
    snprintf(tarpath, sizeof(tarpath), "%s/rootfs.tar", dir);
    images_say(o, "[base] debootstrap bookworm from %s (about a minute)", cfg->debian_mirror);
    {
        char *argv[] = {"debootstrap", "--variant=minbase",        "bookworm",
                        root,          (char *)cfg->debian_mirror, NULL};
        if ((rc = run_cmd(argv, err)) != 0)
            goto out;
    }
    images_say(o, "[base] packing the root file system");
    if ((fd = open(tarpath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) {
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "images: create %s: %s", tarpath, strerror(errno));
        goto out;
    }
    if ((rc = tar_tree(root, fd, err)) != 0)
        goto out;
    lseek(fd, 0, SEEK_SET);
    images_say(o, "[base] importing as %s:%s", BASE_REPO, tag);
    rc = be->ops->image_import(be, BASE_REPO, tag, fd_read, &fd, images_progress, &sc, err);
    if (rc == 0)
        images_say(o, "[base] done in %lld s", (long long)((clock_mono_ms() - t0) / 1000));
out:
    if (fd >= 0)
        close(fd);
    {
        char *argv[] = {"rm", "-rf", "--one-file-system", dir, NULL};
        struct llmsb_err e2 = {0};
        run_cmd(argv, &e2);
    }
    return rc;
}

/* Chooses (making if needed) the base image; writes its reference. */
static int ensure_base(struct backend *be, const struct config *cfg, const struct images_opts *o,
                       char *ref, size_t refsz, struct llmsb_err *err)
{
    char tag[32], repo[128];
    const char *colon;
    struct say_ctx sc = {o, "base"};
    int rc;

    snprintf(tag, sizeof(tag), "bookworm-%08llx",
             (unsigned long long)(hash_fnv1a(0, BASE_RECIPE, strlen(BASE_RECIPE)) & 0xffffffffu));
    snprintf(ref, refsz, "%s:%s", BASE_REPO, tag);
    if ((rc = be->ops->image_exists(be, ref, err)) != 0)
        return rc < 0 ? rc : 0;
    if ((rc = be->ops->image_exists(be, cfg->base_image, err)) != 0) {
        if (rc > 0)
            snprintf(ref, refsz, "%s", cfg->base_image);
        return rc < 0 ? rc : 0;
    }
    colon = strrchr(cfg->base_image, ':');
    snprintf(repo, sizeof(repo), "%.*s",
             (int)(colon ? (size_t)(colon - cfg->base_image) : strlen(cfg->base_image)),
             cfg->base_image);
    images_say(o, "[base] trying to pull %s", cfg->base_image);
    if (be->ops->image_pull(be, repo, colon ? colon + 1 : "latest", images_progress, &sc, err) ==
            0 &&
        be->ops->image_exists(be, cfg->base_image, err) > 0) {
        snprintf(ref, refsz, "%s", cfg->base_image);
        return 0;
    }
    images_say(o, "[base] no registry (%s); building the base with debootstrap", err->msg);
    llmsb_err_clear(err);
    return debootstrap_import(be, cfg, tag, o, err);
}

static int build_one(struct backend *be, const struct config *cfg, const struct language *l,
                     const char *base, const struct buf *agent, const struct ca_set *cas,
                     const struct images_opts *o, struct llmsb_err *err)
{
    char *df = images_dockerfile(l, base, cfg->sandbox_uid, cas->n > 0, cfg);
    char hash_tag[128], latest[128];
    const char *tags[2] = {hash_tag, latest};
    struct say_ctx sc = {o, l->name};
    struct mem_reader mr;
    struct buf ctx;
    uint64_t h;
    int64_t t0 = clock_mono_ms();
    int rc;

    if (!df)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "images: out of memory");
    h = hash_fnv1a(0, df, strlen(df));
    h = hash_fnv1a(h, agent->data, agent->len);
    for (int i = 0; i < LANG_MAX_HOOKS && l->hooks[i].file; i++) {
        const struct lang_hook_file *hf = language_hook_file(l->hooks[i].file);
        if (hf)
            h = hash_fnv1a(h, hf->data, (size_t)(hf->end - hf->data));
    }
    for (int i = 0; i < cas->n; i++)
        h = hash_fnv1a(h, cas->data[i].data ? cas->data[i].data : "", cas->data[i].len);
    /* the configured image (images.<lang>) names the repository, so a
     * config with its own preinstall set builds images of its own */
    config_image(cfg, l, latest, sizeof(latest));
    {
        const char *slash = strrchr(latest, '/'), *colon = strrchr(latest, ':');
        size_t rl = colon && (!slash || colon > slash) ? (size_t)(colon - latest) : strlen(latest);
        snprintf(hash_tag, sizeof(hash_tag), "%.*s:%012llx", (int)rl, latest,
                 (unsigned long long)(h & 0xffffffffffffULL));
        if (rl == strlen(latest))
            snprintf(latest + rl, sizeof(latest) - rl, ":latest");
    }
    if (!o->force && (rc = be->ops->image_exists(be, hash_tag, err)) != 0) {
        free(df);
        if (rc < 0)
            return rc;
        /* the moving tag follows the recipe that is current now */
        {
            char repo[128];
            const char *colon = strrchr(latest, ':');
            snprintf(repo, sizeof(repo), "%.*s", (int)(colon - latest), latest);
            if ((rc = be->ops->image_tag(be, hash_tag, repo, colon + 1, err)) != 0)
                return rc;
        }
        images_say(o, "[%s] %s is up to date", l->name, hash_tag);
        return 0;
    }
    images_say(o, "[%s] building %s", l->name, hash_tag);
    buf_init(&ctx, (size_t)256 << 20);
    rc = build_context(&ctx, l, df, agent, cas, err);
    free(df);
    if (rc == 0) {
        mr = (struct mem_reader){ctx.data, ctx.len, 0};
        rc = be->ops->image_build(be, tags, 2, images_mem_read, &mr, images_progress, &sc, err);
    }
    buf_release(&ctx);
    if (rc == 0)
        images_say(o, "[%s] built %s in %lld s", l->name, hash_tag,
                   (long long)((clock_mono_ms() - t0) / 1000));
    return rc;
}

int images_build(struct backend *be, const struct config *cfg, const char *const *langs,
                 size_t nlangs, const struct images_opts *o, struct llmsb_err *err)
{
    const struct language *todo[CONFIG_MAX_LANGS];
    char base[256], agent_path[PATH_MAX];
    struct ca_set *cas = NULL;
    struct buf agent;
    size_t n = 0;
    int rc;

    for (size_t i = 0; i < nlangs; i++) {
        const struct language *l = language_find(langs[i]);
        char names[256];
        if (!l) {
            language_names(names, sizeof(names));
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "images: unknown language \"%s\" "
                                 "(known: %s)",
                                 langs[i], names);
        }
        todo[n++] = l;
    }
    for (size_t i = 0; nlangs == 0 && i < languages_count; i++)
        todo[n++] = languages[i];
    if (o->agent_path)
        snprintf(agent_path, sizeof(agent_path), "%s", o->agent_path);
    else
        images_agent_path(agent_path, sizeof(agent_path));
    buf_init(&agent, (size_t)64 << 20);
    if ((rc = images_read_file(agent_path, "the agent (run make first)", &agent, err)) != 0)
        goto out;
    if ((rc = ensure_base(be, cfg, o, base, sizeof(base), err)) != 0)
        goto out;
    /* llmsb/base:latest names the base for other builds (the worker image) */
    if ((rc = be->ops->image_tag(be, base, BASE_REPO, "latest", err)) != 0)
        goto out;
    if (!(cas = calloc(1, sizeof(*cas)))) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "images: out of memory");
        goto out;
    }
    if ((rc = ca_load(cfg->ca_dir, cas, err)) != 0)
        goto out;
    if (cas->n)
        images_say(o, "[images] trusting %d extra CA certificate(s) from %s", cas->n, cfg->ca_dir);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = build_one(be, cfg, todo[i], base, &agent, cas, o, err);
out:
    if (cas) {
        ca_release(cas);
        free(cas);
    }
    buf_release(&agent);
    return rc;
}
