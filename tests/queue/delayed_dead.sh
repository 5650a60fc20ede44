#!/bin/bash
# delayed_dead.sh - delayed jobs and the dead-letter tool against a real
# redis-server (temp port) and the real dockerd: a raw XADD with delay_ms
# and `submit --delay` run no sooner than due and say delayed meanwhile; a
# job with not_before an hour ahead sits in the delayed set through a
# kill -9 of the worker and runs once made due; a delayed job cancelled
# ends cancelled when due; bad time fields are
# invalid results naming the field; real dead letters (an image missing on
# the engine: retried, then dead) listed, shown, requeued (same id, one
# final result, the history carried) and dropped.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
T=$(mktemp -d /tmp/llmsb-dd.XXXXXX)
PORT=${DD_REDIS_PORT:-$((7300 + $$ % 100))}
P=dd$$
TAG="llmsb/python:dd-missing-$$"
export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT
export LLMSB_CONFIG=$T/config.yaml
export LLMSB_PREFIX=$P
R="redis-cli -p $PORT"
suite delayed_dead; WORKERS=""

cat > "$T/config.yaml" <<EOF
worker: {lease: 6, heartbeat_ttl: 3, block: 1, drain: 20}
pool: {min_idle: 1, wait: 30}
jobs: {max_attempts: 2}
EOF

cleanup() {
    stop_workers_and_redis
    docker rmi "$TAG" >/dev/null 2>&1
    rm -rf "$T"
}
trap cleanup EXIT
WHY_FILE=

start_worker() { start_named_worker "$B" "$1" 2; }

status_of() { $R hget "$P:result:$1" status; }
now_ms() { date +%s%3N; }

wait_final() {  # wait_final SECONDS ID... -> prints how many lack a final result
    local deadline=$(( $(date +%s) + $1 )); shift
    local left s
    while :; do
        left=0
        for id in "$@"; do
            s=$(status_of "$id"); { [ -z "$s" ] || [ "$s" = running ]; } && left=$((left + 1))
        done
        { [ "$left" = 0 ] || [ "$(date +%s)" -ge "$deadline" ]; } && break
        sleep 0.3
    done
    echo "$left"
}

dead_count() {  # dead_count ID -> dead letters of job ID
    $R xrange "$P:dead" - + | grep -cx -- "$1"
}

start_redis "$PORT" "$T" --appendonly yes --appendfsync everysec || { echo "redis did not start"; cat "$T/redis.log"; exit 1; }
start_worker w1

# 1. a raw XADD with delay_ms: held in Redis (the delayed set), `result`
#    and `status` say delayed, and it starts no sooner than its entry's
#    time plus the delay
E=$($R xadd "$P:jobs" '*' id raw-delay lang python code 'print(6*7)' delay_ms 4000)
EMS=${E%-*}
sleep 1.5
held=$($R zscore "$P:delayed" raw-delay)
early=$(status_of raw-delay)
"$B" result raw-delay >"$T/rd.json" 2>&1; rrc=$?
"$B" status --json >"$T/st.json" 2>&1
left=$(wait_final 40 raw-delay)
started=$($R hget "$P:result:raw-delay" started_at)
if [ -n "$held" ] && [ "${held%.*}" = $((EMS + 4000)) ] && [ -z "$early" ] && [ "$rrc" = 0 ] &&
   jq -e '.status == "delayed" and .not_before == '$((EMS + 4000)) "$T/rd.json" >/dev/null &&
   jq -e '.delayed == 1' "$T/st.json" >/dev/null &&
   [ "$left" = 0 ] && [ "$(status_of raw-delay)" = ok ] && [ "$($R hget "$P:result:raw-delay" stdout)" = 42 ] &&
   [ "$started" -ge $((EMS + 4000)) ] && [ "$($R zcard "$P:delayed")" = 0 ]; then
    ok raw_xadd_delay_ms_runs_when_due; echo "     started $((started - EMS)) ms after its entry (delay 4000)"
else bad raw_xadd_delay_ms_runs_when_due "held=$held entry=$EMS early=$early rrc=$rrc result=$(cat "$T/rd.json") status=$(jq -c .delayed "$T/st.json") left=$left st=$(status_of raw-delay) started=$started"; fi

# 2. submit --delay: not_before set on the job; it runs no sooner
printf '{"id": "sub-delay", "lang": "python", "code": "print(1)"}\n' > "$T/one.jsonl"
t0=$(now_ms)
"$B" submit "$T/one.jsonl" --delay 3s >"$T/sub.out" 2>&1; src=$?
left=$(wait_final 40 sub-delay)
started=$($R hget "$P:result:sub-delay" started_at)
if [ "$src" = 0 ] && [ "$left" = 0 ] && [ "$(status_of sub-delay)" = ok ] && [ "$started" -ge $((t0 + 3000)) ] &&
   grep -q 'job=sub-delay: not due for' "$T/w1.log"; then
    ok submit_delay_runs_when_due; echo "     started $((started - t0)) ms after submit (--delay 3s)"
else bad submit_delay_runs_when_due "rc=$src $(cat "$T/sub.out") left=$left st=$(status_of sub-delay) started=$started t0=$t0"; fi

# 3. not_before an hour ahead: in the delayed set, not in any worker; a
#    kill -9 of the worker loses nothing; made due, the next worker runs it once
far=$(( $(now_ms) + 3600000 ))
$R xadd "$P:jobs" '*' id far lang python code 'print(3)' not_before "$far" >/dev/null
for _ in $(seq 1 50); do [ -n "$($R zscore "$P:delayed" far)" ] && break; sleep 0.1; done
kill -9 "$PID_w1"; sleep 0.5
start_worker w2
sleep 2
kept=$($R zscore "$P:delayed" far); kept_f=$($R hget "$P:delayed:far" code)
pend=$($R xpending "$P:jobs" "$P-workers" | head -1)
"$B" result far >"$T/far.json" 2>&1
now=$(now_ms)
$R hset "$P:delayed:far" not_before "$now" >/dev/null
$R zadd "$P:delayed" "$now" far >/dev/null
left=$(wait_final 40 far)
if [ "${kept%.*}" = "$far" ] && [ "$kept_f" = 'print(3)' ] && [ "$pend" = 0 ] &&
   jq -e '.status == "delayed"' "$T/far.json" >/dev/null && [ "$left" = 0 ] &&
   [ "$(status_of far)" = ok ] && [ "$($R hget "$P:result:far" stdout)" = 3 ] &&
   [ "$($R lrange "$P:done:far" 0 -1 | wc -l)" = 1 ] && [ "$($R exists "$P:delayed:far")" = 0 ]; then
    ok not_before_survives_a_worker_kill
else bad not_before_survives_a_worker_kill "kept=$kept far=$far code=$kept_f pending=$pend result=$(cat "$T/far.json") left=$left st=$(status_of far)"; fi

# 3b. cancel of a delayed job: the mark outlives the wait; when due, the
#     worker that takes it ends it cancelled (it never runs)
$R xadd "$P:jobs" '*' id cdel lang python code 'print(5)' not_before $(( $(now_ms) + 3000 )) >/dev/null
for _ in $(seq 1 50); do [ -n "$($R zscore "$P:delayed" cdel)" ] && break; sleep 0.1; done
"$B" cancel cdel >"$T/cdel.out" 2>&1; crc=$?
cttl=$($R ttl "$P:cancel:cdel")
left=$(wait_final 30 cdel)
if [ "$crc" = 0 ] && grep -q 'cancel requested: cdel' "$T/cdel.out" && [ "$left" = 0 ] &&
   [ "$(status_of cdel)" = cancelled ] && [ -z "$($R hget "$P:result:cdel" stdout)" ]; then
    ok cancel_of_a_delayed_job
else bad cancel_of_a_delayed_job "rc=$crc $(cat "$T/cdel.out") ttl=$cttl left=$left st=$(status_of cdel)"; fi

# 4. bad time fields are invalid results naming the field; bad flags exit 2
$R xadd "$P:jobs" '*' id bad-nb lang python code 'print(1)' not_before tomorrow >/dev/null
$R xadd "$P:jobs" '*' id bad-delay lang python code 'print(1)' delay_ms -5 >/dev/null
$R xadd "$P:jobs" '*' id bad-both lang python code 'print(1)' delay_ms 5 not_before 1 >/dev/null
$R xadd "$P:jobs" '*' id bad-tz lang python code 'print(1)' not_before '2030-01-01T00:00:00+02:00' >/dev/null
left=$(wait_final 30 bad-nb bad-delay bad-both bad-tz)
"$B" submit "$T/one.jsonl" --delay 30 >"$T/bd1.out" 2>&1; b1=$?
"$B" submit "$T/one.jsonl" --not-before yesterday >"$T/bd2.out" 2>&1; b2=$?
"$B" submit "$T/one.jsonl" --delay 1s --local >"$T/bd3.out" 2>&1; b3=$?
if [ "$left" = 0 ] && [ "$(status_of bad-nb)$(status_of bad-delay)$(status_of bad-both)$(status_of bad-tz)" = invalidinvalidinvalidinvalid ] &&
   $R hget "$P:result:bad-nb" error | grep -q 'not_before: "tomorrow" is not a time' &&
   $R hget "$P:result:bad-delay" error | grep -q 'delay_ms: "-5" is not a whole number of milliseconds' &&
   $R hget "$P:result:bad-both" error | grep -q 'delay_ms: not with not_before' &&
   $R hget "$P:result:bad-tz" error | grep -q 'not_before: "2030-01-01T00:00:00+02:00" is not a time' &&
   [ "$b1$b2$b3" = 222 ] && grep -q -- '--delay: "30" is not a duration' "$T/bd1.out" &&
   grep -q -- '--not-before: not_before: "yesterday" is not a time' "$T/bd2.out" &&
   grep -q 'needs the queue' "$T/bd3.out" && [ "$($R zcard "$P:delayed")" = 0 ]; then
    ok bad_time_fields_invalid_by_name
else bad bad_time_fields_invalid_by_name "left=$left $(status_of bad-nb)/$(status_of bad-delay)/$(status_of bad-both)/$(status_of bad-tz) rc=$b1$b2$b3 $($R hget "$P:result:bad-nb" error) | $(cat "$T/bd1.out" "$T/bd2.out" "$T/bd3.out")"; fi

# 5. real dead letters: an image missing on the engine is an infrastructure
#    fault, retried (max_attempts 2), then internal_error and a dead letter
for id in dl-1 dl-2 dl-3; do
    $R xadd "$P:jobs" '*' id "$id" lang python code 'print(7*6)' image "$TAG" >/dev/null
done
$R xadd "$P:jobs" '*' lang python code 'print(1)' image "$TAG" >/dev/null  # no id: its entry id
left=$(wait_final 90 dl-1 dl-2 dl-3)
sleep 1
"$B" dead list --json >"$T/dl.json" 2>&1; lrc=$?
"$B" dead list >"$T/dl.txt" 2>&1
"$B" dead show dl-1 --json >"$T/ds.json" 2>&1; src=$?
"$B" dead show dl-1 >"$T/ds.txt" 2>&1
if [ "$left" = 0 ] && [ "$lrc$src" = 00 ] && [ "$(status_of dl-1)" = internal_error ] &&
   jq -e '[.[] | select(.id | startswith("dl-"))] | length == 3' "$T/dl.json" >/dev/null &&
   jq -e 'length == 4 and all(.[]; .attempts == 2 and .last_worker == "w2" and (.reason | test("missing on this worker")) and (.id | length) > 0)' "$T/dl.json" >/dev/null &&
   jq -e --arg tag "$TAG" '.id == "dl-1" and .attempts == 2 and .last_worker == "w2" and .fields.image == $tag and .fields.code == "print(7*6)" and .history == [] and (.fields | has("reason") | not)' "$T/ds.json" >/dev/null &&
   grep -q 'dl-2 .*attempts=2 worker=w2' "$T/dl.txt" && grep -q '^reason: .*missing on this worker' "$T/ds.txt"; then
    ok dead_list_and_show
else bad dead_list_and_show "left=$left rc=$lrc/$src $(head -c 800 "$T/dl.json") $(head -c 600 "$T/ds.json")"; fi

# 6. the history carries into the next dead letter: requeued while the
#    image is still missing, dl-2 dies again, one dead letter holding the
#    first in its history (and its result too)
"$B" dead requeue dl-2 >"$T/rq3.out" 2>&1
sleep 1; left=$(wait_final 90 dl-2)
sleep 1
"$B" dead show dl-2 --json >"$T/ds2.json" 2>&1
if [ "$left" = 0 ] && [ "$(status_of dl-2)" = internal_error ] && [ "$(dead_count dl-2)" = 1 ] &&
   jq -e '.id == "dl-2" and (.history | length == 1) and .history[0].attempts == 2 and .fields.history == null' "$T/ds2.json" >/dev/null &&
   $R hget "$P:result:dl-2" history | grep -q '"attempts":2' &&
   [ "$($R lrange "$P:done:dl-2" 0 -1)" = internal_error ]; then
    ok history_into_the_next_dead_letter
else bad history_into_the_next_dead_letter "left=$left st=$(status_of dl-2) dead=$(dead_count dl-2) $(cat "$T/rq3.out") $(head -c 500 "$T/ds2.json")"; fi

# 7. requeue --dry-run changes nothing; requeue (the image now there): the
#    same id, its dead result and done notification gone, one final result
#    carrying the history; the dead letter gone; a second requeue finds none
"$B" dead requeue dl-1 --dry-run >"$T/dry.out" 2>&1; drc=$?
dry_kept=$(dead_count dl-1)/$(status_of dl-1)
docker tag llmsb/python:latest "$TAG"
t0=$(now_ms)
"$B" dead requeue dl-1 >"$T/rq.out" 2>&1; qrc=$?
left=$(wait_final 60 dl-1)
sleep 1
"$B" result dl-1 >"$T/rq.json" 2>&1
"$B" dead requeue dl-1 >"$T/rq2.out" 2>&1; q2rc=$?
if [ "$drc" = 0 ] && [ "$dry_kept" = 1/internal_error ] && grep -q 'would requeue job dl-1' "$T/dry.out" &&
   [ "$qrc" = 0 ] && grep -q 'requeued job dl-1 as entry' "$T/rq.out" && [ "$left" = 0 ] &&
   [ "$(status_of dl-1)" = ok ] && [ "$($R hget "$P:result:dl-1" stdout)" = 42 ] &&
   [ "$($R hget "$P:result:dl-1" started_at)" -ge "$t0" ] &&
   [ "$($R lrange "$P:done:dl-1" 0 -1)" = ok ] && [ "$(dead_count dl-1)" = 0 ] &&
   jq -e '.id == "dl-1" and (.history | length == 1) and .history[0].attempts == 2 and .history[0].last_worker == "w2" and (.history[0].reason | test("missing"))' "$T/rq.json" >/dev/null &&
   [ "$q2rc" = 1 ] && grep -q 'no dead letter for "dl-1"' "$T/rq2.out"; then
    ok requeue_keeps_id_and_history_one_result
else bad requeue_keeps_id_and_history_one_result "dry=$drc/$dry_kept rq=$qrc $(cat "$T/rq.out") left=$left st=$(status_of dl-1) done=$($R lrange "$P:done:dl-1" 0 -1 | tr '\n' ,) dead=$(dead_count dl-1) $(head -c 600 "$T/rq.json") q2=$q2rc"; fi

# 8. drop by job id and by entry id, then requeue --all
e3=$("$B" dead list --json | jq -r '.[] | select(.id == "dl-3") | .entry')
"$B" dead drop dl-2 "$e3" >"$T/drop.out" 2>&1; xrc=$?
"$B" dead drop dl-2 >"$T/drop2.out" 2>&1; x2rc=$?
"$B" dead requeue --all >"$T/all.out" 2>&1; arc=$?
if [ "$xrc" = 0 ] && [ "$(grep -c '^dropped' "$T/drop.out")" = 2 ] && [ "$x2rc" = 1 ] &&
   [ "$(dead_count dl-2)$(dead_count dl-3)" = 00 ] && [ "$arc" = 0 ] &&
   [ "$(grep -c '^requeued job' "$T/all.out")" = 1 ]; then
    ok drop_and_requeue_all
else bad drop_and_requeue_all "drop=$xrc/$x2rc $(cat "$T/drop.out" "$T/drop2.out" "$T/all.out") dead=$($R xlen "$P:dead")"; fi

# 9. usage errors say what is wrong
"$B" dead >"$T/u1" 2>&1; u1=$?
"$B" dead requeue >"$T/u2" 2>&1; u2=$?
"$B" dead list --limit 0 >"$T/u3" 2>&1; u3=$?
if [ "$u1$u2$u3" = 222 ] && grep -q 'no sub-command' "$T/u1" && grep -q 'no id given (or --all)' "$T/u2" &&
   grep -q -- '--limit must be a count from 1 to 100000 (got "0")' "$T/u3"; then ok dead_usage_errors
else bad dead_usage_errors "rc=$u1$u2$u3 $(cat "$T/u1" "$T/u2" "$T/u3" | head -c 400)"; fi

suite_end
