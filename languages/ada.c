/* ada.c - Ada (GNAT), as MultiPL-E's eval_adb.py builds and runs it: the
 * file holds several compilation units (a package spec and body, then
 * procedure Main), so gnatchop splits it into FILE-stem_tmp/ and gnatmake
 * builds main.adb there with MultiPL-E's flags; the verdict is the exit
 * code of ./main (a failed pragma Assert raises, exit 1).  A program whose
 * main procedure has another name builds from the last body gnatchop
 * wrote. */
#include "languages_int.h"

/* $1: the source file.  gnatchop's list of the files it wrote goes to
 * gnatchop.out (its errors stay on stderr); gnatmake's flags are
 * eval_adb.py's. */
#define ADA_BUILD                                                                                  \
    "set -e; d=\"${1%.adb}_tmp\"; rm -rf \"$d\"; mkdir \"$d\"; "                                   \
    "gnatchop -w \"$1\" \"$d\" >\"$d/gnatchop.out\"; cd \"$d\"; "                                  \
    "m=$(sed -n 's/^ *\\([^ ]*\\.adb\\)$/\\1/p' gnatchop.out | tail -n 1); "                       \
    "m=${m##*/}; if [ -f main.adb ]; then m=main.adb; fi; "                                        \
    "if [ -z \"$m\" ]; then echo \"ada: $1 has no subprogram body to build a program from\" >&2; " \
    "exit 1; fi; "                                                                                 \
    "exec gnatmake -gnatW8 \"$m\" -o main -g -j0 -gnata -gnateE -bargs -Es"

/* clang-format off */
const struct language language_ada = {
    .name = "ada", .aliases = {"adb", "gnat"}, .image = "llmsb/ada", .ext = "adb",
    .default_stem = "main",
    .compile = {"sh", "-c", ADA_BUILD, "ada-build", "{file}"},
    .run = {"./{stem}_tmp/main"},
    .packages = "gnat",
    .line_comment = "--", .block_comment = {NULL, NULL},
    /* with A.B; / with A.B, C; / use ... */
    .import_pattern = "(?i)(?:^|[\\n;])\\s*(?:limited\\s+|private\\s+)*(?:with|use)\\s+(?:[\\w.]+\\s*,\\s*)*MOD\\s*[;,]",
    .scan = {
        [LANG_SCAN_SHELL] =
            "(?i)\\b(?:Non_Blocking_)?Spawn(?:_With_Filter)?\\s*\\(|\\bGNAT\\s*\\.\\s*(?:OS_Lib|Expect)\\b|\\bSystem\\s*\\.\\s*OS_Lib\\b|\\bpragma\\s+Import\\s*\\(\\s*C\\s*,\\s*\\w+\\s*,\\s*\"(?:system|popen|exec\\w*|posix_spawn\\w*)\"",
        [LANG_SCAN_FS_DELETE] =
            "(?i)\\b(?:Ada\\s*\\.\\s*Directories\\s*\\.\\s*)?Delete_(?:File|Directory|Tree)\\s*\\(|\\bText_IO\\s*\\.\\s*Delete\\b",
        [LANG_SCAN_NETWORK] =
            "(?i)\\bGNAT\\s*\\.\\s*Sockets\\b|\\b(?:Connect_Socket|Create_Socket|Bind_Socket)\\b|\\bAWS\\s*\\.\\s*Client\\b",
        [LANG_SCAN_ENV] =
            "(?i)\\bAda\\s*\\.\\s*Environment_Variables\\b|\\bGetenv\\s*\\(|\\bSetenv\\s*\\(",
        [LANG_SCAN_NATIVE] =
            "(?i)\\bpragma\\s+(?:Import|Interface|Linker_Options|Machine_Attribute)\\b|\\bImport\\s*=>\\s*True\\b|\\bInterfaces\\s*\\.\\s*C\\b|\\bSystem\\s*\\.\\s*Machine_Code\\b|\\bAsm\\s*\\(|\\bUnchecked_(?:Deallocation|Conversion)\\b|\\bAddress_To_Access_Conversions\\b",
        [LANG_SCAN_PROCESS] =
            "(?i)\\bGNAT\\s*\\.\\s*OS_Lib\\s*\\.\\s*(?:OS_Exit|Kill)\\b|\\bOS_Abort\\b|\\bAda\\s*\\.\\s*Interrupts\\b|\\bKill\\s*\\(",
    },
    .strict_modules = {"GNAT.OS_Lib", "System.OS_Lib", "GNAT.Expect", "GNAT.Sockets",
                       "Interfaces.C", "Ada.Environment_Variables", "Ada.Directories",
                       "System.Machine_Code", "Ada.Unchecked_Conversion", "Ada.Interrupts",
                       "GNAT.Directory_Operations"},
    /* and what the compile script runs */
    .tools = "gnatchop gnatmake sh sed tail",
    .hello = "with Ada.Text_IO;\nprocedure Main is\nbegin\n   Ada.Text_IO.Put_Line (\"hello\");\nend Main;\n",
    .lexer = LEX_ADA,
};
/* clang-format on */
