#!/bin/bash
# compile_once.sh - the HTTP front's compile once against the plain path
# (tests/http/compile_once.py): two servers on the real engine, one with
# compile once on and a single slot (so calls wait together and are
# grouped), one with --compile-once off; every result field must agree,
# and the first server's log must show the groups it ran as cases (a
# shortcut that never ran proves nothing).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
T=$(mktemp -d /tmp/llmsb-once.XXXXXX)
suite compile_once
PIDS=""
cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT

start() {  # start NAME ARGS...: sets URL
    local name=$1 port; shift
    port=$(free_port); URL=http://127.0.0.1:$port
    "$B" serve --http "127.0.0.1:$port" --log-level debug "$@" >"$T/$name.out" 2>"$T/$name.log" &
    PIDS="$PIDS $!"
    for _ in $(seq 1 50); do grep -qs "http: serving on" "$T/$name.log" && return 0; sleep 0.1; done
    bad "$name" "did not start: $(tail -3 "$T/$name.log")"; return 1
}
if start fast --slots 1 && FAST=$URL && start plain --compile-once off && PLAIN=$URL; then
    out=$(python3 "$ROOT/tests/http/compile_once.py" "$FAST" "$PLAIN" 2>"$T/py.err")
    checks_of "$out" || bad compile_once_py "no check ran: $(tail -5 "$T/py.err")"
    groups=$(grep -c 'calls of one program ran as cases' "$T/fast.log")
    plain=$(grep -c 'ran as cases' "$T/plain.log")
    if [ "$groups" -ge 3 ] && [ "$plain" = 0 ]; then
        ok calls_were_grouped; grep 'ran as cases' "$T/fast.log" | sed 's/^/     /'
    else bad calls_were_grouped "groups: $groups with it on, $plain with it off"; fi
fi
suite_end
