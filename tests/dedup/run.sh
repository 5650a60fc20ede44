#!/bin/bash
# run.sh - submit's dedup and --recheck-timeouts against a real
# redis-server (its own temp port) and the real dockerd: a CRUXEval-style
# file (16 generations a task, with repeats) runs each distinct program
# once and every id gets its own result (result ID, BLPOP done:ID, copy_of);
# jobs that differ in one field that can change the verdict are not merged;
# --no-dedup runs all; copies survive a submit that exits at once and a
# kill -9 of the worker (exactly once); a cancelled copy ends cancelled alone; --recheck-timeouts (--local and
# through Redis, alone on the worker) turns a flaky timeout into its
# recheck's verdict and leaves a real one a timeout.  And what a hostile
# review found: copies past a run's byte limit start a run of their own;
# copies of a final result or of an unreadable copies field still get one
# result each; a recheck leaves a cancelled copy alone and keeps a job's
# first id; hand-built copies naming a job are refused; --report's phases
# count runs.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
T=$(mktemp -d /tmp/llmsb-dedup.XXXXXX)
PORT=$(free_port)
export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT
export LLMSB_PREFIX=dd
export LLMSB_CONFIG=$T/config.yaml
printf 'worker: {lease: 6, heartbeat_ttl: 3, block: 1, drain: 20}\n' > "$T/config.yaml"
R="redis-cli -p $PORT"
suite dedup; WORKERS=""

cleanup() {
    stop_workers_and_redis
    rm -rf "$T"
}
trap cleanup EXIT

start_redis "$PORT" "$T" || { echo "dedup: redis-server did not start"; exit 1; }

start_worker() { start_named_worker "$B" "$1" "$2"; }  # start_worker NAME SLOTS
stop_worker() { stop_named_worker "$1"; }
runs_of() { grep -c "job=.* status=" "$T/$1.log"; }  # jobs a worker wrote a result for
# runs_of NAME once it reaches WANT (up to 5 s): the worker logs a job's
# line just after its result is written, which a submit --wait may see first
runs_reaching() {  # runs_reaching NAME WANT
    local n
    for _ in $(seq 1 50); do n=$(runs_of "$1"); [ "$n" -ge "$2" ] && break; sleep 0.1; done
    echo "$n"
}

# A CRUXEval-style file: 4 tasks x 16 generations, python assertions, the
# generations drawn with repeats from a few candidates per task (as a
# model's samples are); meta carries the task and the sample.
python3 - "$T" <<'EOF'
import json, sys, random
random.seed(7)
tasks = {
    "f0": ("def f(x):\n    return x * 2\n", ["4", "5", "4", "2 * 2"], "2"),
    "f1": ("def f(s):\n    return s[::-1]\n", ["'cba'", "'abc'", "'cba'"], "'abc'"),
    "f2": ("def f(n):\n    return sum(range(n))\n", ["10", "6", "10", "9"], "5"),
    "f3": ("def f(a):\n    return sorted(a)\n", ["[1, 2, 3]", "[3, 2, 1]"], "[3, 1, 2]"),
}
jobs, distinct = [], set()
for t, (code, outs, arg) in tasks.items():
    for s in range(16):
        out = random.choice(outs)
        prog = code + "assert f(%s) == %s\n" % (arg, out)
        distinct.add(prog)
        jobs.append({"id": "CRUXEval/%s#%d" % (t, s), "lang": "python", "code": prog,
                     "timeout": 10, "expect_exit": 0, "meta": {"task_id": t, "sample": s}})
with open(sys.argv[1] + "/crux.jsonl", "w") as f:
    for j in jobs: f.write(json.dumps(j) + "\n")
open(sys.argv[1] + "/crux.distinct", "w").write(str(len(distinct)))
EOF
NJ=64; ND=$(cat "$T/crux.distinct")

# 1. through Redis: each distinct program once (the worker's own count),
#    every id its own result, copies marked, meta each job's own
start_worker w1 2
"$B" submit "$T/crux.jsonl" --wait --timeout 60 --out "$T/crux.out" --report "$T/crux.rep" >"$T/crux.txt" 2>&1; rc=$?
runs=$(runs_reaching w1 "$ND")
ids_ok=1; copies=0
for id in $(jq -r .id "$T/crux.jsonl"); do
    st=$($R blpop "dd:done:$id" 1 | tail -1)
    r=$("$B" result "$id" 2>/dev/null) || { ids_ok=0; echo "no result: $id"; continue; }
    [ "$(echo "$r" | jq -r .id)" = "$id" ] && [ -n "$st" ] &&
      [ "$(echo "$r" | jq -c .meta)" = "$(jq -c --arg id "$id" 'select(.id == $id) | .meta' "$T/crux.jsonl")" ] || { ids_ok=0; echo "bad result: $id"; }
    [ "$(echo "$r" | jq -r '.copy_of // empty')" != "" ] && copies=$((copies + 1))
done
same_verdicts=$(jq -s 'group_by(.copy_of // .id) | map(select(length > 0)) | length' "$T/crux.out" >/dev/null; python3 - "$T/crux.out" "$T/crux.jsonl" <<'EOF'
import json, sys
res = {json.loads(l)["id"]: json.loads(l) for l in open(sys.argv[1])}
code = {json.loads(l)["id"]: json.loads(l)["code"] for l in open(sys.argv[2])}
bad = [i for i, r in res.items() if r.get("copy_of") and (code[r["copy_of"]] != code[i] or
       res[r["copy_of"]]["passed"] != r["passed"] or res[r["copy_of"]].get("copy_of"))]
print("ok" if not bad and len(res) == 64 else "bad %s" % bad[:3])
EOF
)
if [ "$rc" -le 1 ] && [ "$runs" = "$ND" ] && [ "$ids_ok" = 1 ] && [ "$copies" = $((NJ - ND)) ] &&
   grep -q "^dedup: $NJ jobs, $ND distinct programs run, $((NJ - ND)) copies" "$T/crux.txt" &&
   [ "$same_verdicts" = ok ] && [ "$(jq -c .runs "$T/crux.rep")" = "{\"dedup\":true,\"jobs\":$NJ,\"runs\":$ND,\"copies\":$((NJ - ND))}" ] &&
   grep -q "^$NJ jobs, $ND distinct programs run" "$T/crux.rep.md"; then
    ok crux_style_file_runs_each_distinct_program_once
else bad crux_style_file_runs_each_distinct_program_once "rc=$rc runs=$runs/$ND ids_ok=$ids_ok copies=$copies verdicts=$same_verdicts $(tail -12 "$T/crux.txt")"; fi

# 2. --no-dedup (and --rerun) runs every job
before=$(runs_of w1)
"$B" submit "$T/crux.jsonl" --wait --timeout 60 --rerun --no-dedup --out "$T/nd.out" >"$T/nd.txt" 2>&1
after=$(runs_reaching w1 $((before + NJ)))
if [ $((after - before)) = $NJ ] && grep -q "^dedup: off (--no-dedup): $NJ jobs, $NJ runs" "$T/nd.txt" &&
   [ "$(jq -r 'select(.copy_of) | .id' "$T/nd.out" | wc -l)" = 0 ]; then
    ok no_dedup_runs_every_job
else bad no_dedup_runs_every_job "ran $((after - before)) $(tail -5 "$T/nd.txt")"; fi

# 3. one field that can change the verdict apart: never merged (--local,
#    no Redis); the pair identical but for id and meta is
cat > "$T/apart.jsonl" <<'EOF'
{"id":"base","lang":"python","code":"import os,sys\nprint(sys.stdin.read().strip() or os.environ.get('K','-'))\n","expect_stdout":"-"}
{"id":"same","lang":"python","code":"import os,sys\nprint(sys.stdin.read().strip() or os.environ.get('K','-'))\n","expect_stdout":"-","meta":{"x":1}}
{"id":"timeout","lang":"python","code":"import os,sys\nprint(sys.stdin.read().strip() or os.environ.get('K','-'))\n","expect_stdout":"-","timeout":7}
{"id":"env","lang":"python","code":"import os,sys\nprint(sys.stdin.read().strip() or os.environ.get('K','-'))\n","expect_stdout":"-","env":{"K":"v"}}
{"id":"stdin","lang":"python","code":"import os,sys\nprint(sys.stdin.read().strip() or os.environ.get('K','-'))\n","expect_stdout":"-","stdin":"in"}
{"id":"compare","lang":"python","code":"import os,sys\nprint(sys.stdin.read().strip() or os.environ.get('K','-'))\n","expect_stdout":"-","compare":"exact"}
{"id":"expect","lang":"python","code":"import os,sys\nprint(sys.stdin.read().strip() or os.environ.get('K','-'))\n","expect_stdout":"v"}
{"id":"memory","lang":"python","code":"import os,sys\nprint(sys.stdin.read().strip() or os.environ.get('K','-'))\n","expect_stdout":"-","memory":300}
{"id":"args","lang":"python","code":"import os,sys\nprint(sys.stdin.read().strip() or os.environ.get('K','-'))\n","expect_stdout":"-","args":["a"]}
EOF
LLMSB_REDIS_URL=redis://127.0.0.1:1 track "$B" submit "$T/apart.jsonl" --local --out "$T/apart.out" >"$T/apart.txt" 2>&1
if grep -q '^dedup: 9 jobs, 8 distinct programs run, 1 copies' "$T/apart.txt" &&
   [ "$(jq -r 'select(.copy_of) | "\(.id)<\(.copy_of)"' "$T/apart.out")" = "same<base" ] &&
   [ "$(jq -r 'select(.passed == false) | .id' "$T/apart.out" | tr '\n' ' ')" = "env stdin compare expect " ] && [ "$(jq -c 'select(.id == "same") | .meta' "$T/apart.out")" = '{"x":1}' ]; then
    ok one_verdict_field_apart_is_not_merged
else bad one_verdict_field_apart_is_not_merged "$(tail -6 "$T/apart.txt"; jq -c '[.id, .status, .passed, .copy_of]' "$T/apart.out")"; fi

# 3b. a hand-built copies list naming an id that is also a job of the file
#     is refused (that id would get two results), before anything is sent
printf '%s\n' '{"id":"hc","lang":"python","code":"print(1)","copies":[{"id":"hc#1"}]}' \
    '{"id":"hc#1","lang":"python","code":"print(1)"}' > "$T/hc.jsonl"
LLMSB_REDIS_URL=redis://127.0.0.1:1 "$B" submit "$T/hc.jsonl" >"$T/hc.txt" 2>&1; rc=$?
if [ "$rc" = 2 ] && grep -q 'hc.jsonl:1: copies: id "hc#1" is also the id of the job at line 2' "$T/hc.txt"; then
    ok hand_built_copies_naming_a_job_are_refused
else bad hand_built_copies_naming_a_job_are_refused "rc=$rc $(cat "$T/hc.txt")"; fi

# 3c. --report's per-phase table is over the runs: a copy's timings are its
#     run's, so three identical jobs count once
printf '%s\n' '{"id":"ph#0","lang":"python","code":"print(3)"}' '{"id":"ph#1","lang":"python","code":"print(3)"}' \
    '{"id":"ph#2","lang":"python","code":"print(3)"}' > "$T/ph.jsonl"
LLMSB_REDIS_URL=redis://127.0.0.1:1 track "$B" submit "$T/ph.jsonl" --local --report "$T/ph.rep" >"$T/ph.txt" 2>&1
if [ "$(jq -c '[.phases.python.jobs, .phases.python.run_ms.jobs]' "$T/ph.rep")" = '[1,1]' ]; then
    ok report_phases_are_over_runs
else bad report_phases_are_over_runs "$(jq -c '.phases.python | [.jobs, .run_ms]' "$T/ph.rep") $(tail -3 "$T/ph.txt")"; fi

# 4. submit without --wait exits at once; the copies ride in the queue and
#    the worker (started later) writes every one, BLPOP done:ID wakes
stop_worker w1
cat > "$T/nowait.jsonl" <<'EOF'
{"id":"nw#0","lang":"python","code":"print(42)","expect_stdout":"42"}
{"id":"nw#1","lang":"python","code":"print(42)","expect_stdout":"42","meta":{"s":1}}
{"id":"nw#2","lang":"python","code":"print(42)","expect_stdout":"42","meta":{"s":2}}
EOF
"$B" submit "$T/nowait.jsonl" >"$T/nw.ids" 2>"$T/nw.err"; rc=$?
start_worker w2 2
woke=""
for id in nw#0 nw#1 nw#2; do woke="$woke$($R blpop "dd:done:$id" 30 | tail -1),"; done
if [ "$rc" = 0 ] && [ "$(cat "$T/nw.ids" | tr '\n' ' ')" = "nw#0 nw#1 nw#2 " ] && [ "$woke" = "ok,ok,ok," ] &&
   [ "$($R hget 'dd:result:nw#2' copy_of)" = 'nw#0' ] && [ "$($R hget 'dd:result:nw#2' meta)" = '{"s":2}' ] &&
   [ "$($R hget 'dd:result:nw#2' passed)" = true ] && [ "$(runs_of w2)" = 1 ] &&
   grep -q 'carrying 2 copies' "$T/nw.err"; then
    ok copies_survive_a_submit_that_exits_at_once
else bad copies_survive_a_submit_that_exits_at_once "rc=$rc woke=$woke runs=$(runs_of w2) $(cat "$T/nw.err")"; fi

# 4b. kill -9 of the worker mid-run: another worker runs the job again and
#     every copy gets exactly one result (one results-stream entry each)
cat > "$T/kill.jsonl" <<'EOF'
{"id":"k#0","lang":"python","code":"import time\ntime.sleep(3)\nprint('k')"}
{"id":"k#1","lang":"python","code":"import time\ntime.sleep(3)\nprint('k')"}
{"id":"k#2","lang":"python","code":"import time\ntime.sleep(3)\nprint('k')"}
EOF
"$B" submit "$T/kill.jsonl" >/dev/null 2>&1
for _ in $(seq 1 100); do [ "$($R hget 'dd:result:k#2' status)" = running ] && break; sleep 0.1; done
kill -9 "$PID_w2"
start_worker w3 2
for id in k#0 k#1 k#2; do $R blpop "dd:done:$id" 60 >/dev/null; done
entries=$($R xrange dd:results - + | grep -c '^k#[012]$')
if [ "$($R hget 'dd:result:k#0' status),$($R hget 'dd:result:k#1' status),$($R hget 'dd:result:k#2' status)" = ok,ok,ok ] &&
   [ "$entries" = 3 ] && [ "$($R hget 'dd:result:k#1' worker)" = w3 ] && [ "$($R hget 'dd:result:k#1' attempts)" = 2 ]; then
    ok copies_exactly_once_when_the_worker_is_killed
else bad copies_exactly_once_when_the_worker_is_killed "entries=$entries $($R hgetall 'dd:result:k#1' | tr '\n' ' ' | head -c 400)"; fi

# 5. a cancelled copy ends cancelled; the run and the other copy go on
cat > "$T/cancel.jsonl" <<'EOF'
{"id":"cc#0","lang":"python","code":"import time\ntime.sleep(4)\nprint('done')"}
{"id":"cc#1","lang":"python","code":"import time\ntime.sleep(4)\nprint('done')"}
{"id":"cc#2","lang":"python","code":"import time\ntime.sleep(4)\nprint('done')"}
EOF
"$B" submit "$T/cancel.jsonl" >/dev/null 2>&1
for _ in $(seq 1 100); do [ "$($R hget 'dd:result:cc#1' status)" = running ] && break; sleep 0.1; done
"$B" cancel 'cc#1' >"$T/cancel.txt" 2>&1
for id in cc#0 cc#1 cc#2; do $R blpop "dd:done:$id" 30 >/dev/null; done
if grep -q 'cancel requested: cc#1' "$T/cancel.txt" &&
   [ "$($R hget 'dd:result:cc#0' status),$($R hget 'dd:result:cc#1' status),$($R hget 'dd:result:cc#2' status)" = ok,cancelled,ok ] &&
   [ "$($R hget 'dd:result:cc#1' copy_of)" = 'cc#0' ]; then
    ok a_cancelled_copy_ends_cancelled_alone
else bad a_cancelled_copy_ends_cancelled_alone "$(cat "$T/cancel.txt") $($R hgetall 'dd:result:cc#1' | head -20 | tr '\n' ' ')"; fi

# 6. --recheck-timeouts.  "flaky" sleeps past its timeout until the wall
#    clock reaches T0 (a few seconds after the start) and passes after it;
#    "long" holds the batch past T0, so the first run of flaky times out and
#    its recheck (after the batch) passes.  "stuck" always times out.
recheck_file() {  # recheck_file PATH: the three jobs with T0 = now + 6 s
    local t0=$(( $(date +%s) + 6 ))
    jq -cn --arg t0 "$t0" '
      {id: "flaky", lang: "python", timeout: 2, expect_stdout: "late",
       code: ("import time\nif time.time() < " + $t0 + ":\n    time.sleep(30)\nprint(\"late\")\n")},
      {id: "flaky#2", lang: "python", timeout: 2, expect_stdout: "late", meta: {s: 2},
       code: ("import time\nif time.time() < " + $t0 + ":\n    time.sleep(30)\nprint(\"late\")\n")},
      {id: "stuck", lang: "python", timeout: 1, code: "while True: pass\n"},
      {id: "long", lang: "python", timeout: 20, code: "import time\ntime.sleep(9)\nprint(1)\n"}' > "$1"
}
check_recheck() {  # check_recheck NAME OUT TXT
    if grep -q '^recheck: 3 timeout(s) run again alone, 2 changed (flaky)$' "$3" &&
       [ "$(jq -r 'select(.id == "flaky") | "\(.status) \(.passed) \(.rechecked) \(.first_status)"' "$2")" = "ok true true timeout" ] &&
       [ "$(jq -r 'select(.id == "flaky#2") | "\(.status) \(.copy_of) \(.rechecked) \(.meta.s)"' "$2")" = "ok flaky true 2" ] &&
       [ "$(jq -r 'select(.id == "stuck") | "\(.status) \(.rechecked) \(.first_status)"' "$2")" = "timeout true timeout" ] &&
       [ "$(jq -r 'select(.id == "long") | "\(.status) \(.rechecked)"' "$2")" = "ok null" ]; then
        ok "$1"
    else bad "$1" "$(tail -8 "$3"; jq -c '[.id, .status, .rechecked, .first_status, .copy_of]' "$2")"; fi
}
recheck_file "$T/re.jsonl"
LLMSB_REDIS_URL=redis://127.0.0.1:1 track "$B" submit "$T/re.jsonl" --local --slots 4 --recheck-timeouts \
    --out "$T/re.out" --report "$T/re.rep" >"$T/re.txt" 2>&1
check_recheck recheck_timeouts_local "$T/re.out" "$T/re.txt"
[ "$(jq -c .runs "$T/re.rep")" = '{"dedup":true,"jobs":4,"runs":3,"copies":1,"rechecked_timeouts":3,"flaky":2}' ] &&
    grep -q 'changed (flaky)' "$T/re.rep.md" && ok recheck_counts_in_the_report ||
    bad recheck_counts_in_the_report "$(jq -c .runs "$T/re.rep")"

# through Redis, alone on the worker: jobs of another producer keep coming
# (each a 2 s sleep); none runs while a recheck does
recheck_file "$T/re2.jsonl"
( for i in $(seq 1 14); do
      $R xadd dd:jobs '*' id "bg$i" lang python code 'import time; time.sleep(2)' >/dev/null; sleep 1
  done ) &
BG=$!
"$B" submit "$T/re2.jsonl" --wait --timeout 90 --recheck-timeouts --out "$T/re2.out" >"$T/re2.txt" 2>&1
wait $BG
check_recheck recheck_timeouts_redis "$T/re2.out" "$T/re2.txt"
for i in $(seq 1 14); do $R blpop "dd:done:bg$i" 60 >/dev/null; done
overlap=$(python3 - "$PORT" <<'EOF'
import subprocess, sys
def h(id):
    out = subprocess.run(["redis-cli", "-p", sys.argv[1], "hmget", "dd:result:" + id,
                          "started_at", "finished_at"], capture_output=True, text=True).stdout.split()
    return int(out[0]), int(out[1])
re = [h(i) for i in ("flaky", "stuck")]
bg = [h("bg%d" % i) for i in range(1, 15)]
print(sum(1 for a in re for b in bg if b[0] < a[1] and a[0] < b[1]))
EOF
)
[ "$overlap" = 0 ] && ok recheck_runs_alone_on_the_worker || bad recheck_runs_alone_on_the_worker "$overlap overlaps"

# 7. a delivery of a job whose result is final already: its copies get that
#    stored result (copy_of), never a status-less one
$R hset dd:result:fin status ok passed true >/dev/null
$R xadd dd:jobs '*' id fin lang python code 'print(1)' copies '[{"id":"fin#1","meta":{"s":1}}]' >/dev/null
st=$($R blpop 'dd:done:fin#1' 30 | tail -1)
if [ "$st" = ok ] && [ "$($R hget 'dd:result:fin#1' status)" = ok ] &&
   [ "$($R hget 'dd:result:fin#1' copy_of)" = fin ] && [ "$($R hget 'dd:result:fin#1' meta)" = '{"s":1}' ]; then
    ok copies_of_a_final_result_get_it
else bad copies_of_a_final_result_get_it "done=[$st] $($R hgetall 'dd:result:fin#1' | tr '\n' ' ')"; fi

# 7b. a copies field that does not parse (an element of the wrong shape):
#     the job is invalid, and so is every copy whose id can be read
$R xadd dd:jobs '*' id badc lang python code 'print(1)' copies '[{"id":"badc#1"},{"id":"badc#2","x":1},5]' >/dev/null
st=$($R blpop 'dd:done:badc#1' 30 | tail -1),$($R blpop 'dd:done:badc#2' 30 | tail -1)
if [ "$st" = invalid,invalid ] && [ "$($R hget 'dd:result:badc' status)" = invalid ] &&
   [ "$($R hget 'dd:result:badc#2' copy_of)" = badc ] && $R hget 'dd:result:badc#2' error | grep -q 'copies\[1\]'; then
    ok copies_of_an_invalid_copies_field_get_invalid
else bad copies_of_an_invalid_copies_field_get_invalid "done=[$st] $($R hgetall 'dd:result:badc#2' | tr '\n' ' ')"; fi

# 8. 300 identical jobs with 60 KB of meta each: the copies are split over
#    runs under the byte limit of a copies field; every id gets its result
python3 - "$T/big.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(300):
        f.write(json.dumps({"id": "big#%d" % i, "lang": "python", "code": "print(7)",
                            "expect_stdout": "7", "meta": {"pad": "x" * 60000, "s": i}}) + "\n")
EOF
"$B" submit "$T/big.jsonl" --wait --timeout 60 --out "$T/big.out" >"$T/big.txt" 2>&1; rc=$?
got=$(jq -r 'select(.status == "ok" and .passed == true) | "\(.id) \(.meta.s)"' "$T/big.out" | awk '$1 == "big#" $2' | wc -l)
if [ "$rc" = 0 ] && [ "$got" = 300 ] && grep -q '^dedup: 300 jobs, 5 distinct programs run, 295 copies' "$T/big.txt"; then
    ok copies_split_under_the_byte_limit
else bad copies_split_under_the_byte_limit "rc=$rc got=$got $(grep -E '^dedup|submitted' "$T/big.txt")"; fi

# 9. --recheck-timeouts when a copy of a timed-out run was cancelled: the
#    cancelled copy keeps its result, the others are rechecked; no hang
cat > "$T/rc.jsonl" <<'EOF'
{"id":"rc#0","lang":"python","timeout":3,"code":"while True: pass\n"}
{"id":"rc#1","lang":"python","timeout":3,"code":"while True: pass\n"}
{"id":"rc#2","lang":"python","timeout":3,"code":"while True: pass\n"}
EOF
( for _ in $(seq 1 100); do [ "$($R hget 'dd:result:rc#1' status)" = running ] && break; sleep 0.1; done
  "$B" cancel 'rc#1' >/dev/null 2>&1 ) &
CP=$!
"$B" submit "$T/rc.jsonl" --wait --timeout 30 --recheck-timeouts --out "$T/rc.out" >"$T/rc.txt" 2>&1; rc=$?
wait $CP
if [ "$rc" = 1 ] && grep -q '^recheck: 2 timeout(s) run again alone, 0 changed (flaky)$' "$T/rc.txt" &&
   [ "$(jq -r '"\(.id) \(.status) \(.rechecked)"' "$T/rc.out" | tr '\n' ',')" = "rc#0 timeout true,rc#1 cancelled null,rc#2 timeout true," ]; then
    ok recheck_leaves_a_cancelled_copy_alone
else bad recheck_leaves_a_cancelled_copy_alone "rc=$rc $(tail -4 "$T/rc.txt"; jq -c '[.id, .status, .rechecked]' "$T/rc.out")"; fi

# 10. a recheck of a job without an id replaces the first result, under the
#     id (stream entry) it got first
before=$($R --scan --pattern 'dd:result:*' | wc -l)
echo '{"lang":"python","timeout":1,"code":"while True: pass\n"}' > "$T/noid.jsonl"
"$B" submit "$T/noid.jsonl" --wait --timeout 40 --recheck-timeouts --out "$T/noid.out" >"$T/noid.txt" 2>&1; rc=$?
after=$($R --scan --pattern 'dd:result:*' | wc -l)
nid=$(jq -r .id "$T/noid.out")
if [ "$rc" = 1 ] && [ $((after - before)) = 1 ] && [ "$($R hget "dd:result:$nid" rechecked)" = true ] &&
   grep -q '^recheck: 1 timeout(s) run again alone, 0 changed' "$T/noid.txt"; then
    ok recheck_of_a_job_without_id_replaces_its_result
else bad recheck_of_a_job_without_id_replaces_its_result "rc=$rc results=$((after - before)) $(tail -3 "$T/noid.txt")"; fi

echo "dedup: $pass passed, $fail failed"
[ "$fail" = 0 ]
