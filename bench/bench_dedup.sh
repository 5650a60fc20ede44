#!/bin/sh
# bench_dedup.sh - identical programs run once: one job file through
# `submit --local` with dedup (the default) and with --no-dedup, in this one
# run with the same slots, after one warm-up.  Prints the jobs, the distinct
# programs, each wall time and the ratio, and fails unless both runs give
# every job the same status and verdict.
#   usage: bench/bench_dedup.sh [JOBFILE] [LLM_SANDBOX] [SLOTS]
# JOBFILE is any job file.  Without one (or "cruxeval"): a real benchmark
# file, CRUXEval's published codellama-7b generations of the excerpt in
# tests/eval/data/cruxeval (10 tasks x 10 generations, input and output
# prediction) through `convert --samples`.  "-": HumanEval samples with
# repeats, BENCH_DEDUP_TASKS (40) tasks x 16 samples, each drawn with a fixed
# seed from four kinds (the reference solution, one cut short, one that
# raises at its first line, another task's solution): as a model's samples
# repeat.
F=${1:-cruxeval}
B=${2:-bin/llm-sandbox}
SLOTS=${3:-2}
TASKS=${BENCH_DEDUP_TASKS:-40}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

if [ "$F" = cruxeval ]; then
    D=$ROOT/tests/eval/data/cruxeval
    for m in input output; do
        g=$D/generations-excerpt.json
        [ $m = output ] && g=$D/generations-excerpt-output.json
        "$B" convert "$D/cruxeval.jsonl" --mode $m --samples "$g" --out "$T/$m.jsonl" 2>"$T/convert.err" ||
            { cat "$T/convert.err"; exit 1; }
    done
    cat "$T/input.jsonl" "$T/output.jsonl" > "$T/jobs.jsonl"
    F=$T/jobs.jsonl
    WHAT="CRUXEval codellama-7b generations, input and output prediction (tests/eval/data/cruxeval)"
elif [ "$F" = - ]; then
    head -n "$TASKS" "$ROOT/tests/eval/data/humaneval.jsonl" > "$T/he.jsonl"
    python3 - "$T/he.jsonl" > "$T/samples.jsonl" <<'PY'
import json, random, sys
random.seed(24)
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
for i, row in enumerate(rows):
    sol = row["canonical_solution"]
    lines = sol.splitlines(keepends=True)
    kinds = [sol, "".join(lines[: max(1, len(lines) // 2)]),
             "    raise RuntimeError('model')\n" + sol, rows[(i + 1) % len(rows)]["canonical_solution"]]
    for _ in range(16):
        print(json.dumps({"task_id": row["task_id"], "completion": random.choice(kinds)}))
PY
    "$B" convert "$T/he.jsonl" --samples "$T/samples.jsonl" --out "$T/jobs.jsonl" 2>"$T/convert.err" ||
        { cat "$T/convert.err"; exit 1; }
    F=$T/jobs.jsonl
    WHAT="HumanEval samples with repeats ($TASKS tasks x 16, tests/eval/data/humaneval.jsonl)"
else
    WHAT=$F
fi

ms() { date +%s%3N; }
head -n 4 "$F" > "$T/warm.jsonl"
"$B" submit "$T/warm.jsonl" --local --slots "$SLOTS" --no-dedup >/dev/null 2>&1 </dev/null
t0=$(ms); "$B" submit "$F" --local --slots "$SLOTS" --out "$T/d.out" >"$T/d.txt" 2>&1 </dev/null; t1=$(ms)
"$B" submit "$F" --local --slots "$SLOTS" --no-dedup --out "$T/n.out" >"$T/n.txt" 2>&1 </dev/null; t2=$(ms)
line=$(grep '^dedup: ' "$T/d.txt")
if [ -z "$line" ] || ! grep -q '^dedup: off' "$T/n.txt"; then
    echo "bench_dedup: a run did not finish"; tail -5 "$T/d.txt" "$T/n.txt"; exit 1
fi
python3 - "$T/d.out" "$T/n.out" "$WHAT" "$SLOTS" $((t1 - t0)) $((t2 - t1)) <<'PY'
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
n = [json.loads(l) for l in open(sys.argv[2])]
what, slots, td, tn = sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
verdict = lambda r: (r["id"], r["status"], r.get("passed"))
differ = [a["id"] for a, b in zip(d, n) if verdict(a) != verdict(b)]
runs = sum(1 for r in d if not r.get("copy_of"))
passed = sum(1 for r in d if r.get("passed"))
print("bench_dedup: %s, submit --local --slots %s" % (what, slots))
print("  jobs %d, distinct programs run %d (%.2f jobs a program), passed %d" %
      (len(d), runs, len(d) / max(runs, 1), passed))
print("  with dedup    %8.1f s  %7.1f jobs/s" % (td / 1000, len(d) * 1000 / max(td, 1)))
print("  --no-dedup    %8.1f s  %7.1f jobs/s" % (tn / 1000, len(n) * 1000 / max(tn, 1)))
print("  ratio         %8.2fx (wall time without / with)" % (tn / max(td, 1)))
if differ or len(d) != len(n):
    print("bench_dedup: verdicts differ between the runs: %s" % differ[:10])
    sys.exit(1)
print("  every job's status and verdict the same in both runs")
PY
