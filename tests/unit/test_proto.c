/* test_proto.c - the agent protocol: frames, TLVs, job and result codecs,
 * and job file path validation. */
#include "test.h"

#include "proto/proto.h"

TEST(frame_roundtrip_and_partial)
{
    struct buf b;
    struct proto_frame f;
    size_t used = 0;
    struct llmsb_err err = {0};

    buf_init(&b, 0);
    ASSERT_EQ(proto_frame_append(&b, PROTO_PING, "abc", 3), 0);
    ASSERT_EQ(b.len, (size_t)PROTO_HEADER_LEN + 3);
    for (size_t cut = 0; cut < b.len; cut++)
        ASSERT_EQ(proto_frame_parse(b.data, cut, &f, &used, &err), 0);
    ASSERT_EQ(proto_frame_parse(b.data, b.len, &f, &used, &err), 1);
    ASSERT_EQ(f.type, PROTO_PING);
    ASSERT_EQ(f.len, (size_t)3);
    ASSERT(memcmp(f.payload, "abc", 3) == 0);
    ASSERT_EQ(used, b.len);
    buf_release(&b);
}

TEST(frame_rejects_bad_header)
{
    struct proto_frame f;
    size_t used;
    struct llmsb_err err = {0};
    unsigned char bad_magic[8] = {'X', 'S', 1, 1, 0, 0, 0, 0};
    unsigned char bad_version[8] = {'L', 'S', 9, 1, 0, 0, 0, 0};
    unsigned char too_big[8] = {'L', 'S', 1, 1, 0xff, 0xff, 0xff, 0xff};

    ASSERT(proto_frame_parse((char *)bad_magic, 8, &f, &used, &err) < 0);
    ASSERT_CONTAINS(err.msg, "magic");
    ASSERT(proto_frame_parse((char *)bad_version, 8, &f, &used, &err) < 0);
    ASSERT_CONTAINS(err.msg, "version 9");
    ASSERT(proto_frame_parse((char *)too_big, 8, &f, &used, &err) < 0);
    ASSERT_CONTAINS(err.msg, "cap");
}

TEST(job_roundtrip)
{
    struct proto_job j, d;
    struct buf b;
    struct llmsb_err err = {0};
    char data[] = {'a', '\0', 'b'};

    proto_job_init(&j);
    j.id = strdup("job-1");
    j.files = calloc(1, sizeof(*j.files));
    j.files[0].path = strdup("dir/main.py");
    j.files[0].data = malloc(3);
    memcpy(j.files[0].data, data, 3);
    j.files[0].len = 3;
    j.files[0].mode = 0755;
    j.nfiles = 1;
    ASSERT_EQ(strlist_add(&j.run_argv, &j.nrun, "python3", 7), 0);
    ASSERT_EQ(strlist_add(&j.run_argv, &j.nrun, "main.py", 7), 0);
    ASSERT_EQ(strlist_add(&j.compile_argv, &j.ncompile, "cc", 2), 0);
    ASSERT_EQ(strlist_add(&j.env, &j.nenv, "A=1", 3), 0);
    j.stdin_data = strdup("in");
    j.stdin_len = 2;
    j.timeout_ms = 2500;
    j.output_limit = 1 << 20;
    j.nproc = 77;
    j.plots_dir = strdup("/tmp/.llmsb-plots");
    j.zygote = strdup("/usr/local/lib/llmsb/llmsb_zygote.py");
    j.zygote_profile = strdup("data");
    j.prespawn = strdup("NODE_OPTIONS=--require /usr/local/lib/llmsb/node-wait.js");
    ASSERT_EQ(strlist_add(&j.install_argv, &j.ninstall, "pip", 3), 0);
    ASSERT_EQ(strlist_add(&j.install_argv, &j.ninstall, "numpy", 5), 0);
    ASSERT_EQ(strlist_add(&j.install_env, &j.ninstall_env, "PIP_INDEX_URL=x", 15), 0);
    j.install_timeout_ms = 9000;
    j.install_pause = 1;
    j.compile_server = strdup("/usr/local/lib/llmsb/llmsb-javac.jar");
    buf_init(&b, 0);
    ASSERT_EQ(proto_job_encode(&j, &b), 0);
    ASSERT_EQ(proto_job_decode(b.data, b.len, &d, &err), 0);
    ASSERT_STR(d.id, "job-1");
    ASSERT_EQ(d.nfiles, (size_t)1);
    ASSERT_STR(d.files[0].path, "dir/main.py");
    ASSERT_EQ(d.files[0].len, (size_t)3);
    ASSERT(memcmp(d.files[0].data, data, 3) == 0);
    ASSERT_EQ(d.files[0].mode, 0755u);
    ASSERT_EQ(d.nrun, (size_t)2);
    ASSERT_STR(d.run_argv[1], "main.py");
    ASSERT(d.run_argv[2] == NULL);
    ASSERT_EQ(d.ncompile, (size_t)1);
    ASSERT_STR(d.env[0], "A=1");
    ASSERT_EQ(d.stdin_len, (size_t)2);
    ASSERT_EQ(d.timeout_ms, 2500u);
    ASSERT_EQ(d.nproc, 77u);
    ASSERT_STR(d.plots_dir, "/tmp/.llmsb-plots");
    ASSERT_STR(d.zygote, "/usr/local/lib/llmsb/llmsb_zygote.py");
    ASSERT_STR(d.zygote_profile, "data");
    ASSERT_STR(d.prespawn, "NODE_OPTIONS=--require /usr/local/lib/llmsb/node-wait.js");
    ASSERT_STR(d.compile_server, "/usr/local/lib/llmsb/llmsb-javac.jar");
    ASSERT_EQ(d.ninstall, (size_t)2);
    ASSERT_STR(d.install_argv[1], "numpy");
    ASSERT_STR(d.install_env[0], "PIP_INDEX_URL=x");
    ASSERT_EQ(d.install_timeout_ms, 9000u);
    ASSERT_EQ(d.install_pause, 1u);
    proto_job_release(&d);
    /* every truncation of a valid payload is rejected, never crashes */
    for (size_t cut = 0; cut < b.len; cut++) {
        if (proto_job_decode(b.data, cut, &d, &err) == 0)
            proto_job_release(&d);
    }
    proto_job_release(&j);
    buf_release(&b);
}

/* A plots dir from the wire must be absolute and plain. */
TEST(job_decode_rejects_bad_plots_dir)
{
    static const char *bad[] = {"relative", "/tmp/../etc", ""};
    struct llmsb_err err = {0};
    struct proto_job d;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct buf b;
        buf_init(&b, 0);
        ASSERT_EQ(proto_put_str(&b, TAG_PLOTS_DIR, bad[i]), 0);
        ASSERT(proto_job_decode(b.data, b.len, &d, &err) != 0);
        ASSERT_CONTAINS(err.msg, "plots dir");
        buf_reset(&b);
        ASSERT_EQ(proto_put_str(&b, TAG_ZYGOTE, bad[i]), 0);
        ASSERT(proto_job_decode(b.data, b.len, &d, &err) != 0);
        ASSERT_CONTAINS(err.msg, "zygote");
        buf_reset(&b);
        ASSERT_EQ(proto_put_str(&b, TAG_ZYGOTE_PROFILE, i == 0 ? "Data" : bad[i]), 0);
        ASSERT(proto_job_decode(b.data, b.len, &d, &err) != 0);
        ASSERT_CONTAINS(err.msg, "zygote profile");
        buf_reset(&b);
        /* a variable's name and words, never a bare name or value */
        ASSERT_EQ(proto_put_str(&b, TAG_PRESPAWN, i == 0 ? "=--require x" : bad[i]), 0);
        ASSERT(proto_job_decode(b.data, b.len, &d, &err) != 0);
        ASSERT_CONTAINS(err.msg, "prespawn");
        buf_release(&b);
    }
}

TEST(job_decode_rejects_bad_fields)
{
    struct buf b;
    struct proto_job d;
    struct llmsb_err err = {0};

    buf_init(&b, 0);
    proto_put_str(&b, TAG_FILE_PATH, "../etc/passwd");
    proto_put_bytes(&b, TAG_FILE_DATA, "x", 1);
    proto_put_str(&b, TAG_RUN_ARG, "true");
    ASSERT(proto_job_decode(b.data, b.len, &d, &err) != 0);
    ASSERT_CONTAINS(err.msg, "..");

    buf_reset(&b);
    proto_put_bytes(&b, TAG_FILE_DATA, "x", 1);
    ASSERT(proto_job_decode(b.data, b.len, &d, &err) != 0);

    buf_reset(&b);
    proto_put_str(&b, TAG_ENV, "NOEQUALS");
    proto_put_str(&b, TAG_RUN_ARG, "true");
    ASSERT(proto_job_decode(b.data, b.len, &d, &err) != 0);

    buf_reset(&b);
    proto_put_bytes(&b, TAG_RUN_ARG, "a\0b", 3);
    ASSERT(proto_job_decode(b.data, b.len, &d, &err) != 0);

    buf_reset(&b);
    proto_put_str(&b, TAG_JOB_ID, "no-run");
    ASSERT(proto_job_decode(b.data, b.len, &d, &err) != 0);
    ASSERT_CONTAINS(err.msg, "no run command");

    buf_reset(&b);
    proto_put_str(&b, TAG_RUN_ARG, "true");
    proto_put_bytes(&b, TAG_TIMEOUT_MS, "abc", 3); /* not 8 bytes */
    ASSERT(proto_job_decode(b.data, b.len, &d, &err) != 0);
    buf_release(&b);
}

TEST(file_mode_strips_special_bits)
{
    struct buf b;
    struct proto_job d;
    struct llmsb_err err = {0};

    buf_init(&b, 0);
    proto_put_str(&b, TAG_FILE_PATH, "x");
    proto_put_bytes(&b, TAG_FILE_DATA, "", 0);
    proto_put_u64(&b, TAG_FILE_MODE, 06777);
    proto_put_str(&b, TAG_RUN_ARG, "true");
    ASSERT_EQ(proto_job_decode(b.data, b.len, &d, &err), 0);
    ASSERT_EQ(d.files[0].mode, 0755u);
    proto_job_release(&d);
    buf_release(&b);
}

TEST(result_roundtrip_and_cap)
{
    struct proto_result r, d, small;
    struct buf b;
    struct llmsb_err err = {0};

    proto_result_init(&r, 0);
    r.status = STATUS_RUNTIME_ERROR;
    r.exit_code = 139;
    r.signal = 11;
    buf_append(&r.out, "hello\0world", 11);
    buf_append_str(&r.err, "boom");
    r.out_truncated = 1;
    r.duration_ms = 12;
    r.max_rss_kb = 4096;
    r.not_run = 1;
    r.prespawned = 1;
    buf_init(&b, 0);
    ASSERT_EQ(proto_result_encode(&r, &b), 0);
    proto_result_init(&d, 1024);
    ASSERT_EQ(proto_result_decode(b.data, b.len, &d, &err), 0);
    ASSERT_EQ(d.status, STATUS_RUNTIME_ERROR);
    ASSERT_EQ(d.exit_code, 139);
    ASSERT_EQ(d.signal, 11);
    ASSERT_EQ(d.out.len, (size_t)11);
    ASSERT(memcmp(d.out.data, "hello\0world", 11) == 0);
    ASSERT_EQ(d.out_truncated, 1);
    ASSERT_EQ(d.err_truncated, 0);
    ASSERT_EQ(d.max_rss_kb, 4096);
    ASSERT_EQ(d.not_run, 1);
    ASSERT_EQ(d.prespawned, 1);
    ASSERT_EQ(d.zygote, 0);
    /* a decoder with a smaller cap than the output refuses it */
    proto_result_init(&small, 4);
    ASSERT(proto_result_decode(b.data, b.len, &small, &err) != 0);
    ASSERT_CONTAINS(err.msg, "cap");
    proto_result_release(&small);
    proto_result_release(&d);
    proto_result_release(&r);
    buf_release(&b);
}

/* TAG_PHASES: what the agent measured comes back; a step it left out,
 * or an agent without the tag (an older one), reads -1; a phase that is
 * not a u64 or past a day drops them all (-1), not the RESULT; an inner
 * tag of a newer agent is skipped. */
TEST(result_phases_roundtrip_and_old_agents)
{
    struct proto_result r, d;
    struct buf b, inner;
    struct llmsb_err err = {0};

    proto_result_init(&r, 0);
    r.status = STATUS_OK;
    r.phases.compile_ms = 412;
    r.phases.run_ms = 0; /* ran, in under half a millisecond */
    r.phases.collect_ms = 3;
    buf_init(&b, 0);
    ASSERT_EQ(proto_result_encode(&r, &b), 0);
    proto_result_init(&d, 1024);
    ASSERT_EQ(proto_result_decode(b.data, b.len, &d, &err), 0);
    ASSERT_EQ(d.phases.install_ms, -1);
    ASSERT_EQ(d.phases.compile_ms, 412);
    ASSERT_EQ(d.phases.run_ms, 0);
    ASSERT_EQ(d.phases.collect_ms, 3);
    proto_result_release(&d);

    /* an older agent: no TAG_PHASES at all */
    buf_reset(&b);
    proto_put_str(&b, TAG_STATUS, "ok");
    proto_put_u64(&b, TAG_DURATION_MS, 7);
    proto_result_init(&d, 1024);
    ASSERT_EQ(proto_result_decode(b.data, b.len, &d, &err), 0);
    ASSERT_EQ(d.duration_ms, 7);
    ASSERT(d.phases.install_ms == -1 && d.phases.compile_ms == -1 && d.phases.run_ms == -1 &&
           d.phases.collect_ms == -1);
    proto_result_release(&d);

    /* a newer agent's inner tag is skipped; a bad value refused */
    buf_init(&inner, 0);
    proto_put_u64(&inner, 99, 5);
    proto_put_u64(&inner, TAG_PHASE_RUN_MS, 21);
    buf_reset(&b);
    proto_put_str(&b, TAG_STATUS, "ok");
    proto_put_bytes(&b, TAG_PHASES, inner.data, inner.len);
    proto_result_init(&d, 1024);
    ASSERT_EQ(proto_result_decode(b.data, b.len, &d, &err), 0);
    ASSERT_EQ(d.phases.run_ms, 21);
    proto_result_release(&d);
    /* a value that is not a u64, or past a day, or a broken inner TLV:
     * the phases are dropped (all -1), the rest of the RESULT is kept */
    for (int bad = 0; bad < 3; bad++) {
        buf_reset(&inner);
        proto_put_u64(&inner, TAG_PHASE_INSTALL_MS, 5);
        if (bad == 0)
            proto_put_bytes(&inner, TAG_PHASE_COMPILE_MS, "abc", 3);
        else if (bad == 1)
            proto_put_u64(&inner, TAG_PHASE_COMPILE_MS, (uint64_t)86400001);
        else
            buf_append(&inner, "\x02", 1);
        buf_reset(&b);
        proto_put_str(&b, TAG_STATUS, "ok");
        proto_put_u64(&b, TAG_EXIT_CODE, 3);
        proto_put_bytes(&b, TAG_PHASES, inner.data, inner.len);
        proto_result_init(&d, 1024);
        ASSERT_EQ(proto_result_decode(b.data, b.len, &d, &err), 0);
        ASSERT_EQ(d.exit_code, 3);
        ASSERT(d.phases.install_ms == -1 && d.phases.compile_ms == -1 && d.phases.run_ms == -1 &&
               d.phases.collect_ms == -1);
        proto_result_release(&d);
    }
    buf_release(&inner);
    proto_result_release(&r);
    buf_release(&b);
}

TEST(result_without_status_is_rejected)
{
    struct proto_result d;
    struct buf b;
    struct llmsb_err err = {0};

    buf_init(&b, 0);
    proto_put_u64(&b, TAG_EXIT_CODE, 0);
    proto_result_init(&d, 0);
    ASSERT(proto_result_decode(b.data, b.len, &d, &err) != 0);
    ASSERT_CONTAINS(err.msg, "no status");
    proto_result_release(&d);
    buf_release(&b);
}

/* An OUTPUT frame's chunk round-trips; a decoder facing the container
 * refuses an fd other than 1 or 2, a malformed number, a truncated field
 * and a chunk that would end past the output cap. */
TEST(chunk_roundtrip_and_rejects)
{
    struct proto_chunk c = {2, 5, "hello", 5}, d;
    struct llmsb_err err = {0};
    struct buf b;

    buf_init(&b, 0);
    ASSERT_EQ(proto_chunk_encode(&c, &b), 0);
    ASSERT_EQ(proto_chunk_decode(b.data, b.len, &d, &err), 0);
    ASSERT_EQ(d.fd, 2);
    ASSERT_EQ(d.offset, 5u);
    ASSERT(d.len == 5 && memcmp(d.data, "hello", 5) == 0);
    ASSERT_EQ(proto_chunk_decode(b.data, b.len - 1, &d, &err), LLMSB_ERR_PROTO);
    ASSERT_CONTAINS(err.msg, "truncated");
    buf_reset(&b);
    c.fd = 3;
    ASSERT_EQ(proto_chunk_encode(&c, &b), 0);
    ASSERT_EQ(proto_chunk_decode(b.data, b.len, &d, &err), LLMSB_ERR_PROTO);
    ASSERT_CONTAINS(err.msg, "fd 3 is neither");
    buf_reset(&b);
    c.fd = 1;
    c.offset = PROTO_MAX_OUTPUT - 2; /* 5 bytes from there end past the cap */
    ASSERT_EQ(proto_chunk_encode(&c, &b), 0);
    ASSERT_EQ(proto_chunk_decode(b.data, b.len, &d, &err), LLMSB_ERR_PROTO);
    ASSERT_CONTAINS(err.msg, "past the");
    buf_reset(&b);
    proto_put_bytes(&b, TAG_CHUNK_FD, "x", 1); /* not a u64 */
    ASSERT_EQ(proto_chunk_decode(b.data, b.len, &d, &err), LLMSB_ERR_PROTO);
    ASSERT_CONTAINS(err.msg, "malformed");
    buf_release(&b);
}

/* TAG_LIVE goes out only when set, and comes back. */
TEST(job_live_roundtrip)
{
    struct proto_job j, d;
    struct llmsb_err err = {0};
    struct buf b;
    uint16_t tag;
    const char *v;
    uint32_t n;
    size_t off = 0;
    int seen = 0;

    proto_job_init(&j);
    ASSERT_EQ(strlist_add(&j.run_argv, &j.nrun, "true", 4), 0);
    buf_init(&b, 0);
    ASSERT_EQ(proto_job_encode(&j, &b), 0);
    while (proto_tlv_next(b.data, b.len, &off, &tag, &v, &n) == 1)
        seen |= tag == TAG_LIVE;
    ASSERT_EQ(seen, 0);
    buf_reset(&b);
    j.live = 1;
    ASSERT_EQ(proto_job_encode(&j, &b), 0);
    ASSERT_EQ(proto_job_decode(b.data, b.len, &d, &err), 0);
    ASSERT_EQ(d.live, 1u);
    proto_job_release(&d);
    proto_job_release(&j);
    buf_release(&b);
}

TEST(path_check)
{
    struct llmsb_err err = {0};
    static const char *good[] = {"a", "a/b.txt", "dir/sub/file", ".hidden", "a..b", "..a"};
    static const char *bad[] = {"",     "/etc/passwd", "../x",  "a/../b", "a/..",
                                "a//b", "./a",         "a/./b", "a/",     ".."};

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        ASSERT_EQ(proto_path_check(good[i], strlen(good[i]), &err), 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ASSERT(proto_path_check(bad[i], strlen(bad[i]), &err) != 0);
    ASSERT(proto_path_check("a\0b", 3, &err) != 0);
    ASSERT_CONTAINS(err.msg, "control character (0x00)");
    ASSERT(proto_path_check("a\nb", 3, &err) != 0); /* names reach terminals and file systems */
    ASSERT(proto_path_check("a\033[2Jb", 7, &err) != 0);
    ASSERT(proto_path_check("a\x7f", 2, &err) != 0);
    ASSERT_EQ(proto_path_check("caf\xc3\xa9.txt", 9, &err), 0); /* UTF-8 is fine */
    {
        char longpart[300];
        memset(longpart, 'x', sizeof(longpart) - 1);
        longpart[sizeof(longpart) - 1] = '\0';
        ASSERT(proto_path_check(longpart, strlen(longpart), &err) != 0);
    }
    ASSERT(proto_path_check("/abs", 4, &err) != 0);
    ASSERT_CONTAINS(err.msg, "absolute");
}

TEST_MAIN("proto", T(frame_roundtrip_and_partial), T(frame_rejects_bad_header), T(job_roundtrip),
          T(job_decode_rejects_bad_plots_dir), T(job_decode_rejects_bad_fields),
          T(file_mode_strips_special_bits), T(result_roundtrip_and_cap),
          T(result_phases_roundtrip_and_old_agents), T(result_without_status_is_rejected),
          T(chunk_roundtrip_and_rejects), T(job_live_roundtrip), T(path_check))
