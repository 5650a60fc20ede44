/* snapshot.h - the state a job's test cases start from (internal to
 * agent/; the rules are in snapshot.c). */
#ifndef LLMSB_AGENT_SNAPSHOT_H
#define LLMSB_AGENT_SNAPSHOT_H

#include <stddef.h>
#include "user.h"

struct agent_snapshot {
    struct buf data;                      /* the entries as the child wrote them */
    struct agent_snapshot_entry **index;  /* by root and path */
    struct agent_snapshot_entry *entries; /* in walk order: a dir before its contents */
    size_t n;
};
/* Reads what the wipe dirs hold now (the work dir, /tmp, /var/tmp,
 * /dev/shm) into s: the contents of their files up to AGENT_SNAPSHOT_MAX
 * bytes in all, the work dir's first; later files, and the job's installed
 * libraries (one entry, of any size and depth), are kept where they are,
 * made read-only, their stat noted.  Returns 0, 1 when the rest holds too
 * many entries, or too deep, to keep (msg says so), -1 when it failed (msg
 * says why).  s is released either way on failure. */
#define AGENT_SNAPSHOT_MAX ((size_t)64 << 20)
int agent_snapshot_take(const struct agent_conf *conf, struct agent_snapshot *s, char *msg,
                        size_t msgsz);
/* Makes the wipe dirs hold what s does again (no process of the sandbox
 * uid may run), and removes the uid's SysV IPC objects and POSIX message
 * queues.  Returns 0; 1 when what the job did cannot be put back (a kept
 * file or library it changed or removed); -1 when we failed (what could
 * not be removed or written back, the child itself): msg says which. */
int agent_snapshot_restore(const struct agent_conf *conf, const struct agent_snapshot *s, char *msg,
                           size_t msgsz);
void agent_snapshot_release(struct agent_snapshot *s);

#endif
