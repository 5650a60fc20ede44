/* images.c - `llm-sandbox images build [--force] [LANG...]`, and a user's
 * Dockerfile made into llmsb/custom/NAME with `images build --dockerfile
 * FILE --name NAME --lang LANG [--context DIR]` (built, checked, audited,
 * then tagged: images/custom.c, exec/image_check.c); `images list` and
 * `images rm NAME` through the engine's image API. */
#include "cli.h"

#include <cjson/cJSON.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "exec/runner.h"
#include "images/images.h"
#include "languages/languages.h"

static const char images_usage[] =
    "usage: llm-sandbox images build [--force] [--agent PATH] [LANG...]\n"
    "       llm-sandbox images build --dockerfile FILE --name NAME --lang LANG\n"
    "                                [--context DIR] [--force] [--agent PATH]\n"
    "       llm-sandbox images list\n"
    "       llm-sandbox images rm NAME\n"
    "       llm-sandbox images languages [--json]\n"
    "\n"
    "Builds llmsb/<lang> images (all languages when none is named) from\n"
    "Debian packages; no container registry is needed.  Images whose recipe\n"
    "hash tag already exists are kept unless --force is given.\n"
    "\n"
    "With --dockerfile: builds FILE (context DIR, default FILE's directory),\n"
    "adds the agent, the hooks and the sandbox user for LANG, runs a hello\n"
    "world and the hardening audit in it, and tags it llmsb/custom/NAME:<hash>\n"
    "and :latest; jobs name it with image: llmsb/custom/NAME.\n"
    "\n"
    "list shows the sandbox images on the engine (llmsb/custom/* with every\n"
    "tag, ours by :latest); rm NAME removes the tags of llmsb/custom/NAME.\n"
    "languages prints every language's name and its image, a line each;\n"
    "with --json an object a line: its file, commands, packages, caches.\n";

/* exec_image_check's look at a container of the image before it starts:
 * its files, read from outside (images/tree.c). */
static int tree_hook(void *ud, struct backend *be, const char *id, struct buf *f,
                     struct llmsb_err *err)
{
    return images_custom_tree_audit(be, id, ud, f, err);
}

/* The custom build: built under a name no job may use, checked by its
 * image id, then tagged (or its unchecked name dropped). */
static int custom_build(struct cli_globals *g, struct images_custom *c, const struct images_opts *o)
{
    const struct runner_opts ro = {.kind = RUNNER_KIND_RUN, .slots = 1, .max_size = 1};
    struct images_custom_tags t;
    struct llmsb_err err = {0};
    struct runner rn;
    struct buf findings;
    const struct image_check_hook hook = {tree_hook, &t};
    char dir[PATH_MAX], version[64];
    int rc, code = 0;

    t.id[0] = '\0';
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
    fprintf(stderr, "[custom] checking %s (%s): a hello world in %s, the hardening audit\n",
            t.unchecked, t.id, t.lang);
    if ((rc = images_custom_audit(&rn.be, t.id, t.lang, &findings, &err)) != 0 ||
        (rc = exec_image_check(&rn, t.id, language_find(t.lang), &hook, &findings, &err)) != 0)
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
    runner_close(&rn, "images build ended"); /* its containers of the image first */
    if (code != 0 && t.id[0] &&
        runner_engine_open(&rn.be, &g->cfg, version, sizeof(version), &err) == 0) {
        images_custom_discard(&rn.be, &t); /* refused: no name of it stays */
        backend_close(&rn.be);
    }
    return code;
}

/* A tag's repo without the engine's registry prefix (Podman names ours
 * docker.io/llmsb/..., localhost/llmsb/...). */
static const char *tag_repo(const char *tag)
{
    static const char *const hosts[] = {"docker.io/", "localhost/"};
    for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++)
        if (strncmp(tag, hosts[i], strlen(hosts[i])) == 0)
            return tag + strlen(hosts[i]);
    return tag;
}

/* Images are judged by their repo, not their labels: an image built FROM
 * one of ours inherits the llmsb.* labels.  A custom image's every tag
 * (llmsb/custom/...); of our own images, the :latest ones (the hash tags
 * of older recipes stay until removed). */
static void list_one(void *ud, const struct image_info *ii)
{
    const char *r = tag_repo(ii->tag);
    size_t n = strlen(r);
    int custom = strncmp(r, "llmsb/custom/", 13) == 0;
    (void)ud;
    if (strncmp(r, "llmsb/", 6) != 0 || (!custom && (n < 7 || strcmp(r + n - 7, ":latest") != 0)))
        return;
    printf("%-44s %-10s %-8s %6lld MB\n", ii->tag, ii->lang, custom ? "custom" : "stock",
           ii->size_bytes >> 20);
}

#define RM_MAX 64

struct rm_ctx {
    char repo[160]; /* "llmsb/custom/NAME:" */
    char tags[RM_MAX][200];
    int n, more;
};

static void rm_collect(void *ud, const struct image_info *ii)
{
    struct rm_ctx *c = ud;
    if (strncmp(tag_repo(ii->tag), c->repo, strlen(c->repo)) != 0)
        return; /* another image with the label (built FROM it) */
    if (c->n < RM_MAX)
        snprintf(c->tags[c->n++], sizeof(c->tags[0]), "%s", ii->tag);
    else
        c->more++;
}

/* images rm NAME: every tag of llmsb/custom/NAME, RM_MAX at a time. */
static int rm_custom(struct backend *be, const char *name, struct llmsb_err *err)
{
    struct rm_ctx *rm = calloc(1, sizeof(*rm));
    char label[128];
    int rc;

    if (!rm)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    snprintf(rm->repo, sizeof(rm->repo), "llmsb/custom/%s:", name);
    snprintf(label, sizeof(label), "llmsb.custom=%s", name);
    rc = be->ops->image_list(be, label, rm_collect, rm, err);
    if (rc == 0 && rm->n == 0)
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "images rm: no image llmsb/custom/%s", name);
    for (int i = 0; rc == 0 && i < rm->n; i++)
        if ((rc = be->ops->image_remove(be, rm->tags[i], err)) == 0)
            printf("removed %s\n", rm->tags[i]);
    if (rc == 0 && rm->more)
        rc = llmsb_err_set(err, LLMSB_ERR_LIMIT,
                           "images rm: llmsb/custom/%s has %d more tags than the %d removed: "
                           "run it again",
                           name, rm->more, RM_MAX);
    free(rm);
    return rc;
}

/* images list | images rm NAME: through the engine's image API. */
static int list_or_rm(struct cli_globals *g, const char *verb, const char *name)
{
    struct backend be;
    struct llmsb_err err = {0};
    char version[64];
    int rc = 0;

    if (strcmp(verb, "rm") == 0 && (!name || !images_custom_name_ok(name))) {
        cli_error("images rm: \"%s\" is not the NAME of a custom image (llmsb/custom/NAME)",
                  name ? name : "");
        return EXIT_USAGE;
    }
    if (runner_engine_open(&be, &g->cfg, version, sizeof(version), &err) != 0) {
        cli_error("%s", err.msg);
        return EXIT_INTERNAL;
    }
    if (!be.ops->image_list) {
        cli_error("images %s: the %s backend cannot list images (they are the nodes')", verb,
                  be.ops->name);
        backend_close(&be);
        return EXIT_USAGE;
    }
    if (strcmp(verb, "list") == 0) {
        printf("%-44s %-10s %-8s %9s\n", "IMAGE", "LANG", "KIND", "SIZE");
        rc = be.ops->image_list(&be, "llmsb.lang", list_one, NULL, &err);
    } else {
        rc = rm_custom(&be, name, &err);
    }
    if (rc != 0)
        cli_error("%s", err.msg);
    backend_close(&be);
    return rc == 0 ? 0 : err.code == LLMSB_ERR_INVALID ? EXIT_USAGE : EXIT_INTERNAL;
}

/* images list [global options] | images rm NAME [global options]: the
 * operands counted, an unknown option refused. */
static int list_or_rm_args(struct cli_globals *g, int argc, char **argv)
{
    const char *verb = argv[1], *name = NULL;
    int want = strcmp(verb, "rm") == 0, n = 0, rc;

    for (int i = 2; i < argc; i++) {
        if ((rc = cli_global_opt(g, argc, argv, &i)) < 0)
            return EXIT_USAGE;
        if (rc > 0)
            continue;
        if (argv[i][0] == '-') {
            cli_error("images %s: unknown option \"%s\"", verb, argv[i]);
            return EXIT_USAGE;
        }
        if (n++ >= want) {
            cli_error("images %s: takes %s; \"%s\" is one too many", verb,
                      want ? "one NAME" : "no operand", argv[i]);
            return EXIT_USAGE;
        }
        name = argv[i];
    }
    if (cli_config_finish(g) != 0)
        return EXIT_USAGE;
    return list_or_rm(g, verb, name);
}

static cJSON *string_array(const char *const *v, size_t max)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < max && v[i]; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
    return a;
}

/* images languages [--json]: a line per language (name, image), or a
 * JSON object per line with what running its programs takes (the bench
 * runs them bare on the host with it). */
static int print_languages(int json)
{
    for (size_t i = 0; i < languages_count; i++) {
        const struct language *l = languages[i];
        cJSON *o;
        char *text;
        if (!json) {
            printf("%s %s\n", l->name, l->image);
            continue;
        }
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", l->name);
        cJSON_AddItemToObject(o, "aliases", string_array(l->aliases, LANG_MAX_ALIASES));
        cJSON_AddStringToObject(o, "image", l->image);
        cJSON_AddStringToObject(o, "ext", l->ext);
        cJSON_AddStringToObject(o, "default_stem", l->default_stem);
        cJSON_AddStringToObject(o, "packages", l->packages);
        cJSON_AddStringToObject(o, "tools", l->tools ? l->tools : "");
        cJSON_AddStringToObject(o, "hello", l->hello ? l->hello : "");
        cJSON_AddStringToObject(o, "line_comment", l->line_comment ? l->line_comment : "");
        cJSON_AddBoolToObject(o, "names_its_file", l->source != NULL);
        cJSON_AddItemToObject(o, "compile", string_array(l->compile, LANG_MAX_ARGV));
        cJSON_AddItemToObject(o, "run", string_array(l->run, LANG_MAX_ARGV));
        cJSON_AddItemToObject(o, "env", string_array(l->env, LANG_MAX_ENV));
        cJSON_AddBoolToObject(o, "libraries", l->install[0] != NULL);
        cJSON_AddBoolToObject(o, "zygote", l->zygote != NULL);
        cJSON_AddBoolToObject(o, "prespawn", l->prespawn != NULL);
        cJSON_AddBoolToObject(o, "compile_server", l->compile_server != NULL);
        text = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        if (!text)
            return EXIT_FAILURE;
        printf("%s\n", text);
        free(text);
    }
    return 0;
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

    if (argc >= 2 && (strcmp(argv[1], "list") == 0 || strcmp(argv[1], "rm") == 0))
        return list_or_rm_args(g, argc, argv);
    if (argc >= 2 && strcmp(argv[1], "languages") == 0)
        return print_languages(argc == 3 && strcmp(argv[2], "--json") == 0);
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
