/* security.h - the policy model and the scanner.
 *
 * A policy is a severity threshold, patterns (PCRE2, each with a severity
 * and a description) and restricted modules (turned into the job
 * language's import pattern).  A job is blocked when any violation's
 * severity reaches its policy's threshold.  Presets cover all seven
 * languages through danger categories (shell, dynamic code, file deletion,
 * network, environment, native code, process control, destructive
 * commands), each with patterns per language.
 *
 * The scanner first lexes the source per language: comments do not count
 * at all, and a match counts only if it starts in code — so a string
 * literal can neither hide code (`s = "#"; import os`) nor raise a false
 * alarm (`print("import os")`).  Interpolating literals (f-strings,
 * template literals, Ruby "..." and backticks) count as code. */
#ifndef LLMSB_SECURITY_H
#define LLMSB_SECURITY_H

#include <stddef.h>
#include "common/common.h"
#include "languages/languages.h"

enum sec_severity { SEC_SAFE = 0, SEC_LOW = 1, SEC_MEDIUM = 2, SEC_HIGH = 3 };

#define SEC_MAX_VIOLATIONS 64

struct sec_violation {
    char rule[160]; /* the description, or "import of <module>" */
    char policy[40];
    int severity;
    size_t line;   /* 1-based */
    size_t column; /* 1-based, in bytes */
};

struct sec_result {
    int blocked;
    struct sec_violation v[SEC_MAX_VIOLATIONS];
    size_t n;
};

struct sec_policy; /* compiled for one language */

/* Compiles a preset ("minimal", "development", "educational",
 * "data_science", "web_scraping", "production", "strict") for language l.
 * Compiled presets are cached (thread-safe); do not free them. */
const struct sec_policy *sec_preset(const char *name, const struct language *l,
                                    struct llmsb_err *err);
/* Compiles a JSON policy (see docs/security.md): {"extends": preset,
 * "threshold": "low|medium|high", "patterns": [{"pattern", "severity",
 * "description"}], "restricted_modules": [{"name", "severity"}]}.
 * Returns a new policy; free with sec_policy_free. */
struct sec_policy *sec_policy_from_json(const char *json, size_t len, const char *name,
                                        const struct language *l, struct llmsb_err *err);
void sec_policy_free(struct sec_policy *p);
/* 1 if name is a preset. */
int sec_preset_exists(const char *name);
const char *sec_preset_names(void);

/* Scans code with p, adding violations to res (res may already hold some,
 * from another policy); sets res->blocked when one reaches p's threshold.
 * Returns 0, or a negative code if scanning itself failed (then the job
 * must be treated as blocked). */
int sec_scan(const struct sec_policy *p, const struct language *l, const char *code, size_t n,
             struct sec_result *res, struct llmsb_err *err);
/* Checks library names against p's restricted modules. */
int sec_scan_libraries(const struct sec_policy *p, const char *const *libs, size_t n,
                       struct sec_result *res);

/* Marks each byte of src as code (0), string (1) or comment (2). */
void sec_lex(const struct language *l, const char *src, size_t n, unsigned char *kind);

/* The violations as a JSON array text; caller frees. */
char *sec_result_json(const struct sec_result *res);
const char *sec_severity_name(int s);
int sec_severity_parse(const char *s);

#endif
