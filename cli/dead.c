/* dead.c - the dead verb: list, show, requeue and drop the dead letters
 * (docs/operations.md, dead letters).  The Redis side, requeue's history
 * included, is queue/dead.c; this file parses options and prints. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue/queue.h"

#define DEAD_LIST_DEFAULT 50
#define DEAD_ALL_PAGE 500
#define DEAD_SHOWN_VALUE 200 /* bytes of a field's value the text form shows */

static const char dead_usage[] =
    "usage: llm-sandbox dead list [--limit N] [--json]\n"
    "       llm-sandbox dead show ID [--json]\n"
    "       llm-sandbox dead requeue ID...|--all [--dry-run]\n"
    "       llm-sandbox dead drop ID...|--all\n\n"
    "The dead letters: jobs that ended internal_error after their infrastructure\n"
    "kept failing (docs/operations.md, dead letters).  ID is a job id (its newest\n"
    "dead letter) or a dead entry id.  requeue puts the job back on the jobs\n"
    "stream under its id, its earlier dead letters kept in its history field, and\n"
    "deletes its dead result so the new run writes its own; drop deletes the\n"
    "dead letter.  Exit 0, 1 when an ID has no dead letter, 3 when Redis failed.";

/* What one sub-verb asked for. */
struct dead_opts {
    int json, all, dry_run;
    long long limit;
    char **ids;
    int nids;
};

/* epoch ms of an entry id as "YYYY-MM-DD HH:MM:SS" UTC. */
static void when_of(const char *entry, char *out, size_t outsz)
{
    time_t t = (time_t)(strtod(entry, NULL) / 1000);
    struct tm tm;
    strftime(out, outsz, "%Y-%m-%d %H:%M:%S", gmtime_r(&t, &tm));
}

static const char *field(const struct queue_entry *d, const char *name)
{
    const char *v = fields_get(&d->f, name, NULL);
    return v ? v : "";
}

static int is_own(const char *name)
{
    return strcmp(name, "reason") == 0 || strcmp(name, "attempts") == 0 ||
           strcmp(name, "last_worker") == 0 || strcmp(name, "history") == 0;
}

/* A dead letter as JSON; with_fields adds the job's fields and history. */
static cJSON *dead_json(const struct queue_entry *d, int with_fields)
{
    cJSON *o = cJSON_CreateObject(), *f, *h;

    cJSON_AddStringToObject(o, "entry", d->id);
    cJSON_AddStringToObject(o, "id", field(d, "id"));
    cJSON_AddNumberToObject(o, "at_ms", strtod(d->id, NULL));
    cJSON_AddNumberToObject(o, "attempts", strtod(field(d, "attempts"), NULL));
    cJSON_AddStringToObject(o, "last_worker", field(d, "last_worker"));
    cJSON_AddStringToObject(o, "reason", field(d, "reason"));
    if (!with_fields) {
        cJSON_AddStringToObject(o, "lang", field(d, "lang"));
        return o;
    }
    h = cJSON_Parse(field(d, "history"));
    cJSON_AddItemToObject(o, "history", cJSON_IsArray(h) ? h : cJSON_CreateArray());
    if (!cJSON_IsArray(h))
        cJSON_Delete(h);
    f = cJSON_AddObjectToObject(o, "fields");
    for (size_t i = 0; i < d->f.n; i++)
        if (!is_own(d->f.v[i].name))
            cJSON_AddStringToObject(f, d->f.v[i].name, d->f.v[i].value);
    return o;
}

static void print_json(cJSON *o)
{
    char *t = cJSON_Print(o);
    printf("%s\n", t ? t : "null");
    free(t);
}

static void print_line(const struct queue_entry *d)
{
    char when[32], id[120], reason[240];

    when_of(d->id, when, sizeof(when));
    llmsb_escape(id, sizeof(id), field(d, "id"), strlen(field(d, "id")));
    llmsb_escape(reason, sizeof(reason), field(d, "reason"), strlen(field(d, "reason")));
    printf("%s UTC  %-20s %-24s attempts=%s worker=%s  %s\n", when, d->id, id, field(d, "attempts"),
           field(d, "last_worker"), reason);
}

static int dead_list(struct queue *q, const struct dead_opts *o, struct llmsb_err *err)
{
    struct queue_entry *e = NULL;
    size_t n = 0;
    cJSON *arr;

    if (queue_range(q, 1, 1, "+", (int)o->limit, &e, &n, err) != 0)
        return EXIT_INTERNAL;
    if (!o->json) {
        if (n == 0)
            printf("no dead letters\n");
        for (size_t i = 0; i < n; i++)
            print_line(&e[i]);
    } else {
        arr = cJSON_CreateArray();
        for (size_t i = 0; i < n; i++)
            cJSON_AddItemToArray(arr, dead_json(&e[i], 0));
        print_json(arr);
        cJSON_Delete(arr);
    }
    queue_entries_free(e, n);
    return 0;
}

static void print_show(const struct queue_entry *d)
{
    char when[32], shown[DEAD_SHOWN_VALUE * 4 + 8];

    when_of(d->id, when, sizeof(when));
    printf("entry:       %s (%s UTC)\n", d->id, when);
    llmsb_escape(shown, sizeof(shown), field(d, "id"), strlen(field(d, "id")));
    printf("job id:      %s\nattempts:    %s\nlast worker: %s\n", shown, field(d, "attempts"),
           field(d, "last_worker"));
    llmsb_escape(shown, sizeof(shown), field(d, "reason"), strlen(field(d, "reason")));
    printf("reason:      %s\n", shown);
    if (fields_get(&d->f, "history", NULL))
        printf("history:     %s\n", field(d, "history"));
    printf("fields:\n");
    for (size_t i = 0; i < d->f.n; i++) {
        const struct field *f = &d->f.v[i];
        if (is_own(f->name))
            continue;
        llmsb_escape(shown, sizeof(shown), f->value,
                     f->len > DEAD_SHOWN_VALUE ? DEAD_SHOWN_VALUE : f->len);
        printf("  %s: %s%s\n", f->name, shown, f->len > DEAD_SHOWN_VALUE ? " ..." : "");
    }
}

/* What requeue and drop do to one dead letter d; 0 or EXIT_INTERNAL. */
static int act_on(struct queue *q, const char *verb, const struct dead_opts *o,
                  const struct queue_entry *d, struct llmsb_err *err)
{
    char entry[QUEUE_ENTRY_ID_MAX], id[120];
    struct fields f;
    int rc;

    llmsb_escape(id, sizeof(id), field(d, "id"), strlen(field(d, "id")));
    if (strcmp(verb, "drop") == 0) {
        if ((rc = queue_dead_drop(q, d->id, err)) < 0)
            return EXIT_INTERNAL;
        printf("%s %s (job %s)\n", rc ? "dropped" : "already gone:", d->id, id);
        return 0;
    }
    if (o->dry_run) {
        if (queue_dead_job_fields(d, &f, err) != 0)
            return err->code == LLMSB_ERR_NOMEM ? EXIT_INTERNAL : 1;
        printf("would requeue job %s (dead entry %s, %zu fields, history %s)\n", id, d->id, f.n,
               fields_get(&f, "history", NULL));
        fields_release(&f);
        return 0;
    }
    if ((rc = queue_dead_requeue(q, d, entry, sizeof(entry), err)) < 0)
        return err->code == LLMSB_ERR_INVALID && !strstr(err->msg, "redis:") ? 1 : EXIT_INTERNAL;
    if (rc == 0)
        printf("already gone: %s (job %s)\n", d->id, id);
    else
        printf("requeued job %s as entry %s (dead entry %s)\n", id, entry, d->id);
    return 0;
}

/* The entry ids of every dead letter there is now, oldest first. */
static int all_ids(struct queue *q, char ***ids, int *n, struct llmsb_err *err)
{
    char after[QUEUE_ENTRY_ID_MAX] = "-";
    int cap = 0;

    *ids = NULL;
    *n = 0;
    for (;;) {
        struct queue_entry *e = NULL;
        size_t got = 0;
        if (queue_range(q, 1, 0, after, DEAD_ALL_PAGE, &e, &got, err) != 0)
            return -1;
        for (size_t i = 0; i < got; i++) {
            if (*n == cap) {
                char **v = realloc(*ids, (size_t)(cap = cap ? cap * 2 : 64) * sizeof(*v));
                if (!v) {
                    queue_entries_free(e, got);
                    return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
                }
                *ids = v;
            }
            if (!((*ids)[*n] = strdup(e[i].id))) {
                queue_entries_free(e, got);
                return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
            }
            (*n)++;
        }
        if (got)
            snprintf(after, sizeof(after), "%s", e[got - 1].id);
        queue_entries_free(e, got);
        if (got < DEAD_ALL_PAGE)
            return 0;
    }
}

/* show, requeue, drop: each id's dead letter (or each there is, --all). */
static int dead_each(struct queue *q, const char *verb, const struct dead_opts *o,
                     struct llmsb_err *err)
{
    char **ids = o->ids, **mine = NULL;
    int n = o->nids, status = 0;

    if (o->all && all_ids(q, &mine, &n, err) != 0)
        status = EXIT_INTERNAL, n = 0;
    if (o->all)
        ids = mine;
    if (o->all && status == 0 && n == 0)
        printf("no dead letters\n");
    for (int i = 0; i < n && status != EXIT_INTERNAL && !llmsb_interrupted; i++) {
        struct queue_entry *d = NULL;
        int rc = queue_dead_find(q, ids[i], &d, err);
        if (rc < 0) {
            status = EXIT_INTERNAL;
        } else if (rc == 0) {
            cli_error("dead %s: no dead letter for \"%s\" (neither a dead entry id nor the id of "
                      "a job with one)",
                      verb, ids[i]);
            status = 1;
        } else if (strcmp(verb, "show") == 0) {
            if (o->json) {
                cJSON *j = dead_json(d, 1);
                print_json(j);
                cJSON_Delete(j);
            } else {
                print_show(d);
            }
        } else if ((rc = act_on(q, verb, o, d, err)) != 0) {
            if (rc == 1)
                cli_error("dead %s: %s", verb, err->msg);
            status = status == EXIT_INTERNAL ? status : rc;
        }
        queue_entries_free(d, d ? 1 : 0);
    }
    for (int i = 0; mine && i < n; i++)
        free(mine[i]);
    free(mine);
    return status;
}

/* The sub-verb's options into o; 0, or -1 said. */
static int parse_dead(struct cli_globals *g, const char *verb, int argc, char **argv,
                      struct dead_opts *o)
{
    int listing = strcmp(verb, "list") == 0, acting = !listing && strcmp(verb, "show") != 0;

    o->limit = DEAD_LIST_DEFAULT;
    if (!(o->ids = calloc((size_t)argc + 1, sizeof(*o->ids))))
        return -1;
    for (int i = 2; i < argc; i++) {
        int rc = cli_global_opt(g, argc, argv, &i);
        if (rc < 0)
            return -1;
        if (rc > 0)
            continue;
        if (strcmp(argv[i], "--json") == 0 && !acting) {
            o->json = 1;
        } else if (strcmp(argv[i], "--limit") == 0 && listing && i + 1 < argc) {
            if (parse_ll(argv[++i], 1, 100000, &o->limit) != 0) {
                cli_error("dead list: --limit must be a count from 1 to 100000 (got \"%s\")",
                          argv[i]);
                return -1;
            }
        } else if (strcmp(argv[i], "--all") == 0 && acting) {
            o->all = 1;
        } else if (strcmp(argv[i], "--dry-run") == 0 && strcmp(verb, "requeue") == 0) {
            o->dry_run = 1;
        } else if (argv[i][0] == '-' || listing) {
            cli_error("dead %s: unknown argument \"%s\"\n%s", verb, argv[i], dead_usage);
            return -1;
        } else {
            o->ids[o->nids++] = argv[i];
        }
    }
    if (!listing && !o->all && o->nids == 0) {
        cli_error("dead %s: no id given%s", verb, acting ? " (or --all)" : "");
        return -1;
    }
    if (o->all && o->nids) {
        cli_error("dead %s: ids or --all, not both", verb);
        return -1;
    }
    if (strcmp(verb, "show") == 0 && o->nids > 1 && o->json) {
        cli_error("dead show: one id with --json (got %d)", o->nids);
        return -1;
    }
    return 0;
}

int cmd_dead(struct cli_globals *g, int argc, char **argv)
{
    static const char *const verbs[] = {"list", "show", "requeue", "drop"};
    struct dead_opts o = {0};
    struct llmsb_err err = {0};
    struct queue q;
    const char *verb = argc > 1 ? argv[1] : NULL;
    int known = 0, rc;

    for (size_t k = 0; verb && k < sizeof(verbs) / sizeof(verbs[0]); k++)
        known |= strcmp(verb, verbs[k]) == 0;
    if (verb && (strcmp(verb, "--help") == 0 || strcmp(verb, "help") == 0)) {
        puts(dead_usage);
        return 0;
    }
    if (!known) {
        cli_error("dead: %s%s%s\n%s", verb ? "unknown sub-command \"" : "no sub-command",
                  verb ? verb : "", verb ? "\"" : "", dead_usage);
        return EXIT_USAGE;
    }
    if (parse_dead(g, verb, argc, argv, &o) != 0 || cli_config_finish(g) != 0) {
        free(o.ids);
        return EXIT_USAGE;
    }
    cli_signals();
    if (queue_open(&q, g->cfg.redis_url, g->cfg.redis_prefix, NULL, 5000, &err) != 0) {
        cli_error("%s", err.msg);
        free(o.ids);
        return EXIT_INTERNAL;
    }
    rc = strcmp(verb, "list") == 0 ? dead_list(&q, &o, &err) : dead_each(&q, verb, &o, &err);
    if (rc == EXIT_INTERNAL)
        cli_error("dead %s: %s", verb, err.msg[0] ? err.msg : "out of memory");
    queue_close(&q);
    free(o.ids);
    return rc;
}
