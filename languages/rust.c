/* rust.c - Rust, as MultiPL-E's eval_rust.py runs it: `rustc FILE -o
 * STEM` (no -O, no edition flag: 2015), then the program, the verdict its
 * exit code (a failed assert_eq! panics: exit 101).  Plain rustc has no
 * crates beyond std, so a job's libraries are refused.  What the scanner
 * calls spawning is std::process::Command and libc's exec family reached
 * through extern "C" (which needs unsafe: native). */
#include "languages_int.h"

/* clang-format off */
const struct language language_rust = {
    .name = "rust", .aliases = {"rs"}, .image = "llmsb/rust", .ext = "rs",
    .default_stem = "main",
    .compile = {"rustc", "{file}", "-o", "{stem}"},
    .run = {"./{stem}"},
    /* rustc brings gcc and libc6-dev (its linker) and libstd-rust-dev */
    .packages = "rustc",
    C_COMMENTS,
    /* `use std::process`, `use std::{fs, process}`, or the path written
     * out (`std::process::Command`): MOD is a module of std or core */
    .import_pattern = "\\b(?:use\\s+(?:::)?(?:std|core)\\s*::\\s*(?:\\{[^;]*?)?|(?:std|core)\\s*::\\s*)MOD\\b",
    .scan = {
        [LANG_SCAN_SHELL] =
            "\\bCommand\\s*>?\\s*::\\s*new\\b|\\bprocess\\s*::\\s*Command\\b|\\b(?:system|popen|execl|execlp|execle|execv|execvp|execve|execvpe|posix_spawnp?)\\s*\\(",
        [LANG_SCAN_EVAL] =
            "\\b(?:dlopen|dlsym)\\s*\\(|\\blibloading\\b"
            /* std or core under another name: its paths (s::process) are
             * then none the patterns know */
            "|\\b(?:extern\\s+crate|use)\\s+(?:::)?\\{?\\s*(?:std|core)\\s*(?:as\\b|::\\s*\\{[^;]*\\bself\\s+as\\b)",
        [LANG_SCAN_FS_DELETE] =
            "\\b(?:remove_file|remove_dir|remove_dir_all)\\s*\\(|\\b(?:unlink|rmdir)\\s*\\(",
        [LANG_SCAN_NETWORK] =
            "\\b(?:TcpStream|TcpListener|UdpSocket|ToSocketAddrs)\\b|\\b(?:socket|connect)\\s*\\(",
        [LANG_SCAN_ENV] =
            "\\benv\\s*::\\s*(?:var|var_os|vars|vars_os|set_var|remove_var)\\s*\\(|\\b(?:getenv|setenv|putenv|unsetenv)\\s*\\(|\\b(?:option_)?env!\\s*\\(",
        [LANG_SCAN_NATIVE] =
            "\\bunsafe\\b|\\bextern\\s*(?:\"[^\"]*\"\\s*)?(?:\\{|fn\\b)|\\b(?:global_)?asm!|#\\s*!?\\[\\s*link\\b|\\bsyscall\\s*\\(",
        [LANG_SCAN_PROCESS] =
            "\\bprocess\\s*::\\s*(?:exit|abort)\\s*\\(|\\b(?:fork|vfork|kill|setsid|daemon)\\s*\\(",
    },
    .strict_modules = {"process", "net", "os", "fs", "env", "ffi", "arch", "intrinsics"},
    .tools = "rustc gcc", .hello = "fn main() {\n    println!(\"hello\");\n}\n",
    .lexer = LEX_RUST,
};
/* clang-format on */
