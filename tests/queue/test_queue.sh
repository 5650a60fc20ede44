#!/bin/bash
# test_queue.sh - the work queue against a real redis-server (temp port, AOF
# on) and the real dockerd: redis-cli XADD -> result; 200 jobs over 2 workers
# exactly once; kill -9 of a worker mid-job; kill -9 of Redis mid-run;
# malformed jobs; an infrastructure fault retried into a dead letter; cancel
# before and during a run (the cancel verb: ids, a file, --all); status
# --json and dead letters; SIGTERM under load; submit --local.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
FAKE=${FAKE_AGENT:-$ROOT/bin/tests/fake-agent}
T=$(mktemp -d /tmp/llmsb-qtest.XXXXXX)
PORT=$((16400 + $$ % 1000))
export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT
export LLMSB_CONFIG=$T/config.yaml
R="redis-cli -p $PORT"
pass=0; fail=0; WORKERS=""

cat > "$T/config.yaml" <<EOF
worker: {lease: 6, heartbeat_ttl: 3, block: 1, drain: 20}
pool: {min_idle: 1, wait: 30}
jobs: {max_attempts: 2}
EOF

cleanup() {
    for p in $WORKERS; do kill -9 "$p" 2>/dev/null; done
    $R shutdown nosave >/dev/null 2>&1
    sleep 0.5
    # containers our killed workers left behind
    remove_containers_of $WORKERS
    rm -rf "$T"
}
trap cleanup EXIT

ok() { echo "ok   queue.$1"; pass=$((pass + 1)); }
bad() { echo "FAIL queue.$1: $2"; fail=$((fail + 1)); }

start_redis() {
    redis-server --port "$PORT" --bind 127.0.0.1 --appendonly yes --appendfsync everysec \
        --dir "$T" --save '' --daemonize yes --logfile "$T/redis.log" --pidfile "$T/redis.pid"
    for _ in $(seq 1 50); do $R ping >/dev/null 2>&1 && return 0; sleep 0.1; done
    echo "redis did not start"; cat "$T/redis.log"; exit 1
}

start_worker() {  # start_worker NAME [slots [prefix]]
    LLMSB_PREFIX=${3:-llmsb} "$B" worker --name "$1" --slots "${2:-2}" >"$T/$1.log" 2>&1 &
    WORKERS="$WORKERS $!"
    disown $! 2>/dev/null
    eval "PID_$1=$!"
    for _ in $(seq 1 50); do [ "$($R exists ${3:-llmsb}:worker:$1)" = 1 ] && return 0; sleep 0.1; done
    echo "worker $1 did not come up"; cat "$T/$1.log"
}

status_of() { $R hget "llmsb:result:$1" status; }

wait_final() {  # wait_final SECONDS ID... -> prints how many lack a final result
    local deadline=$(( $(date +%s) + $1 )); shift
    local left
    while :; do
        left=0
        for id in "$@"; do
            s=$(status_of "$id"); [ -z "$s" ] || [ "$s" = running ] && left=$((left + 1))
        done
        [ "$left" = 0 ] || [ "$(date +%s)" -ge "$deadline" ] && break
        sleep 0.3
    done
    echo "$left"
}

results_count() {  # results_count ID -> entries for ID on the results stream
    $R xrange llmsb:results - + | grep -cx -- "$1"
}

start_redis

# 1. plain redis-cli XADD -> BLPOP -> HGETALL
start_worker w1
ID=$($R xadd llmsb:jobs '*' lang python code 'print(6*7)')
got=$($R blpop "llmsb:done:$ID" 60 | tail -1)
out=$($R hget "llmsb:result:$ID" stdout)
[ "$got" = ok ] && [ "$out" = 42 ] && ok redis_cli_xadd || bad redis_cli_xadd "done=$got stdout=$out"

# 1b. a plot through the queue: the result hash's artifacts field is JSON
# text with the PNG in base64; `result --artifacts` saves it
$R xadd llmsb:jobs '*' id plot-q lang python code 'import matplotlib.pyplot as plt; plt.plot([1, 2]); plt.show()' >/dev/null
got=$($R blpop "llmsb:done:plot-q" 60 | tail -1)
$R hget "llmsb:result:plot-q" artifacts > "$T/arts.json"
rm -rf "$T/qa"; $B result plot-q --artifacts "$T/qa" >/dev/null 2>&1
if [ "$got" = ok ] && python3 -c 'import json,sys,base64; a=json.load(open(sys.argv[1])); assert [x["name"] for x in a] == ["plot-001.png"] and base64.b64decode(a[0]["base64"])[:4] == b"\x89PNG"' "$T/arts.json" &&
   [ "$(head -c 4 "$T/qa/plot-q/plot-001.png" | od -An -c | tr -d ' ')" = '211PNG' ]; then
    ok plot_artifact_in_result_hash
else bad plot_artifact_in_result_hash "done=$got $(head -c 300 "$T/arts.json")"; fi

# 2. malformed jobs are invalid results, acknowledged, and the worker lives on
I1=$($R xadd llmsb:jobs '*' lang cobol code 'x')
I2=$($R xadd llmsb:jobs '*' lang python code 'x' timeout 99999)
I3=$($R xadd llmsb:jobs '*' lang python code 'x' args 'not json')
I4=$($R xadd llmsb:jobs '*' lang python)
I5=$($R xadd llmsb:jobs '*' id "$(printf 'bad\tid')" lang python code 'x')  # ids are printable text
I6=$($R xadd llmsb:jobs '*' lang python code 'x' files '{"../etc/passwd":"x"}')
I7=$($R xadd llmsb:jobs '*' lang python code 'x' colour blue)
left=$(wait_final 60 "$I1" "$I2" "$I3" "$I4" "$I5" "$I6" "$I7")
msgs="$($R hget llmsb:result:$I1 error)|$($R hget llmsb:result:$I2 error)|$($R hget llmsb:result:$I3 error)|$($R hget llmsb:result:$I4 error)|$($R hget llmsb:result:$I5 error)|$($R hget llmsb:result:$I6 error)|$($R hget llmsb:result:$I7 error)"
if [ "$left" = 0 ] && [ "$(status_of $I1)$(status_of $I2)$(status_of $I3)$(status_of $I4)$(status_of $I5)$(status_of $I6)$(status_of $I7)" = invalidinvalidinvalidinvalidinvalidinvalidinvalid ] &&
   echo "$msgs" | grep -q 'lang: unknown language "cobol"' && echo "$msgs" | grep -q 'timeout: 99999 s is above the ceiling' &&
   echo "$msgs" | grep -q 'args: "not json" is not a JSON array' && echo "$msgs" | grep -q 'code: is required' &&
   echo "$msgs" | grep -q 'id: "bad\\tid" must be printable UTF-8' && echo "$msgs" | grep -q 'contains ".."' && echo "$msgs" | grep -q 'colour: unknown job field' &&
   [ "$($R xpending llmsb:jobs llmsb-workers | head -1)" = 0 ] && kill -0 "$PID_w1"; then
    ok malformed_jobs_invalid
else bad malformed_jobs_invalid "left=$left msgs=$msgs"; fi

# 2a. the id is read first whatever else is wrong, so a producer waiting on
#     done:<id> is woken; more fields than a job has is invalid, not cut; a
#     job's own bad limits, image and files are invalid, never internal_error
$R xadd llmsb:jobs '*' meta '{bad' id meta-first lang python code 'print(1)' >/dev/null
many=""; for i in $(seq 1 70); do many="$many f$i v"; done
$R xadd llmsb:jobs '*' $many id crowded lang python code 'print(1)' >/dev/null
$R xadd llmsb:jobs '*' id jf-mem lang python code 'print(1)' memory 1 >/dev/null
$R xadd llmsb:jobs '*' id jf-cpu lang python code 'print(1)' cpus 0.001 >/dev/null
$R xadd llmsb:jobs '*' id jf-pids lang python code 'print(1)' pids 1 >/dev/null
$R xadd llmsb:jobs '*' id jf-image lang python code 'print(1)' image 'llmsb/../evil' >/dev/null
$R xadd llmsb:jobs '*' id jf-files lang python code 'print(1)' files '{"a":"1","a/b":"2"}' >/dev/null
$R xadd llmsb:jobs '*' id jf-hex lang python code 'print(1)' timeout 0x10 >/dev/null
$R xadd llmsb:jobs '*' id jf-yes lang python code 'print(1)' plots yes >/dev/null
$R xadd llmsb:jobs '*' id jf-env lang python code 'print(1)' env '{"A=B":"c"}' >/dev/null
woke=$($R blpop llmsb:done:meta-first 30 | tail -1)
left=$(wait_final 60 crowded jf-mem jf-cpu jf-pids jf-image jf-files jf-hex jf-yes jf-env)
all=""; for id in meta-first crowded jf-mem jf-cpu jf-pids jf-image jf-files jf-hex jf-yes jf-env; do all="$all $(status_of $id)"; done
dead=$($R xrange llmsb:dead - + | grep -c '^jf-')
if [ "$woke" = invalid ] && [ "$left" = 0 ] && [ "$all" = " invalid invalid invalid invalid invalid invalid invalid invalid invalid invalid" ] &&
   [ "$dead" = 0 ] && $R hget llmsb:result:crowded error | grep -q 'more than 64 fields' &&
   $R hget llmsb:result:jf-image error | grep -q 'not an image reference' &&
   $R hget llmsb:result:jf-mem error | grep -q 'below the minimum of 16 MB'; then ok job_faults_are_invalid_under_their_id
else bad job_faults_are_invalid_under_their_id "woke=$woke left=$left statuses:$all dead=$dead crowded=$($R hget llmsb:result:crowded error)"; fi

# 2b. the security check on the queue path: policy and inline security
$R xadd llmsb:jobs '*' id sec-policy lang python code 'import os; os.system("id")' policy development >/dev/null
$R xadd llmsb:jobs '*' id sec-inline lang ruby code 'puts 1' security '{"patterns":[{"pattern":"\\bputs\\b","severity":"high","description":"no puts"}]}' >/dev/null
$R xadd llmsb:jobs '*' id sec-bad lang python code 'print(1)' security '{"patterns":[{"pattern":"("}]}' >/dev/null
$R xadd llmsb:jobs '*' id sec-ok lang python code 'print(1)' policy strict >/dev/null
left=$(wait_final 60 sec-policy sec-inline sec-bad sec-ok)
v=$($R hget llmsb:result:sec-policy violations)
if [ "$left" = 0 ] && [ "$(status_of sec-policy)" = blocked ] && [ "$(status_of sec-inline)" = blocked ] &&
   [ "$(status_of sec-bad)" = invalid ] && [ "$(status_of sec-ok)" = ok ] &&
   echo "$v" | grep -q '"line":1' && $R hget llmsb:result:sec-inline violations | grep -q 'no puts' &&
   $R hget llmsb:result:sec-bad error | grep -q 'does not compile'; then ok security_on_the_queue
else bad security_on_the_queue "policy=$(status_of sec-policy) inline=$(status_of sec-inline) bad=$(status_of sec-bad) ok=$(status_of sec-ok) v=$v"; fi

# 3. cancel before the start, and during the run
$R set llmsb:cancel:c-before 1 >/dev/null
$R xadd llmsb:jobs '*' id c-before lang python code 'print(1)' >/dev/null
$R xadd llmsb:jobs '*' id c-during lang python code 'import time; print("up", flush=True); time.sleep(60)' timeout 120 >/dev/null
for _ in $(seq 1 100); do [ "$(status_of c-during)" = running ] && break; sleep 0.1; done
sleep 0.5; "$B" cancel c-during >"$T/cancel.out" 2>&1; crc=$?
t0=$(date +%s)
left=$(wait_final 30 c-before c-during)
if [ "$left" = 0 ] && [ "$(status_of c-before)" = cancelled ] && [ "$(status_of c-during)" = cancelled ] &&
   [ $crc = 0 ] && grep -q '^cancel requested: c-during$' "$T/cancel.out" &&
   [ $(( $(date +%s) - t0 )) -lt 10 ]; then ok cancel_before_and_during
else bad cancel_before_and_during "before=$(status_of c-before) during=$(status_of c-during) cancel rc=$crc: $(cat "$T/cancel.out")"; fi

# 3b. the cancel verb on queued jobs (a prefix no worker serves yet): by a
#     file's ids, then --all; an unknown id and a finished one are reported,
#     not marked (exit 1), and the jobs end cancelled once a worker comes
printf '{"id":"q/1","lang":"python","code":"print(1)"}\n{"id":"q 2","lang":"python","code":"print(2)"}\n{"lang":"python","code":"print(3)"}\n' > "$T/cq.jsonl"
printf '{"id":"q/1","lang":"python","code":"print(1)"}\n' > "$T/cq1.jsonl"
LLMSB_PREFIX=pc "$B" submit "$T/cq.jsonl" >/dev/null 2>&1
LLMSB_PREFIX=pc "$B" cancel --file "$T/cq1.jsonl" >"$T/cq1.out" 2>&1; c1=$?
LLMSB_PREFIX=pc "$B" cancel --all >"$T/cqa.out" 2>&1; c2=$?
LLMSB_PREFIX=pc "$B" cancel nobody c-during >"$T/cqn.out" 2>&1; c3=$?
LLMSB_PREFIX=pc "$B" cancel >/dev/null 2>&1; c4=$?
start_worker pc1 2 pc
deadline=$(( $(date +%s) + 60 )); third=""
while [ "$(date +%s)" -lt "$deadline" ]; do
    third=$($R xrange pc:results - + | grep -A1 '^id$' | grep -v '^id$\|^--' | grep -v '^q' | head -1)
    [ "$($R hget 'pc:result:q/1' status)$($R hget 'pc:result:q 2' status)" = cancelledcancelled ] && [ -n "$third" ] &&
        [ "$($R hget "pc:result:$third" status)" = cancelled ] && break
    sleep 0.3
done
if [ $c1 = 0 ] && grep -q '^cancel requested: q/1$' "$T/cq1.out" && [ $c2 = 0 ] &&
   grep -q '3 cancel request(s)' "$T/cqa.out" && [ $c3 = 1 ] && grep -q '^unknown: nobody ' "$T/cqn.out" &&
   grep -q '^unknown: c-during ' "$T/cqn.out" && [ $c4 = 2 ] &&
   [ "$($R hget 'pc:result:q/1' status)$($R hget 'pc:result:q 2' status)$($R hget "pc:result:$third" status)" = cancelledcancelledcancelled ] &&
   [ "$(LLMSB_PREFIX=pc "$B" cancel 'q 2' 2>/dev/null)" = "already finished: q 2 (cancelled)" ]; then ok cancel_verb_by_file_all_and_unknown
else bad cancel_verb_by_file_all_and_unknown "rc=$c1/$c2/$c3/$c4 third=$third $(cat "$T/cq1.out" "$T/cqa.out" "$T/cqn.out") q1=$($R hget 'pc:result:q/1' status)"; fi
kill -TERM $PID_pc1 2>/dev/null

# 4. an infrastructure fault (an image whose container cannot start) is
#    retried, then internal_error plus a dead letter
BASE=$(curl -s --unix-socket /var/run/docker.sock 'http://d/v1.41/images/json' | grep -o '"llmsb/base:[^"]*"' | head -1 | tr -d '"')
$R xadd llmsb:jobs '*' id infra lang python code 'print(1)' image "$BASE" >/dev/null
left=$(wait_final 90 infra)
dead=$($R xrange llmsb:dead - + | grep -c '^infra$')
att=$($R hget llmsb:result:infra attempts)
if [ "$left" = 0 ] && [ "$(status_of infra)" = internal_error ] && [ "$dead" = 1 ] && [ "$att" = 2 ] &&
   $R xrange llmsb:dead - + | grep -q '^reason$'; then ok infra_fault_retried_then_dead_letter
else bad infra_fault_retried_then_dead_letter "status=$(status_of infra) dead=$dead attempts=$att"; fi

# 4b. an agent that reports internal_error is an infrastructure failure too:
#     retried, then internal_error plus a dead letter (the agent is a TEST
#     DOUBLE, tests/doubles/fake_agent.c: the real one cannot be made to fail
#     its own part on demand)
rm -rf "$T/fake"; mkdir -p "$T/fake"
if [ -x "$FAKE" ] && cp "$FAKE" "$T/fake/llmsb-agent" &&
   printf 'FROM %s\nCOPY llmsb-agent /usr/local/bin/llmsb-agent\n' "$BASE" > "$T/fake/Dockerfile" &&
   docker build -q -t llmsb/test-fake-agent:latest "$T/fake" >/dev/null 2>"$T/fake/build.log"; then
    $R xadd llmsb:jobs '*' id agent-ie lang python code 'print(1)' image llmsb/test-fake-agent:latest >/dev/null
    left=$(wait_final 90 agent-ie)
    dead=$($R xrange llmsb:dead - + | grep -c '^agent-ie$')
    att=$($R hget llmsb:result:agent-ie attempts); why=$($R hget llmsb:result:agent-ie error)
    if [ "$left" = 0 ] && [ "$(status_of agent-ie)" = internal_error ] && [ "$dead" = 1 ] && [ "$att" = 2 ] &&
       echo "$why" | grep -q 'test double: the agent could not fork'; then ok agent_internal_error_retried_then_dead_letter
    else bad agent_internal_error_retried_then_dead_letter "status=$(status_of agent-ie) dead=$dead attempts=$att error=$why"; fi
else bad agent_internal_error_retried_then_dead_letter "cannot build the fake-agent image from $FAKE: $(cat "$T/fake/build.log" 2>/dev/null)"; fi

# 4b'. status --json and --dead: the dead letters of 4 and 4b, newest first
"$B" status --json --dead 2 >"$T/status.json" 2>&1; src=$?
"$B" status --dead 2 >"$T/status.txt" 2>&1
if [ $src = 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["dead"] >= 2 and d["workers_alive"] >= 1, d
assert [x["id"] for x in d["dead_letters"]] == ["agent-ie", "infra"], d["dead_letters"]
assert d["dead_letters"][0]["attempts"] == "2" and d["dead_letters"][0]["reason"], d["dead_letters"]
assert all(isinstance(w["slots"], (int, float)) for w in d["workers"]), d["workers"]
' "$T/status.json" 2>"$T/status.err" && grep -q 'attempts=2 .* infra\|infra .*attempts=2' "$T/status.txt"; then ok status_json_and_dead_letters
else bad status_json_and_dead_letters "rc=$src $(cat "$T/status.err") $(head -c 600 "$T/status.json") $(cat "$T/status.txt")"; fi

# 4c. two deployments (two prefixes) on one engine: neither's reaper removes
#     the other's containers, so jobs longer than a reaper pass both finish
#     on their first attempt
start_worker pa1 1 pa; start_worker pb1 1 pb
$R xadd pa:jobs '*' id two-a lang python code 'import time; time.sleep(14); print("a")' timeout 60 >/dev/null
$R xadd pb:jobs '*' id two-b lang python code 'import time; time.sleep(14); print("b")' timeout 60 >/dev/null
deadline=$(( $(date +%s) + 90 ))
while [ "$($R hget pa:result:two-a status)$($R hget pb:result:two-b status)" != okok ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.5; done
if [ "$($R hget pa:result:two-a status)" = ok ] && [ "$($R hget pb:result:two-b status)" = ok ] &&
   [ "$($R hget pa:result:two-a attempts)$($R hget pb:result:two-b attempts)" = 11 ] &&
   ! grep -q 'reaper: removing' "$T/pa1.log" "$T/pb1.log"; then ok two_prefixes_share_one_engine
else bad two_prefixes_share_one_engine "a=$($R hget pa:result:two-a status)/$($R hget pa:result:two-a attempts) b=$($R hget pb:result:two-b status)/$($R hget pb:result:two-b attempts) $(grep -h reaper "$T/pa1.log" "$T/pb1.log" | head -3)"; fi
kill -TERM $PID_pa1 $PID_pb1 2>/dev/null

# 5. 200 jobs over 2 workers: 200 results, each exactly once
start_worker w2
IDS=$(for i in $(seq 1 200); do printf 'bulk-%d ' "$i"; done)
for i in $(seq 1 200); do echo "XADD llmsb:jobs * id bulk-$i lang python code print($i*2)"; done | $R >/dev/null
left=$(wait_final 240 $IDS)
wrong=0; dup=0
for i in $(seq 1 200); do
    [ "$($R hget llmsb:result:bulk-$i stdout)" = "$((i * 2))" ] || wrong=$((wrong + 1))
    [ "$(results_count bulk-$i)" = 1 ] || dup=$((dup + 1))
done
by1=$($R xrange llmsb:results - + | grep -c . ); w1n=$($R hget llmsb:worker:w1 done); w2n=$($R hget llmsb:worker:w2 done)
if [ "$left" = 0 ] && [ "$wrong" = 0 ] && [ "$dup" = 0 ]; then ok bulk_200_exactly_once
else bad bulk_200_exactly_once "left=$left wrong=$wrong not-once=$dup"; fi
echo "  (w1 done=$w1n, w2 done=$w2n)"

# 6. kill -9 of a worker mid-job: the other worker finishes it, one result
$R xadd llmsb:jobs '*' id k9 lang python code 'import time; time.sleep(3); print("survived")' timeout 30 >/dev/null
for _ in $(seq 1 100); do [ "$(status_of k9)" = running ] && break; sleep 0.1; done
owner=$($R hget llmsb:result:k9 worker)
eval "victim=\$PID_$owner"
kill -9 "$victim"
left=$(wait_final 60 k9)
if [ "$left" = 0 ] && [ "$(status_of k9)" = ok ] && [ "$($R hget llmsb:result:k9 stdout)" = survived ] &&
   [ "$($R hget llmsb:result:k9 worker)" != "$owner" ] && [ "$(results_count k9)" = 1 ]; then
    ok kill9_worker_mid_job
else bad kill9_worker_mid_job "status=$(status_of k9) owner=$owner now=$($R hget llmsb:result:k9 worker)"; fi
[ "$owner" = w1 ] && start_worker w1 || start_worker w2

# 7. kill -9 of Redis mid-run, restart: no job lost
IDS=$(for i in $(seq 1 40); do printf 'rk-%d ' "$i"; done)
for i in $(seq 1 40); do echo "XADD llmsb:jobs * id rk-$i lang python code \"import time;time.sleep(0.2);print($i)\""; done | $R >/dev/null
sleep 1.5   # AOF everysec: entries older than a second are on disk
kill -9 "$(cat "$T/redis.pid")"; sleep 2
start_redis
left=$(wait_final 180 $IDS)
lost=0; dup=0
for i in $(seq 1 40); do
    [ "$($R hget llmsb:result:rk-$i stdout)" = "$i" ] || lost=$((lost + 1))
    [ "$(results_count rk-$i)" -le 1 ] || dup=$((dup + 1))
done
if [ "$left" = 0 ] && [ "$lost" = 0 ] && [ "$dup" = 0 ]; then ok kill9_redis_no_job_lost
else bad kill9_redis_no_job_lost "left=$left lost=$lost dup=$dup"; fi

# 8. SIGTERM under load: drain, nothing lost, nothing doubled
IDS=$(for i in $(seq 1 30); do printf 'st-%d ' "$i"; done)
for i in $(seq 1 30); do echo "XADD llmsb:jobs * id st-$i lang python code \"import time;time.sleep(0.5);print($i)\""; done | $R >/dev/null
sleep 2
kill -TERM $PID_w1 $PID_w2
start_worker w3
left=$(wait_final 180 $IDS)
lost=0; dup=0
for i in $(seq 1 30); do
    [ "$($R hget llmsb:result:st-$i stdout)" = "$i" ] || lost=$((lost + 1))
    [ "$(results_count st-$i)" = 1 ] || dup=$((dup + 1))
done
drained=$(grep -c 'draining' "$T/w1.log" "$T/w2.log" | awk -F: '{s+=$2} END {print s}')
if [ "$left" = 0 ] && [ "$lost" = 0 ] && [ "$dup" = 0 ] && [ "$drained" -ge 1 ]; then ok sigterm_under_load
else bad sigterm_under_load "left=$left lost=$lost dup=$dup drained=$drained"; fi
[ "$($R xpending llmsb:jobs llmsb-workers | head -1)" = 0 ] && ok nothing_pending_at_rest || bad nothing_pending_at_rest "$($R xpending llmsb:jobs llmsb-workers | head -1) pending"

# 9. submit --wait and result --wait against the worker
cat > "$T/jobs.yaml" <<'EOF'
defaults: {lang: python}
jobs:
  - {id: s1, code: 'print("a")', expect_stdout: a}
  - {id: s2, lang: ruby, code: 'puts 2', expect_stdout: "3"}
EOF
"$B" submit "$T/jobs.yaml" --wait --out "$T/out.jsonl" >"$T/submit.out" 2>&1; rc=$?
# exit 1: s2 did not pass, and the summary says which and why
if [ "$rc" = 1 ] && [ "$(wc -l < "$T/out.jsonl")" = 2 ] && head -1 "$T/out.jsonl" | grep -q '"id":"s1"' &&
   grep -q 'total .* 50.0%' "$T/submit.out" && grep -q '^  s2 (.*jobs.yaml:4): ok but not passed' "$T/submit.out" &&
   "$B" result s2 --wait 5 | grep -q '"passed":	false'; then
    ok submit_wait_out_and_result
else bad submit_wait_out_and_result "rc=$rc $(cat "$T/submit.out")"; fi

# 9b. the same ids again: refused with their statuses (nothing enqueued),
#     kept with --reuse (not run again), run again with --rerun
"$B" submit "$T/jobs.yaml" >"$T/again.out" 2>&1; r1=$?
"$B" submit "$T/jobs.yaml" --reuse --wait >"$T/reuse.out" 2>&1; r2=$?
att=$($R hget llmsb:result:s1 finished_at)
"$B" submit "$T/jobs.yaml" --rerun --wait >"$T/rerun.out" 2>&1; r3=$?
if [ $r1 = 2 ] && grep -q 'jobs.yaml:3: id "s1" already has a result (ok)' "$T/again.out" &&
   grep -q 'nothing was enqueued' "$T/again.out" &&
   [ $r2 = 1 ] && grep -q 'kept (--reuse), not enqueued again' "$T/reuse.out" &&
   [ $r3 = 1 ] && grep -q 'deleted and enqueued again (--rerun)' "$T/rerun.out" &&
   [ "$($R hget llmsb:result:s1 status)" = ok ] && [ "$($R hget llmsb:result:s1 finished_at)" != "$att" ]; then
    ok submit_existing_ids_refused_reused_rerun
else bad submit_existing_ids_refused_reused_rerun "rc=$r1/$r2/$r3 $(cat "$T/again.out" "$T/reuse.out" "$T/rerun.out" | head -20)"; fi

# 10. submit --local: no Redis at all
LLMSB_REDIS_URL=redis://127.0.0.1:1 "$B" submit "$T/jobs.yaml" --local --out "$T/local.jsonl" >"$T/local.out" 2>&1; rc=$?
if [ "$rc" = 1 ] && grep -q '"id":"s1","status":"ok"' "$T/local.jsonl" && grep -q '"id":"s2"' "$T/local.jsonl"; then
    ok submit_local_no_redis
else bad submit_local_no_redis "rc=$rc $(cat "$T/local.out")"; fi

echo "queue: $pass passed, $fail failed"
[ "$fail" = 0 ]
