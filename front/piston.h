/* piston.h - the pure parts of Piston v2's route set (front/piston.c) that
 * its unit test reaches on their own: the semver range check that picks a
 * runtime from a request's "version". */
#ifndef LLMSB_FRONT_PISTON_H
#define LLMSB_FRONT_PISTON_H

/* 1 when version ("3.11.2": major.minor.patch, no pre-release) satisfies
 * range as node-semver's satisfies() reads it (Piston picks a runtime with
 * it): "*", "", "3", "3.x", "3.11", "=3.11.2", ">=3.10 <4", "~3.11",
 * "^3.10.0", "3.10 - 3.12", "2 || 3"; 0 when it does not or when range is
 * not a range node-semver reads (Piston then answers "runtime is unknown"
 * too).  A range of more than 256 bytes is not read. */
int piston_semver_satisfies(const char *version, const char *range);

#endif
