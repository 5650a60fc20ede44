/* scan.c - the security check of a job: the worker's minimum policy and
 * the job's own (inline `security`, else `policy`, else the config's
 * default), over the code and every file in the job's language.  Runs
 * before anything touches a container. */
#include "exec/scan.h"

#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "security/security.h"

/* Library names without version or extras ("requests==2.0" -> "requests",
 * "@scope/pkg@1" keeps its scope) against the policy's restricted modules. */
static void scan_libraries(const struct sec_policy *p, const struct job *j, struct sec_result *res)
{
    char names[64][128];
    const char *ptrs[64];
    size_t n = 0;

    for (size_t i = 0; i < j->nlibraries && n < 64; i++) {
        const char *s = j->libraries[i];
        size_t k = s[0] == '@' ? 1 : 0;
        k += strcspn(s + k, "=<>~[@ ");
        snprintf(names[n], sizeof(names[0]), "%.*s", (int)(k < 127 ? k : 127), s);
        ptrs[n] = names[n];
        n++;
    }
    sec_scan_libraries(p, ptrs, n, res);
}

/* Resolves a policy name: preset, else a custom policy of the config. */
static int scan_with(const struct config *cfg, const struct job *j, const char *name,
                     const char *json, struct sec_result *res, struct llmsb_err *err)
{
    struct sec_policy *owned = NULL;
    const struct sec_policy *p;
    const char *custom = json ? NULL : config_policy(cfg, name);
    int rc = 0;

    if (json || custom)
        p = owned = sec_policy_from_json(json ? json : custom, strlen(json ? json : custom),
                                         json ? "inline" : name, j->lang, err);
    else
        p = sec_preset(name, j->lang, err);
    if (!p)
        return err->code ? err->code : LLMSB_ERR_INVALID;
    rc = sec_scan(p, j->lang, j->code, j->code_len, res, err);
    if (rc == 0 && j->nlibraries)
        scan_libraries(p, j, res);
    for (size_t i = 0; rc == 0 && i < j->nfiles; i++) {
        const char *dot = strrchr(j->files[i].path, '.');
        if (dot && strcasecmp(dot + 1, j->lang->ext) == 0)
            rc = sec_scan(p, j->lang, j->files[i].data, j->files[i].len, res, err);
    }
    sec_policy_free(owned);
    return rc;
}

int job_scan(const struct config *cfg, const struct job *j, struct sec_result *res,
             struct llmsb_err *err)
{
    int rc = 0;

    memset(res, 0, sizeof(*res));
    if (strcmp(cfg->minimum_policy, "none") != 0)
        rc = scan_with(cfg, j, cfg->minimum_policy, NULL, res, err);
    const char *name = j->policy ? j->policy : cfg->default_policy;
    if (rc == 0 && (j->security || strcmp(name, cfg->minimum_policy) != 0))
        rc = scan_with(cfg, j, name, j->security, res, err);
    if (rc != 0)
        llmsb_err_wrap(err, "security");
    return rc;
}
