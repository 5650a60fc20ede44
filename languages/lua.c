/* lua.c - Lua 5.4, as MultiPL-E's eval_lua.py runs it: `lua FILE`, the
 * verdict the exit code (its tests call os.exit(lu.LuaUnit.run()), so the
 * image has luaunit: Debian's lua-unit).  A job's libraries are Debian
 * packages (lua-cjson, lua-lpeg) unpacked under /work/.llmsb-lib/lua,
 * where LUA_PATH and LUA_CPATH look first. */
#include "languages_int.h"

#define LUA_LIB "/work/.llmsb-lib/lua"

/* clang-format off */
const struct language language_lua = {
    .name = "lua", .aliases = {"lua5.4"}, .image = "llmsb/lua", .ext = "lua",
    .default_stem = "main",
    .run = {"lua", "{file}"},
    /* ";;" is Lua's default path, after the job's libraries */
    .env = {"LUA_PATH=" LUA_LIB "/usr/share/lua/5.4/?.lua;" LUA_LIB "/usr/share/lua/5.4/?/init.lua;;",
            "LUA_CPATH=" LUA_LIB "/usr/lib/x86_64-linux-gnu/lua/5.4/?.so;;"},
    .packages = "lua5.4 lua-unit",
    .install = {"/usr/local/lib/llmsb/apt-get-local", LUA_LIB},
    .install_what = "apt",
    .library_ok = language_lib_apt,
    .preinstall = {"apt-get", "install", "-y", "--no-install-recommends", "--"},
    .preinstall_before = "apt-get update",
    .hooks = {{"apt-get-local", "/usr/local/lib/llmsb/apt-get-local", 0755}},
    .line_comment = "--", .block_comment = {"--[[", "]]"},
    /* require "m", require("m"), require 'm.sub', require [[m]] */
    .import_pattern = "\\brequire\\s*\\(?\\s*(?:['\"]|\\[=*\\[)MOD(?:\\.[\\w.]*)?(?:['\"]|\\]=*\\])",
    .scan = {
        [LANG_SCAN_SHELL] =
            "\\bos\\s*\\.\\s*execute\\b|\\bio\\s*\\.\\s*popen\\b"
            /* os or io other than by a field's name (os["execute"], local o = os),
             * and the globals' table indexed (_G["o".."s"]) */
            "|(?<![\\w.:])(?:os|io)\\b(?!\\s*\\.\\s*\\w)|\\b(?:_G|_ENV)\\s*\\[|\\brawget\\s*\\(|\\bposix\\s*\\.\\s*(?:exec|execp|spawn)\\b",
        [LANG_SCAN_EVAL] =
            "(?<![.:\\w])(?:load|loadstring|loadfile|dofile)\\s*[(\"'\\[{]|\\bdebug\\s*\\.\\s*\\w+|\\b(?:setfenv|getfenv)\\s*\\(",
        [LANG_SCAN_FS_DELETE] =
            "\\bos\\s*\\.\\s*remove\\s*\\(|\\blfs\\s*\\.\\s*rmdir\\s*\\(|\\bposix\\s*\\.\\s*(?:unlink|rmdir)\\b",
        [LANG_SCAN_NETWORK] =
            "\\brequire\\s*\\(?\\s*['\"](?:socket|ssl|http|copas|cURL|lcurl)\\b|\\bsocket\\s*\\.\\s*(?:tcp|udp|connect|bind)\\w*\\s*\\(",
        [LANG_SCAN_ENV] =
            "\\bos\\s*\\.\\s*getenv\\b|\\bposix\\s*\\.\\s*(?:setenv|getenv)\\b",
        [LANG_SCAN_NATIVE] =
            "\\bpackage\\s*\\.\\s*(?:loadlib|cpath)\\b|\\brequire\\s*\\(?\\s*['\"]ffi['\"]|\\bffi\\s*\\.\\s*(?:cdef|load)\\b",
        [LANG_SCAN_PROCESS] =
            "\\bposix\\s*\\.\\s*(?:fork|kill|_exit|setpid|wait)\\b|\\brequire\\s*\\(?\\s*['\"]posix\\.signal['\"]",
    },
    .strict_modules = {"socket", "posix", "ffi", "lfs", "ssl", "http", "copas", "cURL", "lcurl"},
    .tools = "lua", .hello = "print(\"hello\")\n",
    .lexer = LEX_LUA,
};
/* clang-format on */
