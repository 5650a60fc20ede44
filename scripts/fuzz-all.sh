#!/bin/sh
# fuzz-all.sh SECONDS JOBS FUZZER... - runs each libFuzzer harness for
# SECONDS with its corpus under fuzz-corpus/NAME, JOBS of them at a time
# (each harness is one process on one core: on 2 cores, 2 at a time give
# every harness the same executions in half the wall time).  Prints one
# line per harness; on a crash, the tail of its log, and exits 1 once all
# have run.
secs=$1 jobs=$2
shift 2
mkdir -p build-fuzz
fail=build-fuzz/.failed
rm -f "$fail"
for f in "$@"; do echo "$f"; done | xargs -P "$jobs" -I{} sh -c '
    f=$1 secs=$2 fail=$3
    n=$(basename "$f")
    mkdir -p "fuzz-corpus/$n"
    if "$f" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix=build-fuzz/ "fuzz-corpus/$n" \
        > "build-fuzz/$n.log" 2>&1; then
        echo "fuzz: $n $(grep -o "stat::number_of_executed_units: *[0-9]*" "build-fuzz/$n.log" | grep -o "[0-9]*$") executions, no crash"
    else
        tail -40 "build-fuzz/$n.log"
        echo "fuzz: $n FAILED"
        echo "$n" >> "$fail"
    fi' sh {} "$secs" "$fail"
if [ -s "$fail" ]; then
    echo "fuzz: crashed: $(tr '\n' ' ' < "$fail")"
    exit 1
fi
