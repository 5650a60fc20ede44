/* csharp.c - C# on Debian's mono, as MultiPL-E's eval_cs.py runs it:
 * `csc /d:DEBUG -r:System.Numerics.dll FILE /out:BASE.exe` (mcs here:
 * Debian has no csc), then `mono BASE.exe` with MONO_TRACE_LISTENER=
 * Console.Error.  mono exits 0 after a failed Debug.Assert, so MultiPL-E
 * reads the verdict from stderr: a run whose stderr names
 * DefaultTraceListener.Fail or an unhandled exception fails.  The run
 * step does the same and turns that into exit code 1. */
#include "languages_int.h"

/* mono's stderr is copied (tee) to a file and searched after the run;
 * any other exit code is the program's own. */
#define CS_RUN                                                                    \
    "mono \"$1\" 2> >(tee /tmp/.llmsb-cs-stderr >&2); rc=$?; wait $!; "           \
    "if [ $rc = 0 ] && grep -qF -e System.Diagnostics.DefaultTraceListener.Fail " \
    "-e 'Unhandled Exception' /tmp/.llmsb-cs-stderr; then rc=1; fi; "             \
    "rm -f /tmp/.llmsb-cs-stderr; exit $rc"

/* clang-format off */
const struct language language_csharp = {
    .name = "csharp", .aliases = {"cs", "c#", "mono"}, .image = "llmsb/csharp", .ext = "cs",
    .default_stem = "main",
    .compile = {"mcs", "-d:DEBUG", "-r:System.Numerics.dll", "{file}", "-out:{stem}.exe"},
    .run = {"bash", "-c", CS_RUN, "cs-run", "{stem}.exe"},
    .env = {"MONO_TRACE_LISTENER=Console.Error"},
    /* mcs and the runtime with its class libraries (System.Numerics) */
    .packages = "mono-mcs mono-runtime libmono-system-numerics4.0-cil",
    C_COMMENTS,
    .import_pattern = "(?:^|[\\n;{])\\s*using\\s+(?:static\\s+)?(?:\\w+\\s*=\\s*)?(?:global::)?MOD\\s*[;.]",
    .scan = {
        [LANG_SCAN_SHELL] =
            "\\bProcess\\s*\\.\\s*Start\\b|\\bnew\\s+(?:System\\s*\\.\\s*Diagnostics\\s*\\.\\s*)?Process\\s*[({]|\\bProcessStartInfo\\b"
            /* Process under another name: using P = System.Diagnostics.Process */
            "|\\busing\\s+\\w+\\s*=\\s*(?:global\\s*::\\s*)?(?:System\\s*\\.\\s*)?Diagnostics\\s*\\.\\s*Process\\b",
        [LANG_SCAN_EVAL] =
            "\\bAssembly\\s*\\.\\s*(?:Load|LoadFrom|LoadFile|LoadWithPartialName)\\s*\\(|\\bActivator\\s*\\.\\s*CreateInstance\\b|\\bType\\s*\\.\\s*GetType\\s*\\(|\\.(?:GetMethod|InvokeMember)\\s*\\(|\\b(?:CSharpCodeProvider|CodeDomProvider|DynamicMethod|ILGenerator)\\b|\\bReflection\\s*\\.\\s*Emit\\b|\\bMono\\s*\\.\\s*CSharp\\b"
            /* a name spelt with escapes (\\u0050rocess) is none the
             * patterns know; in code, not in a literal */
            "|\\\\[uU][0-9a-fA-F]{4}",
        [LANG_SCAN_FS_DELETE] =
            "\\b(?:File|Directory)\\s*\\.\\s*Delete\\s*\\(|\\.Delete\\s*\\(",
        [LANG_SCAN_NETWORK] =
            "\\bSystem\\s*\\.\\s*Net\\b|\\b(?:TcpClient|TcpListener|UdpClient|Socket|WebClient|HttpClient|WebRequest|HttpWebRequest|Dns)\\b",
        [LANG_SCAN_ENV] =
            "\\bEnvironment\\s*\\.\\s*(?:GetEnvironmentVariables?|SetEnvironmentVariable|ExpandEnvironmentVariables)\\s*\\(",
        [LANG_SCAN_NATIVE] =
            "\\bDllImport\\b|\\bextern\\s+(?!alias\\b)\\w|\\bunsafe\\b|\\bMarshal\\s*\\.\\s*\\w+|\\bstackalloc\\b|\\bMono\\s*\\.\\s*Unix\\b",
        [LANG_SCAN_PROCESS] =
            "\\bEnvironment\\s*\\.\\s*(?:Exit|FailFast)\\s*\\(|\\bProcess\\s*\\.\\s*(?:GetProcess\\w*|GetCurrentProcess)\\s*\\(|\\.Kill\\s*\\(|\\bAppDomain\\s*\\.\\s*CreateDomain\\b",
    },
    .strict_modules = {"System.Net", "System.Reflection", "System.Runtime.InteropServices",
                       "System.IO", "System.CodeDom", "Microsoft.CSharp", "Mono.CSharp",
                       "Mono.Unix", "Mono.Posix"},
    .tools = "mcs mono bash",
    .hello = "class Hello { static void Main() { System.Console.WriteLine(\"hello\"); } }\n",
    .lexer = LEX_CSHARP,
};
/* clang-format on */
