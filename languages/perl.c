/* perl.c - Perl 5, as MultiPL-E's eval_pl.py runs it: `perl FILE`; it
 * fails a program that exits non-zero and one that prints ERROR on either
 * stream; a job's verdict here is its exit code (docs/languages/perl.md
 * says where that could differ).  Its tests use Test::Deep: Debian's libtest-deep-perl.  A job's libraries are
 * Debian packages of Perl modules (libjson-perl) unpacked under
 * /work/.llmsb-lib/perl, first on PERL5LIB. */
#include "languages_int.h"

#define PERL_LIB "/work/.llmsb-lib/perl"

/* clang-format off */
const struct language language_perl = {
    .name = "perl", .aliases = {"pl", "perl5"}, .image = "llmsb/perl", .ext = "pl",
    .default_stem = "main",
    .run = {"perl", "{file}"},
    .env = {"PERL5LIB=" PERL_LIB "/usr/share/perl5:" PERL_LIB "/usr/lib/x86_64-linux-gnu/perl5/5.36:"
            PERL_LIB "/usr/lib/x86_64-linux-gnu/perl5"},
    .packages = "perl libtest-deep-perl",
    .install = {"/usr/local/lib/llmsb/apt-get-local", PERL_LIB},
    .install_what = "apt",
    .library_ok = language_lib_apt,
    .preinstall = {"apt-get", "install", "-y", "--no-install-recommends", "--"},
    .preinstall_before = "apt-get update",
    .hooks = {{"apt-get-local", "/usr/local/lib/llmsb/apt-get-local", 0755}},
    .line_comment = "#", .block_comment = {"=pod", "=cut"},
    /* use M, use M::Sub, require M, no M */
    .import_pattern = "(?:^|[\\n;{])\\s*(?:use|require|no)\\s+MOD(?:::|[\\s;(]|$)",
    .scan = {
        [LANG_SCAN_SHELL] =
            "\\b(?:system|exec)\\b(?!\\s*=>)|`|\\bqx\\s*[^\\w\\s]|\\bopen[23]\\s*\\(|"
            "\\bopen\\s*\\(?[^;]*?['\"][^'\"\\n]*\\||\\bIPC::(?:Open[23]|Run\\w*|Cmd)\\b",
        [LANG_SCAN_EVAL] =
            "\\beval\\b(?!\\s*\\{)(?!\\s*=>)|\\bdo\\s*\\(?\\s*['\"$]|\\brequire\\s*\\(?\\s*\\$",
        [LANG_SCAN_FS_DELETE] =
            "\\b(?:unlink|rmdir|truncate)\\b(?!\\s*=>)|\\b(?:remove_tree|rmtree)\\s*\\(",
        [LANG_SCAN_NETWORK] =
            "\\bsocket\\s*\\(|\\bIO::Socket\\b|\\bSocket\\b|\\bLWP\\b|\\bHTTP::Tiny\\b|\\bNet::\\w+|\\b(?:connect|bind|listen|accept)\\s*\\(",
        [LANG_SCAN_ENV] =
            "[%$]ENV\\b",
        [LANG_SCAN_NATIVE] =
            "\\b(?:DynaLoader|XSLoader|FFI::\\w+)\\b|\\buse\\s+Inline\\b|\\bsyscall\\s*\\(",
        [LANG_SCAN_PROCESS] =
            "\\b(?:fork|kill|waitpid|setpgrp|setsid)\\b(?!\\s*=>)|\\bwait\\s*\\(|\\$SIG\\s*\\{|\\bPOSIX::_exit\\b",
    },
    .strict_modules = {"POSIX", "IO::Socket", "Socket", "IPC::Open2", "IPC::Open3", "IPC::Run",
                       "LWP", "HTTP::Tiny", "Net", "File::Path", "DynaLoader", "XSLoader", "FFI",
                       "Inline", "B"},
    .tools = "perl", .hello = "print \"hello\\n\";\n",
    .lexer = LEX_PERL,
};
/* clang-format on */
