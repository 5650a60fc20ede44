/* lex_int.h - what the scanner's lexers share (security/lex*.c only).
 *
 * A lexer marks every byte of a source K_CODE, K_STR or K_COMMENT.  When
 * in doubt a byte is code: the scanner sees code, so a construct a lexer
 * does not know (an interpolating literal, a sigil it cannot end) raises
 * a false alarm rather than hiding a call. */
#ifndef LLMSB_SECURITY_LEX_INT_H
#define LLMSB_SECURITY_LEX_INT_H

#include <stddef.h>

enum { K_CODE = 0, K_STR = 1, K_COMMENT = 2 };

/* kind[from..to) = k. */
void sec_lex_mark(unsigned char *kind, size_t from, size_t to, unsigned char k);
/* A quoted literal from i (the opening quote is q, qlen bytes long);
 * with escapes a backslash escapes the next byte; with stop_at_newline
 * the literal ends at a newline.  Returns the index after the closing
 * quote (n when there is none). */
size_t sec_lex_quoted(const char *s, size_t n, size_t i, const char *q, size_t qlen, int escapes,
                      int stop_at_newline);
/* The index of the newline ending i's line (n on the last line). */
size_t sec_lex_to_eol(const char *s, size_t n, size_t i);
/* The index after the first end at or after i (n when there is none). */
size_t sec_lex_until(const char *s, size_t n, size_t i, const char *end);
/* From an open at i, the index after the close that balances it, opens
 * and closes nesting (Haskell's {- -}, OCaml's (* *)); n when unbalanced. */
size_t sec_lex_nested(const char *s, size_t n, size_t i, const char *open, const char *close);
int sec_lex_at_line_start(const char *s, size_t i);
/* c may be part of an identifier ([A-Za-z0-9_]). */
int sec_lex_ident(char c);
/* 1 when a \uXXXX escape (any number of u's) spells a character that
 * opens or closes a literal or a comment (a quote, a newline, / * \ {
 * } $ `): javac and scalac decode such escapes before they lex, so "//
 * \u000a code" is code there, and such a source is code, all of it. */
int sec_lex_unicode_structural(const char *s, size_t n);

/* The lexers of later languages, a file each (security/lex_NAME.c). */
void sec_lex_shell(const char *s, size_t n, unsigned char *kind);
void sec_lex_haskell(const char *s, size_t n, unsigned char *kind);
void sec_lex_ocaml(const char *s, size_t n, unsigned char *kind);
void sec_lex_rust(const char *s, size_t n, unsigned char *kind);
void sec_lex_d(const char *s, size_t n, unsigned char *kind);
void sec_lex_elixir(const char *s, size_t n, unsigned char *kind);
void sec_lex_ada(const char *s, size_t n, unsigned char *kind);
void sec_lex_lua(const char *s, size_t n, unsigned char *kind);
void sec_lex_perl(const char *s, size_t n, unsigned char *kind);
void sec_lex_php(const char *s, size_t n, unsigned char *kind);
void sec_lex_ts(const char *s, size_t n, unsigned char *kind);
void sec_lex_racket(const char *s, size_t n, unsigned char *kind);
void sec_lex_clojure(const char *s, size_t n, unsigned char *kind);
void sec_lex_scala(const char *s, size_t n, unsigned char *kind);
void sec_lex_csharp(const char *s, size_t n, unsigned char *kind);

#endif
