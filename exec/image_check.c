/* image_check.c - the checks of a custom image that need a sandbox
 * (runner.h, exec_image_check): the language's hello world as a job through
 * the runner and the agent, then a sandbox of the image, made as every
 * job's is (the one container spec): before it starts, the caller's look
 * at it from outside (its files, read through the engine); then the
 * hardening audit from inside it: a shell the engine runs as the sandbox
 * user reports its ids, no-new-privileges, seccomp and capabilities,
 * whether the root is writable, every mount mounted read-write that it can
 * write to, and every setuid or setgid file and (when the image has
 * getcap) every file with capabilities it can see. */
#include "exec/runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"

static const char audit_sh[] =
    "echo \"uid $(id -u) $(id -g)\"\n"
    "grep -E '^(NoNewPrivs|Seccomp|CapEff):' /proc/self/status | tr -d ' \\t'\n"
    "if touch /usr/.llmsb-audit 2>/dev/null; then echo 'root writable'; fi\n"
    "while read -r dev mnt fs opts rest; do\n"
    "  case \",$opts,\" in *,rw,*) [ -w \"$mnt\" ] && echo \"rw $mnt\";; esac\n"
    "done </proc/self/mounts\n"
    "find / -xdev -type f -perm /6000 2>/dev/null | sed 's/^/setid /'\n"
    "if command -v getcap >/dev/null 2>&1; then\n"
    "  find / -xdev -type f -exec getcap {} + 2>/dev/null | sed 's/^/caps /'\n"
    "fi\n"
    "echo end\n";

/* Mounts a job may write to in every sandbox: the tmpfs mounts of the
 * spec, and what the engine gives every container (a root-only one, as
 * Podman's /run, is not the job's to write and is not reported). */
static const char *const rw_ok[] = {
    "/work",      "/tmp",          "/var/tmp",         "/dev/shm",
    "/proc",      "/dev",          "/dev/pts",         "/dev/mqueue",
    "/etc/hosts", "/etc/hostname", "/etc/resolv.conf", "/run/.containerenv", /* Podman's */
};

static void finding(struct buf *f, const char *what, const char *v)
{
    buf_printf(f, "  - %s%.200s\n", what, v);
}

/* Judges the audit's lines; each departure is a finding. */
static void audit_judge(const struct backend *be, const struct config *cfg, const char *out,
                        struct buf *f)
{
    char want[64], line[512];

    snprintf(want, sizeof(want), "uid %lld %lld\n", (long long)cfg->sandbox_uid,
             (long long)cfg->sandbox_uid);
    if (!strstr(out, want))
        finding(f, "a job does not run as the sandbox user: want ", want);
    if (!strstr(out, "NoNewPrivs:1\n"))
        finding(f, "no_new_privileges is not set", "");
    if (!strstr(out, be->runtime.no_engine_seccomp ? "Seccomp:0\n" : "Seccomp:2\n"))
        finding(f, "no seccomp filter", "");
    if (!strstr(out, "CapEff:0000000000000000\n"))
        finding(f, "a job has capabilities", "");
    if (strstr(out, "root writable\n"))
        finding(f, "the root file system is writable", "");
    if (!strstr(out, "end\n"))
        finding(f, "the audit did not finish (the image needs /bin/sh, id, grep, find, sed)", "");
    for (const char *p = out; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
        size_t n = strcspn(p, "\n"), k;
        snprintf(line, sizeof(line), "%.*s", (int)n, p);
        if (strncmp(line, "setid ", 6) == 0)
            finding(f, "a setuid or setgid file: ", line + 6);
        if (strncmp(line, "caps ", 5) == 0)
            finding(f, "a file with capabilities: ", line + 5);
        if (strncmp(line, "rw ", 3) != 0)
            continue;
        for (k = 0; k < sizeof(rw_ok) / sizeof(rw_ok[0]); k++)
            if (strcmp(line + 3, rw_ok[k]) == 0)
                break;
        if (k == sizeof(rw_ok) / sizeof(rw_ok[0]) && strncmp(line + 3, "/sys/", 5) != 0 &&
            strncmp(line + 3, "/proc/", 6) != 0) /* the engine's masks of /proc files */
            finding(f, "a writable mount (a VOLUME?): ", line + 3);
    }
}

/* A sandbox of the image, made as j's would be: the caller's hook before
 * it starts, then the audit in it. */
static int audit_run(struct runner *rn, const struct job *j, const char *image,
                     const struct image_check_hook *created, struct buf *f, struct llmsb_err *err)
{
    const char *argv[] = {"/bin/sh", "-c", audit_sh, NULL};
    struct backend *be = &rn->be;
    struct container_spec spec;
    char id[BACKEND_ID_MAX] = "", user[24];
    struct buf out;
    int rc, code = -1;

    exec_spec_for_job(&spec, be, rn->cfg, j, image);
    spec.nlabels = rn->pool.cfg.nlabels;
    for (int i = 0; i < spec.nlabels; i++) {
        spec.labels[i][0] = rn->pool.cfg.labels[i][0];
        spec.labels[i][1] = rn->pool.cfg.labels[i][1];
    }
    snprintf(user, sizeof(user), "%lld", (long long)rn->cfg->sandbox_uid);
    buf_init(&out, (size_t)1 << 20);
    if ((rc = be->ops->create(be, &spec, id, sizeof(id), err)) != 0 ||
        (created && (rc = created->fn(created->ud, be, id, f, err)) != 0))
        goto out;
    if (!be->ops->exec)
        goto out; /* the engine has no exec: docs/images.md says what holds */
    if ((rc = be->ops->start(be, id, err)) != 0 ||
        (rc = be->ops->exec(be, id, argv, user, &out, &code, err)) != 0)
        goto out;
    buf_append(&out, "", 1);
    audit_judge(be, rn->cfg, out.data ? out.data : "", f);
out:
    if (id[0]) {
        struct llmsb_err e2 = {0};
        be->ops->remove(be, id, &e2);
    }
    buf_release(&out);
    return rc;
}

int exec_image_check(struct runner *rn, const char *image, const struct language *l,
                     const struct image_check_hook *created, struct buf *findings,
                     struct llmsb_err *err)
{
    struct job j;
    struct job_result r;
    int rc;

    job_init(&j, rn->cfg);
    j.id = strdup("images-build-check");
    j.max_attempts = 1;
    if (!j.id || (rc = job_set_language(&j, l->name, err)) != 0 ||
        (rc = job_set_code(&j, l->hello, strlen(l->hello), err)) != 0 ||
        !(j.image = strdup(image))) {
        job_release(&j);
        return j.id ? err->code : llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    }
    job_result_init(&r, &j);
    runner_run(rn, NULL, &j, NULL, &r);
    if (r.r.status != STATUS_OK || !r.r.out.data || !strstr(r.r.out.data, "hello\n")) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "images build: a hello world in %s did not run in %s through the "
                           "agent: %s%s%.160s",
                           l->name, image, status_name(r.r.status), ": ",
                           r.error[0]                ? r.error
                           : r.r.compile_output.data ? r.r.compile_output.data
                           : r.r.err.data            ? r.r.err.data
                                                     : "no output");
        goto out;
    }
    rc = audit_run(rn, &j, image, created, findings, err);
out:
    job_result_release(&r);
    job_release(&j);
    return rc;
}
