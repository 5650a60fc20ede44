/* languages.h - one table row per language: how its source file is named,
 * compiled and run, and the patterns the security scanner will use.
 * Command templates are argv arrays; "{file}" is replaced by the source file
 * name, "{stem}" by that name without its extension and "{class}" by the
 * class that declares main (Java). */
#ifndef LLMSB_LANGUAGES_H
#define LLMSB_LANGUAGES_H

#include <stddef.h>
#include "common/common.h"

#define LANG_MAX_ARGV 24
#define LANG_MAX 40 /* rows of the table at most (config and metrics size by it) */
#define LANG_MAX_ALIASES 8
/* Whole elements of a compile template that stand for the job's
 * compile_flags and link_flags (none when the job has none). */
#define LANG_COMPILE_FLAGS "{compile_flags}"
#define LANG_LINK_FLAGS "{link_flags}"
#define LANG_MAX_FLAGS 32
#define LANG_MAX_FLAG_LEN 64 /* job/parse.c's message says 64 */
#define LANG_MAX_ENV 12
#define LANG_MAX_HOOKS 6

/* Where a job's plot hooks write (the agent makes it; /tmp is wiped after
 * every job, so plots of one job never reach the next).  The variable that
 * wakes the hooks carries no LLMSB in its name: nothing of the worker's own
 * shows in a job's environment (the hardening audit checks that). */
#define LANG_PLOTS_DIR "/tmp/.llmsb-plots"
#define LANG_PLOTS_ENV "SANDBOX_PLOTS_DIR=" LANG_PLOTS_DIR

/* How a job's code is saved and started: its file name (a file name holds
 * 255 bytes), and for Java the class whose main runs (package-qualified;
 * "" for other languages).  A Java package is at most LANG_JAVA_PACKAGE - 1
 * bytes: javac -d makes it a path of directories, and a path holds 4095. */
#define LANG_FILE_NAME 256
#define LANG_JAVA_PACKAGE 4096
struct lang_source {
    char file[LANG_FILE_NAME];
    char main_class[LANG_JAVA_PACKAGE + LANG_FILE_NAME];
};

/* A file of languages/hooks/ embedded in the binary (hooks.c). */
struct lang_hook_file {
    const char *name;
    const char *data, *end;
};
const struct lang_hook_file *language_hook_file(const char *name);

/* A hook file and where the image keeps it. */
struct lang_hook {
    const char *file; /* name under languages/hooks/ */
    const char *dest; /* absolute path in the image */
    int mode;
};

/* The security scanner's danger categories (security/policy.c sets their
 * severity per preset); each language row has its own pattern for each. */
enum lang_scan {
    LANG_SCAN_SHELL,
    LANG_SCAN_EVAL,
    LANG_SCAN_FS_DELETE,
    LANG_SCAN_NETWORK,
    LANG_SCAN_ENV,
    LANG_SCAN_NATIVE,
    LANG_SCAN_PROCESS,
    LANG_SCAN_COUNT
};
#define LANG_MAX_STRICT_MODULES 16

/* How the scanner tells code from comments and string literals. */
enum lang_lexer {
    LEX_PYTHON,
    LEX_C,
    LEX_JAVA, /* LEX_C, and \u escapes decoded first (security/lex.c) */
    LEX_JS,
    LEX_GO,
    LEX_RUBY,
    LEX_R,
    LEX_SHELL, /* security/lex_shell.c */
    LEX_HASKELL, /* security/lex_haskell.c */
    LEX_OCAML, /* security/lex_ocaml.c */
    LEX_RUST,  /* security/lex_rust.c */
    LEX_D,     /* security/lex_d.c */
    LEX_ELIXIR, /* security/lex_elixir.c */
    LEX_ADA,    /* security/lex_ada.c */
    LEX_LUA,   /* security/lex_lua.c */
    LEX_PERL,  /* security/lex_perl.c */
    LEX_PHP,   /* security/lex_php.c */
    LEX_TS,    /* security/lex_ts.c */
    LEX_RACKET, /* security/lex_lisp.c */
    LEX_CLOJURE, /* security/lex_lisp.c */
    LEX_SCALA, /* security/lex_scala.c */
    LEX_CSHARP, /* security/lex_csharp.c */
};

struct language {
    const char *name;         /* "python" */
    const char *aliases[LANG_MAX_ALIASES]; /* other names accepted on input */
    const char *image;        /* default image, "llmsb/python" */
    const char *ext;          /* "py" */
    const char *default_stem; /* "main" ("Main" for Java) */
    /* NULL: the file is default_stem.ext; else it names the file from the
     * code (language_source's contract) */
    int (*source)(const char *code, size_t len, struct lang_source *src, struct llmsb_err *err);
    const char *compile[LANG_MAX_ARGV]; /* empty: no compile step */
    /* NULL when the language takes no compile_flags/link_flags; else
     * whether flag is allowed (link: a link flag), with the reason when
     * not. */
    int (*flag_ok)(const char *flag, int link, const char **why);
    const char *run[LANG_MAX_ARGV];
    const char *env[LANG_MAX_ENV];     /* extra "K=V" for every step */
    const char *packages;              /* Debian packages of its image */
    const char *line_comment;          /* for the scanner: "#", "//" */
    const char *block_comment[2];      /* start, end or NULL */
    const char *import_pattern;        /* PCRE2; "MOD" stands for a module name */
    const char *scan[LANG_SCAN_COUNT]; /* PCRE2 per danger category; NULL: none */
    /* the strict preset's restricted modules (NULL-terminated) */
    const char *strict_modules[LANG_MAX_STRICT_MODULES];
    int plots; /* supports plot capture */
    /* the image's zygote script (agent/zygote.c), NULL: none; a job whose
     * code or files name one of zygote_data (space-separated) gets the
     * zygote that preloads them ("data"), one that names zygote_numpy and
     * no other of them the smaller one that preloads only it ("numpy": a
     * smaller zygote forks and exits faster), any other the "base" one */
    const char *zygote;
    const char *zygote_data;
    const char *zygote_numpy;
    /* "NAME=words": the run step's process may be started ahead of the job
     * with words added to variable NAME (a hook of the image that waits
     * for the agent's go: agent/prespawn.c); NULL: never */
    const char *prespawn;
    /* the image's warm compiler for the compile step (agent/javac.c),
     * NULL: none; a job with libraries or compile flags compiles plainly */
    const char *compile_server;
    /* Library installs: the installer's argv; the names follow, one
     * argument each (never a shell string). Empty: not supported.  It
     * runs with the install network and must run no package code; where
     * package code must run at install time (a gem's extension build, an R
     * source package's configure), install only fetches and install_build
     * (names appended too) builds, after the network is taken away. */
    const char *install[LANG_MAX_ARGV];
    const char *install_build[LANG_MAX_ARGV];
    /* 1 when s names a package of the language's registry (a name, maybe
     * a version): never a path, URL, file: or git spec. */
    int (*library_ok)(const char *s);
    const char *install_what; /* "pip", "npm", ... for messages */
    /* Where its installer finds packages: the config key libraries.<key>
     * sets it, the installer reads it from registry_env; for an http://
     * registry, registry_trust_env gets its host (pip refuses plain http
     * otherwise). NULL: no registry setting. */
    const char *registry_key;
    const char *registry_env;
    const char *registry_trust_env;
    /* pool.preinstall: the same, system-wide, as root at image build time
     * (RUN in exec form, names appended). Empty: no preinstall. */
    const char *preinstall[LANG_MAX_ARGV];
    const char *preinstall_before; /* a RUN line before it (apt-get update) */
    struct lang_hook hooks[LANG_MAX_HOOKS];
    const char *image_setup; /* extra RUN line of its image, or NULL */
    /* What a custom image (images build --dockerfile) must bring: the
     * commands its steps need on PATH (space-separated), and a program
     * that prints a line "hello", which the build runs through the agent */
    const char *tools;
    const char *hello;
    enum lang_lexer lexer;
};

extern const struct language *const languages[];
extern const size_t languages_count;
/* l's place in the table (config and metrics keep per-language values by it). */
size_t language_index(const struct language *l);

/* A library name as installers get it: starts with a letter, digit or
 * '@' (npm scopes; never an option), then letters, digits and -_.:/@=<>~+[],!*^|,
 * 1..200 bytes. Returns 1 when it is one. */
int language_library_name_ok(const char *s);
/* The same, and a package name of l's registry (l->library_ok). */
int language_library_ok(const struct language *l, const char *s);

/* The language whose registry_key is key, or NULL. */
const struct language *language_by_registry_key(const char *key);
/* Finds a language by name or alias (case-insensitive); NULL if unknown. */
const struct language *language_find(const char *name);
/* Guesses the language from a file name's extension; NULL if unknown. */
const struct language *language_from_path(const char *path);
/* Writes the comma-separated list of names, for error messages. */
void language_names(char *out, size_t outsz);

/* Names code's source file ("main.py", "Problem.java") and the class to
 * run. Returns 0; LLMSB_ERR_NOTFOUND when the code declares nothing the
 * language can start (Java: no top-level class with main; err says why,
 * src->file is set); LLMSB_ERR_LIMIT when a name is too long. */
int language_source(const struct language *l, const char *code, size_t len, struct lang_source *src,
                    struct llmsb_err *err);

/* A job's extra compiler flags: what LANG_COMPILE_FLAGS and LANG_LINK_FLAGS
 * expand to. */
struct lang_flags {
    char **compile, **link;
    size_t ncompile, nlink;
};

/* Expands a command template into a new argv (NULL-terminated, strings
 * owned by the list) for the source src; src may be NULL (no file), flags
 * too (no flags). Returns the count or a negative code. */
int language_argv(const char *const *tmpl, const struct lang_source *src,
                  const struct lang_flags *flags, char ***argv, size_t *n);

/* java.c: what a Java source declares at its top level, comments and
 * literals skipped.  main_type is the type that declares the launcher's
 * `public static void main(String[])` (static void with one String[],
 * String... or String x[] parameter; public, or in an interface): the
 * public type when it does, else the first in source order.  odd_main is
 * the first type with some other `void main(...)`.  Type names point into
 * the scanned code, of any length (len 0: none).  package is the package
 * as javac reads it (without spaces) and package_len its length: "" when
 * there is none or it is LANG_JAVA_PACKAGE bytes or more. */
struct lang_java_name {
    const char *s;
    size_t len;
};
struct lang_java_types {
    char package[LANG_JAVA_PACKAGE];
    size_t package_len;
    struct lang_java_name public_type, main_type, odd_main;
};
void language_java_scan(const char *code, size_t len, struct lang_java_types *out);
/* The java row's source: the public type names the file (javac's rule),
 * else the main type, else "Main"; main_class is the main type.  A name
 * too long for a file name or a package too long for a path is
 * LLMSB_ERR_LIMIT naming it, its length and the limit. */
int language_java_source(const char *code, size_t len, struct lang_source *src,
                         struct llmsb_err *err);

#endif
