/* scan.c - `llm-sandbox scan [--lang L] [--policy P] FILE`: the security
 * check alone, nothing runs. Exit 0 safe, 1 blocked, 2 usage. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "security/security.h"
#include "worker/job.h"

int cmd_scan(struct cli_globals *g, int argc, char **argv)
{
    const char *file = NULL, *lang = NULL, *policy = NULL;
    struct llmsb_err err = {0};
    struct sec_result *res = NULL;
    struct buf code;
    struct job j;
    FILE *f;
    char chunk[65536];
    size_t n;
    int rc = EXIT_USAGE;

    for (int i = 1; i < argc; i++) {
        int g_rc = cli_global_opt(g, argc, argv, &i);
        if (g_rc < 0)
            return EXIT_USAGE;
        if (g_rc > 0)
            continue;
        if (strcmp(argv[i], "--lang") == 0 && i + 1 < argc)
            lang = argv[++i];
        else if (strcmp(argv[i], "--policy") == 0 && i + 1 < argc)
            policy = argv[++i];
        else if (strcmp(argv[i], "--help") == 0) {
            printf("usage: llm-sandbox scan [--lang L] [--policy P] FILE|-\n\nRuns only the "
                   "security check. Presets: %s.\nExit 0 safe, 1 blocked.\n", sec_preset_names());
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("scan: unknown option \"%s\"", argv[i]);
            return EXIT_USAGE;
        } else
            file = argv[i];
    }
    if (!file) {
        cli_error("scan: no file (usage: llm-sandbox scan [--lang L] [--policy P] FILE)");
        return EXIT_USAGE;
    }
    if (cli_config_finish(g) != 0)
        return EXIT_USAGE;
    job_init(&j, &g->cfg);
    buf_init(&code, JOB_MAX_CODE);
    if (lang ? job_set_language(&j, lang, &err) != 0
             : !(j.lang = language_from_path(file)) &&
                   llmsb_err_set(&err, LLMSB_ERR_INVALID, "lang: cannot tell the language of "
                                                          "\"%s\"; pass --lang", file)) {
        cli_error("%s", err.msg);
        goto out;
    }
    if (policy && job_set_policy(&j, &g->cfg, policy, strlen(policy), &err) != 0) {
        cli_error("%s", err.msg);
        goto out;
    }
    if (!(f = strcmp(file, "-") ? fopen(file, "re") : stdin)) {
        cli_error("scan: cannot open \"%s\"", file);
        goto out;
    }
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && buf_append(&code, chunk, n) == 0)
        ;
    if (f != stdin)
        fclose(f);
    if (job_set_code(&j, code.data ? code.data : "", code.len, &err) != 0 ||
        !(res = calloc(1, sizeof(*res))) || job_scan(&g->cfg, &j, res, &err) != 0) {
        cli_error("%s", err.msg[0] ? err.msg : "scan: out of memory");
        rc = err.code == LLMSB_ERR_LIMIT ? 1 : EXIT_USAGE;
        goto out;
    }
    for (size_t i = 0; i < res->n; i++)
        printf("%s:%zu:%zu: %s: %s [%s]\n", file, res->v[i].line, res->v[i].column,
               sec_severity_name(res->v[i].severity), res->v[i].rule, res->v[i].policy);
    printf("%s: %s (%zu finding%s; policy %s, minimum %s)\n", file,
           res->blocked ? "blocked" : "safe", res->n, res->n == 1 ? "" : "s",
           j.policy ? j.policy : g->cfg.default_policy, g->cfg.minimum_policy);
    rc = res->blocked ? 1 : 0;
out:
    free(res);
    buf_release(&code);
    job_release(&j);
    return rc;
}
