#!/bin/bash
# tests/redis-ha/cluster.sh - Redis Cluster: three primaries made by the test
# (redis-cli --cluster create, tests/redis-ha/lib.sh), two workers and the
# producer (`submit`) on redis-cluster:// with a seed node that does NOT
# serve the prefix's slot (the client follows MOVED, or asks for the slots),
# HA_CLUSTER_JOBS (1,000) trivial Python jobs on the system dockerd.
#
# Checked: every key of the prefix is in the slot of {prefix} and on the
# node serving it, no other node holding one (each node's keys by --scan,
# CLUSTER KEYSLOT of each); then, about a quarter of the way, the slot is
# moved to the third node as redis-cli --cluster reshard does (SETSLOT
# IMPORTING and MIGRATING, MIGRATE of its keys a few at a time while jobs
# go on, SETSLOT NODE everywhere), so the clients meet ASK during the move
# and MOVED after it; at the end every job has exactly one result (hash,
# status ok, stdout n) and one results-stream entry, nothing is pending,
# both workers are alive, every submit went through, and every key of the
# prefix is on the new owner.  Figures: keys moved, the move's time,
# results during it (while a slot's keys are split between two nodes a
# script over several gets TRYAGAIN, so final writes wait for the move's
# end: few or none; a figure, not a check), and the TRYAGAIN, ASK and
# MOVED lines of the workers' logs.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/redis-ha/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
N=${HA_CLUSTER_JOBS:-1000}
BATCH=${HA_BATCH:-50}
SLOTS=${HA_SLOTS:-2}
JP=hc # the jobs' ids: hc-1 .. hc-N
ha_suite redis_ha_cluster hac hacl redis-server redis-cli jq python3 curl

t_start=$(date +%s)
if ha_cluster_start >"$T/cluster.out" 2>&1; then ok cluster_up
else WHY_FILE=$T/cluster.out bad cluster_up "3 primaries on $HA_CLUSTER_PORTS"; suite_end; exit; fi

set -- $HA_CLUSTER_PORTS
SLOT=$(redis-cli -p "$1" cluster keyslot "{$LLMSB_PREFIX}")
OWNER=$(ha_slot_owner "$SLOT")
SEED="" THIRD=""
for p in $HA_CLUSTER_PORTS; do
    [ "$p" = "$OWNER" ] && continue
    if [ -z "$SEED" ]; then SEED=$p; else THIRD=$p; fi
done
export LLMSB_REDIS_URL="redis-cluster://127.0.0.1:$SEED"
echo "  (slot of {$LLMSB_PREFIX}: $SLOT on $OWNER; seed $SEED; the move goes to $THIRD)"

# done_count: results so far (redis-cli -c follows the slot wherever it is)
kp="{$LLMSB_PREFIX}"
num() { case $1 in '' | *[!0-9]*) echo 0 ;; *) echo "$1" ;; esac; }
done_count() { num "$(redis-cli -c -p "$SEED" xlen "$kp:results" 2>/dev/null)"; }

# keys_in_slot PORT: "" when every key of the prefix is in SLOT and on the
# node on PORT and no other node holds one, else what is wrong (each
# node's keys by one --scan, their slots by one pipeline of KEYSLOTs)
keys_in_slot() {
    local p n=0 where=""
    for p in $HA_CLUSTER_PORTS; do
        redis-cli -p "$p" --scan --pattern "*$LLMSB_PREFIX*" >"$T/keys.$p" 2>&1
        n=$((n + $(wc -l <"$T/keys.$p")))
        [ "$p" = "$1" ] || where="$where$(head -3 "$T/keys.$p" | sed "s/\$/@$p/" | tr '\n' ' ')"
        where="$where$(sed 's/^/cluster keyslot /' "$T/keys.$p" | redis-cli -p "$p" 2>&1 | paste -d' ' "$T/keys.$p" - |
            awk -v s="$SLOT" '$2 != s {printf " %s(slot %s)", $1, $2}' | head -c 200)"
    done
    [ "$n" -gt 0 ] || where=" no key of the prefix on any node"
    printf '%s' "$where" | head -c 400
}

ha_run_start workers_through_a_seed_that_is_not_the_owner hc

while [ "$(done_count)" -lt $((N / 4)) ] && ha_moving; do sleep 0.2; done
if [ -z "${STALLED:-}" ]; then
    why=$(keys_in_slot "$OWNER")
    [ -z "$why" ] && ok keys_in_one_slot_on_its_owner || bad keys_in_one_slot_on_its_owner "$why"

    # the move, while the jobs go on: 10 keys at a time, 0.1 s apart
    before=$(done_count)
    t0=$(ha_now_ms)
    if moved=$(ha_slot_migrate "$SLOT" "$OWNER" "$THIRD" 10 0.1 2>&1); then
        move_ms=$(($(ha_now_ms) - t0))
        during=$(($(done_count) - before))
        ha_cluster_wait_ok 20 >"$T/check.out" 2>&1 && [ "$(ha_slot_owner "$SLOT")" = "$THIRD" ] &&
            ok slot_moved_mid_run || WHY_FILE=$T/check.out bad slot_moved_mid_run "the cluster after the move"
        echo "  (moved $moved keys of slot $SLOT from $OWNER to $THIRD in $move_ms ms, $during results meanwhile)"
    else
        bad slot_moved_mid_run "$moved"
    fi
fi

while [ -z "${STALLED:-}" ] && ha_moving; do
    if ! kill -0 "$PRODUCER" 2>/dev/null; then
        books=$(ha_books "$THIRD" "$kp" "$JP" "$N")
        [ "$(echo "$books" | sed -n 1p)" = 0 ] && break
    fi
    sleep 1
done
[ -z "${STALLED:-}" ] && ok jobs_keep_flowing
sleep 2
ha_judge "$THIRD" "$kp" "$JP" "$N" the_move the_cluster

why=$(keys_in_slot "$THIRD")
[ -z "$why" ] && ok keys_on_the_new_owner || bad keys_on_the_new_owner "$why"

echo "  (figures: jobs $N, workers 2 x $SLOTS slots, lost ${lost:-?}, not exactly once ${notonce:-?}, wrong ${wrong:-?},"
# what the clients met, as the workers logged it: a script over keys the
# move has split gets TRYAGAIN until it ends (the final write is retried)
redirs=$(cat "$T"/hc-w*.log | awk '/TRYAGAIN/ {t++} / ASK [0-9]/ {a++} /slot moved|MOVED/ {m++}
    END {printf "TRYAGAIN %d, ASK %d, MOVED %d", t, a, m}')
echo "   runs doubled to completion $doubled, submits: $fails, $(($(date +%s) - t_start)) s in all;"
echo "   worker log lines: $redirs)"
suite_end
