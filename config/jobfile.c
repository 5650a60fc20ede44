/* jobfile.c - job files into JSON job objects.  YAML plain scalars are
 * resolved like YAML 1.2's core schema (true/false/null/numbers); quoted
 * scalars stay strings.  Lists and maps become JSON values, so `args`,
 * `env`, `files` and `meta` can be written as YAML. */
#include "jobfile.h"
#include "config_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static int add_job(struct jobfile *jf, cJSON *job, size_t line)
{
    cJSON **nj;
    size_t *nl;

    if (jf->n >= JOBFILE_MAX_JOBS)
        return -1;
    nj = realloc(jf->jobs, (jf->n + 1) * sizeof(*nj));
    if (!nj)
        return -1;
    jf->jobs = nj;
    nl = realloc(jf->lines, (jf->n + 1) * sizeof(*nl));
    if (!nl)
        return -1;
    jf->lines = nl;
    jf->jobs[jf->n] = job;
    jf->lines[jf->n] = line;
    jf->n++;
    return 0;
}

void jobfile_release(struct jobfile *jf)
{
    for (size_t i = 0; i < jf->n; i++)
        cJSON_Delete(jf->jobs[i]);
    free(jf->jobs);
    free(jf->lines);
    memset(jf, 0, sizeof(*jf));
}

/* ---- YAML ----------------------------------------------------------------- */

static cJSON *scalar(const yaml_node_t *n)
{
    const char *s = (const char *)n->data.scalar.value;
    double d;
    long long ll;

    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return cJSON_CreateString(s);
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
        return cJSON_CreateTrue();
    if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
        return cJSON_CreateFalse();
    if (!strcmp(s, "null") || !strcmp(s, "~") || !*s)
        return cJSON_CreateNull();
    if (parse_ll(s, -(1LL << 53), 1LL << 53, &ll) == 0)
        return cJSON_CreateNumber((double)ll);
    if (parse_double(s, -1e300, 1e300, &d) == 0 && strspn(s, "+-0123456789.eE") == strlen(s))
        return cJSON_CreateNumber(d);
    return cJSON_CreateString(s);
}

void yaml_walk_init(struct yaml_walk *w, yaml_document_t *doc, const char *file, size_t text_len,
                    int max_depth, struct llmsb_err *err)
{
    w->doc = doc;
    w->file = file;
    w->visits = 0;
    w->max_visits = text_len + YAML_WALK_SLACK;
    w->max_depth = max_depth;
    w->err = err;
}

int yaml_walk_enter(struct yaml_walk *w, const yaml_node_t *n, int depth)
{
    size_t line = n ? n->start_mark.line + 1 : 0;

    if (!n)
        return llmsb_err_set(w->err, LLMSB_ERR_INVALID, "%s: malformed YAML document", w->file);
    if (depth > w->max_depth)
        return llmsb_err_set(w->err, LLMSB_ERR_INVALID, "%s:%zu: nested deeper than %d levels",
                             w->file, line, w->max_depth);
    if (++w->visits > w->max_visits)
        return llmsb_err_set(w->err, LLMSB_ERR_INVALID,
                             "%s:%zu: the document expands to more than %zu nodes (aliases "
                             "repeat a subtree too often)",
                             w->file, line, w->max_visits);
    return 0;
}

const char *yaml_walk_key(struct yaml_walk *w, const yaml_node_t *map, const yaml_node_pair_t *p)
{
    yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
    const char *key;

    if (!k || k->type != YAML_SCALAR_NODE) {
        llmsb_err_set(w->err, LLMSB_ERR_INVALID, "%s:%zu: keys must be plain strings", w->file,
                      (size_t)(k ? k->start_mark.line + 1 : map->start_mark.line + 1));
        return NULL;
    }
    key = (const char *)k->data.scalar.value;
    for (const yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
        yaml_node_t *qk = yaml_document_get_node(w->doc, q->key);
        if (qk && qk->type == YAML_SCALAR_NODE &&
            strcmp((const char *)qk->data.scalar.value, key) == 0) {
            char shown[80];
            llmsb_escape(shown, sizeof(shown), key, strlen(key));
            llmsb_err_set(w->err, LLMSB_ERR_INVALID,
                          "%s:%zu: duplicate key \"%s\" (first at "
                          "line %zu)",
                          w->file, (size_t)k->start_mark.line + 1, shown,
                          (size_t)qk->start_mark.line + 1);
            return NULL;
        }
    }
    return key;
}

cJSON *config_yaml_to_json(struct yaml_walk *w, yaml_node_t *n, int depth)
{
    cJSON *out;

    if (yaml_walk_enter(w, n, depth) != 0)
        return NULL;
    if (n->type == YAML_SCALAR_NODE)
        return scalar(n);
    if (n->type == YAML_SEQUENCE_NODE) {
        out = cJSON_CreateArray();
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
            cJSON *v = config_yaml_to_json(w, yaml_document_get_node(w->doc, *it), depth + 1);
            if (!v) {
                cJSON_Delete(out);
                return NULL;
            }
            cJSON_AddItemToArray(out, v);
        }
        return out;
    }
    out = cJSON_CreateObject();
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const char *key = yaml_walk_key(w, n, p);
        cJSON *v = key ? config_yaml_to_json(w, yaml_document_get_node(w->doc, p->value), depth + 1)
                       : NULL;
        if (!v) {
            cJSON_Delete(out);
            return NULL;
        }
        cJSON_AddItemToObject(out, key, v);
    }
    return out;
}

/* The top level: `jobs:` (a list) and optional `defaults:` (a map). */
static int yaml_top(struct yaml_walk *w, yaml_node_t *root, yaml_node_t **jobs,
                    yaml_node_t **defaults)
{
    *jobs = *defaults = NULL;
    if (!root || root->type != YAML_MAPPING_NODE)
        return llmsb_err_set(w->err, LLMSB_ERR_INVALID,
                             "%s:1: a job file is a mapping with `jobs:` (and optional "
                             "`defaults:`)",
                             w->file);
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        const char *key = yaml_walk_key(w, root, p);
        yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
        if (!key)
            return w->err->code;
        if (strcmp(key, "jobs") == 0)
            *jobs = v;
        else if (strcmp(key, "defaults") == 0)
            *defaults = v;
        else
            return llmsb_err_set(w->err, LLMSB_ERR_INVALID,
                                 "%s:%zu: unknown top-level key \"%.40s\" (want jobs, defaults)",
                                 w->file, (size_t)(v ? v->start_mark.line + 1 : 1), key);
    }
    if (!*jobs || (*jobs)->type != YAML_SEQUENCE_NODE)
        return llmsb_err_set(w->err, LLMSB_ERR_INVALID, "%s:%zu: `jobs:` must be a list of jobs",
                             w->file, (size_t)(*jobs ? (*jobs)->start_mark.line + 1 : 1));
    if (*defaults && (*defaults)->type != YAML_MAPPING_NODE)
        return llmsb_err_set(w->err, LLMSB_ERR_INVALID,
                             "%s:%zu: `defaults:` must be a map of job fields", w->file,
                             (size_t)(*defaults)->start_mark.line + 1);
    return 0;
}

/* One job of the list: its map with the defaults it does not set. */
static int yaml_job(struct jobfile *jf, struct yaml_walk *w, yaml_node_t *jn, const cJSON *defs)
{
    size_t line = jn ? jn->start_mark.line + 1 : 0;
    const cJSON *d;
    cJSON *job;

    if (!jn || jn->type != YAML_MAPPING_NODE)
        return llmsb_err_set(w->err, LLMSB_ERR_INVALID,
                             "%s:%zu: each job must be a map of "
                             "job fields",
                             jf->name, line);
    if (!(job = config_yaml_to_json(w, jn, 1)))
        return w->err->code;
    cJSON_ArrayForEach(d, defs) {
        if (!cJSON_GetObjectItemCaseSensitive(job, d->string))
            cJSON_AddItemToObject(job, d->string, cJSON_Duplicate(d, 1));
    }
    if (add_job(jf, job, line) != 0) {
        cJSON_Delete(job);
        return llmsb_err_set(w->err, LLMSB_ERR_LIMIT, "%s: too many jobs", jf->name);
    }
    return 0;
}

static int load_yaml(struct jobfile *jf, const char *text, size_t len, struct llmsb_err *err)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_node_t *jobs, *defaults;
    struct yaml_walk w;
    cJSON *defs = NULL;
    int rc;

    if (!yaml_parser_initialize(&parser))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: cannot start the YAML parser", jf->name);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu:%zu: %s", jf->name,
                           parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                           parser.problem ? parser.problem : "YAML syntax error");
        yaml_parser_delete(&parser);
        return rc;
    }
    yaml_walk_init(&w, &doc, jf->name, len, JOBFILE_MAX_DEPTH, err);
    rc = yaml_top(&w, yaml_document_get_root_node(&doc), &jobs, &defaults);
    if (rc == 0 && defaults && !(defs = config_yaml_to_json(&w, defaults, 1)))
        rc = err->code;
    for (yaml_node_item_t *it = jobs ? jobs->data.sequence.items.start : NULL;
         rc == 0 && it < jobs->data.sequence.items.top; it++)
        rc = yaml_job(jf, &w, yaml_document_get_node(&doc, *it), defs);
    cJSON_Delete(defs);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return rc;
}

/* ---- JSON Lines --------------------------------------------------------------- */

static int load_jsonl(struct jobfile *jf, const char *text, size_t len, struct llmsb_err *err)
{
    size_t line = 0, off = 0;

    while (off < len) {
        const char *s = text + off, *nl = memchr(s, '\n', len - off);
        size_t l = nl ? (size_t)(nl - s) : len - off;
        cJSON *job;

        line++;
        off += l + (nl ? 1 : 0);
        while (l && (s[l - 1] == '\r' || s[l - 1] == ' ' || s[l - 1] == '\t'))
            l--;
        if (l == 0)
            continue;
        job = cJSON_ParseWithLength(s, l);
        if (!job || !cJSON_IsObject(job)) {
            cJSON_Delete(job);
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: not a JSON object", jf->name,
                                 line);
        }
        if (add_job(jf, job, line) != 0) {
            cJSON_Delete(job);
            return llmsb_err_set(err, LLMSB_ERR_LIMIT, "%s: too many jobs", jf->name);
        }
    }
    return 0;
}

int jobfile_load_string(struct jobfile *jf, const char *text, size_t len, const char *name,
                        struct llmsb_err *err)
{
    size_t nl = strlen(name), skip = 0;
    int jsonl;
    int rc;

    memset(jf, 0, sizeof(*jf));
    snprintf(jf->name, sizeof(jf->name), "%s", name);
    while (skip < len && strchr(" \t\r\n", text[skip]) &&
           text[skip]) /* text is not NUL-terminated */
        skip++;
    jsonl = (nl > 6 && !strcmp(name + nl - 6, ".jsonl")) ||
            (nl > 7 && !strcmp(name + nl - 7, ".ndjson")) || (skip < len && text[skip] == '{');
    rc = jsonl ? load_jsonl(jf, text, len, err) : load_yaml(jf, text, len, err);
    if (rc == 0 && jf->n == 0)
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: no jobs in the file", name);
    if (rc != 0)
        jobfile_release(jf);
    return rc;
}

int jobfile_load(struct jobfile *jf, const char *path, struct llmsb_err *err)
{
    struct buf b;
    char chunk[65536];
    size_t n;
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
    int rc = 0;

    memset(jf, 0, sizeof(*jf));
    if (!f)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "cannot open job file \"%s\": %s", path,
                             strerror(errno));
    buf_init(&b, JOBFILE_MAX_BYTES);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        if (buf_append(&b, chunk, n) != 0) {
            rc = llmsb_err_set(err, LLMSB_ERR_LIMIT, "%s: over %zu bytes", path, JOBFILE_MAX_BYTES);
            break;
        }
    if (f != stdin)
        fclose(f);
    if (rc == 0)
        rc = jobfile_load_string(jf, b.data ? b.data : "", b.len, path, err);
    buf_release(&b);
    return rc;
}

int jobfile_fields(const cJSON *job, struct fields *out)
{
    const cJSON *it;
    int rc = 0;

    cJSON_ArrayForEach(it, job) {
        char *text;
        if (cJSON_IsNull(it))
            continue;
        text = cJSON_IsString(it) ? NULL : cJSON_PrintUnformatted(it);
        if (!cJSON_IsString(it) && !text)
            return LLMSB_ERR_NOMEM;
        rc = fields_add_copy(out, it->string, strlen(it->string), text ? text : it->valuestring,
                             strlen(text ? text : it->valuestring));
        free(text);
        if (rc)
            return rc;
    }
    return 0;
}
