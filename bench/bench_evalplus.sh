#!/bin/sh
# bench_evalplus.sh - the whole of HumanEval+ (164 tasks, every base and plus
# test) on a real model's ten samples a task (CodeLlama-34b-Instruct's, from
# tests/eval/data/evalplus), graded by us (`convert` + `submit --local`, the
# default warm pool) and by EvalPlus's own evaluator on this host
# (bench/evalplus/harness.sh: `evalplus.evaluate`, its default --parallel,
# unsandboxed in its own processes), the same samples in the same run: wall
# time of each step, the ratio, and how many verdicts agree. No timed
# assertion: the figures go to docs/benchmarks.md.
#   usage: bench/bench_evalplus.sh [LLM_SANDBOX] [SAMPLES.jsonl[.gz]]
# Not run (a line says why) without the evalplus git directory harness.sh
# reads (EVALPLUS_GIT) or a convert that knows HumanEval+.
B=${1:-bin/llm-sandbox}
H=$(dirname "$0")
D=$H/../tests/eval/data/evalplus
S=${2:-$D/samples-humaneval-codellama34b.jsonl.gz}
DATA=${EVALPLUS_DATA:-$D/HumanEvalPlus.jsonl.gz}
T=$(mktemp -d)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
ms() { date +%s%3N; }
secs() { awk -v m="$1" 'BEGIN { printf "%.1f s", m / 1000 }'; }

if ! git -C "${EVALPLUS_GIT:-/work/.mirror/evalplus+evalplus/repo}" rev-parse -q --verify HEAD >/dev/null 2>&1; then
    echo "bench_evalplus: not run: no evalplus git directory (EVALPLUS_GIT) for EvalPlus's own evaluator"
    exit 0
fi
case $S in
*.gz) zcat "$S" >"$T/samples.jsonl" ;;
*) cp "$S" "$T/samples.jsonl" ;;
esac
n=$(wc -l <"$T/samples.jsonl")
distinct=$(python3 -c 'import json,sys; print(len({(r["task_id"], r.get("solution", r.get("completion"))) for r in map(json.loads, open(sys.argv[1]))}))' "$T/samples.jsonl")

# ours: the canonical solutions' outputs and times (once per dataset, as
# EvalPlus's own cache), then the samples with them
t0=$(ms)
if ! "$B" convert "$DATA" --out "$T/gt.jobs" 2>"$T/err"; then
    echo "bench_evalplus: not run: convert of $DATA failed: $(cat "$T/err")"
    exit 0
fi
"$B" submit "$T/gt.jobs" --local --wait --out "$T/gt.out" >"$T/gt.log" 2>&1 ||
    { echo "bench_evalplus: the ground-truth run failed"; tail -5 "$T/gt.log"; exit 1; }
t1=$(ms)
"$B" convert "$DATA" --samples "$T/samples.jsonl" --expected "$T/gt.out" --out "$T/s.jobs" 2>"$T/err" ||
    { echo "bench_evalplus: convert of the samples failed: $(cat "$T/err")"; exit 1; }
# submit takes a job file of up to 1 GiB; each sample's job carries its
# task's inputs and expected outputs (4.6 MB for HumanEval/14: 325 MB for
# the 1640 jobs); a larger samples file is cut into files under that,
# submitted one after the other
python3 - "$T/s.jobs" "$T/part" <<'PY'
import sys
cap, n, size, out = 900 << 20, 0, 0, None
for line in open(sys.argv[1], "rb"):
    if out is None or size + len(line) > cap:
        out = open(f"{sys.argv[2]}{n}.jobs", "wb"); n, size = n + 1, 0
    out.write(line); size += len(line)
PY
parts=$(ls "$T"/part*.jobs | sort -V)
# submit_parts NAME [FLAG]: every part through submit --local into $T/NAME.out
submit_parts() {
    : >"$T/$1.out"
    for p in $parts; do
        "$B" submit "$p" --local --wait $2 --out "$p.out" --report "$p.report" >"$p.$1.log" 2>&1
        if [ ! -s "$p.out" ] || grep -q '"status": *"internal_error"' "$p.out"; then
            echo "bench_evalplus: $1: the samples' run failed"; tail -5 "$p.$1.log"; exit 1
        fi
        cat "$p.out" >>"$T/$1.out"
    done
}
t2=$(ms)
submit_parts s
t3=$(ms)
submit_parts nd --no-dedup
t4=$(ms)

# EvalPlus's evaluator: one run with a fresh cache (it computes the
# expected outputs first and says how long that took)
EVALPLUS_CACHE=$T/epcache sh "$H/evalplus/harness.sh" humaneval "$T/samples.jsonl" "$T/ep.tsv" \
    >"$T/ep.log" 2>&1 || { echo "bench_evalplus: EvalPlus's evaluator failed"; tail -5 "$T/ep.log"; exit 1; }
ep_all=$(sed -n 's/.*: \([0-9]*\) ms wall$/\1/p' "$T/ep.log")
ep_gt=$(sed -n 's/^Expected outputs computed in \([0-9.]*\)s$/\1/p' "$T/ep.log" | awk '{ printf "%d", $1 * 1000 }')

echo "HumanEval+, all base and plus tests: $n samples of 164 tasks ($distinct distinct), $(nproc) CPUs"
printf '%-34s %12s %12s %8s\n' "" ours EvalPlus "EvalPlus/ours"
row() { awk -v l="$1" -v o="$2" -v e="$3" 'BEGIN { printf "%-34s %10.1f s %10.1f s %7.2fx\n", l, o / 1000, e / 1000, e / (o ? o : 1) }'; }
row "expected outputs (once a dataset)" $((t1 - t0)) "$ep_gt"
row "the samples (outputs cached)" $((t3 - t1)) $((ep_all - ep_gt))
row "  every sample run (--no-dedup)" $((t4 - t3 + t2 - t1)) $((ep_all - ep_gt))
row "both (a cold start)" $((t3 - t0)) "$ep_all"
grep -E '^(humaneval|pass@)' "$T/ep.log" | paste -sd ' ' | sed 's/^/EvalPlus: /'
python3 "$H/evalplus/compare.py" "$T/ep.tsv" "$T/s.out" --show 5 || true
python3 - "$T/gt.out" "$T/s.out" <<'PY'
import json, sys
# where our time goes: each phase's sum over the jobs (ms), per step
for name, path in (("expected outputs", sys.argv[1]), ("samples", sys.argv[2])):
    rows = [json.loads(l) for l in open(path)]
    ran = [r for r in rows if not r.get("copy_of")]
    tot = {}
    for r in ran:
        for k, v in (r.get("phases") or {}).items():
            if isinstance(v, (int, float)) and k not in ("total_ms", "queue_wait_ms"):
                tot[k] = tot.get(k, 0) + v
    cpu = sum(r.get("cpu_ms") or 0 for r in ran)
    print(f"ours, {name}: {len(ran)} jobs run ({len(rows) - len(ran)} copies), summed over jobs: "
          + ", ".join(f"{k} {v / 1000:.1f} s" for k, v in tot.items()) + f", cpu {cpu / 1000:.1f} s")
PY
