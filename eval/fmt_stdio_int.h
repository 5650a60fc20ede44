/* fmt_stdio_int.h - what fmt_stdio.c (the stdin/stdout benchmarks'
 * converter) takes from fmt_stdio_runners.c: the Python runners that do around
 * a solution what APPS's and LiveCodeBench's checkers do. */
#ifndef LLMSB_EVAL_FMT_STDIO_INT_H
#define LLMSB_EVAL_FMT_STDIO_INT_H

/* What both do: the guard, stdin patched, stdout captured, main(). */
extern const char stdio_runner_common[];
/* hendrycks/apps eval/testing_util.py: standard input and call-based */
extern const char stdio_apps_runner[];
/* LiveCodeBench lcb_runner/evaluation/testing_util.py: stdin and functional */
extern const char stdio_lcb_runner[];

#endif
