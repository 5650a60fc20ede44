#!/bin/bash
# tests/faults/run.sh - the fault suite: kill -9 of a worker mid-job, kill -9
# of Redis (AOF, appendfsync always) mid-run, and kill -9 of the container
# engine with a 20 s outage mid-run.  Each reports the jobs lost, the jobs
# with more than one result and the containers left behind; all must be 0.
#
# Everything runs on a private dockerd (its own socket, data root, exec
# root, pidfile, bridge and cgroup parent; never the system daemon, whose
# docker0 a second daemon with --bridge=none would delete) and a private
# redis-server on a temporary port.  The image is the system daemon's
# llmsb/ruby (the smallest), copied with docker save | docker load.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
LANG_=ruby
OUTAGE_S=${FAULT_OUTAGE_S:-20}
FD=$(mktemp -d /tmp/llmsb-fd.XXXXXX) # short: the socket path must fit sun_path
T=$FD
BR=llmsbfd$(($$ % 100000))
pass=0; fail=0; WORKERS=""

for tool in dockerd docker redis-server redis-cli ip; do
    command -v "$tool" >/dev/null || { echo "FAIL faults.setup: $tool is not installed"; exit 1; }
done
for _ in $(seq 1 20); do
    PORT=$((20000 + RANDOM % 10000))
    redis-cli -p "$PORT" ping >/dev/null 2>&1 || break
done
R="redis-cli -p $PORT"
export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT
export LLMSB_CONFIG=$FD/config.yaml

ok() { echo "ok   faults.$1"; pass=$((pass + 1)); }
bad() { echo "FAIL faults.$1: $2"; fail=$((fail + 1)); }

# ---- the private engine ------------------------------------------------------

cleanup() {
    for p in $WORKERS; do kill -9 "$p" 2>/dev/null; done
    $R shutdown nosave >/dev/null 2>&1
    pe_cleanup
    rm -rf "$FD"
}
trap cleanup EXIT

pe_init "$FD" "$BR" || { echo "FAIL faults.setup: cannot make bridge $BR"; exit 1; }
start_engine() { pe_start || { echo "FAIL faults.engine: the private dockerd did not start"; exit 1; }; }
start_engine
t0=$(date +%s)
pe_load "llmsb/$LANG_:latest" ||
    { echo "FAIL faults.setup: cannot copy llmsb/$LANG_ to the private engine"; exit 1; }
echo "  (private dockerd up, llmsb/$LANG_ loaded in $(( $(date +%s) - t0 )) s)"

cat >"$FD/config.yaml" <<EOF
backend: {host: "unix://$PE_SOCK"}
worker: {lease: 6, heartbeat_ttl: 3, block: 1, drain: 20}
pool: {min_idle: 1, wait: 30}
jobs: {max_attempts: 3}
EOF

# ---- redis and workers ---------------------------------------------------------

start_redis_aof() {
    start_redis "$PORT" "$FD" --appendonly yes --appendfsync always ||
        { echo "FAIL faults.redis: redis-server did not start"; tail -5 "$FD/redis.log"; exit 1; }
}

start_worker() { # start_worker NAME
    start_named_worker "$B" "$1" 2 || { echo "FAIL faults.worker: $1 did not come up"; exit 1; }
}

stop_worker() { # stop_worker NAME: SIGTERM, wait for the drain
    local pid
    eval "pid=\$PID_$1"
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    echo "  (worker $1 did not stop in 30 s)"
}

queue_jobs() { # queue_jobs TAG N: jobs TAG-1..N print their number after 1.5 s
    for i in $(seq 1 "$2"); do
        echo "XADD llmsb:jobs * id $1-$i lang $LANG_ timeout 30 code \"sleep 1.5; puts $i\""
    done | $R >/dev/null
}

running_on() { # running_on WORKER -> jobs it runs now
    local n=0 k
    for k in $($R --scan --pattern 'llmsb:result:*'); do
        [ "$($R hget "$k" status)" = running ] && [ "$($R hget "$k" worker)" = "$1" ] && n=$((n + 1))
    done
    echo "$n"
}

wait_running() { # wait_running WORKER SECONDS
    for _ in $(seq 1 $(($2 * 5))); do [ "$(running_on "$1")" -ge 1 ] && return 0; sleep 0.2; done
    return 1
}

# counts TAG N: sets lost (no ok result with the right output), doubled
# (more than one result on the results stream), burned (internal_error),
# after waiting up to 240 s for every job to end
counts() {
    local deadline=$(( $(date +%s) + 240 )) i s left
    while :; do
        left=0
        for i in $(seq 1 "$2"); do
            s=$($R hget "llmsb:result:$1-$i" status)
            [ -z "$s" ] || [ "$s" = running ] && left=$((left + 1))
        done
        [ "$left" = 0 ] || [ "$(date +%s)" -ge "$deadline" ] && break
        sleep 0.5
    done
    lost=0; doubled=0; burned=0
    $R xrange llmsb:results - + >"$FD/results.txt"
    for i in $(seq 1 "$2"); do
        [ "$($R hget "llmsb:result:$1-$i" status)" = ok ] &&
            [ "$($R hget "llmsb:result:$1-$i" stdout)" = "$i" ] || lost=$((lost + 1))
        [ "$($R hget "llmsb:result:$1-$i" status)" = internal_error ] && burned=$((burned + 1))
        [ "$(grep -cx -- "$1-$i" "$FD/results.txt")" -le 1 ] || doubled=$((doubled + 1))
    done
}

# left_behind FILTER SECONDS: containers matching FILTER once they are gone,
# or after SECONDS
left_behind() {
    local n
    for _ in $(seq 1 "$2"); do
        n=$($PE ps -aq --filter "$1" | wc -l)
        [ "$n" = 0 ] && break
        sleep 1
    done
    echo "$n"
}

start_redis_aof
start_worker w1
start_worker w2

# 1. kill -9 of a worker mid-job: the other finishes its jobs, one result
# each, and removes the dead worker's containers
queue_jobs k 16
wait_running w1 60 || bad worker_kill9 "w1 never ran a job"
kill -9 "$PID_w1"
counts k 16
left=$(left_behind label=llmsb.worker=w1 60)
echo "faults: worker kill -9 mid-job: 16 jobs, $lost lost, $doubled doubled, $left containers left"
if [ "$lost" = 0 ] && [ "$doubled" = 0 ] && [ "$left" = 0 ]; then ok worker_kill9
else bad worker_kill9 "lost=$lost doubled=$doubled left=$left"; fi

# 2. kill -9 of Redis mid-run; it comes back from its AOF
start_worker w3
queue_jobs r 30
wait_running w2 60 || wait_running w3 10 || bad redis_kill9 "no job ran"
kill -9 "$(cat "$FD/redis.pid")"
sleep 2
start_redis_aof
counts r 30
echo "faults: redis kill -9 mid-run (AOF): 30 jobs, $lost lost, $doubled doubled"
if [ "$lost" = 0 ] && [ "$doubled" = 0 ]; then ok redis_kill9_aof
else bad redis_kill9_aof "lost=$lost doubled=$doubled"; fi

# 3. kill -9 of the engine mid-run, back after OUTAGE_S: the workers pause
# instead of burning attempts, every job ends ok once, and the containers
# the crash killed are removed while the workers run on
queue_jobs e 12
wait_running w2 60 || wait_running w3 10 || bad engine_kill9 "no job ran"
kill -9 "$(pe_pid)"
t0=$(date +%s)
sleep "$OUTAGE_S"
start_engine
echo "  (engine back after $(( $(date +%s) - t0 )) s)"
counts e 12
left=$(left_behind status=exited 60)
paused=$(grep -l "taking no jobs until it does" "$FD/w2.log" "$FD/w3.log" | wc -l)
resumed=$(grep -l "answers again; taking jobs" "$FD/w2.log" "$FD/w3.log" | wc -l)
echo "faults: engine kill -9, ${OUTAGE_S} s outage mid-run: 12 jobs, $lost lost, $doubled doubled," \
    "$burned internal_error, $left dead containers left; $paused worker(s) paused, $resumed resumed"
if [ "$lost" = 0 ] && [ "$doubled" = 0 ] && [ "$left" = 0 ] && [ "$paused" -ge 1 ] &&
   [ "$paused" = "$resumed" ]; then ok engine_kill9_outage
else
    bad engine_kill9_outage "lost=$lost doubled=$doubled internal_error=$burned left=$left paused=$paused resumed=$resumed"
    grep -h "job=e-\|engine\|pool\|reaper" "$FD/w2.log" "$FD/w3.log" | tail -20 | sed 's/^/  | /'
fi

# 4. the workers stop: nothing of theirs stays on the engine
stop_worker w2
stop_worker w3
all=$($PE ps -aq | wc -l)
echo "faults: after the workers stopped: $all containers on the engine"
[ "$all" = 0 ] && ok nothing_left_after_stop || bad nothing_left_after_stop "$all containers: $($PE ps -a --format '{{.Names}} {{.Status}}' | head -5)"

echo "faults: $pass passed, $fail failed"
[ "$fail" = 0 ]
