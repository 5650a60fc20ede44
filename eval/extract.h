/* extract.h - the code out of a model's raw answer (`convert --extract`):
 * a Markdown answer's fenced blocks (``` or ~~~, closed or not), the one(s)
 * in the job's language first, or, for an answer with no fence, a Python
 * heuristic.  Pure: text in, text out, no allocation beyond the caller's
 * capped buffer.  The rules, with examples, are docs/eval.md's "Code out of
 * raw answers". */
#ifndef LLMSB_EVAL_EXTRACT_H
#define LLMSB_EVAL_EXTRACT_H

#include <stddef.h>

#include "common/common.h"

/* The longest fence tag kept (the info string's first word). */
#define EXTRACT_TAG_MAX 32

enum extract_mode {
    EXTRACT_OFF = 0,     /* the answer as it is (the default) */
    EXTRACT_FENCED,      /* every fence of the chosen kind, joined */
    EXTRACT_FIRST_FENCE, /* the first of them */
    EXTRACT_LAST_FENCE,  /* the last of them (LiveCodeBench's rule) */
    EXTRACT_HEURISTIC    /* as fenced; with no fence, the Python heuristic */
};

/* What the code was found as. */
enum extract_found {
    EXTRACT_FOUND_NONE = 0, /* nothing: the answer as it is */
    EXTRACT_FOUND_FENCE,    /* closed fences */
    EXTRACT_FOUND_UNCLOSED, /* the last block taken has no closing fence */
    EXTRACT_FOUND_HEURISTIC /* no fence: the heuristic's lines */
};

struct extract_result {
    enum extract_mode mode;
    enum extract_found found;
    char fence_lang[EXTRACT_TAG_MAX]; /* the (last) block taken's tag as written; "" none */
    size_t fences;                    /* fenced blocks in the answer */
    size_t taken;                     /* of them, taken */
    size_t raw_len;                   /* the answer's bytes */
    size_t first_line, last_line;     /* the answer's lines taken (1-based); 0: none */
};

/* "fenced", "first-fence", "last-fence", "heuristic" (and "off") into
 * *mode; 0, or -1 for another name. */
int extract_mode_parse(const char *name, enum extract_mode *mode);
const char *extract_mode_name(enum extract_mode mode);
const char *extract_found_name(enum extract_found found);

/* The code of answer (len bytes, NUL-free) for a job in language lang (our
 * name or an alias; NULL: unknown, no fence is its language's) appended to
 * out, which the caller initialised with its cap; res says what was taken.
 * Returns 0, or LLMSB_ERR_LIMIT when the code is over out's cap (err set). */
int extract_code(enum extract_mode mode, const char *lang, const char *answer, size_t len,
                 struct buf *out, struct extract_result *res, struct llmsb_err *err);

#endif
