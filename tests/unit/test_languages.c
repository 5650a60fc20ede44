/* test_languages.c - the language table: lookup, file naming (Java's public
 * class), command templates. */
#include "test.h"

#include "images/images.h"
#include "languages/languages.h"

TEST(all_seven_languages_present)
{
    static const char *names[] = {"python", "javascript", "java", "cpp", "go", "r", "ruby"};

    ASSERT_EQ(languages_count, (size_t)7);
    for (size_t i = 0; i < 7; i++) {
        const struct language *l = language_find(names[i]);
        ASSERT(l != NULL);
        ASSERT_STR(l->name, names[i]);
        ASSERT(l->run[0] != NULL);
        ASSERT(l->packages && *l->packages);
        ASSERT(l->import_pattern && strstr(l->import_pattern, "MOD"));
        ASSERT(l->line_comment != NULL);
    }
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
    char name[128];
    const char *code = "// public class Wrong {}\n"
                       "/* public class AlsoWrong */\n"
                       "import java.util.*;\n"
                       "class Helper { public class Inner {} }\n"
                       "public final class Solution {\n"
                       "  String s = \"public class Nope\";\n"
                       "  public static void main(String[] a) {}\n"
                       "}\n";

    ASSERT_EQ(language_file_name(java, code, strlen(code), name, sizeof(name)), 0);
    ASSERT_STR(name, "Solution.java");
    ASSERT_EQ(language_file_name(java, "class A {}", 10, name, sizeof(name)), 0);
    ASSERT_STR(name, "Main.java");
    ASSERT_EQ(language_java_public_class("public record Point(int x) {}", 29, name, sizeof(name)),
              0);
    ASSERT_STR(name, "Point");
    ASSERT(language_java_public_class("public", 6, name, sizeof(name)) != 0);
    ASSERT_EQ(language_file_name(language_find("python"), "x", 1, name, sizeof(name)), 0);
    ASSERT_STR(name, "main.py");
}

TEST(argv_templates_expand)
{
    char **argv = NULL;
    size_t n = 0;
    const struct language *java = language_find("java"), *cpp = language_find("cpp");

    ASSERT(language_argv(java->run, "Solution.java", &argv, &n) > 0);
    ASSERT_STR(argv[n - 1], "Solution");
    ASSERT(argv[n] == NULL);
    for (size_t i = 0; i < n; i++)
        free(argv[i]);
    free(argv);
    ASSERT(language_argv(cpp->run, "main.cpp", &argv, &n) == 1);
    ASSERT_STR(argv[0], "./main");
    free(argv[0]);
    free(argv);
}

/* Every hook a language names is embedded byte for byte as it is in
 * languages/hooks/, and its image recipe copies it in. */
TEST(hooks_are_embedded_and_copied)
{
    for (size_t i = 0; i < languages_count; i++) {
        const struct language *l = &languages[i];
        char *df = images_dockerfile(l, "llmsb/base:x", 10001, 0, NULL);
        ASSERT(df != NULL);
        for (int k = 0; k < LANG_MAX_HOOKS && l->hooks[k].file; k++) {
            const struct lang_hook_file *h = language_hook_file(l->hooks[k].file);
            char path[256], line[512], disk[65536];
            size_t n;
            FILE *f;
            ASSERT(h != NULL);
            snprintf(path, sizeof(path), "languages/hooks/%s", h->name);
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
    ASSERT(!language_find("java")->install[0] && language_find("cpp")->install[0]);
}

TEST_MAIN("languages", T(all_seven_languages_present), T(aliases_and_extensions),
          T(compiled_languages_have_compile_steps), T(java_public_class_names_the_file),
          T(argv_templates_expand), T(hooks_are_embedded_and_copied))
