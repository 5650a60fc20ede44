#!/bin/bash
# lanes.sh - priority and tenant lanes (docs/operations.md, priorities and
# tenants) against a real redis-server and one real worker with 1 slot on
# the system dockerd, trivial Python jobs.  With one slot the order of the
# results stream is the order the jobs started in.
#   (a) 50 low then 5 high queued before the worker starts: the highs go
#       first (weighted: all 5 in the first 6 starts; strict: the first 5);
#   (b) 200 normal then 20 low: low is not starved, about 1 in 5 (4:1);
#   (c) tenant A 300 jobs then tenant B 10: B's all end within the first
#       ~30 (without tenants they would be 301 to 310);
#   (d) the default lane unchanged: no P:lanes, one XREADGROUP per job;
#   (e) kill -9 of the worker mid-run over lanes, a new worker: every job
#       has exactly one result and ran to completion once (workers' logs);
#   (f) 3 slots, jobs arriving while the worker idles (the blocking read
#       over lanes, its extras given back): one result each, highs that
#       come later start before the queued lows.
# LANES_REDIS_PORT picks the port (default 7500 + pid % 100).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
T=$(mktemp -d /tmp/llmsb-lanes.XXXXXX)
PORT=${LANES_REDIS_PORT:-$((7500 + $$ % 100))}
export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT
export LLMSB_CONFIG=$T/config.yaml
R="redis-cli -p $PORT"
suite lanes; WORKERS=""; WHY_FILE=

cat > "$T/config.yaml" <<EOF
worker: {lease: 4, heartbeat_ttl: 2, block: 1, drain: 20}
pool: {min_idle: 1, wait: 30}
EOF

cleanup() {
    stop_workers_and_redis
    rm -rf "$T"
}
trap cleanup EXIT

start_redis "$PORT" "$T" || { echo "lanes: 0 passed, 1 failed"; exit 1; }

start_worker() {  # start_worker NAME PREFIX [worker options...] (a later --slots wins)
    local name=$1 prefix=$2
    shift 2
    LLMSB_PREFIX=$prefix "$B" worker --name "$name" --slots 1 "$@" >"$T/$name.log" 2>&1 &
    WPID=$!
    WORKERS="$WORKERS $WPID"
    disown "$WPID" 2>/dev/null
    for _ in $(seq 1 100); do [ "$($R exists "$prefix:worker:$name")" = 1 ] && return 0; sleep 0.1; done
    echo "worker $name did not come up"; cat "$T/$name.log"
}

stop_worker() { kill -TERM "$WPID" 2>/dev/null; for _ in $(seq 1 100); do kill -0 "$WPID" 2>/dev/null || return 0; sleep 0.1; done; kill -9 "$WPID" 2>/dev/null; }

# jobs FILE TAG N [extra JSON fields]: appends N trivial jobs TAG-1..TAG-N
jobs() {
    local f=$1 tag=$2 n=$3 extra=${4:-}
    for i in $(seq 1 "$n"); do
        printf '{"id":"%s-%d","lang":"python","code":"print(%d)"%s}\n' "$tag" "$i" "$i" "$extra"
    done >>"$f"
}

submit() {  # submit PREFIX FILE: fails (saying why) when nothing was enqueued
    LLMSB_PREFIX=$1 "$B" submit "$2" --no-dedup >"$T/submit.out" 2>&1 ||
        { echo "     submit $2 failed: $(tail -2 "$T/submit.out" | cut -c1-200)"; return 1; }
}

# done_ids PREFIX: the ids on the results stream, in the order they ended
done_ids() { $R xrange "$1:results" - + | awk 'prev == "id" { print } { prev = $0 }'; }

# wait_done PREFIX N SECONDS: until N results are on the stream
wait_done() {
    local deadline=$(( $(date +%s) + $3 ))
    while [ "$($R xlen "$1:results")" -lt "$2" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.2; done
}

# positions PREFIX PATTERN: the places (from 1) of the ids matching PATTERN
positions() { done_ids "$1" | grep -n -- "$2" | cut -d: -f1 | tr '\n' ' '; }

# (a) 50 low then 5 high, before the worker starts
for mode in weighted strict; do
    P=pa$mode; : >"$T/a.jsonl"
    jobs "$T/a.jsonl" low 50 ',"priority":"low"'
    jobs "$T/a.jsonl" high 5 ',"priority":"high"'
    if ! submit $P "$T/a.jsonl"; then bad high_before_low_$mode "submit failed"; continue; fi
    opt=""; [ $mode = strict ] && opt="--priority-weights strict"
    start_worker wa$mode $P $opt
    wait_done $P 10 120
    stop_worker
    pos=$(positions $P '^high-')
    last=$(echo $pos | awk '{ print $NF }')
    echo "     ($mode) high jobs started at positions: $pos(of 55; low-1 was queued first)"
    want=6; [ $mode = strict ] && want=5
    if [ "$(echo $pos | wc -w)" = 5 ] && [ "${last:-99}" -le $want ] &&
       [ "$($R sismember $P:lanes high)$($R sismember $P:lanes low)" = 11 ]; then ok high_before_low_$mode
    else bad high_before_low_$mode "positions: $pos lanes: $($R smembers $P:lanes | tr '\n' ' ')"; fi
done

# (b) 200 normal then 20 low: low is not starved
P=pb; : >"$T/b.jsonl"
jobs "$T/b.jsonl" norm 200
jobs "$T/b.jsonl" low 20 ',"priority":"low"'
if submit $P "$T/b.jsonl"; then
start_worker wb $P
wait_done $P 50 240
stop_worker
pos=$(positions $P '^low-')
in50=$(done_ids $P | head -50 | grep -c '^low-')
echo "     low jobs started at positions: $pos(of the first $($R xlen $P:results); FIFO would give 201 to 220)"
if [ "$in50" -ge 8 ] && [ "$in50" -le 12 ] && [ "$(echo $pos | awk '{ print $1 }')" -le 6 ]; then ok low_not_starved
else bad low_not_starved "lows in the first 50: $in50; positions: $pos"; fi
else bad low_not_starved "submit failed"; fi

# (c) tenant fairness: A's 300, then B's 10
P=pc; : >"$T/c.jsonl"
jobs "$T/c.jsonl" ta 300 ',"tenant":"A"'
jobs "$T/c.jsonl" tb 10 ',"tenant":"B"'
if submit $P "$T/c.jsonl"; then
start_worker wc $P
deadline=$(( $(date +%s) + 240 ))
while [ "$(done_ids $P | grep -c '^tb-')" -lt 10 ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.3; done
stop_worker
pos=$(positions $P '^tb-')
last=$(echo $pos | awk '{ print $NF }')
echo "     tenant B's 10 ended at positions: $pos(without tenants, FIFO: 301 to 310)"
if [ "$(echo $pos | wc -w)" = 10 ] && [ "${last:-999}" -le 30 ]; then ok tenant_fairness
else bad tenant_fairness "B's positions: $pos"; fi
else bad tenant_fairness "submit failed"; fi

# (d) the default lane: no lanes set, one XREADGROUP per job and no EVAL
#     of the read script; figures printed for the record
P=pd; : >"$T/d.jsonl"
jobs "$T/d.jsonl" d 40
start_worker wd $P
$R config resetstat >/dev/null
submit $P "$T/d.jsonl"
wait_done $P 40 120
stop_worker
stats=$($R info commandstats | tr -d '\r')
calls() { echo "$stats" | grep "^cmdstat_$1:" | sed -E 's/^[^:]*:calls=([0-9]+).*/\1/'; }
total=$(echo "$stats" | grep '^cmdstat_' | grep -v resetstat | sed -E 's/^[^:]*:calls=([0-9]+).*/\1/' | paste -sd+ | bc)
xr=$(calls xreadgroup); sm=$(calls smembers)
echo "     default lane, 40 jobs: ${total} commands in all ($(echo "scale=1; $total / 40" | bc)/job), xreadgroup ${xr:-0}, smembers ${sm:-0}, $(echo "$stats" | grep -o '^cmdstat_[a-z|]*:calls=[0-9]*' | sed 's/cmdstat_//' | tr '\n' ' ')"
if [ "$(done_ids $P | grep -c '^d-')" = 40 ] && [ "$($R exists $P:lanes)" = 0 ] &&
   [ "$($R --scan --pattern "$P:jobs:*" | wc -l)" = 0 ] && [ "${xr:-0}" -ge 40 ] && [ "${xr:-0}" -le 60 ]; then ok default_lane_unchanged
else bad default_lane_unchanged "done=$(done_ids $P | grep -c '^d-') lanes=$($R exists $P:lanes) xreadgroup=$xr"; fi

# (e) exactly once over lanes: kill -9 mid-run, then a new worker
P=pe; : >"$T/e.jsonl"
n=0
for lane in '"priority":"high"' '"priority":"low"' '"tenant":"A"' '"priority":"high","tenant":"B"' '"priority":"normal"'; do
    n=$((n + 1)); tag=e$n
    for i in $(seq 1 12); do
        printf '{"id":"%s-%d","lang":"python","code":"import time; time.sleep(0.2); print(%d)",%s}\n' "$tag" "$i" "$i" "$lane"
    done >>"$T/e.jsonl"
done
if submit $P "$T/e.jsonl"; then
start_worker we1 $P
wait_done $P 15 120
kill -9 "$WPID"
start_worker we2 $P
wait_done $P 60 240
sleep 2
stop_worker
# runs that ended, from the workers' "job=ID status=S attempts=N" lines
# (a result written or refused as a second one): the results stream alone
# keeps one result whatever ran twice
runs2=$(cat "$T/we1.log" "$T/we2.log" | grep -o ' job=e[0-9]*-[0-9]* status=[a-z_][a-z_]* attempts=' |
    sed 's/^ job=\([^ ]*\) .*/\1/' | sort | uniq -d | wc -l)
dups=$(( $(done_ids $P | sort | uniq -d | wc -l) + runs2 ))
nres=$(done_ids $P | sort -u | wc -l)
okres=0
for id in $(jq -r .id "$T/e.jsonl"); do [ "$($R hget "$P:result:$id" status)" = ok ] && okres=$((okres + 1)); done
pend=0
for k in $P:jobs $($R smembers $P:lanes | sed "s/^/$P:jobs:/"); do
    p1=$($R xpending "$k" $P-workers | head -1)
    case "$p1" in ''|*[!0-9]*) p1=999 ;; esac
    pend=$((pend + p1))
done
echo "     kill -9 mid-run: $nres of 60 jobs with a result, $dups with two (runs to completion twice: $runs2), $okres ok, $pend pending"
if [ "$nres" = 60 ] && [ "$dups" = 0 ] && [ "$okres" = 60 ] && [ "$pend" = 0 ]; then ok exactly_once_after_kill
else bad exactly_once_after_kill "results=$nres dups=$dups ok=$okres pending=$pend"; fi
else bad exactly_once_after_kill "submit failed"; fi

# (f) 3 slots, jobs arriving while the worker idles: the blocking read
#     over lanes and the give-back of its extras; 9 lows then 3 highs a
#     little later, while the lows (1 s each) hold the slots
P=pg; : >"$T/g1.jsonl"; : >"$T/g2.jsonl"
printf '{"id":"warm","lang":"python","code":"print(0)","priority":"high"}\n' >"$T/g0.jsonl"
for i in $(seq 1 9); do
    printf '{"id":"gl-%d","lang":"python","code":"import time; time.sleep(1); print(%d)","priority":"low"}\n' "$i" "$i"
done >>"$T/g1.jsonl"
for i in 1 2 3; do
    printf '{"id":"gh-%d","lang":"python","code":"print(%d)","priority":"high"}\n' "$i" "$i"
done >>"$T/g2.jsonl"
start_worker wg $P --slots 3
if submit $P "$T/g0.jsonl" && wait_done $P 1 60 && sleep 1.5 && submit $P "$T/g1.jsonl" && sleep 0.5 &&
   submit $P "$T/g2.jsonl"; then
    wait_done $P 13 120
    sleep 2
    stop_worker
    nres=$(done_ids $P | sort -u | wc -l); d=$(done_ids $P | sort | uniq -d | wc -l)
    runs2=$(grep -o ' job=g[lh]-[0-9]* status=[a-z_][a-z_]* attempts=' "$T/wg.log" | sort | uniq -d | wc -l)
    hpos=$(positions $P '^gh-'); hlast=$(echo $hpos | awk '{ print $NF }')
    echo "     3 slots, idle then lows, highs 0.5 s later: highs ended at $hpos(of 13), $nres results, $d doubled, $runs2 run twice"
    # the highs arrive with 6 lows queued behind the 3 running: they start
    # next, so they end within the first 3 + 3 + 3 (+1 for warm)
    if [ "$nres" = 13 ] && [ "$d" = 0 ] && [ "$runs2" = 0 ] && [ "${hlast:-99}" -le 10 ]; then ok slots3_idle_arrivals
    else bad slots3_idle_arrivals "results=$nres dups=$d runs2=$runs2 highs at $hpos"; fi
else stop_worker; bad slots3_idle_arrivals "submit or the first job failed"; fi

# bad fields are refused at submit, naming the field
printf '{"id":"x","lang":"python","code":"print(1)","priority":"urgent"}\n' >"$T/bad.jsonl"
printf '{"id":"y","lang":"python","code":"print(1)","tenant":"a b"}\n' >"$T/bad2.jsonl"
LLMSB_PREFIX=pf "$B" submit "$T/bad.jsonl" >"$T/bad.out" 2>&1; r1=$?
LLMSB_PREFIX=pf "$B" submit "$T/bad2.jsonl" >>"$T/bad.out" 2>&1; r2=$?
if [ $r1 != 0 ] && [ $r2 != 0 ] && grep -q 'priority: "urgent" is not a priority (high, normal or low)' "$T/bad.out" &&
   grep -q 'tenant: "a b" must be 1 to 32' "$T/bad.out" && [ "$($R exists pf:jobs)" = 0 ]; then ok bad_fields_refused
else bad bad_fields_refused "rc=$r1/$r2 $(cat "$T/bad.out")"; fi

suite_end
