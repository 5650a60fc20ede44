/* haskell.c - Haskell, as MultiPL-E's eval_hs.py runs it: `runghc FILE`
 * (GHC's interpreter; no compile step, so a type error is the run's
 * failure), the verdict the exit code.  The scanner's spawning is
 * System.Process and System.Posix.Process; native code is the FFI
 * (foreign import) and the unsafe escapes. */
#include "languages_int.h"

/* clang-format off */
const struct language language_haskell = {
    .name = "haskell", .aliases = {"hs", "ghc", "runghc"}, .image = "llmsb/haskell", .ext = "hs",
    .default_stem = "main",
    .run = {"runghc", "{file}"},
    /* GHCi links the FFI stubs of a foreign import into a shared object
     * in GHC's temporary directory and loads it: that must be where code
     * may be mapped executable (/tmp is noexec) */
    .env = {"TMPDIR=/work"},
    /* GHC 9.0 with its base libraries (containers, text, mtl, ...);
     * runghc is part of it */
    .packages = "ghc",
    .line_comment = "--", .block_comment = {"{-", "-}"},
    /* import [safe] [qualified] ["package"] M [qualified] [as X] [(...)]:
     * a restricted module restricts its submodules too */
    /* import is a keyword: anywhere it stands (module M where { import
     * ...; }), with comments for white space (import{- -}M) */
    .import_pattern = "\\bimport(?:\\s|\\{-.*?-\\})+(?:safe(?:\\s|\\{-.*?-\\})+)?(?:qualified(?:\\s|\\{-.*?-\\})+)?(?:\"[^\"\\n]*\"(?:\\s|\\{-.*?-\\})+)?MOD(?![\\w'])",
    .scan = {
        [LANG_SCAN_SHELL] =
            "\\b(?:callCommand|callProcess|readProcess|readProcessWithExitCode|readCreateProcess|readCreateProcessWithExitCode|createProcess_?|spawnCommand|spawnProcess|runCommand|runProcess|runInteractiveCommand|runInteractiveProcess|rawSystem|executeFile)\\b|\\bsystem\\s*[(\"$]|\\b(?:shell|proc)\\s+\"",
        [LANG_SCAN_EVAL] =
            "\\b(?:runInterpreter|unsafeRunInterpreter|runGhc)\\b|\\bTemplateHaskell\\b|\\bQuasiQuotes\\b"
            /* the C preprocessor pastes names (callComm, a comment, and) and defines
             * them away from their imports; -F/-pgm* run a program of the
             * source's choosing at compile time */
            "|\\{-#\\s*LANGUAGE\\b[^#]*\\bCPP\\b|\\{-#\\s*OPTIONS(?:_GHC)?\\b[^#]*(?:-F\\b|-pgm|-X\\s*CPP|-XCPP|-optF|-cpp\\b)",
        [LANG_SCAN_FS_DELETE] =
            "\\b(?:removeFile|removeDirectory|removeDirectoryRecursive|removePathForcibly|removeDirectoryLink|removeLink)\\b",
        [LANG_SCAN_NETWORK] =
            "\\bNetwork\\.\\w+|\\b(?:getAddrInfo|connectTo|withSocketsDo|simpleHTTP|httpLBS|openURI)\\b",
        [LANG_SCAN_ENV] =
            "\\b(?:getEnv|lookupEnv|getEnvironment|setEnv|unsetEnv|putEnv|getEnvDefault)\\b",
        [LANG_SCAN_NATIVE] =
            "\\bforeign\\s+(?:import|export)\\b|\\bunsafe(?:PerformIO|DupablePerformIO|InterleaveIO|Coerce|IOToST|STToIO)\\b|\\bForeign\\.\\w+",
        [LANG_SCAN_PROCESS] =
            "\\b(?:forkProcess|signalProcess|signalProcessGroup|terminateProcess|interruptProcessGroupOf|exitImmediately|raiseSignal|createSession|installHandler)\\b",
    },
    .strict_modules = {"System.Process", "System.Cmd", "System.Posix", "Network", "Foreign",
                       "System.IO.Unsafe", "Unsafe.Coerce", "Language.Haskell.TH", "GHC.IO.Unsafe"},
    .tools = "runghc", .hello = "main :: IO ()\nmain = putStrLn \"hello\"\n",
    .lexer = LEX_HASKELL,
};
/* clang-format on */
