#!/bin/sh
# run-suite.sh KIND BIN... - runs test binaries, sums their counts and
# prints one closing "N passed, N failed" line; exits non-zero on any
# failure or on a binary that did not report.  Each binary's wall time is
# printed after it ("took N s"), so a slow suite shows in CI's log.
kind=$1; shift
total_p=0; total_f=0; status=0
for t in "$@"; do
    t0=$(date +%s)
    out=$("$t" 2>&1); rc=$?
    printf '%s\n' "$out"
    echo "  ($kind: $t took $(($(date +%s) - t0)) s)"
    line=$(printf '%s\n' "$out" | grep -E '^[a-z_0-9]+: [0-9]+ passed, [0-9]+ failed$' | tail -n 1)
    if [ -z "$line" ]; then
        echo "FAIL $t: exited $rc without a summary line"; total_f=$((total_f + 1)); status=1; continue
    fi
    p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/.*passed, ([0-9]+) failed/\1/')
    total_p=$((total_p + p)); total_f=$((total_f + f))
    [ "$rc" -eq 0 ] || status=1
done
echo "$kind: $total_p passed, $total_f failed"
exit $status
