#!/bin/bash
# tests/redis-ha/sentinel.sh - Sentinel failover under load: a primary, two
# replicas and three sentinels (tests/redis-ha/lib.sh), two workers and the
# producer (`submit`) on redis-sentinel://, HA_JOBS (2,000) trivial Python
# jobs on the system dockerd, and the primary killed -9 at HA_KILLS (3)
# random points of the run (HA_SEED, printed).  After each kill the
# sentinels promote a replica; the killed node is started again as a
# replica of the new primary, and the next kill waits until a replica is
# online and known to every sentinel.  The first kill waits for a submit
# under way (and pauses the primary's writes, so that it is mid-submit).
#
# The books at the end, read on the primary the sentinels name: every job
# has exactly one final result (hash, status ok, its stdout) and exactly
# one entry on the results stream, none lost; nothing pending; both
# workers alive (they reconnected, nobody restarted them); every submit
# went through (a submit cut short is sent again with --reuse and counted
# as a failure).  Figures printed: jobs, lost, not once, runs doubled to
# completion (a job two runs ended: the worker logs each run's end as
# "job=ID status=S attempts=N", the second one refused by first-wins
# with "(a final result existed already; acknowledged)"), each failover's
# time to promotion and to the first result after it.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/redis-ha/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
N=${HA_JOBS:-2000}
KILLS=${HA_KILLS:-3}
BATCH=${HA_BATCH:-100}
SLOTS=${HA_SLOTS:-3}
SEED=${HA_SEED:-$$}
RANDOM=$SEED
JP=hs # the jobs' ids: hs-1 .. hs-N
ha_suite redis_ha_sentinel has hasent redis-server redis-sentinel redis-cli jq python3 curl

set -- $HA_SENTINEL_PORTS
export LLMSB_REDIS_URL="redis-sentinel://127.0.0.1:$1,127.0.0.1:$2,127.0.0.1:$3/$HA_MASTER"

# rcli ARG...: redis-cli on the primary the sentinels name now
rcli() { redis-cli -p "$(ha_primary_port)" "$@" 2>/dev/null; }
# the keys' prefix as stored: the plain prefix, or {prefix} when the
# client tags every key (either is fine here; cluster.sh requires the tag)
kp() {
    local k
    for k in "$LLMSB_PREFIX" "{$LLMSB_PREFIX}"; do
        [ "$(rcli exists "$k:jobs")" = 1 ] && { echo "$k"; return 0; }
    done
    echo "$LLMSB_PREFIX"
}
num() { case $1 in '' | *[!0-9]*) echo 0 ;; *) echo "$1" ;; esac; }
done_count() { num "$(rcli xlen "$(kp):results")"; }

t_start=$(date +%s)
if ha_sentinel_topology >"$T/topology.out" 2>&1; then ok topology_up
else WHY_FILE=$T/topology.out bad topology_up "a primary, 2 replicas and 3 sentinels on $HA_BASE.."; suite_end; exit; fi
echo "  (primary on $(ha_primary_port), sentinels on $HA_SENTINEL_PORTS, seed $SEED)"

# ---- the workers through the sentinels, and the producer: batches of BATCH
#      jobs, a backlog of about 2 batches

ha_run_start workers_find_the_primary ha

# ---- the kills: KILLS random points between 5% and 75% of the results, 15% apart ------

points=""
for _ in $(seq 1 200); do
    points=$(for _ in $(seq 1 "$KILLS"); do echo $((N / 20 + (RANDOM * 32768 + RANDOM) % (N * 7 / 10))); done | sort -n | tr '\n' ' ')
    gap=$(echo "$points" | awk -v g=$((N * 15 / 100)) '{for (i = 2; i <= NF; i++) if ($i - $(i-1) < g) {print 0; exit} print 1}')
    [ "$gap" = 1 ] && break
done
echo "  (kills after $(echo $points | sed 's/ /, /g') results)"

promote="" resume="" k=0
for point in $points; do
    while [ "$(done_count)" -lt "$point" ] && ha_moving; do sleep 0.2; done
    [ -z "${STALLED:-}" ] || break
    k=$((k + 1))
    # the first kill lands while a submit sends its batch (the next one, up
    # to 10 s on): submit has to go on through a failover too
    # (writes paused on the primary once one is, so that it is still
    # waiting on the primary when the kill comes)
    during=""
    if [ "$k" = 1 ]; then
        for _ in $(seq 1 20); do
            for _ in $(seq 1 250); do [ -e "$T/submitting" ] && break; sleep 0.02; done
            rcli client pause 10000 write >/dev/null
            sleep 0.3
            [ -e "$T/submitting" ] && { during=" during a submit"; break; }
            rcli client unpause >/dev/null
        done
    fi
    old=$(ha_primary_port)
    before=$(done_count)
    if [ "$before" -ge "$N" ]; then
        bad "failover_$k" "the run was over ($before results) before kill $k"
        break
    fi
    t0=$(ha_now_ms)
    ha_node_kill "$old"
    if ! new=$(ha_wait_new_primary "$old" 30); then
        bad "failover_$k" "no replica promoted within 30 s of the kill of $old"
        break
    fi
    promote="$promote $(($(ha_now_ms) - t0))"
    ha_node_start "$old" $HA_NODE_ARGS --replicaof 127.0.0.1 "$new" >"$T/restart.out" 2>&1 ||
        { WHY_FILE=$T/restart.out bad "failover_$k" "cannot start $old again as a replica"; break; }
    at=$(done_count)
    while [ "$(done_count)" -le "$at" ] && [ "$at" -lt "$N" ] && [ $(($(ha_now_ms) - t0)) -lt 60000 ]; do sleep 0.05; done
    resume="$resume $(($(ha_now_ms) - t0))"
    # the next kill needs a replica the sentinels can promote (the killed
    # node joins as a second one meanwhile)
    if ha_wait_healthy 45 1 >/dev/null 2>"$T/healthy.out"; then
        ok "failover_$k"
        echo "  (kill $k$during: $old -> $new at $before results, promoted in ${promote##* } ms, next result ${resume##* } ms after the kill)"
    else
        WHY_FILE=$T/healthy.out bad "failover_$k" "the topology did not heal"
        break
    fi
done

# ---- the end: every result, then the books --------------------------------------------

ids_done() { # distinct job ids on the results stream
    rcli --raw xrange "$(kp):results" - + | awk 'p {print; p = 0} $0 == "id" {p = 1}' | sort -u | wc -l
}
while [ -z "${STALLED:-}" ] && ha_moving; do
    if ! kill -0 "$PRODUCER" 2>/dev/null && [ "$(num "$(ids_done)")" -ge "$N" ]; then break; fi
    sleep 1
done
[ -z "${STALLED:-}" ] && ok jobs_keep_flowing
sleep 2 # a doubled run still ending writes nothing, but logs its refusal
elapsed=$(($(date +%s) - t_start))
ha_judge "$(ha_primary_port)" "$(kp)" "$JP" "$N" the_failovers sentinel
resent=$(cat "$T"/ha-w*.log | grep -c " job=$JP-[0-9]* status=[a-z_][a-z_]* attempts=.*a final result existed already")
echo "  (figures: jobs $N, workers 2 x $SLOTS slots, lost ${lost:-?}, not exactly once ${notonce:-?}, wrong ${wrong:-?},"
echo "   runs doubled to completion $doubled; final writes found already there (first-wins) $resent,"
echo "   failovers ${k}: promoted in [$(echo $promote | sed 's/ /, /g')] ms, first result after the kill in [$(echo $resume | sed 's/ /, /g')] ms,"
echo "   submits: ${fails}, $elapsed s in all, seed $SEED)"
[ "$doubled" -gt 0 ] && awk '$2 > 1 {printf "   doubled: %s ran %d times\n", $1, $2}' "$T/runs" | head -5
suite_end
