/* scan.c - `llm-sandbox scan [--lang L] [--policy P] FILE`: the security
 * check alone, nothing runs. Exit 0 safe, 1 blocked, 2 usage. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "security/security.h"
#include "exec/scan.h"
#include "job/job.h"

struct scan_opts {
    const char *file, *lang, *policy;
};

/* 0 to go on, 1 when --help was printed, -1 on a usage error (printed). */
static int parse_scan(struct cli_globals *g, int argc, char **argv, struct scan_opts *o)
{
    for (int i = 1; i < argc; i++) {
        int g_rc = cli_global_opt(g, argc, argv, &i);
        if (g_rc < 0)
            return -1;
        if (g_rc > 0)
            continue;
        if (strcmp(argv[i], "--lang") == 0 && i + 1 < argc)
            o->lang = argv[++i];
        else if (strcmp(argv[i], "--policy") == 0 && i + 1 < argc)
            o->policy = argv[++i];
        else if (strcmp(argv[i], "--help") == 0) {
            printf("usage: llm-sandbox scan [--lang L] [--policy P] FILE|-\n\nRuns only the "
                   "security check. Presets: %s.\nExit 0 safe, 1 blocked.\n",
                   sec_preset_names());
            return 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("scan: unknown option \"%s\"", argv[i]);
            return -1;
        } else
            o->file = argv[i];
    }
    if (!o->file) {
        cli_error("scan: no file (usage: llm-sandbox scan [--lang L] [--policy P] FILE)");
        return -1;
    }
    return 0;
}

/* The job to scan: language, policy and the whole file (over the code cap
 * is an error, never a scan of a prefix). */
static int scan_job(struct cli_globals *g, const struct scan_opts *o, struct job *j,
                    struct llmsb_err *err)
{
    struct buf code;
    int rc;

    if (o->lang)
        rc = job_set_language(j, o->lang, err);
    else if (!(j->lang = language_from_path(o->file)))
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "lang: cannot tell the language of \"%s\"; pass --lang", o->file);
    else
        rc = 0;
    if (rc == 0 && o->policy)
        rc = job_set_policy(j, &g->cfg, o->policy, strlen(o->policy), err);
    if (rc != 0)
        return rc;
    buf_init(&code, JOB_MAX_CODE);
    rc = cli_read_file(o->file, &code, "code", err);
    if (rc == 0)
        rc = job_set_code(j, code.data ? code.data : "", code.len, err);
    buf_release(&code);
    return rc;
}

int cmd_scan(struct cli_globals *g, int argc, char **argv)
{
    struct scan_opts o = {0};
    struct llmsb_err err = {0};
    struct sec_result *res = NULL;
    struct job j;
    int rc;

    if ((rc = parse_scan(g, argc, argv, &o)) != 0)
        return rc > 0 ? 0 : EXIT_USAGE;
    if (cli_config_finish(g) != 0)
        return EXIT_USAGE;
    job_init(&j, &g->cfg);
    if (scan_job(g, &o, &j, &err) != 0 || !(res = calloc(1, sizeof(*res))) ||
        job_scan(&g->cfg, &j, res, &err) != 0) {
        cli_error("%s", err.msg[0] ? err.msg : "scan: out of memory");
        rc = err.code == LLMSB_ERR_LIMIT && res ? 1 : EXIT_USAGE;
        goto out;
    }
    for (size_t i = 0; i < res->n; i++)
        printf("%s:%zu:%zu: %s: %s [%s]\n", o.file, res->v[i].line, res->v[i].column,
               sec_severity_name(res->v[i].severity), res->v[i].rule, res->v[i].policy);
    printf("%s: %s (%zu finding%s; policy %s, minimum %s)\n", o.file,
           res->blocked ? "blocked" : "safe", res->n, res->n == 1 ? "" : "s",
           j.policy ? j.policy : g->cfg.default_policy, g->cfg.minimum_policy);
    rc = res->blocked ? 1 : 0;
out:
    free(res);
    job_release(&j);
    return rc;
}
