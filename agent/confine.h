/* confine.h - what the agent does to its own process at start, before it
 * reads a frame (internal to agent/; the reasons are in confine.c). */
#ifndef LLMSB_AGENT_CONFINE_H
#define LLMSB_AGENT_CONFINE_H

#include <stddef.h>
#include <stdint.h>
#include "common/common.h"

/* The one entry of the container's environment the agent keeps, and the
 * guard's name. */
#define AGENT_CONFINE_KEEP "LLMSB_AGENT_UID="
#define AGENT_CONFINE_GUARD "LLMSB_AGENT_GUARD="

/* The steps below in turn: unless the environment is ready, runs the agent
 * again (execve of /proc/self/exe, the same argv) with only the kept entry
 * and a guard (returns only when that failed); then guards it and installs
 * the namespace filter.  Returns 0, or a negative code with err set. */
int agent_confine(char **argv, struct llmsb_err *err);

/* 1 when env (NULL-terminated) is what agent_confine runs the agent again
 * with: at most the kept entry, and a guard of at least two pages of
 * page_bytes; else 0. */
int agent_confine_env_ready(char *const *env, size_t page_bytes);
/* Makes the whole pages inside env's guard unreadable (PROT_NONE) and
 * points environ at a copy of env without the guard, so that nothing of
 * the agent's touches those pages again.  env must be ready (above).
 * Returns 0 or -1 (errno set). */
int agent_confine_env_guard(char **env, size_t page_bytes);
/* The whole pages inside [p, p + len), from *lo up to *hi (none when
 * *lo == *hi). */
void agent_confine_pages(const char *p, size_t len, size_t page_bytes, uintptr_t *lo,
                         uintptr_t *hi);
/* Sets no_new_privs and installs the namespace filter on the calling
 * process, which every process it starts inherits.  Returns 0 or -1
 * (errno set). */
int agent_confine_ns_filter(void);

#endif
