/* judge0_zip.c - Judge0's additional_files (a zip archive) as our job's
 * files: each regular file of the archive, by its path, as Base64.  Read
 * in memory with libarchive, bounded as Judge0 bounds its unzip
 * (Config::MAX_EXTRACT_SIZE, 10240 KB in all), and never written anywhere:
 * the job's own checks (job/parse.c) then take the paths as any files. */
#include "front/judge0_int.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"

#define ZIP_BLOCK 65536

/* A path we take: relative, no "..", no empty part. */
static int zip_path_ok(const char *p)
{
    if (!p || !*p || *p == '/')
        return 0;
    while (*p) {
        size_t n = strcspn(p, "/");
        if (n == 0 || (n == 2 && p[0] == '.' && p[1] == '.'))
            return 0;
        p += n + (p[n] == '/');
    }
    return 1;
}

/* The data of the current entry into a new buffer (*out, *len), counting
 * against *left; returns 0 or -1 with why. */
static int zip_entry_data(struct archive *a, const char *path, size_t *left, char **out,
                          size_t *len, char *why, size_t whysz)
{
    char *buf = NULL, *grown;
    size_t used = 0, cap = 0;
    la_ssize_t n = 0;
    int nomem = 0;

    for (;;) {
        if (cap - used < ZIP_BLOCK) {
            if (!(grown = realloc(buf, cap + ZIP_BLOCK))) {
                nomem = 1;
                break;
            }
            buf = grown;
            cap += ZIP_BLOCK;
        }
        if ((n = archive_read_data(a, buf + used, ZIP_BLOCK)) <= 0)
            break;
        if ((size_t)n > *left) {
            snprintf(why, whysz, "the files unpack to more than %d KB (at \"%.100s\")",
                     JUDGE0_EXTRACT_MAX_KB, path);
            free(buf);
            return -1;
        }
        *left -= (size_t)n;
        used += (size_t)n;
    }
    if (nomem || n < 0) {
        snprintf(why, whysz, "\"%.100s\" could not be read: %s", path,
                 nomem ? "out of memory" : archive_error_string(a));
        free(buf);
        return -1;
    }
    *out = buf;
    *len = used;
    return 0;
}

/* Adds the current entry to files (skipped: directories, and the source
 * file's own name, which Judge0's unzip -n leaves as it was). */
static int zip_entry(struct archive *a, struct archive_entry *e, const char *source, size_t *left,
                     cJSON *files, char *why, size_t whysz)
{
    const char *path = archive_entry_pathname(e);
    char *data = NULL, *b64;
    size_t len = 0;
    cJSON *o;

    if (archive_entry_filetype(e) == AE_IFDIR)
        return 0;
    if (archive_entry_filetype(e) != AE_IFREG) {
        snprintf(why, whysz, "\"%.100s\" is not a regular file (only files are taken)",
                 path ? path : "");
        return -1;
    }
    if (!zip_path_ok(path)) {
        snprintf(why, whysz, "\"%.100s\" is not a relative path without \"..\"", path ? path : "");
        return -1;
    }
    if (strcmp(path, source) == 0 || cJSON_GetObjectItemCaseSensitive(files, path))
        return 0;
    if (zip_entry_data(a, path, left, &data, &len, why, whysz) != 0)
        return -1;
    b64 = base64_encode(data, len, NULL);
    free(data);
    if (!b64 || !(o = cJSON_AddObjectToObject(files, path)) ||
        !cJSON_AddStringToObject(o, "base64", b64)) {
        free(b64);
        snprintf(why, whysz, "out of memory");
        return -1;
    }
    free(b64);
    return 0;
}

int judge0_zip_files(const char *zip, size_t n, const char *source, cJSON **files, char *why,
                     size_t whysz)
{
    struct archive *a = archive_read_new();
    struct archive_entry *e;
    size_t left = (size_t)JUDGE0_EXTRACT_MAX_KB * 1024, count = 0;
    int rc = -1, r;

    *files = cJSON_CreateObject();
    if (!a || !*files) {
        snprintf(why, whysz, "out of memory");
        goto out;
    }
    archive_read_support_format_zip(a);
    if (archive_read_open_memory(a, zip, n) != ARCHIVE_OK) {
        snprintf(why, whysz, "is not a zip archive: %s", archive_error_string(a));
        goto out;
    }
    while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
        if (++count > JUDGE0_ZIP_ENTRIES_MAX) {
            snprintf(why, whysz, "holds more than %d entries", JUDGE0_ZIP_ENTRIES_MAX);
            goto out;
        }
        if (zip_entry(a, e, source, &left, *files, why, whysz) != 0)
            goto out;
    }
    if (r != ARCHIVE_EOF) {
        snprintf(why, whysz, "is not a readable zip archive: %s", archive_error_string(a));
        goto out;
    }
    rc = 0;
out:
    if (a)
        archive_read_free(a);
    if (rc) {
        cJSON_Delete(*files);
        *files = NULL;
    }
    return rc;
}
