/* fmt_evalplus_int.h - what fmt_evalplus.c (EvalPlus's converter) takes
 * from fmt_evalplus_runner.c: the Python runner of its jobs. */
#ifndef LLMSB_EVAL_FMT_EVALPLUS_INT_H
#define LLMSB_EVAL_FMT_EVALPLUS_INT_H

/* args: truth DATASET ENTRY_POINT TASK_ID, or check DATASET ENTRY_POINT
 * TASK_ID ATOL PHASE (see the file's head) */
extern const char evalplus_runner[];

#endif
