#!/bin/sh
# evalcmd.sh - `llm-sandbox eval` (called by run.sh, or alone): convert +
# submit + report in one command, here (--local) and through a Redis of
# its own with a worker.  Its pass@k must be the one `convert` then
# `submit --wait --report` gives on the same HumanEval samples (two right,
# one wrong, one that leaves with sys.exit(0) per task), its --report and
# --jobs written, its exit code 0 whatever the pass rate (submit --wait's
# is 1), and a bad flag named.  Against the real dockerd.
B=${LLMSB_BIN:-bin/llm-sandbox}
D=$(dirname "$0")/data
. "$(dirname "$0")/../lib.sh"
T=$(mktemp -d)
PORT=${EVALCMD_PORT:-$(free_port)}
WORKER=""
cleanup() {
    stop_worker_and_redis
    rm -rf "$T"
}
trap cleanup EXIT
suite evalcmd

head -5 "$D/humaneval.jsonl" >"$T/he5.jsonl"
python3 "$(dirname "$0")/samples_he.py" "$T/he5.jsonl" "$T/samples.jsonl"

# same_passk A B: the two reports' pass@k (total, languages, every task) agree
same_passk() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for k in ("total", "languages", "tasks"):
    assert a[k] == b[k], f"{k}: {a[k]} != {b[k]}"
assert a["total"]["tasks"] == 5 and a["total"]["samples"] == 20, a["total"]
assert abs(a["total"]["pass@1"] - 0.5) < 1e-9, a["total"]
assert "phases" in a and "environment" in a, sorted(a)
print(f'pass@1 {a["total"]["pass@1"]} over {a["total"]["tasks"]} tasks')
EOF
}

# The reference: convert, then submit --local --wait --report (exit 1: a
# job did not pass).
$B convert "$T/he5.jsonl" --samples "$T/samples.jsonl" --out "$T/ref.jobs" 2>"$T/err" &&
    $B submit "$T/ref.jobs" --local --wait --report "$T/ref.json" >"$T/ref.log" 2>&1
rc=$?
if [ "$rc" = 1 ] && [ -s "$T/ref.json" ]; then
    ok submit_reference_exits_1
else
    bad submit_reference_exits_1 "exit $rc: $(tail -3 "$T/ref.log") $(cat "$T/err")"
fi

# --local: exit 0 (all graded), pass@k and the phases on stdout, the
# report and its Markdown written, pass@k equal to the reference's, the
# jobs kept by --jobs the same bytes as convert's.
$B eval "$T/he5.jsonl" "$T/samples.jsonl" --local --report "$T/local.json" \
    --out "$T/local.out" --jobs "$T/local.jobs" >"$T/local.log" 2>"$T/local.err"
rc=$?
if [ "$rc" = 0 ] && same_passk "$T/local.json" "$T/ref.json" >"$T/why" 2>&1 &&
    grep -q '^total *5 *20 *0.5000 ' "$T/local.log" && grep -q '^phases (' "$T/local.log" &&
    grep -q '^## Phases' "$T/local.json.md" && [ "$(wc -l <"$T/local.out")" = 20 ] &&
    cmp -s "$T/local.jobs" "$T/ref.jobs"; then
    ok "local_passk_as_convert_submit ($(cat "$T/why"))"
else
    bad local_passk_as_convert_submit "exit $rc: $(tail -3 "$T/why") $(tail -3 "$T/local.err")"
    sed 's/^/  | /' "$T/local.log" | tail -15
fi

# Without SAMPLES: the reference solutions, a check of the harness; the
# pass@k table is printed though each task has one sample; no job file is
# left in TMPDIR.
mkdir "$T/tmp"
TMPDIR=$T/tmp $B eval "$T/he5.jsonl" --local >"$T/refs.log" 2>"$T/refs.err"
rc=$?
if [ "$rc" = 0 ] && grep -q '^total *5 *5 *1.0000 ' "$T/refs.log" &&
    grep -q '^5 jobs from 5 tasks' "$T/refs.err" && [ -z "$(ls "$T/tmp")" ]; then
    ok references_without_samples
else
    bad references_without_samples "exit $rc, left in TMPDIR: $(ls "$T/tmp"): $(tail -3 "$T/refs.err")"
    sed 's/^/  | /' "$T/refs.log" | tail -12
fi

# Bad usage: exit 2, the option or the file named.
usage() {
    name=$1 want=$2
    shift 2
    $B eval "$@" >"$T/out" 2>"$T/err"
    rc=$?
    if [ "$rc" = 2 ] && grep -q -- "$want" "$T/err"; then
        ok "usage_$name"
    else
        bad "usage_$name" "exit $rc, want 2 and \"$want\": $(head -3 "$T/err")"
    fi
}
usage no_dataset 'usage: llm-sandbox eval'
usage unknown_flag "unknown or incomplete option '--bogus'" "$T/he5.jsonl" --bogus
usage timeout '--timeout: "soon" is not a number' "$T/he5.jsonl" --timeout soon
usage wait_timeout '--wait-timeout must be a number of seconds (got "x")' "$T/he5.jsonl" \
    --wait-timeout x
usage third_file '"extra" is one too many' "$T/he5.jsonl" "$T/samples.jsonl" extra
usage missing_dataset "$T/nope.jsonl" "$T/nope.jsonl" --local
usage slots '--slots must be between 1 and 256 (got "0")' "$T/he5.jsonl" --slots 0
usage incomplete "unknown or incomplete option '--report'" "$T/he5.jsonl" --report
$B eval --help >"$T/out" 2>&1
if [ $? = 0 ] && grep -q '^Exit codes: 0 when every job ran and was graded' "$T/out"; then
    ok help
else
    bad help "$(head -3 "$T/out")"
fi

# Through Redis and a worker: the same figures; a second eval of the same
# ids is refused (exit 2, naming --rerun), and runs again with --rerun.
if start_redis "$PORT" "$T"; then
    export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT
    $B worker --name evalcmd --slots 2 >"$T/worker.log" 2>&1 &
    WORKER=$!
    for _ in $(seq 1 50); do
        [ "$(redis-cli -p "$PORT" exists llmsb:worker:evalcmd)" = 1 ] && break
        sleep 0.1
    done
    $B eval "$T/he5.jsonl" "$T/samples.jsonl" --report "$T/queue.json" >"$T/queue.log" \
        2>"$T/queue.err"
    rc=$?
    if [ "$rc" = 0 ] && same_passk "$T/queue.json" "$T/ref.json" >"$T/why" 2>&1 &&
        grep -q '^provenance: The machine eval ran on' "$T/queue.log"; then
        ok "queue_passk_as_convert_submit ($(cat "$T/why"))"
    else
        bad queue_passk_as_convert_submit "exit $rc: $(tail -3 "$T/why") $(tail -3 "$T/queue.err")"
    fi
    $B eval "$T/he5.jsonl" "$T/samples.jsonl" >"$T/again.log" 2>"$T/again.err"
    rc=$?
    if [ "$rc" = 2 ] && grep -q -- '--rerun' "$T/again.err"; then
        ok queue_existing_ids_refused
    else
        bad queue_existing_ids_refused "exit $rc: $(tail -3 "$T/again.err")"
    fi
    $B eval "$T/he5.jsonl" "$T/samples.jsonl" --rerun --report "$T/rerun.json" \
        >"$T/rerun.log" 2>"$T/rerun.err"
    rc=$?
    if [ "$rc" = 0 ] && same_passk "$T/rerun.json" "$T/ref.json" >"$T/why" 2>&1; then
        ok queue_rerun
    else
        bad queue_rerun "exit $rc: $(tail -3 "$T/why") $(tail -3 "$T/rerun.err")"
    fi
    # no worker: --wait-timeout ends the wait, exit 124, the jobs unfinished
    # and so without a verdict
    kill "$WORKER" 2>/dev/null && wait "$WORKER" 2>/dev/null
    $B eval "$T/he5.jsonl" --rerun --wait-timeout 1 >"$T/wait.log" 2>"$T/wait.err"
    rc=$?
    if [ "$rc" = 124 ] && grep -q '^eval: --wait-timeout reached with 5 of 5 jobs unfinished' \
        "$T/wait.err"; then
        ok queue_wait_timeout
    else
        bad queue_wait_timeout "exit $rc: $(tail -3 "$T/wait.err")"
    fi
else
    bad redis "redis-server did not start on $PORT"
fi

# EvalPlus: eval runs the ground truth first (the canonical solutions of
# the two tasks), keeps it with --keep-expected, grades the samples against
# it (base and plus apart); given back as --expected, no first step.
gunzip -c "$D/evalplus/HumanEvalPlus.jsonl.gz" | head -2 >"$T/heplus2.jsonl"
cat >"$T/heplus-samples.jsonl" <<'JSONL'
{"task_id": "HumanEval/0", "completion": "    for i, a in enumerate(numbers):\n        for b in numbers[i + 1:]:\n            if abs(a - b) < threshold:\n                return True\n    return False\n"}
{"task_id": "HumanEval/0", "completion": "    numbers = sorted(numbers[:6])\n    return any(b - a < threshold for a, b in zip(numbers, numbers[1:]))\n"}
{"task_id": "HumanEval/1", "completion": "    return []\n"}
JSONL
# evalplus_report REPORT: HumanEval/0's right sample passes base and plus,
# its wrong one base only, HumanEval/1's neither
evalplus_report() {
    python3 - "$1" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
got = (r["total"]["samples"], round(r["total"]["pass@1"], 4), round(r["base"]["total"]["pass@1"], 4))
assert got == (3, 0.25, 0.5), got
print(f"base + plus pass@1 {got[1]}, base {got[2]}")
EOF
}
$B eval "$T/heplus2.jsonl" "$T/heplus-samples.jsonl" --local --keep-expected "$T/gt.jsonl" \
    --report "$T/ep.json" >"$T/ep.log" 2>"$T/ep.err"
rc=$?
if [ "$rc" = 0 ] && grep -q '^eval: step 1 of 2' "$T/ep.err" && [ "$(wc -l <"$T/gt.jsonl")" = 2 ] &&
    evalplus_report "$T/ep.json" >"$T/why" 2>&1; then
    ok "evalplus_truth_first ($(cat "$T/why"))"
else
    bad evalplus_truth_first "exit $rc: $(tail -3 "$T/why" 2>/dev/null) $(tail -3 "$T/ep.err")"
fi
$B eval "$T/heplus2.jsonl" "$T/heplus-samples.jsonl" --local --expected "$T/gt.jsonl" \
    --report "$T/ep2.json" >"$T/ep2.log" 2>"$T/ep2.err"
rc=$?
if [ "$rc" = 0 ] && ! grep -q 'step 1 of 2' "$T/ep2.err" && evalplus_report "$T/ep2.json" >"$T/why" 2>&1; then
    ok "evalplus_expected_given ($(cat "$T/why"))"
else
    bad evalplus_expected_given "exit $rc: $(tail -3 "$T/why" 2>/dev/null) $(tail -3 "$T/ep2.err")"
fi

suite_end evalcmd
