/* proto.c - encode and decode the agent protocol (see proto.h).  Both ends
 * treat the other as untrusted: every length is checked against what is
 * left and against a cap before anything is allocated. */
#include "proto.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "common/strlist.h"

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t get_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int proto_frame_parse(const char *data, size_t len, struct proto_frame *f, size_t *used,
                      struct llmsb_err *err)
{
    const unsigned char *u = (const unsigned char *)data;
    uint32_t plen;

    if (len < PROTO_HEADER_LEN)
        return 0;
    if (u[0] != 'L' || u[1] != 'S')
        return llmsb_err_set(err, LLMSB_ERR_PROTO, "agent protocol: bad frame magic 0x%02x%02x",
                             u[0], u[1]);
    if (u[2] != PROTO_VERSION)
        return llmsb_err_set(err, LLMSB_ERR_PROTO,
                             "agent protocol: version %u not supported (want %d)", u[2],
                             PROTO_VERSION);
    plen = get_be32(u + 4);
    if (plen > PROTO_MAX_PAYLOAD)
        return llmsb_err_set(err, LLMSB_ERR_PROTO,
                             "agent protocol: frame of %u bytes is over the %zu byte cap", plen,
                             PROTO_MAX_PAYLOAD);
    if (len - PROTO_HEADER_LEN < plen)
        return 0;
    f->type = u[3];
    f->payload = data + PROTO_HEADER_LEN;
    f->len = plen;
    *used = PROTO_HEADER_LEN + (size_t)plen;
    return 1;
}

int proto_frame_append(struct buf *out, int type, const char *payload, size_t len)
{
    unsigned char h[PROTO_HEADER_LEN] = {'L', 'S', PROTO_VERSION, (unsigned char)type};
    int rc;

    if (len > PROTO_MAX_PAYLOAD)
        return LLMSB_ERR_LIMIT;
    put_be32(h + 4, (uint32_t)len);
    if ((rc = buf_append(out, h, sizeof(h))) != 0)
        return rc;
    return buf_append(out, payload, len);
}

int proto_frame_write(int fd, int type, const char *payload, size_t len)
{
    struct buf f;
    const char *p;
    size_t n;
    int rc;

    buf_init(&f, PROTO_MAX_PAYLOAD + PROTO_HEADER_LEN);
    rc = proto_frame_append(&f, type, payload ? payload : "", payload ? len : 0);
    for (p = f.data, n = f.len; rc == 0 && n > 0;) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            rc = -1;
        else
            p += w, n -= (size_t)w;
    }
    buf_release(&f);
    return rc ? -1 : 0;
}

int proto_put_bytes(struct buf *b, uint16_t tag, const void *p, size_t n)
{
    unsigned char h[6];
    int rc;

    if (n > UINT32_MAX)
        return LLMSB_ERR_LIMIT;
    h[0] = (unsigned char)(tag >> 8);
    h[1] = (unsigned char)tag;
    put_be32(h + 2, (uint32_t)n);
    if ((rc = buf_append(b, h, sizeof(h))) != 0)
        return rc;
    return buf_append(b, p, n);
}

int proto_put_str(struct buf *b, uint16_t tag, const char *s)
{
    return proto_put_bytes(b, tag, s, strlen(s));
}

int proto_put_u64(struct buf *b, uint16_t tag, uint64_t v)
{
    unsigned char p[8];
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)v;
    return proto_put_bytes(b, tag, p, 8);
}

int proto_tlv_next(const char *p, size_t len, size_t *off, uint16_t *tag, const char **val,
                   uint32_t *vlen)
{
    const unsigned char *u = (const unsigned char *)p + *off;
    uint32_t n;

    if (*off == len)
        return 0;
    if (len - *off < 6)
        return LLMSB_ERR_PROTO;
    *tag = (uint16_t)(u[0] << 8 | u[1]);
    n = get_be32(u + 2);
    if (len - *off - 6 < n)
        return LLMSB_ERR_PROTO;
    *val = p + *off + 6;
    *vlen = n;
    *off += 6 + (size_t)n;
    return 1;
}

int proto_get_u64(const char *val, uint32_t vlen, uint64_t *out)
{
    uint64_t v = 0;
    if (vlen != 8)
        return LLMSB_ERR_PROTO;
    for (int i = 0; i < 8; i++)
        v = v << 8 | (unsigned char)val[i];
    *out = v;
    return 0;
}

/* ---- job --------------------------------------------------------------- */

void proto_job_init(struct proto_job *j)
{
    memset(j, 0, sizeof(*j));
}

void proto_job_release(struct proto_job *j)
{
    free(j->id);
    for (size_t i = 0; i < j->nfiles; i++) {
        free(j->files[i].path);
        free(j->files[i].data);
    }
    free(j->files);
    strlist_free(j->compile_argv, j->ncompile);
    strlist_free(j->run_argv, j->nrun);
    strlist_free(j->env, j->nenv);
    strlist_free(j->artifact_globs, j->nglobs);
    strlist_free(j->install_argv, j->ninstall);
    strlist_free(j->install_env, j->ninstall_env);
    strlist_free(j->build_argv, j->nbuild);
    free(j->plots_dir);
    free(j->zygote);
    free(j->zygote_profile);
    free(j->session);
    free(j->prespawn);
    free(j->compile_server);
    free(j->stdin_data);
    proto_cases_free(j->cases, j->ncases);
    proto_job_init(j);
}

void proto_cases_free(struct proto_case *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++) {
        free(c[i].stdin_data);
        strlist_free(c[i].args, c[i].nargs);
        free(c[i].expect_stdout);
    }
    free(c);
}

struct proto_case *proto_cases_copy(const struct proto_case *c, size_t n)
{
    struct proto_case *d = calloc(n ? n : 1, sizeof(*d));
    int rc = d ? 0 : -1;

    for (size_t i = 0; rc == 0 && i < n; i++) {
        d[i].expect_exit = c[i].expect_exit;
        d[i].stdin_len = c[i].stdin_len;
        d[i].expect_len = c[i].expect_len;
        if (!(d[i].stdin_data = xstrndup(c[i].stdin_data, c[i].stdin_len)) ||
            (c[i].expect_stdout &&
             !(d[i].expect_stdout = xstrndup(c[i].expect_stdout, c[i].expect_len))))
            rc = -1;
        for (size_t k = 0; rc == 0 && k < c[i].nargs; k++)
            rc = strlist_add(&d[i].args, &d[i].nargs, c[i].args[k], strlen(c[i].args[k]));
    }
    if (rc != 0 && d) {
        proto_cases_free(d, n);
        return NULL;
    }
    return d;
}

static int case_encode(const struct proto_case *c, struct buf *b)
{
    struct buf in;
    int rc = 0;

    buf_init(&in, PROTO_MAX_PAYLOAD);
    if (c->stdin_len)
        rc |= proto_put_bytes(&in, TAG_CASE_STDIN, c->stdin_data, c->stdin_len);
    for (size_t i = 0; i < c->nargs; i++)
        rc |= proto_put_str(&in, TAG_CASE_ARG, c->args[i]);
    if (c->expect_stdout)
        rc |= proto_put_bytes(&in, TAG_CASE_EXPECT_STDOUT, c->expect_stdout, c->expect_len);
    rc |= proto_put_u64(&in, TAG_CASE_EXPECT_EXIT, c->expect_exit);
    rc |= proto_put_bytes(b, TAG_CASE, in.data, in.len);
    buf_release(&in);
    return rc;
}

int proto_job_encode(const struct proto_job *j, struct buf *b)
{
    int rc = 0;

    if (j->id)
        rc |= proto_put_str(b, TAG_JOB_ID, j->id);
    for (size_t i = 0; i < j->nfiles; i++) {
        rc |= proto_put_str(b, TAG_FILE_PATH, j->files[i].path);
        rc |= proto_put_bytes(b, TAG_FILE_DATA, j->files[i].data, j->files[i].len);
        rc |= proto_put_u64(b, TAG_FILE_MODE, j->files[i].mode);
    }
    for (size_t i = 0; i < j->ncompile; i++)
        rc |= proto_put_str(b, TAG_COMPILE_ARG, j->compile_argv[i]);
    for (size_t i = 0; i < j->nrun; i++)
        rc |= proto_put_str(b, TAG_RUN_ARG, j->run_argv[i]);
    for (size_t i = 0; i < j->nenv; i++)
        rc |= proto_put_str(b, TAG_ENV, j->env[i]);
    if (j->stdin_len)
        rc |= proto_put_bytes(b, TAG_STDIN, j->stdin_data, j->stdin_len);
    rc |= proto_put_u64(b, TAG_TIMEOUT_MS, j->timeout_ms);
    rc |= proto_put_u64(b, TAG_COMPILE_TIMEOUT_MS, j->compile_timeout_ms);
    rc |= proto_put_u64(b, TAG_OUTPUT_LIMIT, j->output_limit);
    rc |= proto_put_u64(b, TAG_COMPILE_OUTPUT_LIMIT, j->compile_output_limit);
    rc |= proto_put_u64(b, TAG_FSIZE_LIMIT, j->fsize_limit);
    rc |= proto_put_u64(b, TAG_NOFILE, j->nofile);
    rc |= proto_put_u64(b, TAG_NPROC, j->nproc);
    for (size_t i = 0; i < j->nglobs; i++)
        rc |= proto_put_str(b, TAG_ARTIFACT_GLOB, j->artifact_globs[i]);
    rc |= proto_put_u64(b, TAG_ARTIFACT_MAX_COUNT, j->artifact_max_count);
    rc |= proto_put_u64(b, TAG_ARTIFACT_MAX_FILE, j->artifact_max_file);
    rc |= proto_put_u64(b, TAG_ARTIFACT_MAX_TOTAL, j->artifact_max_total);
    if (j->plots_dir)
        rc |= proto_put_str(b, TAG_PLOTS_DIR, j->plots_dir);
    if (j->zygote)
        rc |= proto_put_str(b, TAG_ZYGOTE, j->zygote);
    if (j->zygote_profile)
        rc |= proto_put_str(b, TAG_ZYGOTE_PROFILE, j->zygote_profile);
    if (j->session)
        rc |= proto_put_str(b, TAG_SESSION, j->session);
    if (j->prespawn)
        rc |= proto_put_str(b, TAG_PRESPAWN, j->prespawn);
    if (j->compile_server)
        rc |= proto_put_str(b, TAG_COMPILE_SERVER, j->compile_server);
    if (j->live)
        rc |= proto_put_u64(b, TAG_LIVE, j->live);
    for (size_t i = 0; i < j->ninstall; i++)
        rc |= proto_put_str(b, TAG_INSTALL_ARG, j->install_argv[i]);
    for (size_t i = 0; i < j->ninstall_env; i++)
        rc |= proto_put_str(b, TAG_INSTALL_ENV, j->install_env[i]);
    rc |= proto_put_u64(b, TAG_INSTALL_TIMEOUT_MS, j->install_timeout_ms);
    rc |= proto_put_u64(b, TAG_INSTALL_PAUSE, j->install_pause);
    for (size_t i = 0; i < j->nbuild; i++)
        rc |= proto_put_str(b, TAG_BUILD_ARG, j->build_argv[i]);
    for (size_t i = 0; i < j->ncases; i++)
        rc |= case_encode(&j->cases[i], b);
    if (j->compare.mode != COMPARE_TRAILING_WS || j->ncases) {
        char cmp[48];
        compare_format(&j->compare, cmp, sizeof(cmp));
        rc |= proto_put_str(b, TAG_COMPARE, cmp);
        rc |= proto_put_u64(b, TAG_STOP_ON_FAILURE, j->stop_on_failure);
    }
    return rc ? LLMSB_ERR_LIMIT : 0;
}

/* A TAG_FILE_PATH: the job's next file, at path (checked); its data and
 * mode are the tags after it. */
static int job_file_begin(struct proto_job *j, const char *path, uint32_t plen,
                          struct llmsb_err *err)
{
    struct proto_file *nf;
    int rc;

    if (j->nfiles >= PROTO_MAX_FILES)
        return llmsb_err_set(err, LLMSB_ERR_LIMIT, "job: more than %d files", PROTO_MAX_FILES);
    if ((rc = proto_path_check(path, plen, err)) != 0)
        return rc;
    nf = realloc(j->files, (j->nfiles + 1) * sizeof(*nf));
    if (!nf)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "job: out of memory");
    j->files = nf;
    memset(&nf[j->nfiles], 0, sizeof(*nf));
    nf[j->nfiles].mode = 0644;
    if (!(nf[j->nfiles].path = xstrndup(path, plen)))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "job: out of memory");
    j->nfiles++;
    return 0;
}

static uint64_t *job_u64_field(struct proto_job *j, uint16_t tag)
{
    switch (tag) {
    case TAG_TIMEOUT_MS:
        return &j->timeout_ms;
    case TAG_COMPILE_TIMEOUT_MS:
        return &j->compile_timeout_ms;
    case TAG_OUTPUT_LIMIT:
        return &j->output_limit;
    case TAG_COMPILE_OUTPUT_LIMIT:
        return &j->compile_output_limit;
    case TAG_FSIZE_LIMIT:
        return &j->fsize_limit;
    case TAG_NOFILE:
        return &j->nofile;
    case TAG_NPROC:
        return &j->nproc;
    case TAG_ARTIFACT_MAX_COUNT:
        return &j->artifact_max_count;
    case TAG_ARTIFACT_MAX_FILE:
        return &j->artifact_max_file;
    case TAG_ARTIFACT_MAX_TOTAL:
        return &j->artifact_max_total;
    case TAG_INSTALL_TIMEOUT_MS:
        return &j->install_timeout_ms;
    case TAG_INSTALL_PAUSE:
        return &j->install_pause;
    case TAG_STOP_ON_FAILURE:
        return &j->stop_on_failure;
    case TAG_LIVE:
        return &j->live;
    default:
        return NULL;
    }
}

/* Replaces *dst with a copy of bytes (NUL-terminated as well: text fields
 * are read either way). */
static int bytes_dup(char **dst, size_t *len, const char *v, uint32_t n)
{
    free(*dst);
    if (!(*dst = xstrndup(v, n)))
        return LLMSB_ERR_NOMEM;
    *len = n;
    return 0;
}

/* One TAG_CASE: its nested fields into a new case. */
static int job_add_case(struct proto_job *j, const char *p, uint32_t len, struct llmsb_err *err)
{
    struct proto_case *c;
    size_t off = 0;
    uint16_t tag;
    const char *v;
    uint32_t n;
    int rc = 0, more;

    if (j->ncases >= PROTO_MAX_CASES)
        return llmsb_err_set(err, LLMSB_ERR_LIMIT, "job: more than %d cases", PROTO_MAX_CASES);
    if (!(c = realloc(j->cases, (j->ncases + 1) * sizeof(*c))))
        return LLMSB_ERR_NOMEM;
    j->cases = c;
    c = &j->cases[j->ncases++];
    memset(c, 0, sizeof(*c));
    while (rc == 0 && (more = proto_tlv_next(p, len, &off, &tag, &v, &n)) == 1) {
        if (tag == TAG_CASE_STDIN)
            rc = bytes_dup(&c->stdin_data, &c->stdin_len, v, n);
        else if (tag == TAG_CASE_ARG)
            rc = strlist_add(&c->args, &c->nargs, v, n);
        else if (tag == TAG_CASE_EXPECT_STDOUT)
            rc = bytes_dup(&c->expect_stdout, &c->expect_len, v, n);
        else if (tag == TAG_CASE_EXPECT_EXIT && proto_get_u64(v, n, &c->expect_exit))
            rc = LLMSB_ERR_PROTO;
    }
    if (rc == 0 && more < 0)
        rc = LLMSB_ERR_PROTO;
    return rc ? llmsb_err_set(err, rc, "job: case %zu is malformed", j->ncases) : 0;
}

static int job_field(struct proto_job *j, uint16_t tag, const char *v, uint32_t n,
                     struct llmsb_err *err)
{
    struct proto_file *last = j->nfiles ? &j->files[j->nfiles - 1] : NULL;
    uint64_t *u, x;

    switch (tag) {
    case TAG_JOB_ID:
        free(j->id);
        j->id = xstrndup(v, n);
        return j->id ? 0 : LLMSB_ERR_NOMEM;
    case TAG_FILE_PATH:
        return job_file_begin(j, v, n, err);
    case TAG_FILE_DATA:
        if (!last || last->data)
            return llmsb_err_set(err, LLMSB_ERR_PROTO, "job: file data without a path");
        if (!(last->data = malloc(n ? n : 1)))
            return LLMSB_ERR_NOMEM;
        memcpy(last->data, v, n);
        last->len = n;
        return 0;
    case TAG_FILE_MODE:
        if (!last || proto_get_u64(v, n, &x) || x > 07777)
            return llmsb_err_set(err, LLMSB_ERR_PROTO, "job: bad file mode");
        last->mode = (uint32_t)x & 0755; /* never setuid/setgid/sticky */
        return 0;
    case TAG_COMPILE_ARG:
        return strlist_add(&j->compile_argv, &j->ncompile, v, n);
    case TAG_RUN_ARG:
        return strlist_add(&j->run_argv, &j->nrun, v, n);
    case TAG_ARTIFACT_GLOB:
        return strlist_add(&j->artifact_globs, &j->nglobs, v, n);
    case TAG_ENV:
    case TAG_INSTALL_ENV:
        if (!memchr(v, '=', n))
            return llmsb_err_set(err, LLMSB_ERR_PROTO, "job: env entry without '='");
        return tag == TAG_ENV ? strlist_add(&j->env, &j->nenv, v, n)
                              : strlist_add(&j->install_env, &j->ninstall_env, v, n);
    case TAG_INSTALL_ARG:
        return strlist_add(&j->install_argv, &j->ninstall, v, n);
    case TAG_BUILD_ARG:
        return strlist_add(&j->build_argv, &j->nbuild, v, n);
    case TAG_PLOTS_DIR:
    case TAG_ZYGOTE:
    case TAG_COMPILE_SERVER: {
        char **dst = tag == TAG_PLOTS_DIR ? &j->plots_dir
                     : tag == TAG_ZYGOTE  ? &j->zygote
                                          : &j->compile_server;
        free(*dst);
        *dst = NULL;
        if (n == 0 || n > 256 || v[0] != '/' || memchr(v, '\0', n) || memmem(v, n, "..", 2))
            return llmsb_err_set(err, LLMSB_ERR_PROTO, "job: bad %s path",
                                 tag == TAG_PLOTS_DIR ? "plots dir"
                                 : tag == TAG_ZYGOTE  ? "zygote"
                                                      : "compile server");
        *dst = xstrndup(v, n);
        return *dst ? 0 : LLMSB_ERR_NOMEM;
    }
    case TAG_ZYGOTE_PROFILE:
        free(j->zygote_profile);
        j->zygote_profile = NULL;
        for (uint32_t i = 0; i < n; i++)
            if (v[i] < 'a' || v[i] > 'z')
                n = 0;
        if (n == 0 || n > 16)
            return llmsb_err_set(err, LLMSB_ERR_PROTO, "job: bad zygote profile");
        j->zygote_profile = xstrndup(v, n);
        return j->zygote_profile ? 0 : LLMSB_ERR_NOMEM;
    case TAG_SESSION:
        free(j->session);
        j->session = NULL;
        if (n == 0 || n > 256 || memchr(v, '\0', n))
            return llmsb_err_set(err, LLMSB_ERR_PROTO, "job: bad session id");
        j->session = xstrndup(v, n);
        return j->session ? 0 : LLMSB_ERR_NOMEM;
    case TAG_PRESPAWN:
        free(j->prespawn);
        j->prespawn = NULL;
        if (n < 3 || n > 1024 || memchr(v, '\0', n) || !memchr(v, '=', n) || v[0] == '=')
            return llmsb_err_set(err, LLMSB_ERR_PROTO, "job: bad prespawn variable");
        j->prespawn = xstrndup(v, n);
        return j->prespawn ? 0 : LLMSB_ERR_NOMEM;
    case TAG_STDIN:
        return bytes_dup(&j->stdin_data, &j->stdin_len, v, n);
    case TAG_CASE:
        return job_add_case(j, v, n, err);
    case TAG_COMPARE: {
        const char *why;
        return compare_parse(v, n, &j->compare, &why)
                   ? llmsb_err_set(err, LLMSB_ERR_PROTO, "job: comparison %s", why)
                   : 0;
    }
    default:
        if ((u = job_u64_field(j, tag)) != NULL)
            return proto_get_u64(v, n, u)
                       ? llmsb_err_set(err, LLMSB_ERR_PROTO, "job: tag %u is not a u64", tag)
                       : 0;
        return 0; /* unknown tag: skip */
    }
}

int proto_job_decode(const char *p, size_t len, struct proto_job *j, struct llmsb_err *err)
{
    size_t off = 0;
    uint16_t tag;
    const char *v;
    uint32_t n;
    int rc;

    proto_job_init(j);
    while ((rc = proto_tlv_next(p, len, &off, &tag, &v, &n)) == 1) {
        if ((rc = job_field(j, tag, v, n, err)) != 0) {
            if (err && !err->msg[0])
                llmsb_err_set(err, rc, "job: field %u rejected (%d)", tag, rc);
            goto fail;
        }
    }
    if (rc < 0) {
        llmsb_err_set(err, LLMSB_ERR_PROTO, "job: truncated field at offset %zu", off);
        goto fail;
    }
    for (size_t i = 0; i < j->nfiles; i++)
        if (!j->files[i].data) {
            rc = llmsb_err_set(err, LLMSB_ERR_PROTO, "job: file without data");
            goto fail;
        }
    if (j->nrun == 0) {
        rc = llmsb_err_set(err, LLMSB_ERR_PROTO, "job: no run command");
        goto fail;
    }
    return 0;
fail:
    proto_job_release(j);
    return rc ? rc : LLMSB_ERR_PROTO;
}

/* ---- result ------------------------------------------------------------ */

void proto_result_init(struct proto_result *r, size_t out_cap)
{
    memset(r, 0, sizeof(*r));
    if (out_cap > PROTO_MAX_OUTPUT)
        out_cap = PROTO_MAX_OUTPUT;
    buf_init(&r->out, out_cap);
    buf_init(&r->err, out_cap);
    buf_init(&r->compile_output,
             out_cap < PROTO_MAX_COMPILE_OUTPUT ? out_cap : PROTO_MAX_COMPILE_OUTPUT);
    buf_init(&r->artifacts, PROTO_MAX_ARTIFACTS + PROTO_NOTES_SLACK);
    /* each case's kept output, its numbers and tags */
    buf_init(&r->cases, PROTO_MAX_CASES * (2 * PROTO_CASE_KEEP + 256));
    r->phases = (struct proto_phases){-1, -1, -1, -1};
}

/* The phases' fields in tag order (TAG_PHASE_INSTALL_MS is 1). */
static int64_t *phase_field(struct proto_phases *ph, uint16_t tag)
{
    int64_t *f[] = {&ph->install_ms, &ph->compile_ms, &ph->run_ms, &ph->collect_ms};
    return tag >= 1 && tag <= 4 ? f[tag - 1] : NULL;
}

/* TAG_PHASES with the steps that ran; nothing when none did. */
static int phases_encode(const struct proto_phases *ph, struct buf *b)
{
    struct proto_phases c = *ph;
    char tmp[4 * 14];
    struct buf e;
    int rc = 0;

    buf_init(&e, sizeof(tmp));
    for (uint16_t t = TAG_PHASE_INSTALL_MS; t <= TAG_PHASE_COLLECT_MS; t++)
        if (*phase_field(&c, t) >= 0)
            rc |= proto_put_u64(&e, t, (uint64_t)*phase_field(&c, t));
    if (rc == 0 && e.len)
        rc = proto_put_bytes(b, TAG_PHASES, e.data, e.len);
    buf_release(&e);
    return rc;
}

/* An agent's TAG_PHASES: unknown inner tags skipped; a value that is not
 * a u64 or past a day of milliseconds, or a broken inner TLV, drops them
 * all (-1): a buggy agent loses its timings, not its RESULT. */
static int phases_decode(struct proto_phases *ph, const char *p, uint32_t len)
{
    size_t off = 0;
    uint16_t tag;
    const char *v;
    uint32_t n;
    uint64_t x;
    int more;

    while ((more = proto_tlv_next(p, len, &off, &tag, &v, &n)) == 1) {
        int64_t *f = phase_field(ph, tag);
        if (!f)
            continue;
        if (proto_get_u64(v, n, &x) || x > (uint64_t)86400000)
            break;
        *f = (int64_t)x;
    }
    if (more != 0)
        *ph = (struct proto_phases){-1, -1, -1, -1};
    return 0;
}

void proto_result_release(struct proto_result *r)
{
    buf_release(&r->out);
    buf_release(&r->err);
    buf_release(&r->compile_output);
    buf_release(&r->artifacts);
    buf_release(&r->cases);
}

int proto_result_encode(const struct proto_result *r, struct buf *b)
{
    int rc = 0;

    rc |= proto_put_str(b, TAG_STATUS, status_name(r->status));
    rc |= proto_put_u64(b, TAG_EXIT_CODE, (uint64_t)r->exit_code);
    rc |= proto_put_u64(b, TAG_SIGNAL, (uint64_t)r->signal);
    rc |= proto_put_bytes(b, TAG_STDOUT, r->out.data, r->out.len);
    rc |= proto_put_bytes(b, TAG_STDERR, r->err.data, r->err.len);
    rc |= proto_put_u64(b, TAG_STDOUT_TRUNC, (uint64_t)r->out_truncated);
    rc |= proto_put_u64(b, TAG_STDERR_TRUNC, (uint64_t)r->err_truncated);
    rc |= proto_put_bytes(b, TAG_COMPILE_OUTPUT, r->compile_output.data, r->compile_output.len);
    rc |= proto_put_u64(b, TAG_DURATION_MS, (uint64_t)r->duration_ms);
    rc |= proto_put_u64(b, TAG_CPU_MS, (uint64_t)r->cpu_ms);
    rc |= proto_put_u64(b, TAG_MAX_RSS_KB, (uint64_t)r->max_rss_kb);
    if (r->zygote)
        rc |= proto_put_u64(b, TAG_ZYGOTE_USED, 1);
    if (r->prespawned)
        rc |= proto_put_u64(b, TAG_PRESPAWNED, 1);
    if (r->session_ended)
        rc |= proto_put_u64(b, TAG_SESSION_ENDED, 1);
    if (r->not_run)
        rc |= proto_put_u64(b, TAG_NOT_RUN, 1);
    if (r->error[0])
        rc |= proto_put_str(b, TAG_ERROR, r->error);
    if (r->artifacts.len)
        rc |= proto_put_bytes(b, TAG_ARTIFACTS, r->artifacts.data, r->artifacts.len);
    if (r->cases.len)
        rc |= proto_put_bytes(b, TAG_CASES, r->cases.data, r->cases.len);
    rc |= phases_encode(&r->phases, b);
    return rc ? LLMSB_ERR_LIMIT : 0;
}

static int result_field(struct proto_result *r, uint16_t tag, const char *v, uint32_t n)
{
    uint64_t x;
    struct buf *b = NULL;
    int64_t *i64 = NULL;
    int *flag = NULL;

    switch (tag) {
    case TAG_STATUS:
        return status_parse(v, n, &r->status) != 0 ? LLMSB_ERR_PROTO : 0;
    case TAG_ERROR:
        n = n < sizeof(r->error) - 1 ? n : (uint32_t)sizeof(r->error) - 1;
        memcpy(r->error, v, n);
        r->error[n] = '\0';
        return 0;
    case TAG_STDOUT:
        b = &r->out;
        break;
    case TAG_STDERR:
        b = &r->err;
        break;
    case TAG_COMPILE_OUTPUT:
        b = &r->compile_output;
        break;
    case TAG_ARTIFACTS:
        b = &r->artifacts;
        break;
    case TAG_CASES:
        b = &r->cases;
        break;
    case TAG_EXIT_CODE:
        i64 = &r->exit_code;
        break;
    case TAG_SIGNAL:
        i64 = &r->signal;
        break;
    case TAG_DURATION_MS:
        i64 = &r->duration_ms;
        break;
    case TAG_CPU_MS:
        i64 = &r->cpu_ms;
        break;
    case TAG_MAX_RSS_KB:
        i64 = &r->max_rss_kb;
        break;
    case TAG_STDOUT_TRUNC:
        flag = &r->out_truncated;
        break;
    case TAG_STDERR_TRUNC:
        flag = &r->err_truncated;
        break;
    case TAG_ZYGOTE_USED:
        flag = &r->zygote;
        break;
    case TAG_PRESPAWNED:
        flag = &r->prespawned;
        break;
    case TAG_SESSION_ENDED:
        flag = &r->session_ended;
        break;
    case TAG_NOT_RUN:
        flag = &r->not_run;
        break;
    case TAG_PHASES:
        return phases_decode(&r->phases, v, n);
    default:
        return 0;
    }
    if (b) {
        buf_reset(b);
        return buf_append(b, v, n) ? LLMSB_ERR_LIMIT : 0;
    }
    if (proto_get_u64(v, n, &x))
        return LLMSB_ERR_PROTO;
    if (i64)
        *i64 = (int64_t)x;
    else
        *flag = x != 0;
    return 0;
}

int proto_result_decode(const char *p, size_t len, struct proto_result *r, struct llmsb_err *err)
{
    size_t off = 0;
    uint16_t tag;
    const char *v;
    uint32_t n;
    int rc;

    while ((rc = proto_tlv_next(p, len, &off, &tag, &v, &n)) == 1)
        if ((rc = result_field(r, tag, v, n)) != 0)
            return llmsb_err_set(err, rc, "agent result: field %u rejected (%s)", tag,
                                 rc == LLMSB_ERR_LIMIT ? "over the size cap" : "malformed");
    if (rc < 0)
        return llmsb_err_set(err, LLMSB_ERR_PROTO, "agent result: truncated at offset %zu", off);
    if (r->status == STATUS_NONE)
        return llmsb_err_set(err, LLMSB_ERR_PROTO, "agent result: no status");
    return 0;
}

/* ---- live output ------------------------------------------------------- */

int proto_chunk_encode(const struct proto_chunk *c, struct buf *b)
{
    int rc = 0;

    rc |= proto_put_u64(b, TAG_CHUNK_FD, (uint64_t)c->fd);
    rc |= proto_put_u64(b, TAG_CHUNK_OFFSET, c->offset);
    rc |= proto_put_bytes(b, TAG_CHUNK_DATA, c->data, c->len);
    return rc ? LLMSB_ERR_LIMIT : 0;
}

int proto_chunk_decode(const char *p, size_t len, struct proto_chunk *c, struct llmsb_err *err)
{
    size_t off = 0;
    uint16_t tag;
    const char *v;
    uint32_t n;
    uint64_t fd = 0;
    int rc;

    memset(c, 0, sizeof(*c));
    while ((rc = proto_tlv_next(p, len, &off, &tag, &v, &n)) == 1) {
        if ((tag == TAG_CHUNK_FD && proto_get_u64(v, n, &fd) != 0) ||
            (tag == TAG_CHUNK_OFFSET && proto_get_u64(v, n, &c->offset) != 0))
            return llmsb_err_set(err, LLMSB_ERR_PROTO, "agent output: field %u malformed", tag);
        if (tag == TAG_CHUNK_DATA) {
            c->data = v;
            c->len = n;
        }
    }
    if (rc < 0)
        return llmsb_err_set(err, LLMSB_ERR_PROTO, "agent output: truncated at offset %zu", off);
    if (fd != 1 && fd != 2)
        return llmsb_err_set(err, LLMSB_ERR_PROTO,
                             "agent output: fd %llu is neither 1 (stdout) nor 2 (stderr)",
                             (unsigned long long)fd);
    if (c->offset > PROTO_MAX_OUTPUT || c->len > PROTO_MAX_OUTPUT - c->offset)
        return llmsb_err_set(err, LLMSB_ERR_PROTO,
                             "agent output: a chunk of %zu bytes at offset %llu is past the "
                             "%zu byte output cap",
                             c->len, (unsigned long long)c->offset, PROTO_MAX_OUTPUT);
    c->fd = (int)fd;
    if (!c->data)
        c->data = "";
    return 0;
}

/* ---- paths ------------------------------------------------------------- */

int proto_path_check(const char *path, size_t len, struct llmsb_err *err)
{
    char shown[96];
    size_t start = 0;

    llmsb_escape(shown, sizeof(shown), path, len);
    if (len == 0)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "files: empty path");
    if (len > 4096)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "files: path \"%s\" is over 4096 bytes",
                             shown);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)path[i] < 0x20 || path[i] == 0x7f)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "files: path \"%s\" contains a control character (0x%02x)", shown,
                                 (unsigned char)path[i]);
    if (path[0] == '/')
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "files: path \"%s\" is absolute; paths are relative to the work dir",
                             shown);
    for (size_t i = 0; i <= len; i++) {
        if (i < len && path[i] != '/')
            continue;
        size_t plen = i - start;
        const char *part = path + start;
        if (plen == 0 || (plen == 1 && part[0] == '.'))
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "files: path \"%s\" has an empty or \".\" component", shown);
        if (plen == 2 && part[0] == '.' && part[1] == '.')
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "files: path \"%s\" contains \"..\"",
                                 shown);
        if (plen > 255)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "files: path \"%s\" has a component over 255 bytes", shown);
        start = i + 1;
    }
    return 0;
}
