/* judge0_int.h - what the Judge0 route set's files share (front/judge0.c,
 * front/judge0_zip.c). */
#ifndef LLMSB_FRONT_JUDGE0_INT_H
#define LLMSB_FRONT_JUDGE0_INT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#define JUDGE0_EXTRACT_MAX_KB 10240 /* Judge0's Config::MAX_EXTRACT_SIZE */
#define JUDGE0_ZIP_ENTRIES_MAX 1000 /* entries of one archive, ours */

/* The regular files of the zip archive zip[0..n) as our job's files
 * object, {"path": {"base64": "..."}} (*files: new, caller deletes):
 * directories are skipped, and so is a file named source (the program's
 * own file, which Judge0's unzip -n never overwrites); 10240 KB unpacked
 * in all.  Returns 0, or -1 with why (what is wrong with the archive,
 * naming the entry) and *files NULL. */
int judge0_zip_files(const char *zip, size_t n, const char *source, cJSON **files, char *why,
                     size_t whysz);

#endif
