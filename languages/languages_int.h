/* languages_int.h - what the rows of the language table share
 * (the files of languages/ only).  The seven first languages are rows of
 * languages.c; every later one is a file of its own, languages/NAME.c,
 * defining language_NAME, and a line of the table in languages.c. */
#ifndef LLMSB_LANGUAGES_INT_H
#define LLMSB_LANGUAGES_INT_H

#include "languages.h"

#define C_COMMENTS .line_comment = "//", .block_comment = {"/*", "*/"}

/* A Debian package name ([a-z0-9][a-z0-9+.-]+, Debian policy 5.6.1)
 * [=version]: the library names of every language whose libraries are
 * Debian packages, unpacked by the apt-get-local hook. */
int language_lib_apt(const char *s);

extern const struct language language_bash;
extern const struct language language_haskell;
extern const struct language language_ocaml;
extern const struct language language_rust;
extern const struct language language_d;
extern const struct language language_elixir;
extern const struct language language_ada;
extern const struct language language_lua;
extern const struct language language_perl;
extern const struct language language_typescript;
extern const struct language language_php;
extern const struct language language_racket;
extern const struct language language_clojure;
extern const struct language language_scala;
extern const struct language language_csharp;

#endif
