#!/bin/sh
# run.sh - the benchmarks of tests/eval/data (HumanEval, HumanEval-X in five
# languages, MBXP Ruby; MultiPL-E in seven and the open format: multiple.sh;
# stdin/stdout: stdio.sh; CRUXEval and CRUXEval-X: crux.sh; EvalPlus:
# evalplus.sh; MBPP: mbpp.sh; the eval verb: evalcmd.sh) end to end:
# `convert` builds each program as the benchmark's harness does, `submit
# --local --wait` runs it in the real sandboxes, and every reference
# solution must pass except the records known to be bad (data/README.md).
# Then a model's samples: pass@k from two right and one wrong sample per
# task.  Against the real dockerd.
B=${LLMSB_BIN:-bin/llm-sandbox}
D=$(dirname "$0")/data
. "$(dirname "$0")/../lib.sh"
T=$(mktemp -d)
PORT=$(free_port)
WORKER=""
cleanup() {
    stop_worker_and_redis
    rm -rf "$T"
}
trap cleanup EXIT
suite eval
WHY_FILE= # a case's $T/why is in its message
VIA=--local

# bench NAME DATASET JOBS KNOWN_BAD FLAKY: every job runs and passes but
# the known bad ones, which must fail (a check that can fail); a flaky
# record may go either way; `submit --wait` exits 1 exactly when some job
# did not pass.  $VIA: --local, or "" through Redis.
bench() {
    name=$1 data=$2 jobs=$3 known=$4 flaky=$5
    if ! $B convert "$D/$data" --out "$T/$name.jsonl" 2>"$T/err"; then
        bad "$name" "convert failed: $(cat "$T/err")"; return
    fi
    t0=$(date +%s%3N)
    $B submit "$T/$name.jsonl" $VIA --wait --out "$T/$name.out" >"$T/$name.log" 2>&1
    rc=$?
    t1=$(date +%s%3N)
    if ! python3 - "$T/$name.out" "$jobs" "$known" "$flaky" >"$T/why" 2>&1 <<'EOF'
import json, sys
path, jobs, known, flaky = sys.argv[1], int(sys.argv[2]), set(sys.argv[3].split()), set(sys.argv[4].split())
rows = [json.loads(l) for l in open(path)]
assert len(rows) == jobs, f"{len(rows)} results for {jobs} jobs"
failed = {r["id"] for r in rows if r.get("passed") is not True}
ran = sum(1 for r in rows if "passed" in r)
assert ran == jobs, f"only {ran} of {jobs} jobs were checked"
wrong = sorted(failed - known - flaky, key=str)
missed = sorted(known - failed, key=str)
why = {r["id"]: (r["status"], (r.get("compile_output") or r.get("stderr") or "")[-300:])
       for r in rows if r["id"] in wrong[:3]}
assert not wrong, f"{len(wrong)} reference solutions failed, the first: {why}"
assert not missed, f"known bad records passed: {missed}"
print(f"{jobs - len(failed)}/{jobs} passed")
open(path + ".rc", "w").write("1" if failed else "0")
EOF
    then
        bad "$name" "$(tail -3 "$T/why")"; sed 's/^/  | /' "$T/$name.log" | tail -8; return
    fi
    want=$(cat "$T/$name.out.rc")
    if [ "$rc" != "$want" ]; then
        bad "$name" "submit --wait exited $rc, want $want"; return
    fi
    ok "${name}_$(tr ' /' '_-' <"$T/why") ($(awk -v n="$jobs" -v t="$((t1 - t0))" 'BEGIN { printf "%.1f s, %.2f jobs/s", t / 1000, n * 1000 / t }'))"
}

bench humaneval humaneval.jsonl 164 "" ""
# 112, 155: wrong reference solutions; 162: needs the npm package js-md5
bench humaneval_x_js humaneval-x/humaneval_js.jsonl 164 \
    "JavaScript/112 JavaScript/155 JavaScript/162" ""
# EVAL_SETS=quick (make sanitize: the C under ASan, not the images again):
# the other sets run in `make test`
if [ "${EVAL_SETS:-all}" = quick ]; then
    echo "eval: EVAL_SETS=quick: HumanEval-X Python/Java/C++/Go and MBXP run in make test"
else
bench humaneval_x_python humaneval-x/humaneval_python.jsonl 164 "" ""
bench humaneval_x_java humaneval-x/humaneval_java.jsonl 164 "" ""
# 22, 137: Boost headers; 162: OpenSSL (-lcrypto): all in the image
bench humaneval_x_cpp humaneval-x/humaneval_cpp.jsonl 164 "" ""
# 95: the reference solution depends on Go's random map order
bench humaneval_x_go humaneval-x/humaneval_go.jsonl 164 "" "Go/95"
bench mbxp_ruby mbxp/mbrbp_release_v1.2.jsonl 784 "" ""
fi
# MultiPL-E, seven languages: every verdict as its evaluator's
. "$(dirname "$0")/multiple.sh"

# Through Redis and a worker, with the datasets' own ids ("HumanEval/0",
# "JavaScript/112"): the same figures.
start_redis "$PORT" "$T"
export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT
$B worker --name eval --slots 2 >"$T/worker.log" 2>&1 &
WORKER=$!
for _ in $(seq 1 50); do [ "$(redis-cli -p "$PORT" exists llmsb:worker:eval)" = 1 ] && break; sleep 0.1; done
VIA=
bench redis_humaneval humaneval.jsonl 164 "" ""
bench redis_humaneval_x_js humaneval-x/humaneval_js.jsonl 164 \
    "JavaScript/112 JavaScript/155 JavaScript/162" ""
VIA=--local

# A model's samples (samples_he.py): per task two right, one wrong, one that
# leaves with sys.exit(0) before the tests run; the report's pass@1 is then
# 1/2 for every task, pass@10 none (n < 10).
python3 "$(dirname "$0")/samples_he.py" "$D/humaneval.jsonl" "$T/samples.jsonl"
$B convert "$D/humaneval.jsonl" --samples "$T/samples.jsonl" --out "$T/samples.jobs" 2>"$T/err" &&
    $B submit "$T/samples.jobs" --local --wait --report "$T/report.json" >"$T/log" 2>&1
rc=$?
if [ "$rc" = 1 ] && python3 - "$T/samples.jobs" "$T/report.json" >"$T/why" 2>&1 <<'EOF'
import json, sys
jobs = [json.loads(l) for l in open(sys.argv[1])]
assert [j["id"] for j in jobs[:4]] == ["HumanEval/0#0", "HumanEval/0#1", "HumanEval/0#2", "HumanEval/0#3"], jobs[0]["id"]
assert all(j["meta"]["task_id"] == j["id"].split("#")[0] for j in jobs)
rep = json.load(open(sys.argv[2]))
assert rep["total"]["tasks"] == 5 and rep["total"]["samples"] == 20, rep["total"]
assert rep["total"]["pass@1"] == 0.5 and rep["total"]["pass@10"] is None, rep["total"]
assert all(t["n"] == 4 and t["c"] == 2 for t in rep["tasks"]), rep["tasks"]
EOF
then ok samples_pass_at_k; else bad samples_pass_at_k "exit $rc: $(tail -3 "$T/why") $(tail -3 "$T/log")"; fi

# --out that is not a regular file (a pipe, /dev/null) is written to, never
# replaced by a file renamed over it
mkfifo "$T/pipe"
timeout 120 cat "$T/pipe" >"$T/piped" &
reader=$!
$B convert "$D/humaneval.jsonl" --out "$T/pipe" 2>"$T/err"
rc=$?
if [ -p "$T/pipe" ]; then wait $reader; else kill $reader; fi
if [ "$rc" = 0 ] && [ -p "$T/pipe" ] && [ "$(wc -l <"$T/piped")" = 164 ]; then
    ok convert_out_to_a_pipe
else
    bad convert_out_to_a_pipe "exit $rc, pipe kept: $([ -p "$T/pipe" ] && echo yes || echo no), $(wc -l <"$T/piped") lines: $(tail -2 "$T/err")"
fi

# Bad input: the line and why, nothing written.
printf '{"task_id": "X/1", "prompt": "", "test": ""}\n' >"$T/odd.jsonl"
$B convert "$T/odd.jsonl" >"$T/out" 2>"$T/err"
if [ $? = 2 ] && grep -q 'odd.jsonl:1: task "X/1": not a row of HumanEval' "$T/err" && [ ! -s "$T/out" ]; then
    ok unknown_benchmark_named_by_line
else
    bad unknown_benchmark_named_by_line "$(cat "$T/err")"
fi
printf '{"task_id": "HumanEval/404", "completion": "x"}\n' >"$T/s.jsonl"
$B convert "$D/humaneval.jsonl" --samples "$T/s.jsonl" >"$T/out" 2>"$T/err"
if [ $? = 2 ] && grep -q 's.jsonl:1: task "HumanEval/404" is not in' "$T/err"; then
    ok sample_of_unknown_task_refused
else
    bad sample_of_unknown_task_refused "$(cat "$T/err")"
fi

# CodeContests, APPS and LiveCodeBench: verdicts as their checkers give them
STDIO_SOURCED=1
. "$(dirname "$0")/stdio.sh"
# --extract: Markdown answers pass where bare code would, and fail without it
EXTRACT_SOURCED=1
. "$(dirname "$0")/extract.sh"
# EvalPlus (HumanEval+, MBPP+): the ground truth of a subset, then samples'
# base and plus verdicts as EvalPlus's evaluate gives them
EVALPLUS_SOURCED=1
. "$(dirname "$0")/evalplus.sh"
# and a real model's samples (CodeLlama-34b's, four tasks): each base and
# plus verdict as EvalPlus's own evaluator gave it on this host
. "$(dirname "$0")/evalplus_agree.sh"
# CRUXEval and CRUXEval-X: every verdict as its harness gives it
if "$(dirname "$0")/crux.sh"; then ok crux; else bad crux "see the lines above"; fi
# `llm-sandbox eval`: convert + submit + report in one command
if "$(dirname "$0")/evalcmd.sh"; then ok evalcmd; else bad evalcmd "see the lines above"; fi
# MBPP, the original and the sanitized split
if "$(dirname "$0")/mbpp.sh"; then ok mbpp; else bad mbpp "see the lines above"; fi

suite_end
