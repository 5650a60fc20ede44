/* test_languages.c - the language table: lookup, file naming (Java's public
 * class, the class that declares main), command templates. */
#include "test.h"

#include "common/strlist.h"
#include "images/images.h"
#include "languages/languages.h"

static const struct lang_source main_cpp = {"main.cpp", ""};

TEST(all_languages_present)
{
    static const char *names[] = {"python", "javascript", "java", "cpp",
                                  "go",     "go_test",    "r",    "ruby"};

    ASSERT(languages_count >= 8 && languages_count <= LANG_MAX);
    for (size_t i = 0; i < 8; i++) {
        const struct language *l = language_find(names[i]);
        ASSERT(l != NULL);
        ASSERT_STR(l->name, names[i]);
        ASSERT(l->run[0] != NULL);
        ASSERT(l->packages && *l->packages);
        ASSERT(l->import_pattern && strstr(l->import_pattern, "MOD"));
        ASSERT(l->line_comment != NULL);
    }
}

/* Every row once, every name and alias naming one row, every row whole:
 * what the table's readers (language_find, config, metrics) take for
 * granted. */
TEST(every_row_once_and_every_name_one_row)
{
    for (size_t i = 0; i < languages_count; i++) {
        const struct language *l = languages[i];
        ASSERT_EQ(language_index(l), i);
        ASSERT_MSG(language_find(l->name) == l, l->name);
        for (int a = 0; a < LANG_MAX_ALIASES && l->aliases[a]; a++)
            ASSERT_MSG(language_find(l->aliases[a]) == l, l->aliases[a]);
        ASSERT_MSG(l->run[0] && l->packages && *l->packages && l->image && l->ext, l->name);
        ASSERT_MSG(l->hello && l->tools && *l->tools, l->name);
        for (size_t k = 0; k < i; k++)
            ASSERT_MSG(languages[k] != l && strcmp(languages[k]->image, l->image) != 0, l->name);
    }
}

/* A job's flags land where the cpp row puts them: compile flags after the
 * defaults (a later -std wins), link flags after the source file. */
TEST(compile_flags_expand_where_the_row_says)
{
    const struct language *cpp = language_find("cpp");
    char *cf[] = {"-std=c++20", "-O0"}, *lf[] = {"-lcrypto"};
    struct lang_flags flags = {.compile = cf, .ncompile = 2, .link = lf, .nlink = 1};
    const char *why;
    char **argv;
    size_t n;
    int i_std = -1, i_job_std = -1, i_file = -1, i_lib = -1;

    ASSERT(language_argv(cpp->compile, &main_cpp, &flags, &argv, &n) > 0);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(argv[i], "-std=c++17") == 0)
            i_std = (int)i;
        if (strcmp(argv[i], "-std=c++20") == 0)
            i_job_std = (int)i;
        if (strcmp(argv[i], "main.cpp") == 0)
            i_file = (int)i;
        if (strcmp(argv[i], "-lcrypto") == 0)
            i_lib = (int)i;
        ASSERT(strchr(argv[i], '{') == NULL);
    }
    ASSERT(i_std >= 0 && i_job_std > i_std && i_file > i_job_std && i_lib > i_file);
    strlist_free(argv, n);
    /* no flags: the placeholders vanish */
    ASSERT(language_argv(cpp->compile, &main_cpp, NULL, &argv, &n) > 0);
    for (size_t i = 0; i < n; i++)
        ASSERT(strchr(argv[i], '{') == NULL);
    strlist_free(argv, n);

    static const char *const good[] = {"-O0",
                                       "-O3",
                                       "-std=c++20",
                                       "-std=gnu++17",
                                       "-DN=10",
                                       "-DDEBUG",
                                       "-UNDEBUG",
                                       "-Wall",
                                       "-Wno-unused-variable",
                                       "-g",
                                       "-fno-exceptions",
                                       "-fsanitize=address,undefined",
                                       "-pthread",
                                       NULL};
    static const char *const bad[] = {"-I/etc",
                                      "-L/tmp",
                                      "-o",
                                      "-o/tmp/x",
                                      "-B/tmp",
                                      "-specs=/tmp/s",
                                      "@/tmp/args",
                                      "-fplugin=/tmp/p.so",
                                      "-std=c++99x",
                                      "-D",
                                      "-D1X",
                                      "-DX=$(id)",
                                      "-Wl,-rpath,/x",
                                      "-lcrypto",
                                      "-x",
                                      "--help",
                                      "-wrapper",
                                      NULL};
    static const char *const good_link[] = {"-lcrypto", "-lssl",   "-lboost_system", "-lm",
                                            "-pthread", "-static", "-lstdc++",       NULL};
    static const char *const bad_link[] = {"-O2",       "-l",          "-l/tmp/x", "-L/tmp",
                                           "-Wl,-T,/x", "-lcrypto;id", NULL};
    for (int i = 0; good[i]; i++)
        ASSERT_MSG(cpp->flag_ok(good[i], 0, &why), good[i]);
    for (int i = 0; bad[i]; i++)
        ASSERT_MSG(!cpp->flag_ok(bad[i], 0, &why) && why && *why, bad[i]);
    for (int i = 0; good_link[i]; i++)
        ASSERT_MSG(cpp->flag_ok(good_link[i], 1, &why), good_link[i]);
    for (int i = 0; bad_link[i]; i++)
        ASSERT_MSG(!cpp->flag_ok(bad_link[i], 1, &why), bad_link[i]);
    ASSERT(language_find("python")->flag_ok == NULL);
    ASSERT_STR(language_find("gotest")->name, "go_test");
}

TEST(aliases_and_extensions)
{
    ASSERT_STR(language_find("PY")->name, "python");
    ASSERT_STR(language_find("node")->name, "javascript");
    ASSERT_STR(language_find("c++")->name, "cpp");
    ASSERT_STR(language_find("golang")->name, "go");
    ASSERT(language_find("cobol") == NULL);
    ASSERT_STR(language_from_path("x/y/prog.rb")->name, "ruby");
    ASSERT_STR(language_from_path("a.R")->name, "r");
    ASSERT_STR(language_from_path("Main.java")->name, "java");
    ASSERT(language_from_path("noext") == NULL);
    ASSERT(language_from_path("dir.py/noext") == NULL);
}

TEST(compiled_languages_have_compile_steps)
{
    ASSERT(language_find("cpp")->compile[0] != NULL);
    ASSERT(language_find("java")->compile[0] != NULL);
    ASSERT(language_find("go")->compile[0] != NULL);
    ASSERT(language_find("python")->compile[0] == NULL);
}

TEST(java_public_class_names_the_file)
{
    const struct language *java = language_find("java");
    struct llmsb_err err = {0};
    struct lang_source src;
    const char *code = "// public class Wrong {}\n"
                       "/* public class AlsoWrong */\n"
                       "import java.util.*;\n"
                       "class Helper { public class Inner {} }\n"
                       "public final class Solution {\n"
                       "  String s = \"public class Nope\";\n"
                       "  public static void main(String[] a) {}\n"
                       "}\n";

    ASSERT_EQ(language_source(java, code, strlen(code), &src, &err), 0);
    ASSERT_STR(src.file, "Solution.java");
    ASSERT_STR(src.main_class, "Solution");
    code = "public record Point(int x) { public static void main(String[] a) {} }";
    ASSERT_EQ(language_source(java, code, strlen(code), &src, &err), 0);
    ASSERT_STR(src.file, "Point.java");
    ASSERT_EQ(language_source(language_find("python"), "x", 1, &src, &err), 0);
    ASSERT_STR(src.file, "main.py");
    ASSERT_STR(src.main_class, "");
}

/* What java.c finds, written as benchmarks and models write Java. */
static const char *java_name(struct lang_java_name n)
{
    static char out[1024];

    snprintf(out, sizeof(out), "%.*s", (int)n.len, n.s ? n.s : "");
    return out;
}

static const char *java_main(const char *code)
{
    static struct lang_java_types t;

    language_java_scan(code, strlen(code), &t);
    return java_name(t.main_type);
}

TEST(java_main_class_is_the_top_level_one_declaring_main)
{
    struct lang_java_types t;
    const char *code;

    /* MultiPL-E / CRUXEval-X: no public anywhere */
    ASSERT_STR(
        java_main("import java.util.*;\nimport org.javatuples.*;\n"
                  "class Problem {\n    public static long f(ArrayList<Long> l) { return 1L; }\n"
                  "    public static void main(String[] args) {\n"
                  "    assert(f((new ArrayList<Long>(Arrays.asList(1L)))) == (1L));\n    }\n\n}\n"),
        "Problem");
    /* modifiers in any order, final, varargs, C-style arrays, java.lang.,
     * annotations on the method and the parameter, throws */
    ASSERT_STR(java_main("class A { static public void main(String... a) {} }"), "A");
    ASSERT_STR(java_main("final class A { public final static void main(final String args[]) {} }"),
               "A");
    ASSERT_STR(java_main("class A { @SuppressWarnings({\"x\", \"y\"}) public static synchronized "
                         "void main(@Deprecated final java.lang.String[] a) throws Exception {} }"),
               "A");
    ASSERT_STR(java_main("class A { public static <T> void main(String[] a) {} }"), "A");
    /* generics, extends/implements, annotations on the class */
    ASSERT_STR(java_main("@FunctionalInterface\ninterface F<T extends Comparable<? super T>> { int "
                         "f(T t); }\n@SuppressWarnings(\"unchecked\") abstract class Problem<K, V> "
                         "extends java.util.HashMap<K, V> implements java.io.Serializable {\n"
                         "  public static void main(String[] args) {}\n}\n"),
               "Problem");
    /* in an interface every member is public; enums and records have main too */
    ASSERT_STR(java_main("interface Main { static void main(String[] a) {} }"), "Main");
    ASSERT_STR(java_main("enum E { A { void f() {} }, B; public static void main(String[] a) {} }"),
               "E");
    ASSERT_STR(java_main("record R(int x, String[] y) { public static void main(String[] a) {} }"),
               "R");
    /* comments, strings, char and text-block literals hide nothing and fake nothing */
    ASSERT_STR(
        java_main("// class X { public static void main(String[] a) {} }\n"
                  "/* class Y { public static void main(String[] a) {} } */\n"
                  "class Z { String s = \"}}} class W { public static void main(String[] a) {\";\n"
                  "  char c = '}'; char d = '\\''; String t = \"\"\"\n    } } \\\"\"\" }\"\"\";\n"
                  "  public static void main(String[] a) {}\n}\n"),
        "Z");
    /* a nested class's main is not a top-level one */
    ASSERT_STR(java_main("class Outer { static class Inner { public static void main(String[] a) "
                         "{} } }"),
               "");
    ASSERT_STR(java_main("class Outer { static class Inner { public static void main(String[] a) "
                         "{} } }\nclass Runner { public static void main(String[] a) {} }"),
               "Runner");
    /* a field initialiser with braces, lambdas and anonymous classes before main */
    ASSERT_STR(
        java_main("class A { static int[] xs = {1, 2}; static Runnable r = () -> { int y; };\n"
                  "  static Object o = new Object() { public void main(int x) {} };\n"
                  "  static { System.out.println(); }\n"
                  "  public static void main(String[] a) {} }"),
        "A");
    /* several top-level classes: the public one when it declares main,
     * else the first in source order */
    ASSERT_STR(java_main("class A { public static void main(String[] a) {} }\n"
                         "public class B { public static void main(String[] a) {} }\n"),
               "B");
    ASSERT_STR(java_main("class A { public static void main(String[] a) {} }\n"
                         "class B { public static void main(String[] a) {} }\n"),
               "A");
    /* not the launcher's main: instance, not public, wrong parameters or
     * return type, a call rather than a declaration */
    ASSERT_STR(java_main("class A { public void main(String[] a) {} }"), "");
    ASSERT_STR(java_main("class A { static void main(String[] a) {} }"), "");
    ASSERT_STR(java_main("class A { public static void main() {} }"), "");
    ASSERT_STR(java_main("class A { public static void main(String a) {} }"), "");
    ASSERT_STR(java_main("class A { public static void main(String[] a, int b) {} }"), "");
    ASSERT_STR(java_main("class A { public static int main(String[] a) { return 0; } }"), "");
    ASSERT_STR(java_main("class A { static int x = main(null); static int main(String[] a) "
                         "{ return 0; } }"),
               "");
    code = "class Problem { static void main(String[] args) {} }";
    language_java_scan(code, strlen(code), &t);
    ASSERT_STR(java_name(t.odd_main), "Problem");
    /* import and package words that look like declarations */
    language_java_scan("package a . record;\nimport record.Foo;\nimport static x.Y.*;\n"
                       "class C { public static void main(String[] a) {} }",
                       strlen("package a . record;\nimport record.Foo;\nimport static x.Y.*;\n"
                              "class C { public static void main(String[] a) {} }"),
                       &t);
    ASSERT_STR(t.package, "a.record");
    ASSERT_STR(java_name(t.main_type), "C");
    ASSERT_STR(java_name(t.public_type), "");
    /* cut input never reads past its end */
    code = "class A { public static void main(String";
    for (size_t n = 0; n <= strlen(code); n++)
        language_java_scan(code, n, &t);
    ASSERT_STR(java_main("public"), "");
    ASSERT_STR(java_main("class"), "");
}

/* Java names of any length a file name and a path can hold: a 130-byte
 * class, a 159-byte package; longer ones are refused naming the limit. */
TEST(java_long_names)
{
    const struct language *java = language_find("java");
    struct llmsb_err err = {0};
    struct lang_source src;
    static char name[300], pkg[4200], code[9000], want[4500];

    memset(name, 'C', 130);
    memset(pkg, 'p', 159);
    for (size_t i = 9; i < 159; i += 10)
        pkg[i] = '.';
    snprintf(code, sizeof(code), "package %s;\nclass %s { public static void main(String[] a) {} }",
             pkg, name);
    ASSERT_EQ(language_source(java, code, strlen(code), &src, &err), 0);
    snprintf(want, sizeof(want), "%s.java", name);
    ASSERT_STR(src.file, want);
    snprintf(want, sizeof(want), "%s.%s", pkg, name);
    ASSERT_STR(src.main_class, want);
    /* 249 bytes: Name.class is the longest file name there is */
    memset(name, 'C', 249);
    snprintf(code, sizeof(code), "public class %s { public static void main(String[] a) {} }",
             name);
    ASSERT_EQ(language_source(java, code, strlen(code), &src, &err), 0);
    ASSERT_STR(src.main_class, name);
    memset(name, 'C', 251);
    snprintf(code, sizeof(code), "public class %s { public static void main(String[] a) {} }",
             name);
    ASSERT_EQ(language_source(java, code, strlen(code), &src, &err), LLMSB_ERR_LIMIT);
    ASSERT_CONTAINS(err.msg, "is 251 bytes; the source file is named after it (with .java) and a "
                             "file name holds at most 255");
    name[250] = '\0';
    snprintf(code, sizeof(code), "class %s { public static void main(String[] a) {} }", name);
    ASSERT_EQ(language_source(java, code, strlen(code), &src, &err), LLMSB_ERR_LIMIT);
    ASSERT_CONTAINS(err.msg, "that declares main is 250 bytes");
    /* the package: up to a path's 4095 bytes */
    memset(pkg, 'p', 4096);
    for (size_t i = 9; i < 4096; i += 10)
        pkg[i] = '.';
    snprintf(code, sizeof(code), "package %s;\nclass A { public static void main(String[] a) {} }",
             pkg);
    ASSERT_EQ(language_source(java, code, strlen(code), &src, &err), LLMSB_ERR_LIMIT);
    ASSERT_CONTAINS(err.msg, "the package is 4096 bytes");
    pkg[4095] = '\0';
    snprintf(code, sizeof(code), "package %s;\nclass A { public static void main(String[] a) {} }",
             pkg);
    ASSERT_EQ(language_source(java, code, strlen(code), &src, &err), 0);
    ASSERT_EQ(strlen(src.main_class), (size_t)4097);
}

/* The file a Java job is saved as and the class its run names. */
TEST(java_source_and_run_argv)
{
    const struct language *java = language_find("java");
    struct llmsb_err err = {0};
    struct lang_source src;
    char **argv = NULL;
    size_t n = 0;
    const char *code = "class Problem { public static void main(String[] a) {} }";

    ASSERT_EQ(language_source(java, code, strlen(code), &src, &err), 0);
    ASSERT_STR(src.file, "Problem.java");
    ASSERT(language_argv(java->run, &src, NULL, &argv, &n) > 0);
    ASSERT_STR(argv[n - 1], "Problem");
    ASSERT(argv[n] == NULL);
    strlist_free(argv, n);
    code = "public class Solution {}\nclass Main { public static void main(String[] a) {} }";
    ASSERT_EQ(language_source(java, code, strlen(code), &src, &err), 0);
    ASSERT_STR(src.file, "Solution.java");
    ASSERT_STR(src.main_class, "Main");
    /* no main: the reason, and still a file name */
    code = "class Problem { static void main(String[] a) {} }";
    ASSERT_EQ(language_source(java, code, strlen(code), &src, &err), LLMSB_ERR_NOTFOUND);
    ASSERT_STR(src.file, "Main.java");
    ASSERT_CONTAINS(err.msg,
                    "no top-level class declares `public static void main(String[] args)`");
    ASSERT_CONTAINS(err.msg, "the main of Problem is not public static void with one String[]");
    ASSERT_EQ(language_source(java, "", 0, &src, &err), LLMSB_ERR_NOTFOUND);
}

TEST(argv_templates_expand)
{
    char **argv = NULL;
    size_t n = 0;
    const struct language *cpp = language_find("cpp");

    ASSERT(language_argv(cpp->run, &main_cpp, NULL, &argv, &n) == 1);
    ASSERT_STR(argv[0], "./main");
    free(argv[0]);
    free(argv);
    ASSERT(language_argv(language_find("java")->install, NULL, NULL, &argv, &n) == 2);
    strlist_free(argv, n);
}

/* Every hook a language names is embedded byte for byte as it is in
 * languages/hooks/ (bin/ for the zygote library), and its image recipe
 * copies it in. */
TEST(hooks_are_embedded_and_copied)
{
    for (size_t i = 0; i < languages_count; i++) {
        const struct language *l = languages[i];
        char *df = images_dockerfile(l, "llmsb/base:x", 10001, 0, NULL);
        ASSERT(df != NULL);
        for (int k = 0; k < LANG_MAX_HOOKS && l->hooks[k].file; k++) {
            const struct lang_hook_file *h = language_hook_file(l->hooks[k].file);
            static char disk[1 << 18];
            char path[256], line[512];
            size_t n;
            FILE *f;
            ASSERT(h != NULL);
            /* the zygote library is built (make), the rest are sources */
            snprintf(path, sizeof(path), "%s/%s",
                     strcmp(h->name, "llmsb_zygote.so") == 0 ? "bin" : "languages/hooks", h->name);
            ASSERT((f = fopen(path, "rb")) != NULL);
            n = fread(disk, 1, sizeof(disk), f);
            fclose(f);
            ASSERT_EQ((size_t)(h->end - h->data), n);
            ASSERT(memcmp(h->data, disk, n) == 0);
            snprintf(line, sizeof(line), "COPY hooks/%s %s\n", h->name, l->hooks[k].dest);
            ASSERT_CONTAINS(df, line);
        }
        free(df);
    }
    ASSERT(language_hook_file("nope") == NULL);
    {
        char *df = images_dockerfile(language_find("r"), "b", 10001, 1, NULL);
        ASSERT_CONTAINS(df, "RUN cat /usr/local/lib/llmsb/plots.R >> /etc/R/Rprofile.site");
        ASSERT_CONTAINS(
            df, "COPY ca/ /usr/local/share/ca-certificates/llmsb/\nRUN update-ca-certificates");
        free(df);
    }
    /* plot capture where there are hooks, installers where the language has one */
    ASSERT(language_find("python")->plots && language_find("r")->plots);
    /* Java and C++ libraries are Debian packages, each unpacked in its own root */
    ASSERT_STR(language_find("java")->install[1], "/work/.llmsb-lib/java");
    ASSERT_STR(language_find("cpp")->install[1], "/work/.llmsb-lib/cpp");
}

/* A custom image's layer: every language says what it needs and prints
 * hello; the layer checks the commands, copies the hooks and the agent,
 * strips setuid bits and file capabilities and labels the language; names
 * are one component.  (Its marks and the Dockerfile check: test_images.c.) */
TEST(custom_image_layer)
{
    static const char *const good[] = {"sympy", "py3.12", "a", "my_img-2", "x.y"};
    static const char *const bad[] = {"",    "Sympy", "-a",   "a-", "a--b", "a/b",
                                      "a b", "a:b",   "a..b", "_a", "a_"};
    for (size_t i = 0; i < languages_count; i++) {
        const struct language *l = languages[i];
        char *layer, line[512];
        ASSERT(l->tools && l->tools[0] && l->hello && strstr(l->hello, "hello"));
        ASSERT((layer = images_custom_layer(l, "n", 10001, "nonce")) != NULL);
        snprintf(line, sizeof(line), "RUN for c in %s; do command -v", l->tools);
        ASSERT_CONTAINS(layer, line);
        for (int k = 0; k < LANG_MAX_HOOKS && l->hooks[k].file; k++) {
            snprintf(line, sizeof(line), "COPY .llmsb/hooks/%s %s\n", l->hooks[k].file,
                     l->hooks[k].dest);
            ASSERT_CONTAINS(layer, line);
        }
        snprintf(line, sizeof(line), "LABEL llmsb.lang=\"%s\" llmsb.custom=\"n\"\n", l->name);
        ASSERT_CONTAINS(layer, line);
        /* the shell set back, root by number (not through /etc/passwd) */
        ASSERT_CONTAINS(layer, "\nSHELL [\"/bin/sh\", \"-c\"]\nUSER 0:0\n");
        ASSERT_CONTAINS(layer, "find / -xdev -type f -exec getcap {} +");
        ASSERT_CONTAINS(layer, "-perm /6000 -print -exec chmod ug-s {} +");
        ASSERT_CONTAINS(layer, "useradd -u 10001 -g 10001");
        ASSERT_CONTAINS(layer, "COPY .llmsb/llmsb-agent /usr/local/bin/llmsb-agent\n");
        ASSERT_CONTAINS(layer, "ENTRYPOINT [\"/usr/local/bin/llmsb-agent\"]\nCMD []\n");
        free(layer);
    }
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        ASSERT(images_custom_name_ok(good[i]));
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ASSERT(!images_custom_name_ok(bad[i]));
    ASSERT(
        images_custom_name_ok("a234567890123456789012345678901234567890123456789012345678901234"));
    ASSERT(!images_custom_name_ok(
        "a2345678901234567890123456789012345678901234567890123456789012345"));
}

TEST_MAIN("languages", T(all_languages_present), T(every_row_once_and_every_name_one_row),
          T(compile_flags_expand_where_the_row_says),
          T(aliases_and_extensions), T(compiled_languages_have_compile_steps),
          T(java_public_class_names_the_file),
          T(java_main_class_is_the_top_level_one_declaring_main), T(java_source_and_run_argv),
          T(java_long_names), T(argv_templates_expand), T(hooks_are_embedded_and_copied),
          T(custom_image_layer))
