/* confine.h - what the agent does to its own process at start, before it
 * reads a frame (internal to agent/; the reasons are in confine.c). */
#ifndef LLMSB_AGENT_CONFINE_H
#define LLMSB_AGENT_CONFINE_H

#include "common/common.h"

/* Installs the namespace filter.  Returns 0, or a negative code with err
 * set. */
int agent_confine(struct llmsb_err *err);

/* Sets no_new_privs and installs the namespace filter on the calling
 * process, which every process it starts inherits.  Returns 0 or -1
 * (errno set). */
int agent_confine_ns_filter(void);

#endif
