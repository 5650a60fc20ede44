/* test_random.c - the kernel's random bytes (common/random.c) and the places
 * that use them: when the source fails, each fails its request with an
 * error naming it, and none yields a weaker value (an MCP client whose
 * session scope is zeros would share sandbox sessions with another).  The
 * failure is a real one, in a child process: a seccomp filter makes
 * getrandom(2) fail with EIO, and the descriptors are used up first, as
 * under many connections (EMFILE), so /dev/urandom cannot be opened
 * either. */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/kubernetes/stream.h"
#include "common/random.h"
#include "mcp/http_check.h"
#include "mcp/server_int.h"

TEST(bytes_and_hex)
{
    unsigned char a[32], b[32];
    char hex[17], small[8];
    struct llmsb_err err = {0};

    ASSERT_EQ(random_bytes(a, sizeof(a), "a", &err), 0);
    ASSERT_EQ(random_bytes(b, sizeof(b), "b", &err), 0);
    ASSERT(memcmp(a, b, sizeof(a)) != 0);
    ASSERT_EQ(random_hex(hex, sizeof(hex), 8, "hex", &err), 0);
    ASSERT_EQ(strlen(hex), 16);
    ASSERT_EQ(strspn(hex, "0123456789abcdef"), 16);
    ASSERT_EQ(random_hex(small, sizeof(small), 4, "the id", &err), LLMSB_ERR_INVALID);
    ASSERT_STR(small, "");
    ASSERT_CONTAINS(err.msg, "the id: 8 bytes for 8 hex digits");
    ASSERT_EQ(random_bytes(a, RANDOM_MAX_BYTES + 1, "big", &err), LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "big: 257 random bytes asked, at most 256");
}

/* getrandom(2) fails with EIO from now on in this process (the syscall
 * number alone: the test runs in its own native ABI).  0 or -1. */
static int break_getrandom(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getrandom, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EIO),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};

    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0 ? -1 : 0;
}

/* Uses up this process's descriptors (a low limit, then /dev/null until
 * EMFILE).  0 or -1. */
static int use_up_fds(void)
{
    struct rlimit rl = {64, 64};

    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        return -1;
    while (open("/dev/null", O_RDONLY) >= 0)
        ;
    return errno == EMFILE ? 0 : -1;
}

#define CHILD_CHECK(cond, what)                                                           \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "  %s:%d: %s: %s (%s)\n", __FILE__, __LINE__, (what), #cond, \
                    err.msg);                                                             \
            _exit(1);                                                                     \
        }                                                                                 \
    } while (0)

/* The child's checks with the source broken; exits 0 when all hold. */
static void no_source_checks(void)
{
    struct llmsb_err err = {0};
    unsigned char b[16];
    char id[MCP_SESSION_ID_LEN + 1];
    struct mcp_options o = {0};
    struct mcp *m;
    struct backend_stream *st = (struct backend_stream *)1;

    CHILD_CHECK(break_getrandom() == 0, "seccomp filter for getrandom");
    CHILD_CHECK(use_up_fds() == 0, "descriptors used up");
    memset(b, 0xa5, sizeof(b));
    CHILD_CHECK(random_bytes(b, sizeof(b), "the test's bytes", &err) == LLMSB_ERR_SYS,
                "random_bytes fails");
    CHILD_CHECK(strstr(err.msg, "the test's bytes: getrandom(16 bytes): Input/output error"),
                "its message");
    CHILD_CHECK(b[0] == 0 && b[15] == 0, "no bytes left that could be taken for random");
    llmsb_err_clear(&err);
    CHILD_CHECK(mcp_session_id_new(id, &err) != 0, "no MCP session id");
    CHILD_CHECK(strstr(err.msg, "the MCP session's id: getrandom"), "its message");
    llmsb_err_clear(&err);
    /* in process a client's sandbox sessions are its own by an object in
     * the runner, no random bytes asked */
    m = mcp_new(&o, NULL, 1, &err);
    CHILD_CHECK(m != NULL, "an in-process MCP client needs no random scope");
    mcp_free(m);
    /* with --queue over HTTP: no client, rather than one whose scope is zeros */
    o.queue_mode = 1;
    m = mcp_new(&o, NULL, 1, &err);
    CHILD_CHECK(m == NULL, "no --queue MCP client without a random scope");
    CHILD_CHECK(strstr(err.msg, "the client's session scope: getrandom"), "its message");
    llmsb_err_clear(&err);
    CHILD_CHECK(mcp_new(&o, NULL, 0, &err) == NULL, "no --queue server without a random scope");
    llmsb_err_clear(&err);
    /* the stream fails before it touches the client (none here) */
    CHILD_CHECK(kubernetes_stream_open(NULL, "/x", &st, &err) != 0 && st == NULL,
                "no k8s attach stream");
    CHILD_CHECK(strstr(err.msg, "masks' seed: getrandom"), "its message");
    _exit(0);
}

TEST(no_source_fails_the_request)
{
    int status = 0;
    pid_t pid;

    fflush(NULL);
    pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0)
        no_source_checks();
    ASSERT(waitpid(pid, &status, 0) == pid);
    ASSERT_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's checks (above)");
}

TEST_MAIN("random", T(bytes_and_hex), T(no_source_fails_the_request))
