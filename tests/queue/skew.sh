#!/bin/bash
# skew.sh - workers of two protocol levels on one queue (docs/operations.md,
# rolling upgrades), against a redis-server of its own and the real
# dockerd.  The older level is a real binary: this repository's commit
# before dedup and live output (the parent of "submit: identical programs
# run once"), built from its history once and cached by commit under
# /var/cache/llmsb-test (its workers run this build's images: their
# :latest tags).  The newer level is this build.  Front ends read the
# heartbeats before they use a feature: submit sends copies as plain jobs
# and live jobs without live while the older worker is alive, and refuses
# --recheck-timeouts naming it; MCP --queue runs a call with a progress
# token without live output and says why in its progress; no job ends
# invalid for who took it.  This build's worker publishes its protocol
# and features (status shows them), keeps dedup and live when every
# worker has them, and a job that needs a feature it lacks goes to a
# worker that has it (a heartbeat of a future worker: a test double, as
# no such binary exists yet) or, with none alive, ends internal_error with
# a dead letter naming the feature.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
OLD_COMMIT=b2e0e733b70724cfa08f71ddbb9a86f76caa31fe
CACHE=${LLMSB_TEST_CACHE:-/var/cache/llmsb-test}/old-worker/$OLD_COMMIT
OLD=$CACHE/llm-sandbox
T=$(mktemp -d /tmp/llmsb-skew.XXXXXX)
PORT=$(free_port)
PREFIX=sk$$
export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT LLMSB_PREFIX=$PREFIX LLMSB_CONFIG=$T/config.yaml
printf 'worker: {lease: 6, heartbeat_ttl: 3, block: 1, drain: 20}\n' >"$T/config.yaml"
R="redis-cli -p $PORT"
suite skew; WORKERS=""

cleanup() {
    stop_workers_and_redis
    rm -rf "$T"
}
trap cleanup EXIT

# the older binary: built once per commit (git archive of this checkout's
# history, then make), cached; a checkout without that commit fails here
if [ ! -x "$OLD" ]; then
    echo "skew: building the worker of $OLD_COMMIT (once; cached in $CACHE)"
    src=$T/old-src
    mkdir -p "$src" "$CACHE" &&
        git -C "$ROOT" archive "$OLD_COMMIT" | tar -x -C "$src" &&
        make -C "$src" -j2 bin/llm-sandbox >"$T/old-build.log" 2>&1 &&
        cp "$src/bin/llm-sandbox" "$OLD.$$" && mv "$OLD.$$" "$OLD" ||
        { echo "FAIL skew: cannot build the worker of $OLD_COMMIT"; tail -20 "$T/old-build.log"; exit 1; }
    rm -rf "$src"
fi

start_redis "$PORT" "$T" || { echo "skew: redis-server did not start"; exit 1; }

start_worker() { start_named_worker "$1" "$2" 1; }  # start_worker BINARY NAME
stop_worker() {  # stop_worker NAME: it drains and ends; its heartbeat goes with it
    stop_named_worker "$1"
    $R del "$PREFIX:worker:$1" >/dev/null
}

start_worker "$OLD" sk-old
start_worker "$B" sk-new

# 1. the heartbeats: this build's names its protocol and features, the
#    older one neither; status shows both (the older as protocol 0)
"$B" status >"$T/status.txt" 2>&1
"$B" status --json >"$T/status.json" 2>&1
if [ "$($R hget "$PREFIX:worker:sk-new" protocol)" = 1 ] &&
   [ "$($R hget "$PREFIX:worker:sk-new" features)" = dedup,recheck,live ] &&
   [ "$($R hexists "$PREFIX:worker:sk-old" features)" = 0 ] &&
   grep -q 'sk-new .* protocol=1 features=dedup,recheck,live' "$T/status.txt" &&
   grep -q 'sk-old .* protocol=0 features=-' "$T/status.txt" &&
   [ "$(jq -c '[.workers[] | [.name, .protocol]] | sort' "$T/status.json")" = '[["sk-new",1],["sk-old",0]]' ]; then
    ok heartbeats_name_protocol_and_features
else
    cat "$T/status.txt" >"$T/why"; bad heartbeats_name_protocol_and_features "status or heartbeat"
fi

# from here to case 6 only the older worker is alive: whatever it takes
stop_worker sk-new

# 2. dedup beside an older worker: copies would be invalid there (and
#    their results never written), so every job goes as its own run
cat >"$T/dups.jsonl" <<'EOF'
{"id":"d#0","lang":"python","code":"print(6 * 7)","expect_stdout":"42"}
{"id":"d#1","lang":"python","code":"print(6 * 7)","expect_stdout":"42","meta":{"s":1}}
{"id":"d#2","lang":"python","code":"print(6 * 7)","expect_stdout":"42","meta":{"s":2}}
{"id":"e#0","lang":"python","code":"print('e')"}
{"id":"e#1","lang":"python","code":"print('e')"}
EOF
"$B" submit "$T/dups.jsonl" --wait --timeout 60 --out "$T/dups.out" >"$T/dups.txt" 2>&1; rc=$?
if [ "$rc" = 0 ] && [ "$(jq -r .status "$T/dups.out" | sort | uniq -c | tr -s ' ')" = " 5 ok" ] &&
   [ "$(jq -r 'select(.copy_of) | .id' "$T/dups.out" | wc -l)" = 0 ] &&
   [ "$(jq -r .worker "$T/dups.out" | sort -u)" = sk-old ] &&
   grep -q '1 of 1 live worker(s) are older than dedup (the copies field): sk-old (protocol 0); dedup is off' "$T/dups.txt" &&
   grep -q '^dedup: off (workers older than dedup): 5 jobs, 5 runs' "$T/dups.txt"; then
    ok dedup_falls_back_to_plain_jobs_beside_an_older_worker
else
    { tail -12 "$T/dups.txt"; jq -c '[.id, .status, .error]' "$T/dups.out"; } >"$T/why" 2>&1
    bad dedup_falls_back_to_plain_jobs_beside_an_older_worker "rc=$rc"
fi

# 3. a live job beside an older worker: sent without live, it runs and
#    result --follow prints its output from the result
printf '%s\n' '{"id":"lv","lang":"python","live":true,"code":"print(\"live?\")"}' >"$T/live.jsonl"
"$B" submit "$T/live.jsonl" --wait --timeout 60 --out "$T/live.out" >"$T/live.txt" 2>&1; rc=$?
"$B" result lv --follow >"$T/follow.out" 2>"$T/follow.err"; frc=$?
if [ "$rc" = 0 ] && [ "$(jq -r '"\(.status) \(.stdout)"' "$T/live.out")" = "ok live?" ] &&
   grep -q 'older than live output (the live field): sk-old (protocol 0); the 1 job(s) with live are sent without it' "$T/live.txt" &&
   [ "$frc" = 0 ] && [ "$(cat "$T/follow.out")" = 'live?' ] && [ "$($R exists "$PREFIX:out:lv")" = 0 ]; then
    ok live_job_runs_without_live_output_on_an_older_worker
else
    { tail -6 "$T/live.txt"; jq -c '[.status, .error]' "$T/live.out"; cat "$T/follow.err"; } >"$T/why" 2>&1
    bad live_job_runs_without_live_output_on_an_older_worker "rc=$rc follow=$frc"
fi

# 4. --recheck-timeouts beside an older worker: refused before anything
#    is sent (its rechecks would be invalid there), naming the worker
before=$($R xlen "$PREFIX:jobs")
printf '%s\n' '{"id":"rc1","lang":"python","timeout":1,"code":"while True: pass"}' >"$T/re.jsonl"
"$B" submit "$T/re.jsonl" --wait --timeout 30 --recheck-timeouts >"$T/re.txt" 2>&1; rc=$?
if [ "$rc" = 2 ] && [ "$($R xlen "$PREFIX:jobs")" = "$before" ] && [ "$($R exists "$PREFIX:result:rc1")" = 0 ] &&
   grep -q 'older than recheck (the recheck field): sk-old (protocol 0); upgrade them, or submit without --recheck-timeouts (nothing was enqueued)' "$T/re.txt"; then
    ok recheck_is_refused_naming_the_older_worker
else
    cat "$T/re.txt" >"$T/why"; bad recheck_is_refused_naming_the_older_worker "rc=$rc"
fi

# 5. MCP through the queue: a call with a progress token beside an older
#    worker runs without live output, its progress saying why once
(cd "$ROOT/tests/mcp" && node "$ROOT/tests/queue/skew_mcp.mjs" "$B" 'print("via mcp")' --queue --wait 60) \
    >"$T/mcp.json" 2>"$T/mcp.err"; rc=$?
if [ "$rc" = 0 ] && jq -e '.isError == false and (.text | index("via mcp\n")) != null and
        (.text | map(select(startswith("status: ok"))) | length) == 1 and (.progress | length) == 1 and
        (.progress[0].message | test("no live output for this call: 1 of 1 live worker\\(s\\) are older than it: sk-old \\(protocol 0\\)"))' \
        "$T/mcp.json" >/dev/null; then
    ok mcp_progress_call_runs_without_live_output_on_an_older_worker
else
    { cat "$T/mcp.json"; tail -5 "$T/mcp.err"; } >"$T/why"
    bad mcp_progress_call_runs_without_live_output_on_an_older_worker "rc=$rc"
fi
[ "$(grep -c 'status=invalid' "$T/sk-old.log")" = 0 ] && ok no_job_invalid_on_the_older_worker ||
    { grep 'invalid' "$T/sk-old.log" >"$T/why"; bad no_job_invalid_on_the_older_worker "the older worker called a job invalid"; }

# 6. both levels at once: a file with duplicates and a live job: dedup
#    off, live off, every result from either worker valid
start_worker "$B" sk-new
python3 - "$T/mix.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(8):
        f.write(json.dumps({"id": "m#%d" % i, "lang": "python", "code": "print(%d)" % (i % 3),
                            "live": i == 0}) + "\n")
EOF
"$B" submit "$T/mix.jsonl" --wait --timeout 60 --out "$T/mix.out" >"$T/mix.txt" 2>&1; rc=$?
if [ "$rc" = 0 ] && [ "$(jq -r .status "$T/mix.out" | sort | uniq -c | tr -s ' ')" = " 8 ok" ] &&
   grep -q '^dedup: off (workers older than dedup): 8 jobs, 8 runs' "$T/mix.txt"; then
    ok both_levels_serve_one_queue
else
    { tail -8 "$T/mix.txt"; jq -c '[.id, .status, .worker, .error]' "$T/mix.out"; } >"$T/why" 2>&1
    bad both_levels_serve_one_queue "rc=$rc"
fi

# from here only this build's worker: dedup and live as before
stop_worker sk-old
"$B" submit "$T/dups.jsonl" --wait --timeout 60 --rerun --out "$T/dups2.out" >"$T/dups2.txt" 2>&1; rc=$?
printf '%s\n' '{"id":"lv2","lang":"python","live":true,"code":"print(\"live!\")"}' >"$T/live2.jsonl"
"$B" submit "$T/live2.jsonl" --wait --timeout 60 >"$T/live2.txt" 2>&1
if [ "$rc" = 0 ] && grep -q '^dedup: 5 jobs, 2 distinct programs run, 3 copies' "$T/dups2.txt" &&
   ! grep -q 'older than' "$T/dups2.txt" "$T/live2.txt" &&
   $R --raw xrange "$PREFIX:out:lv2" - + | grep -qx 'live!'; then
    ok every_worker_at_this_level_keeps_dedup_and_live
else
    { tail -5 "$T/dups2.txt" "$T/live2.txt"; } >"$T/why" 2>&1
    bad every_worker_at_this_level_keeps_dedup_and_live "rc=$rc"
fi

# 7. a job that needs a feature no live worker has: internal_error with a
#    dead letter naming it, never invalid
$R xadd "$PREFIX:jobs" '*' id nd1 lang python code 'print(1)' needs teleport >/dev/null
st=$($R blpop "$PREFIX:done:nd1" 30 | tail -1)
if [ "$st" = internal_error ] &&
   $R hget "$PREFIX:result:nd1" error | grep -q 'needs the feature "teleport", which this worker (protocol 1: dedup,recheck,live) does not know, and no live worker publishes all of "teleport" (1 alive)' &&
   $R --raw xrange "$PREFIX:dead" - + | grep -qx nd1; then
    ok needs_an_unknown_feature_ends_internal_error_not_invalid
else
    { echo "done: $st"; $R hgetall "$PREFIX:result:nd1"; } >"$T/why"
    bad needs_an_unknown_feature_ends_internal_error_not_invalid "status $st"
fi

# 8. ... and with a worker alive that publishes it (TEST DOUBLE: the
#    heartbeat of a future worker, which no binary can be yet) it is
#    handed to that worker, as a session's call is; one that never takes
#    it (this double) has it reclaimed after the lease, each time counted,
#    and past max_attempts deliveries it ends internal_error saying so
$R hset "$PREFIX:worker:sk-future" host h pid 1 slots 4 busy 0 protocol 2 \
    features dedup,recheck,live,teleport >/dev/null
$R pexpire "$PREFIX:worker:sk-future" 60000 >/dev/null
$R xadd "$PREFIX:jobs" '*' id nd2 lang python code 'print(2)' needs live,teleport >/dev/null
owner=""
for _ in $(seq 1 100); do
    owner=$($R xpending "$PREFIX:jobs" "$PREFIX-workers" - + 10 | sed -n 2p)
    [ "$owner" = sk-future ] && break; sleep 0.1
done
st=$($R blpop "$PREFIX:done:nd2" 60 | tail -1)
if [ "$owner" = sk-future ] && grep -q 'job=nd2 needs live,teleport, which this worker (protocol 1) lacks: handed to sk-future' "$T/sk-new.log" &&
   [ "$st" = internal_error ] && [ "$($R hget "$PREFIX:result:nd2" attempts)" = 4 ] &&
   $R hget "$PREFIX:result:nd2" error | grep -q 'needs the feature "teleport", which this worker (protocol 1: dedup,recheck,live) does not know; handed to workers that publish all of "live,teleport" (sk-future), it came back 3 times (max_attempts 3)'; then
    ok needs_a_feature_another_worker_has_is_handed_to_it
else
    { echo "owner: $owner done: $st"; grep nd2 "$T/sk-new.log"; $R hgetall "$PREFIX:result:nd2"; } >"$T/why"
    bad needs_a_feature_another_worker_has_is_handed_to_it "owner $owner, status $st"
fi

echo "skew: $pass passed, $fail failed"
[ "$fail" = 0 ]
