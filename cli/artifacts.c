/* artifacts.c - saving a result's artifacts to disk for `run --artifacts`
 * and `submit --artifacts`.  Names are checked as clean relative paths
 * (they come from the sandbox) and every file is opened with O_NOFOLLOW, so
 * a name can neither climb out of the directory nor write through a link
 * planted there. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/proto.h"
#include "common/base64.h"
#include "job/result.h"

int cli_save_file(const char *dir, const char *name, const char *data, size_t len)
{
    char path[4400], shown[200], *slash;
    int fd, rc = 0;

    /* names come from the sandbox: escaped before any terminal sees them */
    llmsb_escape(shown, sizeof(shown), name, strlen(name));
    if (proto_path_check(name, strlen(name), NULL) != 0) {
        fprintf(stderr,
                "llm-sandbox: artifact name \"%s\" is not a clean relative path; not "
                "saved\n",
                shown);
        return -1;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "llm-sandbox: cannot create \"%s\": %s\n", dir, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    for (slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            break;
        *slash = '/';
    }
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
        fprintf(stderr, "llm-sandbox: cannot save artifact %s in %s: %s\n", shown, dir,
                strerror(errno));
        rc = -1;
    }
    if (fd >= 0)
        close(fd);
    return rc;
}

void cli_id_dirname(const char *id, char *out, size_t outsz)
{
    size_t o = 0, n = strlen(id);

    for (size_t i = 0; i < n && o + 4 < outsz; i++) {
        unsigned char c = (unsigned char)id[i];
        if (c == '/' || c == '%' || c == '\\' || c < 0x20 || c == 0x7f || (i == 0 && c == '.'))
            o += (size_t)snprintf(out + o, outsz - o, "%%%02X", c);
        else
            out[o++] = (char)c;
    }
    out[o] = '\0';
}

int cli_save_result_artifacts(const char *dir, const cJSON *result, int *saved)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(result, "id");
    const cJSON *arts = cJSON_GetObjectItemCaseSensitive(result, "artifacts");
    const cJSON *a;
    char sub[4400], idd[3 * RESULT_ID_MAX + 1];
    int rc = 0;

    if (!cJSON_IsArray(arts) || cJSON_GetArraySize(arts) == 0)
        return 0;
    if (!cJSON_IsString(id) || !id->valuestring[0] || strlen(id->valuestring) >= RESULT_ID_MAX) {
        fprintf(stderr, "llm-sandbox: a result without a usable id; its artifacts are not saved\n");
        return -1;
    }
    cli_id_dirname(id->valuestring, idd, sizeof(idd));
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "llm-sandbox: cannot create \"%s\": %s\n", dir, strerror(errno));
        return -1;
    }
    snprintf(sub, sizeof(sub), "%s/%s", dir, idd);
    cJSON_ArrayForEach(a, arts) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(a, "name");
        const cJSON *b64 = cJSON_GetObjectItemCaseSensitive(a, "base64");
        size_t len = 0;
        char *data;

        if (!cJSON_IsString(name) || !cJSON_IsString(b64))
            continue; /* a skipped entry: the result says why */
        data = base64_decode(b64->valuestring, strlen(b64->valuestring), &len);
        if (!data) {
            char n1[200], n2[200];
            llmsb_escape(n1, sizeof(n1), name->valuestring, strlen(name->valuestring));
            llmsb_escape(n2, sizeof(n2), id->valuestring, strlen(id->valuestring));
            fprintf(stderr, "llm-sandbox: artifact %s of %s is not valid base64\n", n1, n2);
            rc = -1;
            continue;
        }
        if (cli_save_file(sub, name->valuestring, data, len) == 0)
            (*saved)++;
        else
            rc = -1;
        free(data);
    }
    return rc;
}
