/* images.c - `llm-sandbox images build [--force] [LANG...]`. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "backends/backend.h"
#include "exec/runner.h"
#include "images/images.h"

static const char images_usage[] =
    "usage: llm-sandbox images build [--force] [--agent PATH] [LANG...]\n"
    "\n"
    "Builds llmsb/<lang> images (all languages when none is named) from\n"
    "Debian packages; no container registry is needed.  Images whose recipe\n"
    "hash tag already exists are kept unless --force is given.\n";

int cmd_images(struct cli_globals *g, int argc, char **argv)
{
    struct images_opts o = {0, stderr, NULL};
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
        if ((rc = cli_global_opt(g, argc, argv, &i)) < 0)
            return EXIT_USAGE;
        if (rc > 0)
            continue;
        if (strcmp(argv[i], "--force") == 0)
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
    if (runner_engine_open(&be, &g->cfg, version, sizeof(version), &err) != 0 ||
        images_build(&be, &g->cfg, langs, n, &o, &err) != 0) {
        cli_error("%s", err.msg);
        backend_close(&be);
        return err.code == LLMSB_ERR_INVALID ? EXIT_USAGE : EXIT_INTERNAL;
    }
    backend_close(&be);
    return 0;
}
