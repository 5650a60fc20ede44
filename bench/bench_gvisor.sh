#!/bin/sh
# bench_gvisor.sh - the cost of a job on gVisor (runtime runsc) against runc,
# both in this one run, on the same dockerd, images and programs: N jobs of
# each program through `submit --local` with one slot (on runc one warm
# container and its zygote, the common case; on gVisor a new container for
# every job, which is how it runs them: exec/runner.c), and N/4 `run`s (a
# new container each: the cold start).  Prints each runtime's p50 and p99
# of the job's own time (phases: total_ms less queue_wait_ms, the first job
# of a batch left out) and the ratio of the p50s; then what the agent's
# namespace filter costs system calls on each runtime (bench_confine).
#   usage: bench/bench_gvisor.sh [LLM_SANDBOX] [N]
# Needs the runtime runsc registered with dockerd (scripts/gvisor-up.sh).
B=${1:-bin/llm-sandbox}
N=${2:-40}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"' ||
    { echo "bench_gvisor: dockerd has no runtime runsc (run scripts/gvisor-up.sh)"; exit 1; }

# trivial: the interpreter's start and the agent's round trip; files: 200
# small files written, read and removed (system calls, which gVisor serves
# in its own kernel); cpu: arithmetic only
PROGRAMS="trivial files cpu"
code_trivial='print(1)'
code_files='import os\nfor i in range(200):\n    p = \"/work/f%d\" % i\n    open(p, \"w\").write(\"x\" * 100)\n    open(p).read()\n    os.remove(p)\nprint(1)'
code_cpu='print(sum(i * i for i in range(300000)) % 7)'

# p50 and p99 (nearest rank) of the numbers on stdin, "p50 p99"
pcts() {
    sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) { print "- -"; exit }
        a = int((NR * 50 + 99) / 100); b = int((NR * 99 + 99) / 100); print v[a], v[b] }'
}

# job_ms FILE: the job's own time of each result but the batch's first
# (runc's one cold start; on gVisor each job starts and removes its own)
job_ms() {
    jq -r 'select(.status == "ok" and (.id | endswith("-1") | not))
           | .phases.total_ms - .phases.queue_wait_ms' "$1"
}

warm() { # warm RUNTIME PROGRAM: "p50 p99" of N warm jobs
    eval "code=\$code_$2"
    {
        printf '%s\n' 'defaults: {lang: python}' 'jobs:'
        for i in $(seq 1 "$N"); do printf '  - {id: "%s-%d", code: "%s"}\n' "$2" "$i" "$code"; done
    } >"$T/$2.yaml"
    LLMSB_RUNTIME=$1 "$B" submit "$T/$2.yaml" --local --slots 1 --no-dedup --out "$T/$1-$2.jsonl" \
        >"$T/$1-$2.log" 2>&1 </dev/null ||
        { echo "bench_gvisor: $2 on $1 did not pass" >&2; tail -5 "$T/$1-$2.log" >&2; return 1; }
    job_ms "$T/$1-$2.jsonl" | pcts
}

cold() { # cold RUNTIME: "p50 p99" of N/4 runs of a trivial program, a new container each
    printf 'print(1)\n' >"$T/cold.py"
    for _ in $(seq 1 $(((N + 3) / 4))); do
        LLMSB_RUNTIME=$1 "$B" run --json "$T/cold.py" </dev/null 2>/dev/null |
            jq -r 'select(.status == "ok") | .phases.total_ms - .phases.queue_wait_ms'
    done | pcts
}

echo "gVisor (runsc $(runsc --version 2>/dev/null | head -1 | awk '{print $3}'), platform ptrace) against runc: python jobs, one slot"
printf '%-22s %14s %14s %14s %14s %9s\n' "program" "runc p50 ms" "runc p99 ms" "runsc p50 ms" "runsc p99 ms" "p50 x"
status=0
row() { # row NAME "runc p50 p99" "runsc p50 p99"
    set -- "$1" $2 $3
    if [ "$2" = - ] || [ "$4" = - ]; then status=1; fi
    awk -v n="$1" -v a="$2" -v b="$3" -v c="$4" -v d="$5" 'BEGIN {
        printf "%-22s %14s %14s %14s %14s %8.1fx\n", n, a, b, c, d, (a > 0 && c != "-") ? c / a : 0 }'
}
for p in $PROGRAMS; do
    r=$(warm runc "$p") || { status=1; r="- -"; }
    s=$(warm runsc "$p") || { status=1; s="- -"; }
    row "$p (batch, n=$N)" "$r" "$s"
done
row "trivial (cold, n=$(((N + 3) / 4)))" "$(cold runc)" "$(cold runsc)"

# The agent's namespace filter (agent/confine.c), on every process of a
# sandbox: what it costs each kind of system call, timed in a container
# of each runtime (bench_confine, static, beside this binary's bench/)
C=$(cd "$(dirname "$B")" && pwd)/bench/bench_confine
for rt in runc runsc; do
    echo "the agent's namespace filter on $rt (bench_confine: plain and filtered children in turns)"
    docker run --rm --runtime="$rt" --network none -v "$C:/bench_confine:ro" llmsb/base:latest \
        /bench_confine </dev/null || { echo "bench_gvisor: bench_confine on $rt failed"; status=1; }
done
exit $status
