#!/bin/sh
# tests/redis-ha/run.sh - every high-availability suite of this folder
# (each NAME.sh but lib.sh and this file: sentinel.sh, cluster.sh, and
# tls_acl.sh for TLS and ACL users), one after the other, through
# tests/run-suite.sh: one closing "redis_ha: N passed, N failed" line,
# non-zero on any failure or a suite without its summary.  `make
# test-redis-ha` runs it; LLMSB_BIN picks the binary, LLMSB_HA_PORT_BASE
# the ports (tests/redis-ha/lib.sh).
dir=$(cd "$(dirname "$0")" && pwd)
set --
for f in "$dir"/*.sh; do
    case ${f##*/} in lib.sh | run.sh) continue ;; esac
    set -- "$@" "$f"
done
exec sh "$dir/../run-suite.sh" redis_ha "$@"
