/* extract.c - the code out of a model's raw answer (see extract.h): a
 * line scanner for Markdown fences, the choice of blocks by the language of
 * their tag, and, for an answer with no fence, a Python heuristic.  Every
 * rule is written in docs/eval.md ("Code out of raw answers"); nothing is
 * kept but offsets into the answer, so no buffer grows but the caller's. */
#include "eval/extract.h"

#include <ctype.h>
#include <string.h>

#include "languages/languages.h"

/* One line of the answer: [at, end) without its "\n" and a "\r" before it. */
struct line {
    const char *at, *end, *next;
};

/* The line starting at p (p < stop). */
static struct line line_at(const char *p, const char *stop)
{
    struct line l = {.at = p};
    const char *nl = memchr(p, '\n', (size_t)(stop - p));

    l.end = nl ? nl : stop;
    l.next = nl ? nl + 1 : stop;
    if (l.end > l.at && l.end[-1] == '\r')
        l.end--;
    return l;
}

static const char *skip_blanks(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

/* A fence block: its opening line's indent and run, the content lines
 * [body, body_end) and whether a closing fence ended it. */
struct block {
    char ch;
    size_t run, indent;
    char tag[EXTRACT_TAG_MAX];
    const char *body, *body_end, *next;
    size_t line, body_lines;
    int closed;
};

/* 1 when l opens a fence: blanks, 3 or more ` or ~, an info string (with
 * no ` after backticks); its first word is the tag. */
static int fence_open(const struct line *l, struct block *b)
{
    const char *p = skip_blanks(l->at, l->end), *q = p, *info;
    size_t k = 0;

    if (p >= l->end || (*p != '`' && *p != '~'))
        return 0;
    while (q < l->end && *q == *p)
        q++;
    if (q - p < 3)
        return 0;
    if (*p == '`' && memchr(q, '`', (size_t)(l->end - q)))
        return 0;
    b->ch = *p;
    b->run = (size_t)(q - p);
    b->indent = (size_t)(p - l->at);
    info = skip_blanks(q, l->end);
    while (info < l->end && k + 1 < sizeof(b->tag) && !isspace((unsigned char)*info) &&
           *info != '{' && *info != ',')
        b->tag[k++] = *info++;
    b->tag[k] = '\0';
    return 1;
}

/* 1 when l closes b: blanks, b's character b->run times or more, blanks. */
static int fence_close(const struct line *l, const struct block *b)
{
    const char *p = skip_blanks(l->at, l->end), *q = p;

    while (q < l->end && *q == b->ch)
        q++;
    return (size_t)(q - p) >= b->run && skip_blanks(q, l->end) == l->end;
}

/* The next block from *p on (lines counted in *line); 0 when none. */
static int block_next(const char **p, const char *stop, size_t *line, struct block *b)
{
    memset(b, 0, sizeof(*b));
    while (*p < stop) {
        struct line l = line_at(*p, stop);
        ++*line;
        *p = l.next;
        if (!fence_open(&l, b))
            continue;
        b->line = *line;
        b->body = b->body_end = *p;
        while (*p < stop) {
            struct line c = line_at(*p, stop);
            ++*line;
            *p = c.next;
            if (fence_close(&c, b)) {
                b->closed = 1;
                break;
            }
            b->body_end = c.next;
            b->body_lines++;
        }
        return 1;
    }
    return 0;
}

/* How a block's tag stands to the job's language: 0 its language, 1 no
 * tag, 2 another (or one we do not know). */
static int block_class(const struct block *b, const struct language *job)
{
    char low[EXTRACT_TAG_MAX];
    size_t i = 0;

    if (!b->tag[0])
        return 1;
    for (; b->tag[i]; i++)
        low[i] = (char)tolower((unsigned char)b->tag[i]);
    low[i] = '\0';
    return job && language_find(low) == job ? 0 : 2;
}

/* Appends block b's lines, each without up to b->indent leading blanks and
 * its "\r", each ending in "\n". */
static int block_append(const struct block *b, struct buf *out)
{
    int rc = 0;

    for (const char *p = b->body; rc == 0 && p < b->body_end;) {
        struct line l = line_at(p, b->body_end);
        const char *s = l.at;
        for (size_t k = 0; k < b->indent && s < l.end && (*s == ' ' || *s == '\t'); k++)
            s++;
        rc = buf_append(out, s, (size_t)(l.end - s)) || buf_append(out, "\n", 1);
        p = l.next;
    }
    return rc;
}

/* Names the lines of block b in res: the first of the first block taken
 * with lines, the last of the last. */
static void lines_taken(const struct block *b, struct extract_result *res)
{
    if (!b->body_lines)
        return;
    if (!res->first_line)
        res->first_line = b->line + 1;
    res->last_line = b->line + b->body_lines;
}

/* The fences of the best class: all (fenced, heuristic), the first or the
 * last; -1 when out is full. */
static int take_fences(enum extract_mode mode, const struct language *job, const char *answer,
                       const char *stop, int best, struct buf *out, struct extract_result *res)
{
    struct block b, last = {0};
    const char *p = answer;
    size_t line = 0;
    int rc = 0;

    while (rc == 0 && block_next(&p, stop, &line, &b)) {
        if (block_class(&b, job) != best)
            continue;
        last = b;
        if (mode == EXTRACT_LAST_FENCE)
            continue;
        if (res->taken++ && (rc = buf_append(out, "\n", 1)) != 0)
            break;
        rc = block_append(&b, out);
        lines_taken(&b, res);
        if (mode == EXTRACT_FIRST_FENCE)
            break;
    }
    if (rc == 0 && mode == EXTRACT_LAST_FENCE) {
        res->taken = 1;
        rc = block_append(&last, out);
        lines_taken(&last, res);
    }
    res->found = last.closed ? EXTRACT_FOUND_FENCE : EXTRACT_FOUND_UNCLOSED;
    memcpy(res->fence_lang, last.tag, sizeof(res->fence_lang));
    return rc;
}

/* ---- the Python heuristic (an answer with no fence) ---- */

static int starts(const struct line *l, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(l->end - l->at) >= n && memcmp(l->at, word, n) == 0;
}

/* A line that starts Python code at column 0. */
static int py_start(const struct line *l)
{
    static const char *const words[] = {"def ", "class ",     "import ", "from ",
                                        "@",    "async def ", NULL};
    for (int i = 0; words[i]; i++)
        if (starts(l, words[i]))
            return 1;
    return 0;
}

/* A line at column 0 that goes on with the code: a start, a statement's
 * keyword, a comment, a closing bracket, or a name followed by = ( [ . (an
 * assignment, a call) or by , with an = later (a, b = ...). */
static int py_more(const struct line *l)
{
    static const char *const words[] = {"if ",   "elif ",     "else:",    "for ",  "while ",
                                        "try:",  "except",    "finally:", "with ", "return",
                                        "raise", "assert ",   "print(",   "#",     ")",
                                        "]",     "}",         "global ",  "pass",  "del ",
                                        "yield", "nonlocal ", NULL};
    const char *p = l->at;

    if (py_start(l))
        return 1;
    for (int i = 0; words[i]; i++)
        if (starts(l, words[i]))
            return 1;
    if (p >= l->end || !(isalpha((unsigned char)*p) || *p == '_'))
        return 0;
    while (p < l->end && (isalnum((unsigned char)*p) || *p == '_'))
        p++;
    p = skip_blanks(p, l->end);
    if (p < l->end && *p == ',') /* a, b = ...; not "However, ..." */
        return memchr(p, '=', (size_t)(l->end - p)) != NULL;
    return p < l->end && strchr("=([.", *p) != NULL;
}

/* Lines from the first py_start line on while they are blank, indented or
 * py_more, without the blank ones at the end. */
static int take_heuristic(const char *answer, const char *stop, struct buf *out,
                          struct extract_result *res)
{
    const char *p = answer, *from = NULL, *to = NULL;
    size_t line = 0;
    int rc = 0;

    while (p < stop) {
        struct line l = line_at(p, stop);
        int blank = skip_blanks(l.at, l.end) == l.end;
        line++;
        p = l.next;
        if (!from) {
            if (!py_start(&l))
                continue;
            from = l.at, res->first_line = line;
        } else if (!blank && l.at[0] != ' ' && l.at[0] != '\t' && !py_more(&l)) {
            break;
        }
        if (!blank)
            to = l.next, res->last_line = line;
    }
    if (!from)
        return 0;
    res->found = EXTRACT_FOUND_HEURISTIC;
    for (p = from; rc == 0 && p < to;) {
        struct line l = line_at(p, to);
        rc = buf_append(out, l.at, (size_t)(l.end - l.at)) || buf_append(out, "\n", 1);
        p = l.next;
    }
    return rc;
}

int extract_code(enum extract_mode mode, const char *lang, const char *answer, size_t len,
                 struct buf *out, struct extract_result *res, struct llmsb_err *err)
{
    const struct language *job = lang ? language_find(lang) : NULL;
    const char *p = answer, *stop = answer + len;
    size_t line = 0;
    struct block b;
    int best = 3, rc = 0;

    memset(res, 0, sizeof(*res));
    res->mode = mode;
    res->raw_len = len;
    if (mode != EXTRACT_OFF) {
        while (block_next(&p, stop, &line, &b)) {
            int c = block_class(&b, job);
            res->fences++;
            best = c < best ? c : best;
        }
        if (res->fences)
            rc = take_fences(mode, job, answer, stop, best, out, res);
        else if (mode == EXTRACT_HEURISTIC && job && strcmp(job->name, "python") == 0)
            rc = take_heuristic(answer, stop, out, res);
    }
    if (rc == 0 && res->found == EXTRACT_FOUND_NONE)
        rc = buf_append(out, answer, len);
    if (rc != 0)
        return llmsb_err_set(err, LLMSB_ERR_LIMIT,
                             "the code taken out of an answer of %zu bytes is over %zu bytes", len,
                             out->cap);
    return 0;
}

static const char *const mode_names[] = {"off", "fenced", "first-fence", "last-fence", "heuristic"};

int extract_mode_parse(const char *name, enum extract_mode *mode)
{
    for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
        if (strcmp(name, mode_names[i]) == 0) {
            *mode = (enum extract_mode)i;
            return 0;
        }
    return -1;
}

const char *extract_mode_name(enum extract_mode mode)
{
    return (size_t)mode < sizeof(mode_names) / sizeof(mode_names[0]) ? mode_names[mode] : "?";
}

const char *extract_found_name(enum extract_found found)
{
    static const char *const names[] = {"none", "fence", "unclosed-fence", "heuristic"};
    return (size_t)found < sizeof(names) / sizeof(names[0]) ? names[found] : "?";
}
