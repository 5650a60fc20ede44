/* cancel.c - the cancel verb: asks for jobs to be cancelled by id, by the
 * ids of a job file, or every job in the queue.  A queued job ends
 * `cancelled` when a worker takes it (a delayed one when it is due); a running one is stopped within the
 * scheduler's cancel poll (llmsb:cancel:<id>).  Ids that already
 * have a final result, or that nothing knows, are reported, not marked:
 * a mark on an unknown id would cancel a job submitted under it later. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/status.h"
#include "config/jobfile.h"
#include "queue/queue.h"

#define CANCEL_PAGE 1000

/* A growing list of ids (a queue may hold millions: not a strlist). */
struct idlist {
    char **v;
    size_t n, cap;
};

static int add(struct idlist *l, const char *s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **v = realloc(l->v, cap * sizeof(*v));
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    return (l->v[l->n] = strdup(s)) ? (int)(l->n++, 0) : -1;
}

static void idlist_free(struct idlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether s is in l, sorted by sort_ids. */
static int in_list(const struct idlist *l, const char *s)
{
    return l->n && bsearch(&s, l->v, l->n, sizeof(char *), cmp_str) != NULL;
}

/* The ids of an entry's copies (submit's dedup: they share its run). */
static int add_copies(struct idlist *ids, const struct fields *f)
{
    size_t len;
    const char *v = fields_get(f, "copies", &len);
    cJSON *a = v ? cJSON_ParseWithLength(v, len) : NULL, *c;
    int rc = 0;

    cJSON_ArrayForEach(c, a) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "id");
        if (cJSON_IsString(id) && (rc = add(ids, id->valuestring)) != 0)
            break;
    }
    cJSON_Delete(a);
    return rc;
}

/* The ids of every job in the stream (queued or running), one per entry:
 * the job's "id" field, else its entry id (the id its result goes under),
 * and its copies'. */
static int stream_ids(struct queue *q, struct idlist *ids, struct llmsb_err *err)
{
    char after[QUEUE_ENTRY_ID_MAX] = "-";

    for (;;) {
        struct queue_entry *e;
        size_t n;
        int rc = queue_range(q, 0, 0, after, CANCEL_PAGE, &e, &n, err);
        if (rc != 0)
            return rc;
        for (size_t i = 0; i < n; i++) {
            size_t len;
            const char *id = fields_get(&e[i].f, "id", &len);
            if (add(ids, id && len ? id : e[i].id) != 0 || add_copies(ids, &e[i].f) != 0) {
                queue_entries_free(e, n);
                return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
            }
        }
        if (n)
            snprintf(after, sizeof(after), "%s", e[n - 1].id);
        queue_entries_free(e, n);
        if (n < CANCEL_PAGE)
            return 0;
    }
}

enum { CANCEL_ERROR = -1, CANCEL_UNKNOWN, CANCEL_MARKED, CANCEL_FINISHED };

/* Marks one id unless it has finished or nothing knows it; returns one of
 * the CANCEL_ outcomes (an error printed). */
static int cancel_one(struct queue *q, const char *id, const struct idlist *queued, long long ttl)
{
    struct llmsb_err err = {0};
    char shown[256], status[32];
    enum job_status st;
    int found = queue_result_status(q, id, status, sizeof(status), &err);

    llmsb_escape(shown, sizeof(shown), id, strlen(id));
    if (found < 0) {
        cli_error("cancel %s: %s", shown, err.msg);
        return CANCEL_ERROR;
    }
    if (found && status_parse(status, strlen(status), &st) == 0 && status_final(st)) {
        printf("already finished: %s (%s)\n", shown, status);
        return CANCEL_FINISHED;
    }
    if (!in_list(queued, id)) {
        int64_t due_ms = 0;
        int delayed = queue_delayed_due(q, id, &due_ms, &err);
        if (delayed < 0) {
            cli_error("cancel %s: %s", shown, err.msg);
            return CANCEL_ERROR;
        }
        if (!delayed) {
            printf("unknown: %s (not queued, not running, no result)\n", shown);
            return CANCEL_UNKNOWN;
        }
        /* the mark outlives the wait: the worker that takes it when due ends it cancelled */
        if (due_ms > clock_wall_ms())
            ttl += (due_ms - clock_wall_ms()) / 1000 + 1;
    }
    if (queue_cancel(q, id, ttl, &err) != 0) {
        cli_error("cancel %s: %s", shown, err.msg);
        return CANCEL_ERROR;
    }
    printf("cancel requested: %s\n", shown);
    return CANCEL_MARKED;
}

/* The explicit ids of a job file; jobs without one are counted. */
static int file_ids(const char *path, struct idlist *ids, size_t *no_id)
{
    struct jobfile jf;
    struct llmsb_err err = {0};

    if (jobfile_load(&jf, path, &err) != 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    for (size_t i = 0; i < jf.n; i++) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(jf.jobs[i], "id");
        if (!cJSON_IsString(id) || !id->valuestring[0])
            (*no_id)++;
        else if (add(ids, id->valuestring) != 0) {
            jobfile_release(&jf);
            cli_error("out of memory");
            return -1;
        }
    }
    jobfile_release(&jf);
    return 0;
}

static const char cancel_usage[] =
    "usage: llm-sandbox cancel ID...\n"
    "       llm-sandbox cancel --file JOBFILE\n"
    "       llm-sandbox cancel --all\n\n"
    "Asks for jobs to be cancelled: queued ones end `cancelled` when a worker\n"
    "takes them, running ones are stopped within a second or two. --all takes\n"
    "every job in the queue, queued or running. Ids with a final result and\n"
    "ids nothing knows are reported and left alone.\n"
    "Exit 0 when every id given was cancelled or had finished, 1 otherwise.\n";

int cmd_cancel(struct cli_globals *g, int argc, char **argv)
{
    struct idlist ids = {0}, queued = {0};
    const char *file = NULL;
    size_t no_id = 0, marked = 0, unknown = 0, finished = 0;
    int all = 0, rc = 0;
    struct queue q;
    struct llmsb_err err = {0};

    for (int i = 1; i < argc; i++) {
        int grc = cli_global_opt(g, argc, argv, &i);
        if (grc < 0)
            return EXIT_USAGE;
        if (grc > 0)
            continue;
        if (strcmp(argv[i], "--help") == 0) {
            fputs(cancel_usage, stdout);
            return 0;
        } else if (strcmp(argv[i], "--all") == 0) {
            all = 1;
        } else if (strcmp(argv[i], "--file") == 0 && i + 1 < argc) {
            file = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("cancel: unknown option \"%s\"", argv[i]);
            fputs(cancel_usage, stderr);
            return EXIT_USAGE;
        } else if (add(&ids, argv[i]) != 0) {
            cli_error("out of memory");
            return EXIT_INTERNAL;
        }
    }
    if ((all != 0) + (file != NULL) + (ids.n > 0) != 1) {
        cli_error("cancel: give ids, --file JOBFILE or --all (one of them)");
        fputs(cancel_usage, stderr);
        idlist_free(&ids);
        return EXIT_USAGE;
    }
    if (cli_config_finish(g) != 0 || (file && file_ids(file, &ids, &no_id) != 0)) {
        idlist_free(&ids);
        return EXIT_USAGE;
    }
    if (queue_open(&q, g->cfg.redis_url, g->cfg.redis_prefix, NULL, 10000, &err) != 0) {
        cli_error("%s", err.msg);
        idlist_free(&ids);
        return EXIT_INTERNAL;
    }
    if (stream_ids(&q, &queued, &err) != 0) {
        cli_error("%s", err.msg);
        rc = EXIT_INTERNAL;
    }
    if (queued.n)
        qsort(queued.v, queued.n, sizeof(char *), cmp_str);
    for (size_t i = 0; rc == 0 && i < (all ? queued.n : ids.n); i++) {
        int one = cancel_one(&q, all ? queued.v[i] : ids.v[i], &queued, g->cfg.result_ttl_s);
        if (one == CANCEL_ERROR)
            rc = EXIT_INTERNAL;
        marked += one == CANCEL_MARKED;
        finished += one == CANCEL_FINISHED;
        unknown += one == CANCEL_UNKNOWN;
    }
    queue_close(&q);
    if (rc == 0) {
        fprintf(stderr, "llm-sandbox: %zu cancel request(s), %zu already finished, %zu unknown",
                marked, finished, unknown);
        if (no_id)
            fprintf(stderr, "; %zu job(s) of %s have no id and cannot be named", no_id, file);
        fputc('\n', stderr);
        rc = unknown || no_id ? 1 : 0;
    }
    idlist_free(&ids);
    idlist_free(&queued);
    return rc;
}
