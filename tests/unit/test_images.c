/* test_images.c - custom images: the check that the sandbox layer can
 * follow a user's Dockerfile, read the way the engines' Dockerfile parsers
 * read it (a byte-order mark, parser directives only at the very top,
 * Unicode white space). */
#include "test.h"

#include "images/images.h"

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

TEST_MAIN("images", T(dockerfile_read_as_the_engines_read_it))
