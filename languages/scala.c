/* scala.c - Scala 2.11 (Debian's scala), as MultiPL-E's eval_scala.py
 * runs it: `scalac -d DIR FILE`, then `scala -cp DIR Problem`; the verdict
 * the exit code (MultiPL-E also wants an empty stderr: docs/languages/
 * scala.md).  The object to run is the one that declares main (or extends
 * App), found in the code, as Java's class is. */
#include "languages_int.h"

#include <stdio.h>
#include <string.h>

/* scalac and scala start the JVM with JAVA_OPTS ("-Xmx256M -Xms32M" when
 * unset): with the default 256 MB of a job, scalac's heap and the JVM's
 * own memory (207 MB resident for a MultiPL-E program) come close to the
 * kernel's OOM kill, so the heap is capped at 160 MB (185 MB resident). */
#define SCALA_JAVA_OPTS "JAVA_OPTS=-Xmx160M -XX:+UseSerialGC"
/* The class path: the work dir, and the jars of a job's libraries (Debian
 * packages of jars, libcommons-lang3-java, unpacked there by apt-get-local); scalac
 * and scala expand the "*" themselves. */
#define SCALA_LIB "/work/.llmsb-lib/scala"
#define SCALA_CLASSPATH ".:" SCALA_LIB "/usr/share/java/*"

static int ident(char c)
{
    return c == '_' || c == '$' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z');
}

static int word_at(const char *s, size_t n, size_t i, const char *w)
{
    size_t k = strlen(w);
    return i + k <= n && memcmp(s + i, w, k) == 0 && (i == 0 || !ident(s[i - 1])) &&
           (i + k == n || !ident(s[i + k]));
}

static size_t skip_blanks(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

/* The first `object NAME` whose text, up to the next object, class or
 * trait, declares `def main` or that `extends App`; else the first
 * object.  Comments and strings are not skipped (a name in one is
 * refused by scala, not run). */
static void scala_main_object(const char *s, size_t n, const char **name, size_t *len)
{
    const char *first = NULL;
    size_t first_len = 0;

    for (size_t i = 0; i < n; i++) {
        size_t b, e, k;
        if (!word_at(s, n, i, "object"))
            continue;
        b = skip_blanks(s, n, i + 6);
        for (e = b; e < n && ident(s[e]); e++)
            ;
        if (e == b)
            continue;
        if (!first)
            first = s + b, first_len = e - b;
        for (k = e; k < n; k++) {
            if (word_at(s, n, k, "object") || word_at(s, n, k, "class") ||
                word_at(s, n, k, "trait"))
                break;
            if ((word_at(s, n, k, "def") && word_at(s, n, skip_blanks(s, n, k + 3), "main")) ||
                (word_at(s, n, k, "extends") && word_at(s, n, skip_blanks(s, n, k + 7), "App"))) {
                *name = s + b, *len = e - b;
                return;
            }
        }
        i = e;
    }
    *name = first, *len = first_len;
}

/* A `package a.b` clause at a line's start before the object. */
static size_t scala_package(const char *s, size_t n, size_t before, char *out, size_t outsz)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < before && i < n; i++) {
        size_t b;
        if ((i && s[i - 1] != '\n') || !word_at(s, n, i, "package"))
            continue;
        b = skip_blanks(s, n, i + 7);
        if (word_at(s, n, b, "object"))
            continue;
        if (o && o + 1 < outsz)
            out[o++] = '.';
        while (b < n && (ident(s[b]) || s[b] == '.') && o + 1 < outsz)
            out[o++] = s[b++];
        out[o] = '\0';
    }
    return o;
}

static int scala_source(const char *code, size_t len, struct lang_source *src,
                        struct llmsb_err *err)
{
    const char *name = NULL;
    size_t name_len = 0;
    char pkg[LANG_JAVA_PACKAGE];
    int n;

    snprintf(src->file, sizeof(src->file), "main.scala");
    scala_main_object(code, len, &name, &name_len);
    if (!name)
        return llmsb_err_set(err, LLMSB_ERR_NOTFOUND,
                             "scala: no object declares `def main(args: Array[String])` or "
                             "extends App, so there is nothing to run");
    scala_package(code, len, (size_t)(name - code), pkg, sizeof(pkg));
    n = snprintf(src->main_class, sizeof(src->main_class), "%s%s%.*s", pkg, pkg[0] ? "." : "",
                 name_len > LANG_FILE_NAME ? LANG_FILE_NAME : (int)name_len, name);
    if (n < 0 || (size_t)n >= sizeof(src->main_class) || name_len > LANG_FILE_NAME - 8)
        return llmsb_err_set(err, LLMSB_ERR_LIMIT,
                             "code: the object %.40s... is %zu bytes; scalac names its class "
                             "file after it and a file name holds at most %d",
                             name, name_len, LANG_FILE_NAME - 1);
    return 0;
}

/* clang-format off */
const struct language language_scala = {
    .name = "scala", .aliases = {"scala2"}, .image = "llmsb/scala", .ext = "scala",
    .default_stem = "main", .source = scala_source,
    /* the compiler's JIT at C1 only: 5.5 s for a MultiPL-E program, not 14 */
    .compile = {"scalac", "-J-XX:TieredStopAtLevel=1", "-cp", SCALA_CLASSPATH, "-d", ".", "{file}"},
    .run = {"scala", "-cp", SCALA_CLASSPATH, "{class}"},
    .env = {SCALA_JAVA_OPTS},
    .packages = "scala",
    .install = {"/usr/local/lib/llmsb/apt-get-local", SCALA_LIB},
    .install_what = "apt",
    .library_ok = language_lib_apt,
    .hooks = {{"apt-get-local", "/usr/local/lib/llmsb/apt-get-local", 0755}},
    C_COMMENTS,
    .import_pattern = "(?:^|[\\n;])\\s*import\\s+(?:_root_\\.)?MOD(?:\\.|\\s|;|$)",
    .scan = {
        [LANG_SCAN_SHELL] =
            /* Process(...), ProcessBuilder, Runtime.exec, the `"ls".!`,
             * `Seq(...) !!` and `#|` of scala.sys.process */
            "\\bsys\\s*\\.\\s*process\\b|\\bProcess\\s*\\(|\\bProcessBuilder\\b|\\.\\s*exec\\s*\\(|\\.\\s*!!?(?![=\\w])|(?<=[\"')\\]])\\s*!!?(?![=\\w])|\\.\\s*(?:lineStream|lines_!)\\b|#(?:\\||&&|>>?|<)",
        [LANG_SCAN_EVAL] =
            "\\bClass\\s*\\.\\s*forName\\s*\\(|\\.getDeclaredMethod\\s*\\(|\\.setAccessible\\s*\\(|\\bScriptEngineManager\\b|\\bToolBox\\b|\\bscala\\s*\\.\\s*tools\\s*\\.\\s*nsc\\b|\\bscala\\s*\\.\\s*reflect\\s*\\.\\s*runtime\\b|\\bMethodHandles\\b",
        [LANG_SCAN_FS_DELETE] =
            "\\bFiles\\s*\\.\\s*(?:delete|deleteIfExists)\\s*\\(|\\.delete(?:OnExit)?\\s*\\(\\s*\\)|\\.delete\\b(?!\\s*\\()|\\.deleteRecursively\\b",
        [LANG_SCAN_NETWORK] =
            "\\bjava\\s*\\.\\s*net\\b|\\bnew\\s+(?:Socket|ServerSocket|URL|DatagramSocket)\\s*\\(|\\bSource\\s*\\.\\s*fromURL\\b|\\bHttpClient\\b|\\bHttpURLConnection\\b",
        [LANG_SCAN_ENV] =
            "\\bSystem\\s*\\.\\s*getenv\\b|\\bsys\\s*\\.\\s*env\\b|\\bProperties\\s*\\.\\s*envOrElse\\b",
        [LANG_SCAN_NATIVE] =
            "\\bSystem\\s*\\.\\s*(?:loadLibrary|load)\\s*\\(|\\bsun\\s*\\.\\s*misc\\s*\\.\\s*Unsafe\\b|@native\\b",
        [LANG_SCAN_PROCESS] =
            "\\bSystem\\s*\\.\\s*exit\\s*\\(|\\bsys\\s*\\.\\s*exit\\b|\\bRuntime\\s*\\.\\s*getRuntime\\s*\\(\\s*\\)\\s*\\.\\s*(?:halt|exit|addShutdownHook)\\s*\\(|\\bProcessHandle\\b|\\bsys\\s*\\.\\s*addShutdownHook\\b",
    },
    .strict_modules = {"scala.sys.process", "sys.process", "java.net", "java.lang.reflect",
                       "java.nio.file", "javax.script", "scala.reflect.runtime", "scala.tools",
                       "sun.misc"},
    .tools = "scalac scala",
    .hello = "object Main { def main(args: Array[String]): Unit = println(\"hello\") }\n",
    .lexer = LEX_SCALA,
};
/* clang-format on */
