/* test_agent.c - the agent's tree wipe: never follows symlinks out of the
 * wiped dir, removes unreadable subtrees, leaves the dir itself. */
#include "test.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/run.h"
#include "agent/zygote.h"

static int exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

TEST(rm_tree_does_not_follow_symlinks)
{
    char base[] = "/tmp/llmsb-test-XXXXXX", wipe[128], outside[128], p[256];
    int fd;

    ASSERT(mkdtemp(base) != NULL);
    snprintf(wipe, sizeof(wipe), "%s/wipe", base);
    snprintf(outside, sizeof(outside), "%s/outside", base);
    ASSERT_EQ(mkdir(wipe, 0755), 0);
    ASSERT_EQ(mkdir(outside, 0755), 0);
    snprintf(p, sizeof(p), "%s/keep.txt", outside);
    fd = open(p, O_CREAT | O_WRONLY, 0644);
    ASSERT(fd >= 0);
    close(fd);
    snprintf(p, sizeof(p), "%s/link", wipe);
    ASSERT_EQ(symlink(outside, p), 0);
    snprintf(p, sizeof(p), "%s/a/b/c", wipe);
    snprintf(p, sizeof(p), "%s/a", wipe);
    ASSERT_EQ(mkdir(p, 0755), 0);
    snprintf(p, sizeof(p), "%s/a/locked", wipe);
    ASSERT_EQ(mkdir(p, 0755), 0);
    snprintf(p, sizeof(p), "%s/a/locked/f", wipe);
    fd = open(p, O_CREAT | O_WRONLY, 0644);
    ASSERT(fd >= 0);
    close(fd);
    snprintf(p, sizeof(p), "%s/a/locked", wipe);
    ASSERT_EQ(chmod(p, 0), 0);

    fd = open(wipe, O_RDONLY | O_DIRECTORY);
    ASSERT(fd >= 0);
    ASSERT_EQ(agent_rm_tree_at(fd), 0);
    close(fd);

    ASSERT(exists(wipe));
    snprintf(p, sizeof(p), "%s/a", wipe);
    ASSERT(!exists(p));
    snprintf(p, sizeof(p), "%s/link", wipe);
    ASSERT(!exists(p));
    snprintf(p, sizeof(p), "%s/keep.txt", outside);
    ASSERT(exists(p)); /* the symlink's target survived */
    snprintf(p, sizeof(p), "rm -rf %s", base);
    ASSERT_EQ(system(p), 0);
}

/* A job can nest directories deeper than any stack: 700 levels (a case's
 * mkdir("d"); chdir("d") loop), one of them read-only, a file at the
 * bottom, are all removed. */
TEST(rm_tree_removes_a_tree_of_any_depth)
{
    char base[] = "/tmp/llmsb-test-XXXXXX";
    int top, fd, n = 0;
    DIR *d;

    ASSERT(mkdtemp(base) != NULL);
    top = open(base, O_RDONLY | O_DIRECTORY);
    ASSERT(top >= 0);
    fd = dup(top);
    for (int i = 0; i < 700; i++) {
        int next;
        ASSERT_EQ(mkdirat(fd, "d", 0700), 0);
        next = openat(fd, "d", O_RDONLY | O_DIRECTORY);
        ASSERT(next >= 0);
        close(fd);
        fd = next;
        if (i == 350)
            ASSERT_EQ(fchmod(fd, 0500), 0);
    }
    close(fd);
    ASSERT_EQ(agent_rm_tree_at(top), 0);
    d = fdopendir(dup(top));
    ASSERT(d != NULL);
    rewinddir(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    ASSERT_EQ(n, 0);
    close(top);
    ASSERT_EQ(rmdir(base), 0);
}

TEST(oom_count_reads_or_reports_unknown)
{
    long long v = agent_oom_count();
    ASSERT(v >= -1);
}

/* What a job may not set differently from its zygote's start: what the
 * interpreter and the preloaded libraries read once, at start-up. */
TEST(zygote_env_sensitive_names)
{
    static const char *const yes[] = {"PYTHONPATH=/x",
                                      "PYTHONHASHSEED=0",
                                      "LC_ALL=C",
                                      "LANG=C",
                                      "MPLBACKEND=Agg",
                                      "TZ=UTC",
                                      "PATH=/bin",
                                      "OMP_NUM_THREADS=4",
                                      "LD_PRELOAD=/x.so",
                                      "HOME=/tmp",
                                      "TMPDIR=/tmp",
                                      "MATPLOTLIBRC=/w",
                                      "NPY_PROMOTION_STATE=weak",
                                      "RUBYOPT=-rx",
                                      "RUBYLIB=/w",
                                      "GEM_PATH=/w",
                                      "R_PROFILE_USER=/w/p",
                                      "R_LIBS=/w",
                                      "R_ENVIRON_USER=/w/e"};
    static const char *const no[] = {"SANDBOX_PLOTS_DIR=/tmp/p",
                                     "FOO=1",
                                     "PATHX=1",
                                     "USER=x",
                                     "HOMEDIR=/",
                                     "MY_PYTHON=1",
                                     "RX=1",
                                     "MY_RUBY=1"};

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        ASSERT(zygote_env_sensitive(yes[i]));
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        ASSERT(!zygote_env_sensitive(no[i]));
}

TEST_MAIN("agent", T(rm_tree_does_not_follow_symlinks), T(rm_tree_removes_a_tree_of_any_depth),
          T(oom_count_reads_or_reports_unknown), T(zygote_env_sensitive_names))
