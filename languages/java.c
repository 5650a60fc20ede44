/* java.c - what a Java source declares at its top level: the public type,
 * which names the file (javac wants a public top-level type in a file of
 * its own name), and the type whose main the launcher runs.  Benchmarks
 * write `class Problem { public static void main... }` without `public`,
 * so the program is started by the class that declares main, not by the
 * file's name.  A small lexer: comments and literals are skipped, and only
 * words, braces and parentheses at the top two levels matter. */
#include "languages.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

enum tok_kind { TK_END, TK_WORD, TK_PUNCT, TK_LITERAL };

struct tok {
    enum tok_kind kind;
    const char *s;
    size_t len;
};

struct lexer {
    const char *s;
    size_t len, i;
};

/* Identifiers and numbers; bytes past ASCII are letters (UTF-8 names). */
static int word_byte(unsigned char c)
{
    return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

/* Skips a comment or a string, char or text-block literal starting at i;
 * returns the index after it, or i when there is none. */
static size_t skip_comment_or_literal(const char *s, size_t len, size_t i)
{
    if (i + 1 < len && s[i] == '/' && s[i + 1] == '/') {
        while (i < len && s[i] != '\n')
            i++;
        return i;
    }
    if (i + 1 < len && s[i] == '/' && s[i + 1] == '*') {
        for (i += 2; i + 1 < len && !(s[i] == '*' && s[i + 1] == '/'); i++)
            ;
        return i + 2 <= len ? i + 2 : len;
    }
    if (s[i] == '"' || s[i] == '\'') {
        char q = s[i];
        int text_block = q == '"' && i + 2 < len && s[i + 1] == '"' && s[i + 2] == '"';
        if (text_block) {
            for (i += 3; i + 2 < len && !(s[i] == '"' && s[i + 1] == '"' && s[i + 2] == '"'); i++)
                if (s[i] == '\\')
                    i++;
            return i + 3 <= len ? i + 3 : len;
        }
        for (i++; i < len && s[i] != q && s[i] != '\n'; i++)
            if (s[i] == '\\')
                i++;
        return i + 1 <= len ? i + 1 : len;
    }
    return i;
}

static struct tok lex_next(struct lexer *lx)
{
    struct tok t = {TK_END, lx->s + lx->len, 0};
    size_t j;

    for (;;) {
        while (lx->i < lx->len && isspace((unsigned char)lx->s[lx->i]))
            lx->i++;
        if (lx->i >= lx->len)
            return t;
        j = skip_comment_or_literal(lx->s, lx->len, lx->i);
        if (j == lx->i)
            break;
        if (lx->s[lx->i] == '"' || lx->s[lx->i] == '\'') {
            t.kind = TK_LITERAL, t.s = lx->s + lx->i, t.len = j - lx->i;
            lx->i = j;
            return t;
        }
        lx->i = j;
    }
    t.s = lx->s + lx->i;
    if (word_byte((unsigned char)lx->s[lx->i])) {
        for (j = lx->i; j < lx->len && word_byte((unsigned char)lx->s[j]); j++)
            ;
        t.kind = TK_WORD;
    } else {
        j = lx->i + (lx->i + 2 < lx->len && memcmp(lx->s + lx->i, "...", 3) == 0 ? 3 : 1);
        t.kind = TK_PUNCT;
    }
    t.len = j - lx->i;
    lx->i = j;
    return t;
}

static int tok_is(struct tok t, const char *text)
{
    return t.kind != TK_END && t.kind != TK_LITERAL && t.len == strlen(text) &&
           memcmp(t.s, text, t.len) == 0;
}

/* After an opening parenthesis: moves past its closing one.  Returns the
 * index where the closing one starts (len when there is none). */
static size_t skip_parens(struct lexer *lx)
{
    int open = 1;
    struct tok t;

    while ((t = lex_next(lx)).kind != TK_END) {
        if (tok_is(t, "("))
            open++;
        else if (tok_is(t, ")") && --open == 0)
            return (size_t)(t.s - lx->s);
    }
    return lx->len;
}

/* The parameter list of a main method, from after "(" to before ")": one
 * parameter of type String[] (String... or String name[] alike; final and
 * annotations before it; java.lang. spelled out or not). */
static int main_params(struct lexer *lx)
{
    struct tok t = lex_next(lx);
    int array = 0;

    for (;;) {
        if (tok_is(t, "final")) {
            t = lex_next(lx);
        } else if (tok_is(t, "@")) {
            do
                t = lex_next(lx); /* the annotation's name, qualified or not */
            while (t.kind == TK_WORD && tok_is(t = lex_next(lx), "."));
            if (tok_is(t, "(")) {
                skip_parens(lx);
                t = lex_next(lx);
            }
        } else {
            break;
        }
    }
    if (tok_is(t, "java") && tok_is(lex_next(lx), ".") && tok_is(lex_next(lx), "lang") &&
        tok_is(lex_next(lx), "."))
        t = lex_next(lx);
    if (!tok_is(t, "String"))
        return 0;
    t = lex_next(lx);
    if (tok_is(t, "...") || (tok_is(t, "[") && tok_is(lex_next(lx), "]"))) {
        array = 1;
        t = lex_next(lx);
    }
    if (t.kind != TK_WORD)
        return 0;
    t = lex_next(lx);
    if (!array && tok_is(t, "[") && tok_is(lex_next(lx), "]")) {
        array = 1;
        t = lex_next(lx);
    }
    return array && t.kind == TK_END;
}

static int name_is(struct lang_java_name a, struct lang_java_name b)
{
    return a.len == b.len && memcmp(a.s, b.s, a.len) == 0;
}

/* What the scan knows at the point it has reached. */
struct scan_state {
    struct lang_java_name type; /* the top-level type it is in (len 0: none) */
    int type_public, type_interface;
    int want_name; /* after class/interface/enum/record */
    int pub, stat; /* modifiers since the last ; { or } at this level */
};

/* "package a.b;": the name as javac reads it, without spaces; its length
 * counted whole even when it does not fit. */
static void package_name(struct lexer *lx, struct lang_java_types *out)
{
    size_t n = 0;
    struct tok t;

    while ((t = lex_next(lx)).kind == TK_WORD || tok_is(t, ".")) {
        if (n + t.len < sizeof(out->package))
            memcpy(out->package + n, t.s, t.len);
        n += t.len;
    }
    out->package_len = n;
    out->package[n < sizeof(out->package) ? n : 0] = '\0';
}

/* At the top level: the package, modifiers and type declarations. */
static void top_level_word(struct scan_state *st, struct tok prev, struct tok t, struct lexer *lx,
                           struct lang_java_types *out)
{
    static const char *kinds[] = {"class", "interface", "enum", "record"};

    if (st->want_name) {
        st->want_name = 0;
        st->type.s = t.s, st->type.len = t.len;
        if (st->type_public && !out->public_type.len)
            out->public_type = st->type;
        return;
    }
    if (tok_is(prev, ".") || tok_is(prev, "import"))
        return;
    if (tok_is(t, "public"))
        st->pub = 1;
    else if (tok_is(t, "package"))
        package_name(lx, out);
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
        if (tok_is(t, kinds[k])) {
            st->want_name = 1;
            st->type_public = st->pub;
            st->type_interface = k == 1;
        }
}

/* In a top-level type's body: modifiers, and a method main declared there
 * (the words "void main" then a parameter list). */
static void member_word(struct scan_state *st, struct tok prev, struct tok t, struct lexer *lx,
                        struct lang_java_types *out)
{
    struct lexer params;
    size_t start, close;

    if (tok_is(t, "public"))
        st->pub = 1;
    else if (tok_is(t, "static"))
        st->stat = 1;
    if (!tok_is(t, "main") || !tok_is(prev, "void"))
        return;
    params = *lx;
    if (!tok_is(lex_next(&params), "("))
        return;
    start = params.i;
    close = skip_parens(&params);
    lx->i = params.i; /* the scan goes on after ")" */
    params.i = start;
    params.len = close;
    /* every member of an interface is public */
    if (main_params(&params) && st->stat && (st->pub || st->type_interface)) {
        if (!out->main_type.len || (st->type_public && name_is(out->public_type, st->type)))
            out->main_type = st->type;
    } else if (!out->odd_main.len) {
        out->odd_main = st->type;
    }
}

void language_java_scan(const char *code, size_t len, struct lang_java_types *out)
{
    struct lexer lx = {code, len, 0};
    struct scan_state st = {0};
    struct tok t, prev = {TK_END, code, 0};
    int depth = 0, parens = 0;

    memset(out, 0, sizeof(*out));
    while ((t = lex_next(&lx)).kind != TK_END) {
        if (tok_is(t, "("))
            parens++;
        else if (tok_is(t, ")") && parens > 0)
            parens--;
        else if (tok_is(t, "{"))
            depth++;
        else if (tok_is(t, "}") && depth > 0)
            depth--;
        if (parens == 0 && (tok_is(t, "{") || tok_is(t, "}") || tok_is(t, ";"))) {
            st.pub = st.stat = st.want_name = 0;
            if (depth == 0 && tok_is(t, "}"))
                st.type.len = 0;
        } else if (parens == 0 && depth == 0 && (t.kind == TK_WORD || st.want_name)) {
            if (t.kind == TK_WORD)
                top_level_word(&st, prev, t, &lx, out);
            else
                st.want_name = 0; /* not a declaration after all */
        } else if (parens == 0 && depth == 1 && t.kind == TK_WORD && st.type.len) {
            member_word(&st, prev, t, &lx, out);
        }
        prev = t;
    }
}

int language_java_source(const char *code, size_t len, struct lang_source *src,
                         struct llmsb_err *err)
{
    struct lang_java_types t;
    struct lang_java_name stem = {"Main", 4};
    int n;

    language_java_scan(code, len, &t);
    if (t.public_type.len)
        stem = t.public_type;
    else if (t.main_type.len)
        stem = t.main_type;
    if (stem.len > sizeof(src->file) - sizeof(".java"))
        return llmsb_err_set(
            err, LLMSB_ERR_LIMIT,
            "code: the class %.40s... is %zu bytes; the source file is named after "
            "it (with .java) and a file name holds at most %zu",
            stem.s, stem.len, sizeof(src->file) - 1);
    snprintf(src->file, sizeof(src->file), "%.*s.java", (int)stem.len, stem.s);
    if (t.package_len >= sizeof(t.package))
        return llmsb_err_set(err, LLMSB_ERR_LIMIT,
                             "code: the package is %zu bytes; javac makes it a path of "
                             "directories, which holds at most %zu",
                             t.package_len, sizeof(t.package) - 1);
    if (!t.main_type.len)
        return llmsb_err_set(err, LLMSB_ERR_NOTFOUND,
                             "java: no top-level class declares `public static void main(String[] "
                             "args)`, so there is nothing to run%s%.*s%s",
                             t.odd_main.len ? " (the main of " : "",
                             t.odd_main.len > 200 ? 200 : (int)t.odd_main.len,
                             t.odd_main.len ? t.odd_main.s : "",
                             t.odd_main.len ? " is not public static void with one String[])" : "");
    if (t.main_type.len > sizeof(src->file) - sizeof(".class"))
        return llmsb_err_set(
            err, LLMSB_ERR_LIMIT,
            "code: the class %.40s... that declares main is %zu bytes; javac names "
            "its class file after it (with .class) and a file name holds at most %zu",
            t.main_type.s, t.main_type.len, sizeof(src->file) - 1);
    n = snprintf(src->main_class, sizeof(src->main_class), "%s%s%.*s", t.package,
                 t.package[0] ? "." : "", (int)t.main_type.len, t.main_type.s);
    if (n < 0 || (size_t)n >= sizeof(src->main_class))
        return llmsb_err_set(err, LLMSB_ERR_LIMIT, "code: cannot name the main class");
    return 0;
}
