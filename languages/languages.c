/* languages.c - the language table.  Adding a language is adding a row
 * here and a package list; nothing else in the tree names a language. */
#include "languages.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/strlist.h"
#include "languages_int.h"

/* ---- package names: registry names only -------------------------------------- */

static int all_of(const char *s, size_t n, const char *extra)
{
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr(extra, s[i]))
            return 0;
    return 1;
}

/* A name: alphanumeric ends, extra characters only inside. */
static int name_of(const char *s, size_t n, const char *extra)
{
    return n > 0 && isalnum((unsigned char)s[0]) && isalnum((unsigned char)s[n - 1]) &&
           all_of(s, n, extra);
}

/* pip: a PEP 508 name, [extras], then version specifiers (==1.0,>=2):
 * no "@ url" direct references, paths or VCS specs. */
static int lib_pip(const char *s)
{
    size_t n = strcspn(s, "[=<>!~,");
    const char *rest = s + n;

    if (!name_of(s, n, "._-"))
        return 0;
    if (*rest == '[') {
        const char *close = strchr(rest, ']');
        if (!close || !all_of(rest + 1, (size_t)(close - rest - 1), "._-,"))
            return 0;
        rest = close + 1;
    }
    return all_of(rest, strlen(rest), "=<>!~,.*+-");
}

/* npm: [@scope/]name[@version or range]: no file:, git+, URLs or
 * user/repo shorthands. */
static int lib_npm(const char *s)
{
    const char *name = s, *at;
    size_t n;

    if (*s == '@') {
        const char *slash = strchr(s, '/');
        if (!slash || !name_of(s + 1, (size_t)(slash - s - 1), "._-"))
            return 0;
        name = slash + 1;
    }
    at = strchr(name, '@');
    n = at ? (size_t)(at - name) : strlen(name);
    if (!name_of(name, n, "._-~"))
        return 0;
    return !at || (at[1] && all_of(at + 1, strlen(at + 1), ".-+^~<>=*| "));
}

/* go: a module path (host/path/...)[@version]; no scheme, no "..". */
static int lib_go(const char *s)
{
    const char *at = strchr(s, '@');
    size_t n = at ? (size_t)(at - s) : strlen(s);

    if (!name_of(s, n, "._-~/") || strstr(s, "..") || strstr(s, "//") || memchr(s, ':', n))
        return 0;
    return !at || (at[1] && all_of(at + 1, strlen(at + 1), ".-+"));
}

/* gem: name[:version]. */
static int lib_gem(const char *s)
{
    const char *colon = strchr(s, ':');
    size_t n = colon ? (size_t)(colon - s) : strlen(s);

    return name_of(s, n, "._-") &&
           (!colon || (colon[1] && all_of(colon + 1, strlen(colon + 1), ".")));
}

/* R: a CRAN package name. */
static int lib_r(const char *s)
{
    return isalpha((unsigned char)s[0]) && name_of(s, strlen(s), ".");
}

/* apt: a Debian package name ([a-z0-9][a-z0-9+.-]+, Debian policy 5.6.1)
 * [=version]. */
int language_lib_apt(const char *s)
{
    const char *eq = strchr(s, '=');
    size_t n = eq ? (size_t)(eq - s) : strlen(s);

    for (size_t i = 0; i < n; i++)
        if (isupper((unsigned char)s[i]))
            return 0;
    return n >= 2 && isalnum((unsigned char)s[0]) && all_of(s, n, "+.-") &&
           (!eq || (eq[1] && all_of(eq + 1, strlen(eq + 1), ".+~:-")));
}

/* g++ flags a job may add.  Compile: -O levels, -std, -D/-U macros, -W
 * warnings, -g, -f switches without a value (-fno-exceptions) and
 * -fsanitize=; link: -l libraries, -pthread, -static.  Nothing that names a
 * path or another program (-I, -L, -o, -B, -specs, @file, -fplugin=,
 * -Wl,): the flags say how to build the job's program, never where from.
 * This keeps job files honest; it is not the security boundary (the
 * compiler runs inside the sandbox as the job's user, and a job's env
 * can still set GCC's own variables). */
static int flag_cpp(const char *f, int link, const char **why)
{
    size_t n = strlen(f);
    /* both compile and link flags */
    static const char *const both[] = {"-pthread", "-static", "-fopenmp", NULL};
    static const char *const exact[] = {"-O0",
                                        "-O1",
                                        "-O2",
                                        "-O3",
                                        "-Os",
                                        "-Og",
                                        "-Ofast",
                                        "-g",
                                        "-w",
                                        "-pedantic",
                                        "-pedantic-errors",
                                        NULL};
    static const char *const std[] = {"98", "03", "11", "14", "17", "20", "23", "2a", "2b", NULL};

    *why = link ? "a link flag is -lNAME, -pthread, -static or -fopenmp"
                : "allowed: -O0..3/-Os/-Og/-Ofast, -std=c++NN/gnu++NN, -DNAME[=VALUE], -UNAME, "
                  "-Wname, -w, -g, -pedantic, -fname (no value), -fsanitize=LIST, -pthread";
    for (int i = 0; both[i]; i++)
        if (strcmp(f, both[i]) == 0)
            return 1;
    for (int i = 0; exact[i]; i++)
        if (strcmp(f, exact[i]) == 0)
            return !link;
    if (link)
        return n > 2 && strncmp(f, "-l", 2) == 0 && isalnum((unsigned char)f[2]) &&
               all_of(f + 2, n - 2, "_+.-"); /* -lstdc++ */
    if (strncmp(f, "-std=c++", 8) == 0 || strncmp(f, "-std=gnu++", 10) == 0) {
        const char *v = f + (f[5] == 'c' ? 8 : 10);
        for (int i = 0; std[i]; i++)
            if (strcmp(v, std[i]) == 0)
                return 1;
        return 0;
    }
    if (n > 2 && (strncmp(f, "-D", 2) == 0 || strncmp(f, "-U", 2) == 0)) {
        size_t k = strcspn(f + 2, "=");
        if (!isalpha((unsigned char)f[2]) && f[2] != '_')
            return 0;
        if (!all_of(f + 2, k, "_"))
            return 0;
        return f[2 + k] == '\0' || (f[1] == 'D' && all_of(f + 3 + k, n - 3 - k, "_.+-"));
    }
    if (n > 2 && strncmp(f, "-W", 2) == 0)
        return isalpha((unsigned char)f[2]) && all_of(f + 2, n - 2, "-=+") && !strchr(f, ',');
    if (strncmp(f, "-fsanitize=", 11) == 0)
        return n > 11 && isalpha((unsigned char)f[11]) && all_of(f + 11, n - 11, ",-");
    if (n > 2 && strncmp(f, "-f", 2) == 0)
        return isalpha((unsigned char)f[2]) && all_of(f + 2, n - 2, "-");
    return 0;
}

/* The R install in two halves: the networked one resolves the names with
 * their dependencies and downloads the sources into a local repository (no
 * package code runs); the offline one installs from it, where configure
 * scripts and builds run.  The names are commandArgs, never pasted into
 * the expression. */
#define R_FETCH_DIR "/tmp/.llmsb-fetch/R"
#define R_FETCH                                                                                  \
    "p <- commandArgs(TRUE); repos <- Sys.getenv('LLMSB_CRAN', 'https://cloud.r-project.org'); " \
    "dir <- '" R_FETCH_DIR "/src/contrib'; dir.create(dir, recursive = TRUE, showWarnings = "    \
    "FALSE); ap <- available.packages(repos = repos, type = 'source'); miss <- setdiff(p, "      \
    "rownames(ap)); if (length(miss)) { message('not in the repository: ', paste(miss, "         \
    "collapse = ', ')); quit(status = 1) }; deps <- unique(c(p, unlist(tools::"                  \
    "package_dependencies(p, db = ap, which = c('Depends', 'Imports', 'LinkingTo'), "            \
    "recursive = TRUE)))); need <- intersect(setdiff(deps, rownames(installed.packages())), "    \
    "rownames(ap)); got <- download.packages(need, destdir = dir, repos = repos, type = "        \
    "'source'); if (NROW(got) < length(need)) { message('could not download: ', paste("          \
    "setdiff(need, got[, 1]), collapse = ', ')); quit(status = 1) }; "                           \
    "tools::write_PACKAGES(dir, type = 'source')"
/* R CMD INSTALL unpacks into its TMPDIR and runs configure there: /tmp is
 * noexec, so the build happens in /work (the job's exec tmpfs). */
#define R_BUILD                                                                       \
    "lib <- Sys.getenv('R_LIBS_USER'); "                                              \
    "dir.create(lib, recursive = TRUE, showWarnings = FALSE); "                       \
    "b <- '/work/.llmsb-build'; dir.create(b, showWarnings = FALSE); "                \
    "Sys.setenv(TMPDIR = b); p <- commandArgs(TRUE); "                                \
    "install.packages(p, lib = lib, repos = 'file://" R_FETCH_DIR "', "               \
    "type = 'source'); unlink(b, recursive = TRUE); "                                 \
    "ok <- vapply(p, function(x) requireNamespace(x, lib.loc = c(lib, .libPaths()), " \
    "quietly = TRUE), TRUE); if (!all(ok)) { message('not installed: ', "             \
    "paste(p[!ok], collapse = ', ')); quit(status = 1) }"

/* clang-format off */
/* The image's Go build cache (go-prime fills it at image build, with this
 * same environment, so the entries match what jobs look up), and Go
 * packages found in GOPATH mode from /usr/share/gocode (Debian's
 * golang-*-dev packages). */
#define GO_CACHE "GOCACHE=/usr/local/lib/llmsb/gocache"
#define GO_PATH "GOPATH=/tmp/go:/usr/share/gocode"
#define GO_CGO "CGO_ENABLED=0"
#define GO_MOD "GO111MODULE=auto"
#define GO_FLAGS "GOFLAGS=-buildvcs=false"
/* What the two Go rows share: environment, image, installer, scanner. */
#define GO_COMMON \
        .env = {GO_CACHE, GO_PATH, GO_CGO, GO_MOD, GO_FLAGS},                                                                                      \
        /* testify and go-cmp: what Go test harnesses import */                                                                                    \
        .packages = "golang-go ca-certificates git golang-github-stretchr-testify-dev "                                                            \
                    "golang-github-google-go-cmp-dev",                                                                                             \
        .tools = "go",                                                                                                                             \
        .install = {"/usr/local/lib/llmsb/go-get"},                                                                                                \
        .install_what = "go get",                                                                                                                  \
        .library_ok = lib_go,                                                                                                                      \
        .registry_key = "goproxy", .registry_env = "GOPROXY",                                                                                      \
        .hooks = {{"go-get", "/usr/local/lib/llmsb/go-get", 0755},                                                                                 \
                  {"go-build", "/usr/local/lib/llmsb/go-build", 0755},                                                                             \
                  {"go-prime", "/usr/local/lib/llmsb/go-prime", 0755}},                                                                            \
        .image_setup = "env " GO_CACHE " " GO_PATH " " GO_CGO " " GO_MOD " " GO_FLAGS                                                              \
                       " /usr/local/lib/llmsb/go-prime",                                                                                           \
        C_COMMENTS,                                                                                                                                \
        .import_pattern = "import\\s*(?:\\([^)]*)?(?:[\\w.]+\\s+)?\"(?:[^\"]*/)?MOD\"",                                                            \
        .scan = {                                                                                                                                  \
            [LANG_SCAN_SHELL] =                                                                                                                    \
                "\\bexec\\s*\\.\\s*Command(?:Context)?\\s*\\(|\\bsyscall\\s*\\.\\s*(?:Exec|ForkExec)\\s*\\(|\\bos\\s*\\.\\s*StartProcess\\s*\\(",  \
            [LANG_SCAN_EVAL] =                                                                                                                     \
                "\\bplugin\\s*\\.\\s*Open\\s*\\(",                                                                                                 \
            [LANG_SCAN_FS_DELETE] =                                                                                                                \
                "\\bos\\s*\\.\\s*(?:Remove|RemoveAll|Truncate)\\s*\\(",                                                                            \
            [LANG_SCAN_NETWORK] =                                                                                                                  \
                "\\bnet\\s*\\.\\s*(?:Dial|Listen)\\w*\\s*\\(|\\bhttp\\s*\\.\\s*(?:Get|Post|Head|NewRequest|ListenAndServe)\\s*\\(",                \
            [LANG_SCAN_ENV] =                                                                                                                      \
                "\\bos\\s*\\.\\s*(?:Getenv|Setenv|Environ|LookupEnv|Unsetenv|Clearenv)\\s*\\(",                                                    \
            [LANG_SCAN_NATIVE] =                                                                                                                   \
                "\\bunsafe\\s*\\.\\s*\\w+|\\bsyscall\\s*\\.\\s*(?:Syscall|RawSyscall)\\w*\\s*\\(|\\bimport\\s+\"C\"",                              \
            [LANG_SCAN_PROCESS] =                                                                                                                  \
                "\\bsyscall\\s*\\.\\s*(?:Kill|Setsid)\\s*\\(|\\bos\\s*\\.\\s*FindProcess\\s*\\(",                                                  \
        },                                                                                                                                         \
        .strict_modules = {"os/exec", "net", "net/http", "syscall", "unsafe", "plugin",                                                            \
                           "os/signal"},                                                                                                           \
        .lexer = LEX_GO

#define CPP_STD "-std=c++17"
#define CPP_OPT "-O2"
/* Java's class path: the work dir, the image's jars, a job's libraries'. */
#define JAVA_LIB "/work/.llmsb-lib/java"
#define JAVA_CLASSPATH ".:/usr/share/java/*:" JAVA_LIB "/usr/share/java/*"
/* node's V8 flags (NODE_OPTIONS: a job cannot set it), and its start-up
 * snapshot, built with them at image build (hooks/node-snapshot.js) */
#define NODE_V8_FLAGS "--max-old-space-size=384"
#define NODE_BLOB "/usr/local/lib/llmsb/node.blob"
/* what a node started ahead has added to NODE_OPTIONS (node-wait.js takes
 * it out again) */
#define NODE_WAIT "--snapshot-blob " NODE_BLOB " --require /usr/local/lib/llmsb/node-wait.js"
/* javac's classes, archived at image build (hooks/javac-prime) */
#define JAVAC_CDS "/usr/local/lib/llmsb/javac.jsa"

/* The seven languages the tree began with; the others have a file of
 * their own (languages_int.h). */
static const struct language first[] = {
    {
        .name = "python", .aliases = {"py", "python3"}, .image = "llmsb/python", .ext = "py",
        .default_stem = "main",
        .run = {"python3", "{file}"},
        .env = {"PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1", "MPLBACKEND=Agg",
                "MPLCONFIGDIR=/tmp/.mpl", "PYTHONUSERBASE=/work/.llmsb-lib/python"},
        .packages = "python3 python3-numpy python3-pandas python3-matplotlib python3-seaborn "
                    "python3-plotly python3-pip",
        /* into the user site (PYTHONUSERBASE): on sys.path for the run */
        /* wheels only: an sdist's setup.py would run with the network */
        .install = {"python3", "-m", "pip", "install", "--user", "--break-system-packages",
                    "--only-binary=:all:", "--no-cache-dir", "--disable-pip-version-check",
                    "--no-input", "--no-warn-script-location", "--progress-bar", "off", "--"},
        .install_what = "pip",
        .library_ok = lib_pip,
        .registry_key = "pip_index_url", .registry_env = "PIP_INDEX_URL",
        .registry_trust_env = "PIP_TRUSTED_HOST",
        .preinstall = {"python3", "-m", "pip", "install", "--break-system-packages",
                       "--no-cache-dir", "--disable-pip-version-check", "--no-input", "--"},
        .hooks = {{"llmsb_plots.py", "/usr/lib/python3/dist-packages/llmsb_plots.py", 0644},
                  {"llmsb_plots.pth", "/usr/lib/python3/dist-packages/llmsb_plots.pth", 0644},
                  {"llmsb_zygote.py", "/usr/local/lib/llmsb/llmsb_zygote.py", 0644}},
        .zygote = "/usr/local/lib/llmsb/llmsb_zygote.py",
        .zygote_data = "numpy pandas matplotlib seaborn scipy sklearn plotly statsmodels",
        .zygote_numpy = "numpy",
        .line_comment = "#", .block_comment = {NULL, NULL},
        .import_pattern = "(?:^|[\\n;])\\s*(?:from\\s+MOD(?:\\s|\\.)|import\\s+(?:[\\w.]+\\s*,\\s*)*MOD(?:\\s|\\.|,|$))",
        .plots = 1,
        .scan = {
            [LANG_SCAN_SHELL] =
                "\\b(?:os\\s*\\.\\s*(?:system|popen|exec[lv]p?e?|spawn[lv]p?e?|posix_spawnp?)|subprocess\\s*\\.\\s*\\w+|pty\\s*\\.\\s*spawn|commands\\s*\\.\\s*getoutput)\\s*\\(",
            [LANG_SCAN_EVAL] =
                "\\b(?:eval|exec|compile)\\s*\\(|\\b__import__\\b|\\bimportlib\\b|\\bgetattr\\s*\\(\\s*__builtins__|\\b__builtins__\\b|\\b__subclasses__\\b|\\bglobals\\s*\\(\\s*\\)\\s*\\[",
            [LANG_SCAN_FS_DELETE] =
                "\\b(?:os\\s*\\.\\s*(?:remove|unlink|rmdir|removedirs)|shutil\\s*\\.\\s*rmtree)\\s*\\(|\\.(?:unlink|rmdir)\\s*\\(",
            [LANG_SCAN_NETWORK] =
                "\\bsocket\\s*\\.\\s*(?:socket|create_connection)\\s*\\(|\\burllib\\b|\\brequests\\s*\\.\\s*(?:get|post|put|delete|request|Session)\\b|\\bhttp\\.client\\b|\\bhttpx\\b|\\baiohttp\\b",
            [LANG_SCAN_ENV] =
                "\\bos\\s*\\.\\s*(?:environ|getenv|putenv|unsetenv)\\b",
            [LANG_SCAN_NATIVE] =
                "\\bctypes\\b|\\bcffi\\b",
            [LANG_SCAN_PROCESS] =
                "\\bos\\s*\\.\\s*(?:fork|forkpty|kill|killpg|setsid|_exit)\\s*\\(|\\bmultiprocessing\\b|\\bsignal\\s*\\.\\s*signal\\s*\\(",
        },
        .strict_modules = {"os", "sys", "subprocess", "ctypes", "socket", "importlib", "pickle",
                           "marshal", "shelve", "shutil", "multiprocessing", "threading", "pty",
                           "signal", "builtins"},
        .tools = "python3", .hello = "print('hello')\n",
        .lexer = LEX_PYTHON,
    },
    {
        .name = "javascript", .aliases = {"js", "node", "nodejs"}, .image = "llmsb/javascript",
        .ext = "js", .default_stem = "main",
        .run = {"node", "{file}"},
        .env = {"NODE_OPTIONS=" NODE_V8_FLAGS, "npm_config_cache=/tmp/.npm",
                "NODE_PATH=/work/.llmsb-lib/node/node_modules:/usr/local/lib/node_modules"},
        .packages = "nodejs npm",
        /* no lifecycle scripts: a package's own code never runs at install */
        .install = {"npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--no-save",
                    "--no-package-lock", "--no-update-notifier", "--loglevel=error", "--prefix",
                    "/work/.llmsb-lib/node", "--"},
        .install_what = "npm",
        .library_ok = lib_npm,
        .registry_key = "npm_registry", .registry_env = "npm_config_registry",
        .preinstall = {"npm", "install", "--global", "--no-audit", "--no-fund",
                       "--loglevel=error", "--"},
        C_COMMENTS,
        .import_pattern = "(?:import\\s[^;]*?from\\s*['\"](?:node:)?MOD['\"]|require\\s*\\(\\s*['\"](?:node:)?MOD['\"]\\s*\\))",
        .scan = {
            [LANG_SCAN_SHELL] =
                "require\\s*\\(\\s*['\"](?:node:)?child_process['\"]|from\\s+['\"](?:node:)?child_process['\"]|\\b(?:execSync|spawnSync|execFileSync|execFile)\\s*\\(",
            [LANG_SCAN_EVAL] =
                "\\beval\\s*\\(|\\bFunction\\s*\\(|require\\s*\\(\\s*['\"](?:node:)?vm['\"]|\\bimport\\s*\\(",
            [LANG_SCAN_FS_DELETE] =
                "\\b(?:rm|rmSync|unlink|unlinkSync|rmdir|rmdirSync)\\s*\\(",
            [LANG_SCAN_NETWORK] =
                "require\\s*\\(\\s*['\"](?:node:)?(?:net|http|https|dgram|tls|dns)['\"]|from\\s+['\"](?:node:)?(?:net|http|https|dgram|tls|dns)['\"]|\\bfetch\\s*\\(|\\bXMLHttpRequest\\b|\\bWebSocket\\b",
            [LANG_SCAN_ENV] =
                "\\bprocess\\s*\\.\\s*env\\b",
            [LANG_SCAN_NATIVE] =
                "\\bprocess\\s*\\.\\s*(?:binding|dlopen)\\s*\\(|require\\s*\\(\\s*['\"](?:ffi|ffi-napi)['\"]",
            [LANG_SCAN_PROCESS] =
                "\\bprocess\\s*\\.\\s*(?:exit|kill|abort)\\s*\\(|require\\s*\\(\\s*['\"](?:node:)?(?:cluster|worker_threads)['\"]",
        },
        .strict_modules = {"child_process", "fs", "net", "http", "https", "dgram", "vm",
                           "worker_threads", "cluster", "os", "tls", "dns"},
        .hooks = {{"node-wait.js", "/usr/local/lib/llmsb/node-wait.js", 0644},
                  {"node-snapshot.js", "/usr/local/lib/llmsb/node-snapshot.js", 0644}},
        /* node's bootstrap done once, at image build, with the V8 flags of
         * every job (a blob built with others is refused); then a node
         * started as the agent starts one ahead (the hook's descriptors:
         * agent/prespawn.h) must wait, go and run a program, or the build
         * fails: not a job with a node that cannot */
        .image_setup = "node " NODE_V8_FLAGS " --snapshot-blob " NODE_BLOB
                       " --build-snapshot /usr/local/lib/llmsb/node-snapshot.js && chmod 0444 "
                       NODE_BLOB " && printf 'console.log(6 * 7)\\n' >/tmp/w.js && "
                       "[ \"$(bash -c 'exec 1022>/dev/null 1023< <(printf g); NODE_OPTIONS=\""
                       NODE_V8_FLAGS " " NODE_WAIT "\" node /tmp/w.js')\" = 42 ] && rm /tmp/w.js "
                       "|| { echo 'node-wait.js: a node started ahead does not run' >&2; exit 1; }",
        /* a node started ahead starts from the blob (node-wait.js takes
         * both words out of process.env before the job's code runs) */
        .prespawn = "NODE_OPTIONS=" NODE_WAIT,
        .tools = "node", .hello = "console.log('hello');\n",
        .lexer = LEX_JS,
    },
    {
        .name = "java", .aliases = {"jdk"}, .image = "llmsb/java", .ext = "java",
        .default_stem = "Main", .source = language_java_source,
        .compile = {"javac", "-J-XX:+UseSerialGC", "-J-XX:TieredStopAtLevel=1", "-J-Xshare:auto",
                    "-J-XX:SharedArchiveFile=" JAVAC_CDS, "-encoding", "UTF-8", "-cp",
                    JAVA_CLASSPATH, "-d", ".", "{file}"},
        /* -ea: the `assert` of a test harness checks, as graders expect */
        .run = {"java", "-ea", "-XX:+UseSerialGC", "-Xshare:auto", "-cp", JAVA_CLASSPATH, "{class}"},
        /* the jars evaluation harnesses import (MultiPL-E: javatuples) */
        .packages = "default-jdk-headless libjavatuples-java",
        /* a library is a Debian package of jars (libgson-java), unpacked
         * where the class path looks */
        .install = {"/usr/local/lib/llmsb/apt-get-local", JAVA_LIB},
        .install_what = "apt",
        .library_ok = language_lib_apt,
        .preinstall = {"apt-get", "install", "-y", "--no-install-recommends", "--"},
        .preinstall_before = "apt-get update",
        .hooks = {{"apt-get-local", "/usr/local/lib/llmsb/apt-get-local", 0755},
                  {"javac-prime", "/usr/local/lib/llmsb/javac-prime", 0755},
                  {"LlmsbJavac.java", "/usr/local/lib/llmsb/LlmsbJavac.java", 0644}},
        .image_setup = "/usr/local/lib/llmsb/javac-prime " JAVAC_CDS,
        .compile_server = "/usr/local/lib/llmsb/llmsb-javac.jar",
        C_COMMENTS,
        .import_pattern = "(?:^|\\n)\\s*import\\s+(?:static\\s+)?MOD(?:\\.|;)",
        .scan = {
            [LANG_SCAN_SHELL] =
                "\\bRuntime\\s*\\.\\s*getRuntime\\s*\\(\\s*\\)\\s*\\.\\s*exec\\s*\\(|\\bProcessBuilder\\b",
            [LANG_SCAN_EVAL] =
                "\\bClass\\s*\\.\\s*forName\\s*\\(|\\.getDeclaredMethod\\s*\\(|\\.setAccessible\\s*\\(|\\bScriptEngineManager\\b|\\bMethodHandles\\b",
            [LANG_SCAN_FS_DELETE] =
                "\\bFiles\\s*\\.\\s*(?:delete|deleteIfExists)\\s*\\(|\\.delete(?:OnExit)?\\s*\\(\\s*\\)",
            [LANG_SCAN_NETWORK] =
                "\\bjava\\s*\\.\\s*net\\b|\\bnew\\s+(?:Socket|ServerSocket|URL|DatagramSocket)\\s*\\(|\\bHttpClient\\b|\\bHttpURLConnection\\b",
            [LANG_SCAN_ENV] =
                "\\bSystem\\s*\\.\\s*getenv\\s*\\(",
            [LANG_SCAN_NATIVE] =
                "\\bSystem\\s*\\.\\s*(?:loadLibrary|load)\\s*\\(|\\bsun\\s*\\.\\s*misc\\s*\\.\\s*Unsafe\\b|\\bnative\\s+[\\w<>\\[\\]]+\\s+\\w+\\s*\\(",
            [LANG_SCAN_PROCESS] =
                "\\bSystem\\s*\\.\\s*exit\\s*\\(|\\bRuntime\\s*\\.\\s*getRuntime\\s*\\(\\s*\\)\\s*\\.\\s*(?:halt|exit)\\s*\\(|\\bProcessHandle\\b",
        },
        .strict_modules = {"java.net", "java.lang.reflect", "java.nio.file", "javax.script",
                           "sun.misc"},
        .tools = "javac java",
        .hello = "public class Main { public static void main(String[] a) { System.out.println(\"hello\"); } }\n",
        .lexer = LEX_JAVA,
    },
    {
        .name = "cpp", .aliases = {"c++", "cxx"}, .image = "llmsb/cpp", .ext = "cpp",
        .default_stem = "main",
        /* the job's compile_flags come after the defaults (a later -std or
         * -O wins), its link_flags after the source (-lcrypto); cpp-build
         * runs this g++ command, with a precompiled header of the
         * program's leading #include lines when the image has one for
         * exactly them and these flags (same result, see the hook) */
        .compile = {"/usr/local/lib/llmsb/cpp-build", "g++", CPP_STD, CPP_OPT, "-pipe",
                    LANG_COMPILE_FLAGS, "-o", "{stem}", "{file}", LANG_LINK_FLAGS},
        .flag_ok = flag_cpp,
        .run = {"./{stem}"},
        .env = {"CPATH=/work/.llmsb-lib/cpp/usr/include",
                "LIBRARY_PATH=/work/.llmsb-lib/cpp/usr/lib/x86_64-linux-gnu:/work/.llmsb-lib/cpp/usr/lib",
                "LD_LIBRARY_PATH=/work/.llmsb-lib/cpp/usr/lib/x86_64-linux-gnu:/work/.llmsb-lib/cpp/usr/lib"},
        /* OpenSSL (-lcrypto) and Boost's headers, which benchmark programs use */
        .packages = "g++ libc6-dev libssl-dev libboost-dev",
        .install = {"/usr/local/lib/llmsb/apt-get-local", "/work/.llmsb-lib/cpp"},
        .install_what = "apt",
        .library_ok = language_lib_apt,
        .preinstall = {"apt-get", "install", "-y", "--no-install-recommends", "--"},
        .preinstall_before = "apt-get update",
        .hooks = {{"apt-get-local", "/usr/local/lib/llmsb/apt-get-local", 0755},
                  {"cpp-build", "/usr/local/lib/llmsb/cpp-build", 0755},
                  {"cpp-pch.list", "/usr/local/lib/llmsb/cpp-pch.list", 0644}},
        /* <bits/stdc++.h> precompiled with the default flags, beside the
         * header (root's, read-only to jobs): GCC takes it when a program
         * includes it first with those flags, and the header otherwise;
         * then cpp-pch.list's header sets, for cpp-build */
        .image_setup = "for h in /usr/include/x86_64-linux-gnu/c++/*/bits/stdc++.h; do g++ "
                       CPP_STD " " CPP_OPT " -x c++-header \"$h\" -o \"$h.gch\"; done && "
                       "/usr/local/lib/llmsb/cpp-build --pch /usr/local/lib/llmsb/cpp-pch.list",
        C_COMMENTS,
        .import_pattern = "(?:^|\\n)\\s*#\\s*include\\s*[<\"]MOD[>\"]",
        .scan = {
            [LANG_SCAN_SHELL] =
                "\\b(?:system|popen|execl|execlp|execle|execv|execvp|execvpe|posix_spawnp?)\\s*\\(",
            [LANG_SCAN_EVAL] =
                "\\bdlopen\\s*\\(|\\bdlsym\\s*\\(",
            [LANG_SCAN_FS_DELETE] =
                "\\b(?:unlink|rmdir)\\s*\\(|filesystem\\s*::\\s*remove(?:_all)?\\s*\\(|\\bfs\\s*::\\s*remove(?:_all)?\\s*\\(|(?<![\\w:.>])remove\\s*\\(\\s*\"",
            [LANG_SCAN_NETWORK] =
                "\\b(?:socket|connect|getaddrinfo|gethostbyname)\\s*\\(",
            [LANG_SCAN_ENV] =
                "\\b(?:getenv|setenv|putenv|unsetenv|secure_getenv)\\s*\\(|\\benviron\\b",
            [LANG_SCAN_NATIVE] =
                "\\b(?:asm|__asm__|__asm)\\b|\\bsyscall\\s*\\(|\\bmprotect\\s*\\(|\\bptrace\\s*\\(",
            [LANG_SCAN_PROCESS] =
                "\\b(?:fork|vfork|kill|setsid|clone|daemon)\\s*\\(",
        },
        .strict_modules = {"unistd.h", "sys/socket.h", "sys/ptrace.h", "dlfcn.h", "sys/mman.h",
                           "netinet/in.h", "arpa/inet.h", "signal.h", "spawn.h", "sys/syscall.h"},
        .tools = "g++", .hello = "#include <cstdio>\nint main() { std::puts(\"hello\"); }\n",
        .lexer = LEX_C,
    },
    {
        .name = "go", .aliases = {"golang"}, .image = "llmsb/go", .ext = "go",
        .default_stem = "main",
        /* go build, and a clear error for a package other than main */
        .compile = {"/usr/local/lib/llmsb/go-build", "{stem}", "{file}"},
        .run = {"./{stem}"},
        .hello = "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
        GO_COMMON,
    },
    {
        /* a file of TestXxx functions run by `go test` (HumanEval-X,
         * MultiPL-E): the work dir's package and its tests are compiled
         * once into a test binary; its exit code is the verdict */
        .name = "go_test", .aliases = {"gotest", "go-test"}, .image = "llmsb/go_test",
        .ext = "go", .default_stem = "main_test",
        .compile = {"/usr/local/lib/llmsb/go-build", "--test", "main.test"},
        /* as `go test` runs it: a program that calls os.Exit(0) before
         * its tests finish fails */
        .run = {"./main.test", "-test.paniconexit0"},
        .hello = "package main\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\nfunc TestHello(t *testing.T) { fmt.Println(\"hello\") }\n",
        GO_COMMON,
    },
    {
        .name = "r", .aliases = {"rscript"}, .image = "llmsb/r", .ext = "R",
        .default_stem = "main",
        .run = {"Rscript", "--no-save", "--no-restore", "{file}"},
        .env = {"R_LIBS_USER=/work/.llmsb-lib/R"},
        .packages = "r-base-core r-cran-ggplot2",
        .install = {"Rscript", "--no-save", "--no-restore", "-e", R_FETCH},
        .install_build = {"Rscript", "--no-save", "--no-restore", "-e", R_BUILD},
        .install_what = "install.packages",
        .library_ok = lib_r,
        .registry_key = "cran", .registry_env = "LLMSB_CRAN",
        .preinstall = {"Rscript", "--no-save", "--no-restore", "-e",
                       "p <- commandArgs(TRUE); repos <- Sys.getenv('LLMSB_CRAN', "
                       "'https://cloud.r-project.org'); install.packages(p, lib = "
                       "'/usr/local/lib/R/site-library', repos = repos); for (x in p) if ("
                       "!requireNamespace(x, quietly = TRUE)) stop('not installed: ', x)"},
        .hooks = {{"plots.R", "/usr/local/lib/llmsb/plots.R", 0644},
                  {"llmsb_zygote.R", "/usr/local/lib/llmsb/llmsb_zygote.R", 0644},
                  {"llmsb_session.R", "/usr/local/lib/llmsb/llmsb_session.R", 0644},
                  {"llmsb_zygote.so", "/usr/local/lib/llmsb/llmsb_zygote.so", 0644}},
        /* no "data" profile: loading ggplot2 (rlang) starts a thread, and
         * a zygote forks only single-threaded */
        .zygote = "/usr/local/lib/llmsb/llmsb_zygote.R",
        .image_setup = "cat /usr/local/lib/llmsb/plots.R >> /etc/R/Rprofile.site",
        .line_comment = "#", .block_comment = {NULL, NULL},
        .import_pattern = "(?:library|require|requireNamespace)\\s*\\(\\s*['\"]?MOD['\"]?\\s*[,)]|\\bMOD\\s*:::?",
        .plots = 1,
        .scan = {
            [LANG_SCAN_SHELL] =
                "\\b(?:system2?|shell|pipe)\\s*\\(",
            [LANG_SCAN_EVAL] =
                "\\beval\\s*\\(|\\bparse\\s*\\(\\s*text\\s*=|\\bdo\\.call\\s*\\(",
            [LANG_SCAN_FS_DELETE] =
                "\\b(?:unlink|file\\.remove)\\s*\\(",
            [LANG_SCAN_NETWORK] =
                "\\b(?:url|download\\.file|socketConnection)\\s*\\(|\\bhttr\\s*::|\\bcurl\\s*::",
            [LANG_SCAN_ENV] =
                "\\bSys\\s*\\.\\s*(?:getenv|setenv|unsetenv)\\s*\\(",
            [LANG_SCAN_NATIVE] =
                "\\b(?:dyn\\.load|\\.Call|\\.C|\\.External|\\.Fortran)\\s*\\(|\\bRcpp\\b",
            [LANG_SCAN_PROCESS] =
                "\\b(?:mcparallel|mcfork|mclapply|makeCluster)\\s*\\(|\\bpskill\\s*\\(",
        },
        .strict_modules = {"parallel", "processx", "callr", "httr", "curl", "RCurl", "sys"},
        .tools = "Rscript", .hello = "cat('hello\\n')\n",
        .lexer = LEX_R,
    },
    {
        .name = "ruby", .aliases = {"rb"}, .image = "llmsb/ruby", .ext = "rb",
        .default_stem = "main",
        .run = {"ruby", "{file}"},
        .env = {"GEM_HOME=/work/.llmsb-lib/gem"},
        .packages = "ruby",
        /* fetch with the network, build (extensions) without it */
        .install = {"/usr/local/lib/llmsb/gem-fetch"},
        .install_build = {"/usr/local/lib/llmsb/gem-build"},
        .install_what = "gem",
        .library_ok = lib_gem,
        .registry_key = "gem_source", .registry_env = "LLMSB_GEM_SOURCE",
        .preinstall = {"gem", "install", "--no-document"},
        .hooks = {{"gem-fetch", "/usr/local/lib/llmsb/gem-fetch", 0755},
                  {"gem-build", "/usr/local/lib/llmsb/gem-build", 0755},
                  {"llmsb_zygote.rb", "/usr/local/lib/llmsb/llmsb_zygote.rb", 0644},
                  {"llmsb_session.rb", "/usr/local/lib/llmsb/llmsb_session.rb", 0644},
                  {"llmsb_zygote.so", "/usr/local/lib/llmsb/llmsb_zygote.so", 0644}},
        .zygote = "/usr/local/lib/llmsb/llmsb_zygote.rb",
        .line_comment = "#", .block_comment = {"=begin", "=end"},
        .import_pattern = "(?:^|[\\n;])\\s*require(?:_relative)?\\s*\\(?\\s*['\"]MOD['\"]",
        .scan = {
            [LANG_SCAN_SHELL] =
                "\\b(?:system|exec|spawn)\\b\\s*[(\"']|`|%x[\\[({<]|\\bIO\\s*\\.\\s*popen\\b|\\bOpen3\\b",
            [LANG_SCAN_EVAL] =
                "\\b(?:eval|instance_eval|class_eval|module_eval|instance_exec)\\b|\\.(?:send|public_send|__send__)\\s*\\(|\\bconst_get\\b",
            [LANG_SCAN_FS_DELETE] =
                "\\b(?:File|FileUtils)\\s*\\.\\s*(?:delete|unlink|rm|rm_r|rm_rf|remove_dir|remove_entry)\\b|\\bDir\\s*\\.\\s*(?:delete|rmdir)\\b",
            [LANG_SCAN_NETWORK] =
                "\\b(?:Socket|TCPSocket|UDPSocket|TCPServer)\\b|\\bNet\\s*::\\s*HTTP\\b|\\bURI\\s*\\.\\s*open\\b",
            [LANG_SCAN_ENV] =
                "\\bENV\\b",
            [LANG_SCAN_NATIVE] =
                "\\bFiddle\\b|\\bFFI\\b|\\bsyscall\\s*\\(",
            [LANG_SCAN_PROCESS] =
                "\\bfork\\b|\\bProcess\\s*\\.\\s*(?:fork|kill|daemon|spawn)\\b|\\bexit!",
        },
        .strict_modules = {"open3", "socket", "net/http", "fiddle", "ffi", "open-uri", "pty"},
        .tools = "ruby", .hello = "puts 'hello'\n",
        .lexer = LEX_RUBY,
    },
};
/* clang-format on */

/* The table: the order is the order of `languages`, the docs' tables and
 * the metrics' label values. */
const struct language *const languages[] = {
    &first[0], &first[1], &first[2], &first[3], &first[4], &first[5], &first[6], &first[7],
    &language_bash,
    &language_haskell,
    &language_ocaml,
    &language_rust,
    &language_d,
    &language_elixir,
    &language_ada,
    &language_lua,
    &language_perl,
    &language_typescript,
    &language_php,
    &language_racket,
    &language_clojure,
    &language_scala,
    &language_csharp,
};

const size_t languages_count = sizeof(languages) / sizeof(languages[0]);
_Static_assert(sizeof(languages) / sizeof(languages[0]) <= LANG_MAX, "LANG_MAX rows at most");

size_t language_index(const struct language *l)
{
    for (size_t i = 0; i < languages_count; i++)
        if (languages[i] == l)
            return i;
    abort(); /* only rows of the table reach here */
}

int language_library_ok(const struct language *l, const char *s)
{
    return language_library_name_ok(s) && (!l->library_ok || l->library_ok(s));
}

int language_library_name_ok(const char *s)
{
    size_t k = 0;
    while (s[k] && (isalnum((unsigned char)s[k]) || strchr("-_.:/@=<>~+[],!*^|", s[k])))
        k++;
    return *s && !s[k] && k <= 200 && (isalnum((unsigned char)s[0]) || s[0] == '@');
}

const struct language *language_by_registry_key(const char *key)
{
    for (size_t i = 0; i < languages_count; i++)
        if (languages[i]->registry_key && strcmp(languages[i]->registry_key, key) == 0)
            return languages[i];
    return NULL;
}

const struct language *language_find(const char *name)
{
    for (size_t i = 0; i < languages_count; i++) {
        const struct language *l = languages[i];
        if (strcasecmp(name, l->name) == 0)
            return l;
        for (int a = 0; a < LANG_MAX_ALIASES && l->aliases[a]; a++)
            if (strcasecmp(name, l->aliases[a]) == 0)
                return l;
    }
    return NULL;
}

const struct language *language_from_path(const char *path)
{
    const char *dot = strrchr(path, '.');
    static const struct {
        const char *ext, *lang;
    } extra[] = {
        {"py", "python"}, {"js", "javascript"}, {"mjs", "javascript"}, {"cjs", "javascript"},
        {"java", "java"}, {"cpp", "cpp"},       {"cc", "cpp"},         {"cxx", "cpp"},
        {"go", "go"},     {"r", "r"},           {"rb", "ruby"}};

    if (!dot || strchr(dot, '/'))
        return NULL;
    for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
        if (strcasecmp(dot + 1, extra[i].ext) == 0)
            return language_find(extra[i].lang);
    for (size_t i = 0; i < languages_count; i++) /* the later languages' own */
        if (strcasecmp(dot + 1, languages[i]->ext) == 0)
            return languages[i];
    return NULL;
}

void language_names(char *out, size_t outsz)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < languages_count && o < outsz; i++) {
        int n = snprintf(out + o, outsz - o, "%s%s", i ? ", " : "", languages[i]->name);
        if (n < 0)
            break;
        o += (size_t)n;
    }
}

int language_source(const struct language *l, const char *code, size_t len, struct lang_source *src,
                    struct llmsb_err *err)
{
    int n;

    memset(src, 0, sizeof(*src));
    if (l->source)
        return l->source(code, len, src, err);
    n = snprintf(src->file, sizeof(src->file), "%s.%s", l->default_stem, l->ext);
    if (n < 0 || (size_t)n >= sizeof(src->file))
        return llmsb_err_set(err, LLMSB_ERR_LIMIT, "code: cannot name the source file");
    return 0;
}

/* Replaces every "{file}", "{stem}" and "{class}" in t. Returns a new
 * string. */
static char *expand(const char *t, const struct lang_source *src)
{
    static const struct lang_source none;
    const char *file, *dot;
    size_t stem_len;
    struct buf b;

    if (!src)
        src = &none;
    file = src->file;
    dot = strrchr(file, '.');
    stem_len = dot ? (size_t)(dot - file) : strlen(file);
    buf_init(&b, 8192);
    while (*t) {
        if (strncmp(t, "{file}", 6) == 0) {
            buf_append_str(&b, file);
            t += 6;
        } else if (strncmp(t, "{stem}", 6) == 0) {
            buf_append(&b, file, stem_len);
            t += 6;
        } else if (strncmp(t, "{class}", 7) == 0) {
            buf_append_str(&b, src->main_class);
            t += 7;
        } else {
            buf_append(&b, t++, 1);
        }
    }
    return buf_steal(&b);
}

static int add_all(char ***argv, size_t *n, char *const *v, size_t nv)
{
    for (size_t i = 0; i < nv; i++)
        if (strlist_add(argv, n, v[i], strlen(v[i])) != 0)
            return LLMSB_ERR_NOMEM;
    return 0;
}

int language_argv(const char *const *tmpl, const struct lang_source *src,
                  const struct lang_flags *flags, char ***argv, size_t *n)
{
    static const struct lang_flags none;

    if (!flags)
        flags = &none;
    *argv = NULL;
    *n = 0;
    for (int i = 0; i < LANG_MAX_ARGV && tmpl[i]; i++) {
        int rc;
        if (strcmp(tmpl[i], LANG_COMPILE_FLAGS) == 0) {
            rc = add_all(argv, n, flags->compile, flags->ncompile);
        } else if (strcmp(tmpl[i], LANG_LINK_FLAGS) == 0) {
            rc = add_all(argv, n, flags->link, flags->nlink);
        } else {
            char *s = expand(tmpl[i], src);
            rc = s ? strlist_add(argv, n, s, strlen(s)) : LLMSB_ERR_NOMEM;
            free(s);
        }
        if (rc)
            return rc;
    }
    return (int)*n;
}
