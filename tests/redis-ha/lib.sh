# tests/redis-ha/lib.sh - the Redis topologies the high-availability suites
# start (sourced, after tests/lib.sh): a primary with two replicas watched by
# three sentinels, and a three-primary Redis Cluster.  Every process is a
# real redis-server or redis-sentinel on 127.0.0.1, its files in the suite's
# own directory ($HA_DIR); ha_cleanup kills the ones it started (by the
# pids in their pid files) and nothing else.
#
# Ports: LLMSB_HA_PORT_BASE (default 7200) + 0..2 for the primary and its
# replicas, + 10..12 for the sentinels, + 20..22 for the cluster's nodes
# (and their bus ports, 10000 above).  Two runs side by side need two bases.

HA_BASE=${LLMSB_HA_PORT_BASE:-7200}
HA_DATA_PORTS="$HA_BASE $((HA_BASE + 1)) $((HA_BASE + 2))"
HA_SENTINEL_PORTS="$((HA_BASE + 10)) $((HA_BASE + 11)) $((HA_BASE + 12))"
HA_CLUSTER_PORTS="$((HA_BASE + 20)) $((HA_BASE + 21)) $((HA_BASE + 22))"
HA_MASTER=${LLMSB_HA_MASTER:-mymaster}

# ha_need TOOL...: fails the suite (a missing dependency is an error, never
# a skip) when one is not installed.
ha_need() {
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null ||
            { echo "FAIL ${SUITE:-redis_ha}.setup: $tool is not installed (scripts/setup.sh installs it)"; return 1; }
    done
}

# ha_init DIR: the directory every node keeps its files in.
ha_init() {
    HA_DIR=$1
    mkdir -p "$HA_DIR"
}

# ha_port_free PORT: fails, saying so, when something answers there already
# (another run on the same base: LLMSB_HA_PORT_BASE moves this one).
ha_port_free() {
    if redis-cli -p "$1" ping >/dev/null 2>&1 || ! python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null; then
        echo "port $1 is taken (set LLMSB_HA_PORT_BASE to another base)"
        return 1
    fi
}

# ha_node_start PORT [ARG...]: a redis-server of ours on 127.0.0.1:PORT, its
# files in $HA_DIR/nPORT (kept across restarts: a restarted node's log
# goes on), nothing persisted, with ARGs added.
ha_node_start() {
    local port=$1
    shift
    mkdir -p "$HA_DIR/n$port"
    rm -f "$HA_DIR/n$port/redis.pid"
    start_redis "$port" "$HA_DIR/n$port" "$@" ||
        { echo "redis-server on $port did not start"; tail -5 "$HA_DIR/n$port/redis.log"; return 1; }
}

# ha_node_kill PORT: kill -9 of our redis-server on PORT.
ha_node_kill() {
    local pid
    pid=$(cat "$HA_DIR/n$1/redis.pid" 2>/dev/null)
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
}

# ha_cleanup: every process of ours killed (-9: nothing is kept), by the
# pid files under $HA_DIR.
ha_cleanup() {
    local f pid
    [ -n "${HA_DIR:-}" ] && [ -d "$HA_DIR" ] || return 0
    for f in "$HA_DIR"/*/redis.pid "$HA_DIR"/*/sentinel.pid; do
        [ -e "$f" ] || continue
        pid=$(cat "$f" 2>/dev/null)
        [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    done
    return 0
}

# ha_now_ms: the wall clock in ms.
ha_now_ms() { date +%s%3N; }

# ha_suite NAME DIRTAG PREFIX TOOL...: a suite's start: its counters
# (suite NAME), its temp dir T (/tmp/llmsb-DIRTAG.XXXXXX, kept when HA_KEEP
# is set), the tools it needs, the key prefix PREFIX, the workers' config,
# and the trap that stops the producer, the workers and every node at
# the end.
ha_suite() {
    suite "$1"
    T=$(mktemp -d "/tmp/llmsb-$2.XXXXXX")
    WHY_FILE="" WORKERS="" PRODUCER=""
    trap ha_suite_end EXIT
    export LLMSB_PREFIX=$3 LLMSB_CONFIG=$T/config.yaml
    shift 3
    ha_need "$@" || { fail=$((fail + 1)); suite_end; exit 1; }
    ha_init "$T"
    cat >"$T/config.yaml" <<EOF
worker: {lease: 6, heartbeat_ttl: 3, block: 1, drain: 20}
pool: {min_idle: 2, wait: 30}
jobs: {max_attempts: 5}
EOF
}
ha_suite_end() {
    [ -n "$PRODUCER" ] && kill "$PRODUCER" 2>/dev/null
    ha_workers_stop
    ha_cleanup
    [ -n "${HA_KEEP:-}" ] && echo "  (kept $T)" || rm -rf "$T"
}

# ---- sentinel ---------------------------------------------------------------

# ha_sentinel_start PORT PRIMARY_PORT: a redis-sentinel on PORT watching
# HA_MASTER at 127.0.0.1:PRIMARY_PORT, quorum 2, down after 3 s, a failover
# timeout of 10 s (so a failed attempt is tried again; 1 s flapped on a loaded host).
ha_sentinel_start() {
    local port=$1 d=$HA_DIR/s$1
    mkdir -p "$d"
    cat >"$d/sentinel.conf" <<EOF
port $port
bind 127.0.0.1
daemonize yes
pidfile $d/sentinel.pid
logfile $d/sentinel.log
dir $d
sentinel monitor $HA_MASTER 127.0.0.1 $2 2
sentinel down-after-milliseconds $HA_MASTER 3000
sentinel failover-timeout $HA_MASTER 10000
sentinel parallel-syncs $HA_MASTER 2
EOF
    redis-sentinel "$d/sentinel.conf" || return 1
    for _ in $(seq 1 50); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "redis-sentinel on $port did not start"
    tail -5 "$d/sentinel.log"
    return 1
}

# What every data node of the sentinel topology runs with (docs/operations.md,
# durability): a primary with no replica acknowledging within 5 s refuses
# writes (NOREPLICAS, which clients retry), so a primary that sentinels
# have left behind, or one promoted before its replicas follow, cannot take
# writes the next failover would throw away.
HA_NODE_ARGS="--min-replicas-to-write 1 --min-replicas-max-lag 5"

# ha_sentinel_topology: the primary on the first data port, two replicas of
# it, three sentinels; returns once every sentinel knows the two replicas
# and the two other sentinels (20 s at most).
ha_sentinel_topology() {
    local p s primary
    set -- $HA_DATA_PORTS
    primary=$1
    for p in $HA_DATA_PORTS $HA_SENTINEL_PORTS; do ha_port_free "$p" || return 1; done
    ha_node_start "$primary" $HA_NODE_ARGS || return 1
    for p in $2 $3; do ha_node_start "$p" $HA_NODE_ARGS --replicaof 127.0.0.1 "$primary" || return 1; done
    for s in $HA_SENTINEL_PORTS; do ha_sentinel_start "$s" "$primary" || return 1; done
    ha_wait_healthy 20 >/dev/null
}

# ha_sentinel_field SENTINEL FIELD: FIELD of SENTINEL MASTER HA_MASTER.
ha_sentinel_field() {
    redis-cli -p "$1" sentinel master "$HA_MASTER" 2>/dev/null | awk -v f="$2" 'p {print; exit} $0 == f {p = 1}'
}

# ha_primary_port: the primary's port, as the first sentinel that answers
# says (empty when none does).
ha_primary_port() {
    local s a
    for s in $HA_SENTINEL_PORTS; do
        a=$(redis-cli -p "$s" sentinel get-master-addr-by-name "$HA_MASTER" 2>/dev/null | sed -n 2p)
        [ -n "$a" ] && { echo "$a"; return 0; }
    done
}

# ha_role PORT: "master", "slave" or empty (down).
ha_role() { redis-cli -p "$1" role 2>/dev/null | head -1; }

# ha_wait_new_primary OLD SECONDS: waits until every sentinel names a
# primary other than port OLD and that node says it is master; prints its
# port; fails after SECONDS.
ha_wait_new_primary() {
    local deadline=$(($(date +%s) + $2)) s p q
    while [ "$(date +%s)" -lt "$deadline" ]; do
        p=""
        for s in $HA_SENTINEL_PORTS; do
            q=$(redis-cli -p "$s" sentinel get-master-addr-by-name "$HA_MASTER" 2>/dev/null | sed -n 2p)
            [ -z "$p" ] && p=$q
            [ "$q" = "$p" ] || p=none
        done
        if [ -n "$p" ] && [ "$p" != none ] && [ "$p" != "$1" ] && [ "$(ha_role "$p")" = master ]; then
            echo "$p"
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# ha_wait_healthy SECONDS [REPLICAS]: waits until the primary the sentinels
# name has REPLICAS (default 2) replicas online, and every sentinel lists
# that many replicas that are not down and two other sentinels: a primary
# killed now can fail over.  Prints the primary's port.
ha_wait_healthy() {
    local deadline=$(($(date +%s) + $1)) want=${2:-2} p s good
    while [ "$(date +%s)" -lt "$deadline" ]; do
        p=$(ha_primary_port)
        good=0
        if [ -n "$p" ] && [ "$(ha_role "$p")" = master ] &&
            [ "$(redis-cli -p "$p" info replication 2>/dev/null | grep -c '^slave[0-9]*:.*state=online')" -ge "$want" ]; then
            good=1
            for s in $HA_SENTINEL_PORTS; do
                [ "$(ha_sentinel_field "$s" num-other-sentinels)" = 2 ] &&
                    [ "$(redis-cli -p "$s" sentinel replicas "$HA_MASTER" 2>/dev/null |
                        awk 'p {print; p = 0} $0 == "flags" {p = 1}' | grep -cx slave)" -ge "$want" ] || good=0
            done
        fi
        [ "$good" = 1 ] && { echo "$p"; return 0; }
        sleep 0.2
    done
    echo "the sentinel topology is not healthy after $1 s (primary ${p:-none}, $want replica(s) wanted)" >&2
    return 1
}

# ---- cluster ----------------------------------------------------------------

# ha_cluster_start: three primaries (no replicas), every slot assigned by
# redis-cli --cluster create; returns once each node says cluster_state:ok.
ha_cluster_start() {
    local p addrs=""
    for p in $HA_CLUSTER_PORTS; do
        ha_port_free "$p" && ha_port_free $((p + 10000)) || return 1
        ha_node_start "$p" --cluster-enabled yes --cluster-config-file "$HA_DIR/n$p/nodes.conf" \
            --cluster-node-timeout 2000 || return 1
        addrs="$addrs 127.0.0.1:$p"
    done
    redis-cli --cluster create $addrs --cluster-replicas 0 --cluster-yes >"$HA_DIR/cluster-create.log" 2>&1 ||
        { echo "redis-cli --cluster create failed"; tail -5 "$HA_DIR/cluster-create.log"; return 1; }
    ha_cluster_wait_ok 20
}

# ha_cluster_wait_ok SECONDS: every node says cluster_state:ok and agrees
# on the slots (redis-cli --cluster check).
ha_cluster_wait_ok() {
    local deadline=$(($(date +%s) + $1)) p ok
    set -- $HA_CLUSTER_PORTS
    while [ "$(date +%s)" -lt "$deadline" ]; do
        ok=1
        for p in $HA_CLUSTER_PORTS; do
            redis-cli -p "$p" cluster info 2>/dev/null | grep -q '^cluster_state:ok' || ok=0
        done
        [ "$ok" = 1 ] && redis-cli --cluster check "127.0.0.1:$1" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    echo "the cluster is not ok after the wait"
    redis-cli --cluster check "127.0.0.1:$1" 2>&1 | tail -5
    return 1
}

# ha_node_id PORT: the cluster node id of the node on PORT.
ha_node_id() { redis-cli -p "$1" cluster myid; }

# ha_slot_owner SLOT: the port of the node that serves SLOT, as the node on
# the first cluster port sees it (CLUSTER SLOTS: start, end, then the
# primary's host, port and id).
ha_slot_owner() {
    set -- "$1" $HA_CLUSTER_PORTS
    redis-cli -p "$2" cluster slots | awk -v s="$1" '
        /^[0-9]+$/ && n == 0 {a = $1; n = 1; next}
        n == 1 {b = $1; n = 2; next}
        n == 2 {n = 3; next}
        n == 3 {if (s >= a && s <= b) {print $1; exit} n = 4; next}
        n == 4 {n = 0}'
}

# ha_slot_migrate SLOT FROM TO [BATCH [PAUSE]]: moves SLOT from the node on
# port FROM to the node on port TO as redis-cli --cluster reshard does:
# TO importing, FROM migrating, the keys moved BATCH at a time (MIGRATE ...
# KEYS, PAUSE seconds between batches), then the slot assigned to TO on
# every node.  Prints how many keys it moved.
ha_slot_migrate() {
    local slot=$1 from=$2 to=$3 batch=${4:-10} pause=${5:-0} fid tid keys moved=0 p out
    fid=$(ha_node_id "$from")
    tid=$(ha_node_id "$to")
    out=$(redis-cli -p "$to" cluster setslot "$slot" importing "$fid") && [ "$out" = OK ] || { echo "importing: $out"; return 1; }
    out=$(redis-cli -p "$from" cluster setslot "$slot" migrating "$tid") && [ "$out" = OK ] || { echo "migrating: $out"; return 1; }
    while :; do
        keys=$(redis-cli -p "$from" cluster getkeysinslot "$slot" "$batch")
        [ -n "$keys" ] || break
        # shellcheck disable=SC2086 # key names of the test's own, no blanks
        out=$(redis-cli -p "$from" migrate 127.0.0.1 "$to" "" 0 5000 replace keys $keys)
        case $out in OK | NOKEY) ;; *) echo "migrate: $out"; return 1 ;; esac
        moved=$((moved + $(printf '%s\n' "$keys" | wc -l)))
        [ "$pause" = 0 ] || sleep "$pause"
    done
    for p in "$to" "$from" $HA_CLUSTER_PORTS; do
        redis-cli -p "$p" cluster setslot "$slot" node "$tid" >/dev/null || return 1
    done
    echo "$moved"
}

# ---- the workers --------------------------------------------------------------

# ha_worker_start BIN NAME SLOTS: a worker of BIN named NAME on the URL and
# prefix of the environment (LLMSB_REDIS_URL, LLMSB_PREFIX), its log
# appended to $T/NAME.log, its pid added to WORKERS; returns once `status
# --json` (through the same URL) lists it alive, fails saying so after 20 s.
ha_worker_start() {
    "$1" worker --name "$2" --slots "$3" >>"$T/$2.log" 2>&1 &
    WORKERS="${WORKERS:-} $!"
    disown $! 2>/dev/null
    local pid=$! st
    for _ in $(seq 1 100); do
        st=$("$1" status --json 2>/dev/null) && [ -n "$st" ] &&
            printf '%s' "$st" | jq -e --arg n "$2" '.workers | map(.name) | index($n) != null' >/dev/null &&
            return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
    done
    echo "worker $2 did not come up"
    tail -5 "$T/$2.log"
    return 1
}

# ha_run_start CASE NAME: the run of a suite: two workers of $B, NAME-w1
# and NAME-w2 ($SLOTS slots each), then the producer of jobs $JP-1 ..
# $JP-$N ($BATCH a submit; its pid in PRODUCER).  The case CASE fails and
# the suite ends when a worker does not come up.
ha_run_start() {
    if ha_worker_start "$B" "$2-w1" "$SLOTS" >"$T/w.out" 2>&1 && ha_worker_start "$B" "$2-w2" "$SLOTS" >>"$T/w.out" 2>&1; then
        ok "$1"
    else
        WHY_FILE=$T/w.out bad "$1" "workers on $LLMSB_REDIS_URL"
        suite_end
        exit
    fi
    ha_producer "$B" "$JP" "$N" "$BATCH" &
    PRODUCER=$!
}

# ha_workers_stop: each worker SIGTERM (10 s), then -9; their containers removed.
ha_workers_stop() {
    local p
    for p in ${WORKERS:-}; do kill "$p" 2>/dev/null; done
    for p in ${WORKERS:-}; do
        for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$p" 2>/dev/null
    done
    remove_containers_of ${WORKERS:-}
    return 0
}

# ha_jobs_file FILE PREFIX FROM TO: a JSONL job file of the trivial Python
# jobs PREFIX-FROM .. PREFIX-TO, job n printing n.
ha_jobs_file() {
    seq "$3" "$4" | awk -v p="$2" '{printf "{\"id\":\"%s-%d\",\"lang\":\"python\",\"code\":\"print(%d)\"}\n", p, $1, $1}' >"$1"
}

# ha_runs_from_logs JOBPREFIX <LOGS: per job id the number of runs that
# ended (the worker's "job=ID status=S attempts=N" line with a status: a
# run whose result was written, or refused as "a final result existed
# already"), "ID COUNT" a line.  An entry acknowledged without running
# (its result was there before it started) logs an empty status and is
# not counted.
ha_runs_from_logs() {
    grep -o " job=$1-[0-9]* status=[a-z_][a-z_]* attempts=" |
        sed 's/^ job=\([^ ]*\) .*/\1/' | sort | uniq -c | awk '{print $2, $1}'
}

# ha_producer BIN JOBPREFIX N BATCH: submits the jobs JOBPREFIX-1 .. -N with
# BIN's submit, BATCH a file, the next file once fewer than 2 x BATCH are
# waiting (done_count, the suite's: results so far); a submit that fails
# is logged and sent again with --reuse (ids with a result are kept, the
# others sent again: first-wins absorbs a twin), 10 tries at most.  Its
# log: $T/producer.log ("end" when it is through), $T/submit.log; the file
# $T/submitting is there while a submit runs.
ha_producer() {
    local b=1 from to tries rc opt
    while [ $(((b - 1) * $4)) -lt "$3" ]; do
        from=$(((b - 1) * $4 + 1))
        to=$((b * $4 > $3 ? $3 : b * $4))
        while [ $((from - 1 - $(done_count))) -ge $((2 * $4)) ]; do sleep 0.2; done
        ha_jobs_file "$T/batch.$b.jsonl" "$2" "$from" "$to"
        opt=""
        for tries in 1 2 3 4 5 6 7 8 9 10; do
            touch "$T/submitting"
            "$1" submit "$T/batch.$b.jsonl" $opt >>"$T/submit.log" 2>&1
            rc=$?
            rm -f "$T/submitting"
            echo "batch $b ($from-$to) try $tries rc=$rc at $(ha_now_ms)" >>"$T/producer.log"
            [ "$rc" = 0 ] && break
            opt=--reuse
            sleep 1
        done
        b=$((b + 1))
    done
    echo end >>"$T/producer.log"
}

# ha_producer_failures: "0" when every submit went through at once, else
# what failed.
ha_producer_failures() {
    local n
    n=$(grep -c 'rc=[1-9]' "$T/producer.log" 2>/dev/null)
    grep -qx end "$T/producer.log" 2>/dev/null || { echo "${n:-0} submit(s) failed, the producer did not finish"; return; }
    [ "$n" = 0 ] && echo 0 || echo "$n submit(s) failed"
}

# ha_books PORT KEYPREFIX JOBPREFIX N: the books of jobs JOBPREFIX-1 .. -N
# on the node on PORT (its keys in one slot: the script names the results
# stream), four lines: how many have no result at all (lost), how many
# not exactly one entry on the results stream, how many a final result
# other than ok with stdout n, and the first of them (id=status/entries).
ha_books() {
    redis-cli -p "$1" eval "
local kp, jp, n = ARGV[1], ARGV[2], tonumber(ARGV[3])
local seen = {}
for _, e in ipairs(redis.call('XRANGE', KEYS[1], '-', '+')) do
  local f = e[2]
  for i = 1, #f, 2 do
    if f[i] == 'id' then seen[f[i + 1]] = (seen[f[i + 1]] or 0) + 1 end
  end
end
local lost, notonce, wrong, shown = 0, 0, 0, ''
for i = 1, n do
  local id = jp .. '-' .. i
  local r = redis.call('HMGET', kp .. ':result:' .. id, 'status', 'stdout')
  local c = seen[id] or 0
  if not r[1] and c == 0 then lost = lost + 1
  elseif c ~= 1 then notonce = notonce + 1
  elseif r[1] ~= 'ok' or (r[2] ~= tostring(i) .. '\\n' and r[2] ~= tostring(i)) then wrong = wrong + 1 end
  if (not r[1] or c ~= 1 or r[1] ~= 'ok') and #shown < 300 then
    shown = shown .. ' ' .. id .. '=' .. tostring(r[1]) .. '/' .. c
  end
end
return {lost, notonce, wrong, shown}" 1 "$2:results" "$2" "$3" "$4" 2>&1
}

# ha_moving: 0 while the results (done_count, the suite's) grew in the last
# HA_STALL (60) seconds and HA_DEADLINE (400 s from the first call) has
# not passed; else the case jobs_keep_flowing fails once (STALLED set), 1.
ha_moving() {
    local n now
    n=$(done_count)
    now=$(date +%s)
    : "${HA_DEADLINE_AT:=$((now + ${HA_DEADLINE:-400}))}"
    [ "$n" != "${HA_LAST_N:-}" ] && { HA_LAST_N=$n; HA_LAST_T=$now; }
    [ $((now - HA_LAST_T)) -lt "${HA_STALL:-60}" ] && [ "$now" -lt "$HA_DEADLINE_AT" ] && return 0
    [ -n "${STALLED:-}" ] ||
        bad jobs_keep_flowing "no new result for $((now - HA_LAST_T)) s at $n results (deadline in $((HA_DEADLINE_AT - now)) s)"
    STALLED=1
    return 1
}

# ha_judge PORT KEYPREFIX JOBPREFIX N WHAT VIA: the end of a run whose keys
# are on the node on PORT: the cases workers_survive_WHAT (both alive:
# they reconnected by themselves), result_through_VIA (`result` on the
# suite's URL), then, the workers stopped, every_job_exactly_one_result
# (ha_books), nothing_pending_at_rest and submit_survives_WHAT; sets lost,
# notonce, wrong, fails (ha_producer_failures) and doubled (jobs whose end
# two runs logged).
ha_judge() {
    local port=$1 kp=$2 jp=$3 n=$4 what=$5 via=$6 p alive=0 books pending
    for p in $WORKERS; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
    [ "$alive" = 2 ] && ok "workers_survive_$what" ||
        bad "workers_survive_$what" "$alive of 2 workers alive at the end (see the workers' logs in $T)"
    if "$B" result "$jp-1" >"$T/result.out" 2>&1 && grep -q '"status":[[:space:]]*"ok"' "$T/result.out"; then
        ok "result_through_$via"
    else WHY_FILE=$T/result.out bad "result_through_$via" "llm-sandbox result $jp-1"; fi
    ha_workers_stop
    WORKERS=""
    books=$(ha_books "$port" "$kp" "$jp" "$n")
    lost=$(echo "$books" | sed -n 1p) notonce=$(echo "$books" | sed -n 2p) wrong=$(echo "$books" | sed -n 3p)
    if [ "$lost" = 0 ] && [ "$notonce" = 0 ] && [ "$wrong" = 0 ]; then ok every_job_exactly_one_result
    else bad every_job_exactly_one_result "lost=$lost not-once=$notonce wrong=$wrong:$(echo "$books" | sed -n 4p)"; fi
    pending=$(redis-cli -p "$port" xpending "$kp:jobs" "$LLMSB_PREFIX-workers" 2>&1 | head -1)
    [ "$pending" = 0 ] && ok nothing_pending_at_rest || bad nothing_pending_at_rest "$pending entries pending"
    fails=$(ha_producer_failures)
    grep -i "error\|warning" "$T/submit.log" >"$T/submit-errors" 2>/dev/null
    [ "$fails" = 0 ] && ok "submit_survives_$what" || WHY_FILE=$T/submit-errors bad "submit_survives_$what" "$fails"
    cat "$T"/*-w[0-9].log | ha_runs_from_logs "$jp" >"$T/runs"
    doubled=$(awk '$2 > 1' "$T/runs" | wc -l)
}
