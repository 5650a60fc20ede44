/* test_images.c - custom images: the check that the sandbox layer can
 * follow a user's Dockerfile, read the way the engines' Dockerfile parsers
 * read it (a byte-order mark, parser directives only at the very top,
 * Unicode white space); the marks our layer's steps leave; the judge of an
 * image's files read from outside (images/tree.c), over tar streams made
 * here as an engine's export would be. */
#include "test.h"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

#include "images/images.h"
#include "languages/languages.h"

struct df_case {
    const char *why;
    const char *text;
    int line; /* 0: accepted; else refused, naming this line */
    char esc; /* the continuation named */
};

/* Docker's parser (moby/buildkit) and Podman's (openshift/imagebuilder)
 * strip a UTF-8 byte-order mark from the first line, take "# escape=" only
 * while nothing but directives came before it (a comment or a blank line
 * ends them), trim lines with Go's unicode.IsSpace, skip comment and blank
 * lines inside a continuation, and drop a CR before each LF. */
static const struct df_case df_cases[] = {
    {"plain", "FROM a\nRUN x\n", 0, 0},
    {"continued inside, comment after", "FROM a\nRUN x \\\n  y\n# c \\\n\n", 0, 0},
    {"no newline", "FROM a", 0, 0},
    {"empty", "", 0, 0},
    {"escape directive, backslash at the end", "# escape=`\nFROM a\nRUN x \\\n", 0, 0},
    {"last line continues", "FROM a\nRUN x \\\n", 2, '\\'},
    {"continues past a comment", "FROM a\nRUN x \\  \n\n# c\n", 2, '\\'},
    {"continues at the end of the file", "FROM a\nRUN x \\", 2, '\\'},
    {"escape directive", "# escape=`\nFROM a\nRUN x `\n", 3, '`'},
    {"a BOM before the directive", "\xef\xbb\xbf# escape=`\nFROM a\nRUN x `\n", 3, '`'},
    {"a BOM, spaces, upper case", "\xef\xbb\xbf  #  ESCAPE = ` \nFROM a\nRUN x `\n", 3, '`'},
    {"a comment before the directive", "# hello\n# escape=`\nFROM a\nRUN x \\\n", 4, '\\'},
    {"a blank line before the directive", "\n# escape=`\nFROM a\nRUN x \\\n", 4, '\\'},
    {"a BOM-only first line", "\xef\xbb\xbf\n# escape=`\nFROM a\nRUN x \\\n", 4, '\\'},
    {"syntax then escape", "# syntax=docker/dockerfile:1\n# escape=`\nFROM a\nRUN x `\n", 4, '`'},
    {"CRLF lines", "# escape=`\r\nFROM a\r\nRUN x `\r\n", 3, '`'},
    {"a comment indented with a vertical tab", "FROM a\nRUN x \\\n\v# c\n", 2, '\\'},
    {"a comment indented with NBSP", "FROM a\nRUN x \\\n\xc2\xa0# c\n", 2, '\\'},
    {"a comment indented with an ideographic space", "FROM a\nRUN x \\\n\xe3\x80\x80# c\n", 2,
     '\\'},
    {"a blank line of NEL", "FROM a\nRUN x \\\n\xc2\x85\n", 2, '\\'},
    /* what one parser takes for a directive and another does not: refused
     * when any of them would continue the last line */
    {"syntax then escape, backslash at the end (Podman's reading)",
     "# syntax=docker/dockerfile:1\n# escape=`\nFROM a\nRUN x \\\n", 4, '\\'},
    {"a blank syntax value then escape", "# syntax= \n# escape=`\nFROM a\nRUN x `\n", 4, '`'},
    {"check then escape (later BuildKit)", "# check=skip=all\n# escape=`\nFROM a\nRUN x `\n", 4,
     '`'},
    {"an escape value with more after it (Podman's reading)", "# escape=` x\nFROM a\nRUN x `\n", 3,
     '`'},
    {"an unknown directive then escape", "# foo=bar\n# escape=`\nFROM a\nRUN x \\\n", 4, '\\'},
    {"two escape directives (refused by the engines)", "# escape=`\n# escape=`\nFROM a\nRUN x `\n",
     0, 0},
};

TEST(dockerfile_read_as_the_engines_read_it)
{
    int wrong = 0;
    for (size_t i = 0; i < sizeof(df_cases) / sizeof(df_cases[0]); i++) {
        const struct df_case *c = &df_cases[i];
        struct llmsb_err err = {0};
        char want[128] = "";
        int rc = images_custom_dockerfile_check(c->text, strlen(c->text), "D", &err);
        if (c->line)
            snprintf(want, sizeof(want),
                     "--dockerfile \"D\":%d: the last instruction ends in a line "
                     "continuation ('%c'",
                     c->line, c->esc);
        if (c->line ? rc == LLMSB_ERR_INVALID && strstr(err.msg, want) : rc == 0)
            continue;
        fprintf(stderr, "  %s: want %s, got %s\n", c->why, c->line ? want : "accepted",
                rc ? err.msg : "accepted");
        wrong++;
    }
    ASSERT_EQ(wrong, 0);
}

/* Each RUN step of the layer ends with its mark, the first starting the
 * file afresh; the marks text lists the steps the language has. */
TEST(layer_steps_leave_marks)
{
    const struct language *py = language_find("python"), *go = language_find("go");
    char *layer = images_custom_layer(py, "n", 10001, "0123abcd");
    char marks[256];

    ASSERT(layer != NULL);
    ASSERT_CONTAINS(
        layer, "; exit 1; }; done && mkdir -p /usr/local/lib/llmsb && rm -f " IMAGES_CUSTOM_MARKS
               " && echo \"tools 0123abcd\" >" IMAGES_CUSTOM_MARKS "\n");
    ASSERT_CONTAINS(layer,
                    "chmod 1777 /work && echo \"user 0123abcd\" >>" IMAGES_CUSTOM_MARKS "\n");
    ASSERT_CONTAINS(layer, "rm -f $s && echo \"strip 0123abcd\" >>" IMAGES_CUSTOM_MARKS "\n");
    ASSERT(!strstr(layer, "\"setup "));
    free(layer);
    images_custom_marks(py, "0123abcd", marks, sizeof(marks));
    ASSERT_STR(marks, "tools 0123abcd\nuser 0123abcd\nstrip 0123abcd\n");
    layer = images_custom_layer(go, "n", 10001, "ff");
    ASSERT(layer != NULL);
    ASSERT_CONTAINS(layer, "RUN (env ");
    ASSERT_CONTAINS(layer, "/go-prime) && echo \"setup ff\" >>" IMAGES_CUSTOM_MARKS "\n");
    free(layer);
    images_custom_marks(go, "ff", marks, sizeof(marks));
    ASSERT_STR(marks, "tools ff\nuser ff\nsetup ff\nstrip ff\n");
}

/* ---- an image's files, as an export's tar ------------------------------------ */

#define AGENT_BYTES "the agent's bytes"
#define NONCE "5eed"

/* A tar in memory, as an engine's export (paths relative, no leading /). */
struct tar {
    struct archive *a;
    char *mem;
    size_t cap, used;
};

static void tar_open(struct tar *t)
{
    t->cap = (size_t)4 << 20;
    t->mem = calloc(1, t->cap);
    t->used = 0;
    t->a = archive_write_new();
    archive_write_set_format_pax_restricted(t->a);
    archive_write_open_memory(t->a, t->mem, t->cap, &t->used);
}

/* An entry of a tar: type AE_IFREG or AE_IFDIR, perm with any setuid,
 * setgid or sticky bits; caps non-zero: a security.capability attribute. */
struct entry {
    const char *path;
    int type, perm, uid;
    const char *data;
    int caps;
};

static void tar_add(struct tar *t, const struct entry *x)
{
    struct archive_entry *e = archive_entry_new();
    size_t len = x->data ? strlen(x->data) : 0;

    archive_entry_set_pathname(e, x->path);
    archive_entry_set_filetype(e, (unsigned)x->type);
    archive_entry_set_perm(e, (mode_t)x->perm);
    archive_entry_set_uid(e, x->uid);
    archive_entry_set_gid(e, x->uid);
    archive_entry_set_size(e, (la_int64_t)len);
    if (x->caps)
        archive_entry_xattr_add_entry(e, "security.capability", "\x01\x00\x00\x02", 4);
    archive_write_header(t->a, e);
    if (len)
        archive_write_data(t->a, x->data, len);
    archive_entry_free(e);
}

/* What a good python image has: the agent, the hooks, the sticky
 * world-writable directories, a mode-711 directory; marks: the marks file
 * (NULL: none). */
static void tar_good_python(struct tar *t, const char *marks)
{
    const struct language *py = language_find("python");
    static const struct entry usual[] = {
        {"tmp/", AE_IFDIR, 01777, 0, NULL, 0},
        {"work/", AE_IFDIR, 01777, 0, NULL, 0},
        {"usr/local/bin/llmsb-agent", AE_IFREG, 0755, 0, AGENT_BYTES, 0},
        {"opt/hid/", AE_IFDIR, 0711, 0, NULL, 0},
        {"var/local/", AE_IFDIR, 02775, 0, NULL, 0}, /* setgid directories are fine */
    };

    for (size_t i = 0; i < sizeof(usual) / sizeof(usual[0]); i++)
        tar_add(t, &usual[i]);
    for (int i = 0; i < LANG_MAX_HOOKS && py->hooks[i].file; i++) {
        const struct lang_hook_file *h = language_hook_file(py->hooks[i].file);
        char *copy = strndup(h->data, (size_t)(h->end - h->data));
        tar_add(t, &(struct entry){py->hooks[i].dest + 1, AE_IFREG, py->hooks[i].mode, 0, copy, 0});
        free(copy);
    }
    if (marks)
        tar_add(t, &(struct entry){IMAGES_CUSTOM_MARKS + 1, AE_IFREG, 0644, 0, marks, 0});
}

/* Judges a tar of the n entries of extra after the good python image with
 * the marks file marks ("": without one; NULL: no good image at all), for
 * a build with NONCE: 0 or the error code, the findings into f (a string). */
static int judge(const char *marks, const struct entry *extra, size_t n, struct buf *f,
                 struct llmsb_err *err)
{
    struct images_custom_tags tags = {
        .lang = "python", .nonce = NONCE, .agent_bytes = (long long)strlen(AGENT_BYTES)};
    struct archive *r = archive_read_new();
    struct tar t;
    int rc;

    tar_open(&t);
    if (marks)
        tar_good_python(&t, *marks ? marks : NULL);
    for (size_t i = 0; i < n; i++)
        tar_add(&t, &extra[i]);
    tags.agent_hash = hash_fnv1a(0, AGENT_BYTES, strlen(AGENT_BYTES));
    archive_write_close(t.a);
    archive_write_free(t.a);
    archive_read_support_format_tar(r);
    archive_read_open_memory(r, t.mem, t.used);
    buf_init(f, (size_t)64 << 10);
    rc = images_custom_tree_judge(r, &tags, f, err);
    buf_append(f, "", 1);
    archive_read_free(r);
    free(t.mem);
    return rc;
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const char good_marks[] = "tools " NONCE "\nuser " NONCE "\nstrip " NONCE "\n";

TEST(tree_of_a_good_image_has_no_findings)
{
    static const struct entry extra[] = {{"opt/hid/tool", AE_IFREG, 0755, 0, "#!/bin/sh\n", 0}};
    struct buf f;
    struct llmsb_err err = {0};

    ASSERT_EQ(judge(good_marks, extra, N_OF(extra), &f, &err), 0);
    ASSERT_STR(f.data, "");
    buf_release(&f);
}

/* A setuid-root shell in a mode-711 directory (which the sandbox user
 * cannot list), a file capability, a world-writable directory and file:
 * each named, with its mode and owner. */
TEST(tree_sees_every_file_whatever_its_directory)
{
    static const struct entry extra[] = {
        {"opt/hid/sh", AE_IFREG, 04755, 0, "ELF", 0},
        {"usr/bin/wall", AE_IFREG, 02755, 0, "ELF", 0},
        {"usr/local/bin/capped", AE_IFREG, 0755, 0, "ELF", 1},
        {"srv/drop/", AE_IFDIR, 0777, 1000, NULL, 0},
        {"etc/open.conf", AE_IFREG, 0666, 0, "x", 0},
    };
    struct buf f;
    struct llmsb_err err = {0};

    ASSERT_EQ(judge(good_marks, extra, N_OF(extra), &f, &err), 0);
    ASSERT_CONTAINS(f.data, "  - in the image's files: a setuid or setgid file: /opt/hid/sh "
                            "(mode 4755, owner 0:0)\n");
    ASSERT_CONTAINS(f.data, "a setuid or setgid file: /usr/bin/wall (mode 2755, owner 0:0)\n");
    ASSERT_CONTAINS(f.data, "a file with capabilities: /usr/local/bin/capped (mode 0755");
    ASSERT_CONTAINS(f.data, "a world-writable directory without the sticky bit: /srv/drop (mode "
                            "0777, owner 1000:1000)\n");
    ASSERT_CONTAINS(f.data, "a world-writable file: /etc/open.conf (mode 0666, owner 0:0)\n");
    ASSERT(!strstr(f.data, "our layer"));
    buf_release(&f);
}

/* Steps that did not run leave no mark; marks of another build (an image
 * built FROM a custom one) do not count; the agent must be ours. */
TEST(tree_names_each_step_that_left_no_mark)
{
    static const struct entry ours[] = {
        {"usr/local/bin/llmsb-agent", AE_IFREG, 0755, 0, "another agent", 0},
        {IMAGES_CUSTOM_MARKS + 1, AE_IFREG, 0644, 0, good_marks, 0},
    };
    struct buf f;
    struct llmsb_err err = {0};

    ASSERT_EQ(judge("", NULL, 0, &f, &err), 0);
    ASSERT_CONTAINS(f.data, "  - our layer's step \"tools\" left no mark in " IMAGES_CUSTOM_MARKS
                            ": it did not run (a SHELL, a /bin/sh or a line continuation of the "
                            "Dockerfile's may have switched it off)\n");
    ASSERT_CONTAINS(f.data, "step \"user\" left no mark");
    ASSERT_CONTAINS(f.data, "step \"strip\" left no mark");
    buf_release(&f);

    ASSERT_EQ(judge("tools " NONCE "\nuser 0ld\nstrip 0ld\n", NULL, 0, &f, &err), 0);
    ASSERT(!strstr(f.data, "\"tools\""));
    ASSERT_CONTAINS(f.data, "step \"user\" left no mark in " IMAGES_CUSTOM_MARKS
                            " (not this build's): it did not run");
    ASSERT_CONTAINS(f.data, "step \"strip\" left no mark");
    buf_release(&f);

    ASSERT_EQ(judge(NULL, ours, N_OF(ours), &f, &err), 0);
    ASSERT_CONTAINS(f.data, "our layer's agent /usr/local/bin/llmsb-agent is not the one it "
                            "copied in: 13 bytes, not the 17 copied in\n");
    ASSERT_CONTAINS(f.data, "our layer's hook /usr/lib/python3/dist-packages/llmsb_plots.py is "
                            "not in the image\n");
    buf_release(&f);
}

/* Many of a kind: the first ones listed, the rest counted. */
TEST(tree_findings_are_bounded)
{
    static struct entry many[500];
    static char paths[500][32];
    struct buf f;
    struct llmsb_err err = {0};

    for (int i = 0; i < 500; i++) {
        snprintf(paths[i], sizeof(paths[i]), "usr/bin/s%d", i);
        many[i] = (struct entry){paths[i], AE_IFREG, 04755, 0, "x", 0};
    }
    ASSERT_EQ(judge(good_marks, many, N_OF(many), &f, &err), 0);
    ASSERT_CONTAINS(f.data, "/usr/bin/s19 (mode 4755");
    ASSERT(!strstr(f.data, "/usr/bin/s20 "));
    ASSERT_CONTAINS(f.data, "  - in the image's files: 480 more of: a setuid or setgid file\n");
    buf_release(&f);
}

/* What is not a tar is an error, not a clean image. */
TEST(tree_of_garbage_is_an_error)
{
    static const char junk[] = "{\"message\":\"No such container: x\"}";
    struct images_custom_tags tags = {.lang = "python", .nonce = NONCE};
    struct archive *r = archive_read_new();
    struct buf f;
    struct llmsb_err err = {0};

    buf_init(&f, 4096);
    archive_read_support_format_tar(r);
    archive_read_open_memory(r, junk, sizeof(junk) - 1);
    ASSERT(images_custom_tree_judge(r, &tags, &f, &err) != 0);
    ASSERT_CONTAINS(err.msg, "images build: the image's files: ");
    archive_read_free(r);
    buf_release(&f);
}

TEST_MAIN("images", T(dockerfile_read_as_the_engines_read_it), T(layer_steps_leave_marks),
          T(tree_of_a_good_image_has_no_findings), T(tree_sees_every_file_whatever_its_directory),
          T(tree_names_each_step_that_left_no_mark), T(tree_findings_are_bounded),
          T(tree_of_garbage_is_an_error))
