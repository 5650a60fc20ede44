/* images.c - `llm-sandbox images build [--force] [LANG...]`, and a user's
 * Dockerfile made into llmsb/custom/NAME with `images build --dockerfile
 * FILE --name NAME --lang LANG [--context DIR]` (built, checked, audited,
 * then tagged: images/custom.c, exec/image_check.c). */
#include "cli.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "backends/backend.h"
#include "exec/runner.h"
#include "images/images.h"

static const char images_usage[] =
    "usage: llm-sandbox images build [--force] [--agent PATH] [LANG...]\n"
    "       llm-sandbox images build --dockerfile FILE --name NAME --lang LANG\n"
    "                                [--context DIR] [--force] [--agent PATH]\n"
    "\n"
    "Builds llmsb/<lang> images (all languages when none is named) from\n"
    "Debian packages; no container registry is needed.  Images whose recipe\n"
    "hash tag already exists are kept unless --force is given.\n"
    "\n"
    "With --dockerfile: builds FILE (context DIR, default FILE's directory),\n"
    "adds the agent, the hooks and the sandbox user for LANG, runs a hello\n"
    "world and the hardening audit in it, and tags it llmsb/custom/NAME:<hash>\n"
    "and :latest; jobs name it with image: llmsb/custom/NAME.\n";

/* The custom build: built as <repo>:unchecked, checked, then tagged. */
static int custom_build(struct cli_globals *g, struct images_custom *c, const struct images_opts *o)
{
    const struct runner_opts ro = {.kind = RUNNER_KIND_RUN, .slots = 1, .max_size = 1};
    struct images_custom_tags t;
    struct llmsb_err err = {0};
    struct runner rn;
    struct buf findings;
    char dir[PATH_MAX];
    int rc, code = 0;

    if (!c->dockerfile || !c->name || !c->lang) {
        cli_error("images build: --dockerfile, --name and --lang go together (missing: %s)",
                  !c->dockerfile ? "--dockerfile"
                  : !c->name     ? "--name"
                                 : "--lang");
        return EXIT_USAGE;
    }
    if (!c->context) { /* as docker build: the Dockerfile's directory */
        snprintf(dir, sizeof(dir), "%s", c->dockerfile);
        c->context = dirname(dir);
    }
    if (runner_open(&rn, &g->cfg, &ro, &err) != 0) {
        cli_error("%s", err.msg);
        return EXIT_INTERNAL;
    }
    buf_init(&findings, (size_t)64 << 10);
    if ((rc = images_custom_build(&rn.be, &g->cfg, c, o, &t, &err)) != 0 || t.up_to_date)
        goto out;
    fprintf(stderr, "[custom] checking %s: a hello world in %s, the hardening audit\n", t.unchecked,
            t.lang);
    if ((rc = images_custom_audit(&rn.be, t.unchecked, t.lang, &findings, &err)) != 0 ||
        (rc = exec_image_check(&rn, t.unchecked, language_find(t.lang), &findings, &err)) != 0)
        goto out;
    if (findings.len) {
        cli_error("images build: --dockerfile \"%s\": the hardening audit refused %s:\n%.*s",
                  c->dockerfile, t.unchecked, (int)findings.len, findings.data);
        code = EXIT_USAGE;
        goto out;
    }
    if ((rc = images_custom_accept(&rn.be, &t, &err)) == 0)
        fprintf(stderr, "[custom] built %s:%s and %s:latest (lang %s)\n", t.repo, t.hash, t.repo,
                t.lang);
out:
    if (rc != 0) {
        cli_error("%s", err.msg);
        code = err.code == LLMSB_ERR_INVALID ? EXIT_USAGE : EXIT_INTERNAL;
    }
    buf_release(&findings);
    runner_close(&rn, "images build ended");
    return code;
}

int cmd_images(struct cli_globals *g, int argc, char **argv)
{
    struct images_opts o = {0, stderr, NULL};
    struct images_custom c = {0};
    const char *langs[64];
    size_t n = 0;
    struct backend be;
    struct llmsb_err err = {0};
    char version[64];
    int rc;

    if (argc < 2 || strcmp(argv[1], "build") != 0) {
        fputs(images_usage, argc >= 2 && strcmp(argv[1], "--help") == 0 ? stdout : stderr);
        return argc >= 2 && strcmp(argv[1], "--help") == 0 ? 0 : EXIT_USAGE;
    }
    for (int i = 2; i < argc; i++) {
        const char **custom_opt = strcmp(argv[i], "--dockerfile") == 0 ? &c.dockerfile
                                  : strcmp(argv[i], "--name") == 0     ? &c.name
                                  : strcmp(argv[i], "--lang") == 0     ? &c.lang
                                  : strcmp(argv[i], "--context") == 0  ? &c.context
                                                                       : NULL;
        if ((rc = cli_global_opt(g, argc, argv, &i)) < 0)
            return EXIT_USAGE;
        if (rc > 0)
            continue;
        if (custom_opt && i + 1 < argc)
            *custom_opt = argv[++i];
        else if (custom_opt) {
            cli_error("images build: %s needs a value", argv[i]);
            return EXIT_USAGE;
        } else if (strcmp(argv[i], "--force") == 0)
            o.force = 1;
        else if (strcmp(argv[i], "--agent") == 0 && i + 1 < argc)
            o.agent_path = argv[++i];
        else if (strcmp(argv[i], "--help") == 0) {
            fputs(images_usage, stdout);
            return 0;
        } else if (argv[i][0] == '-') {
            cli_error("images build: unknown option \"%s\"", argv[i]);
            return EXIT_USAGE;
        } else if (n < 64)
            langs[n++] = argv[i];
    }
    if (cli_config_finish(g) != 0)
        return EXIT_USAGE;
    if (c.dockerfile || c.name || c.lang || c.context) {
        if (n) {
            cli_error("images build: --dockerfile builds one image of --lang; drop \"%s\"",
                      langs[0]);
            return EXIT_USAGE;
        }
        return custom_build(g, &c, &o);
    }
    if (runner_engine_open(&be, &g->cfg, version, sizeof(version), &err) != 0 ||
        images_build(&be, &g->cfg, langs, n, &o, &err) != 0) {
        cli_error("%s", err.msg);
        backend_close(&be);
        return err.code == LLMSB_ERR_INVALID ? EXIT_USAGE : EXIT_INTERNAL;
    }
    backend_close(&be);
    return 0;
}
