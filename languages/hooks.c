/* hooks.c - the files each language image carries besides the agent: plot
 * capture hooks, library install helpers and zygotes, kept as plain files
 * under languages/hooks/ (and the zygote library for R and Ruby, built from
 * agent/zygote_lib.c) and embedded in the binary here, so `images build`
 * needs nothing but the executable. */
#include "languages.h"

#include <string.h>

#define EMBED(sym, path)                                                                \
    __asm__(".section .rodata\n.balign 16\n.globl " #sym "\n" #sym ":\n.incbin \"" path \
            "\"\n.globl " #sym "_end\n" #sym "_end:\n.byte 0\n.previous\n");            \
    extern const char sym[], sym##_end[];

EMBED(llmsb_hook_plots_py, "languages/hooks/llmsb_plots.py")
EMBED(llmsb_hook_plots_pth, "languages/hooks/llmsb_plots.pth")
EMBED(llmsb_hook_zygote_py, "languages/hooks/llmsb_zygote.py")
EMBED(llmsb_hook_plots_r, "languages/hooks/plots.R")
EMBED(llmsb_hook_zygote_r, "languages/hooks/llmsb_zygote.R")
EMBED(llmsb_hook_session_r, "languages/hooks/llmsb_session.R")
EMBED(llmsb_hook_zygote_rb, "languages/hooks/llmsb_zygote.rb")
EMBED(llmsb_hook_session_rb, "languages/hooks/llmsb_session.rb")
EMBED(llmsb_hook_zygote_so, "bin/llmsb_zygote.so")
EMBED(llmsb_hook_go_get, "languages/hooks/go-get")
EMBED(llmsb_hook_go_build, "languages/hooks/go-build")
EMBED(llmsb_hook_go_prime, "languages/hooks/go-prime")
EMBED(llmsb_hook_javac_prime, "languages/hooks/javac-prime")
EMBED(llmsb_hook_javac_server, "languages/hooks/LlmsbJavac.java")
EMBED(llmsb_hook_apt_get, "languages/hooks/apt-get-local")
EMBED(llmsb_hook_cpp_build, "languages/hooks/cpp-build")
EMBED(llmsb_hook_cpp_pch, "languages/hooks/cpp-pch.list")
EMBED(llmsb_hook_gem_fetch, "languages/hooks/gem-fetch")
EMBED(llmsb_hook_gem_build, "languages/hooks/gem-build")
EMBED(llmsb_hook_node_wait, "languages/hooks/node-wait.js")
EMBED(llmsb_hook_node_snapshot, "languages/hooks/node-snapshot.js")
EMBED(llmsb_hook_tsc_fast, "languages/hooks/tsc-fast")
EMBED(llmsb_hook_tsc_fast_js, "languages/hooks/tsc-fast.js")

static const struct lang_hook_file files[] = {
    {"llmsb_plots.py", llmsb_hook_plots_py, llmsb_hook_plots_py_end},
    {"llmsb_plots.pth", llmsb_hook_plots_pth, llmsb_hook_plots_pth_end},
    {"llmsb_zygote.py", llmsb_hook_zygote_py, llmsb_hook_zygote_py_end},
    {"plots.R", llmsb_hook_plots_r, llmsb_hook_plots_r_end},
    {"llmsb_zygote.R", llmsb_hook_zygote_r, llmsb_hook_zygote_r_end},
    {"llmsb_session.R", llmsb_hook_session_r, llmsb_hook_session_r_end},
    {"llmsb_zygote.rb", llmsb_hook_zygote_rb, llmsb_hook_zygote_rb_end},
    {"llmsb_session.rb", llmsb_hook_session_rb, llmsb_hook_session_rb_end},
    {"llmsb_zygote.so", llmsb_hook_zygote_so, llmsb_hook_zygote_so_end},
    {"go-get", llmsb_hook_go_get, llmsb_hook_go_get_end},
    {"go-build", llmsb_hook_go_build, llmsb_hook_go_build_end},
    {"go-prime", llmsb_hook_go_prime, llmsb_hook_go_prime_end},
    {"javac-prime", llmsb_hook_javac_prime, llmsb_hook_javac_prime_end},
    {"LlmsbJavac.java", llmsb_hook_javac_server, llmsb_hook_javac_server_end},
    {"apt-get-local", llmsb_hook_apt_get, llmsb_hook_apt_get_end},
    {"cpp-build", llmsb_hook_cpp_build, llmsb_hook_cpp_build_end},
    {"cpp-pch.list", llmsb_hook_cpp_pch, llmsb_hook_cpp_pch_end},
    {"gem-fetch", llmsb_hook_gem_fetch, llmsb_hook_gem_fetch_end},
    {"gem-build", llmsb_hook_gem_build, llmsb_hook_gem_build_end},
    {"node-wait.js", llmsb_hook_node_wait, llmsb_hook_node_wait_end},
    {"node-snapshot.js", llmsb_hook_node_snapshot, llmsb_hook_node_snapshot_end},
    {"tsc-fast", llmsb_hook_tsc_fast, llmsb_hook_tsc_fast_end},
    {"tsc-fast.js", llmsb_hook_tsc_fast_js, llmsb_hook_tsc_fast_js_end},
};

const struct lang_hook_file *language_hook_file(const char *name)
{
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        if (strcmp(files[i].name, name) == 0)
            return &files[i];
    return NULL;
}
