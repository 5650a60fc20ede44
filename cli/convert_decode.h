/* convert_decode.h - LiveCodeBench's published private tests decoded for
 * `convert` in sandbox jobs (cli/convert_decode.c). */
#ifndef LLMSB_CLI_CONVERT_DECODE_H
#define LLMSB_CLI_CONVERT_DECODE_H

#include <stddef.h>

#include "cli.h"

/* What the decoder needs: the CLI's globals (its config, --backend: the
 * engine submit --local would use) and the image (NULL: the python
 * language's). */
struct convert_decode {
    struct cli_globals *g;
    const char *image;
};

/* convert_opts.decode (eval/convert.h): blobs[i], base64 of zlib of a
 * pickle of a JSON string, decoded by one job each in the Python image, no
 * network, through the in-process batch `submit --local` uses; out[i] the
 * JSON text it printed (untrusted: the caller checks it), or why[i] why not
 * (printable, at most 200 bytes of the decoder's own words).  ud is a
 * struct convert_decode.  0, or a negative code with err set when the
 * jobs could not run (no engine). */
int convert_decode_sandbox(void *ud, size_t n, const char *const *blobs, char **out, char **why,
                           struct llmsb_err *err);

#endif
