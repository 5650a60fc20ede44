#!/bin/sh
# bench_warm_worker.sh - the first job of a container a worker's pool made
# ahead of any job (pool.min_idle), with each binary given: a fresh worker
# (redis-server on a temp port, pool.min_idle 2, 2 slots) runs one Python job
# of the data profile (imports numpy); maintenance then makes a second
# container ahead; two jobs at once follow, one in each container.  Prints,
# per binary, each round's wall time from claim to result (finished_at -
# queued_at) of the slower of the two (the one in the container made ahead,
# whose zygote a binary without the ahead prestart starts on that job's path)
# and its zygote field.
#   sh bench/bench_warm_worker.sh ROUNDS BIN...
set -u
ROUNDS=${1:-3}
shift
T=$(mktemp -d /tmp/llmsb-warm.XXXXXX)
PORT=$((17400 + $$ % 1000))
export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT LLMSB_CONFIG=$T/config.yaml
R="redis-cli -p $PORT"
WPID=

cat >"$T/config.yaml" <<EOF
worker: {block: 1}
pool: {min_idle: 2}
EOF
cleanup() {
    [ -n "$WPID" ] && kill "$WPID" 2>/dev/null && wait "$WPID" 2>/dev/null
    $R shutdown nosave >/dev/null 2>&1
    rm -rf "$T"
}
trap cleanup EXIT
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
    --logfile "$T/redis.log" --dir "$T"
for _ in $(seq 1 50); do $R ping >/dev/null 2>&1 && break; sleep 0.1; done

job() { # job ID: a JSON line, a data-profile Python job
    printf '{"id": "%s", "lang": "python", "code": "import numpy as np\\nprint(int(np.arange(5).sum()))\\n"}\n' "$1"
}

wait_for() { # wait_for ID...: until each has a result
    for id in "$@"; do
        "$B" result "$id" --wait 60 >/dev/null 2>&1
    done
}

for B in "$@"; do
    for r in $(seq 1 "$ROUNDS"); do
        $R flushall >/dev/null
        "$B" worker --name "warm-$r" --slots 2 >"$T/worker.log" 2>&1 &
        WPID=$!
        job "w$r-0" >"$T/a.jsonl"
        "$B" submit "$T/a.jsonl" --no-dedup >/dev/null && wait_for "w$r-0"
        sleep 12 # the worker's maintenance (every 10 s) makes the container ahead
        { job "w$r-1"; job "w$r-2"; } >"$T/b.jsonl"
        "$B" submit "$T/b.jsonl" --no-dedup >/dev/null && wait_for "w$r-1" "w$r-2"
        for id in "w$r-1" "w$r-2"; do
            printf '%s %s %s\n' "$($R hget "llmsb:result:$id" queued_at)" \
                "$($R hget "llmsb:result:$id" finished_at)" "$($R hget "llmsb:result:$id" zygote)"
        done | awk -v b="$B" -v r="$r" '{ d = $2 - $1; if (d > m) { m = d; z = $3 } }
            END { printf "%s round %d: slower of two %d ms (zygote %s)\n", b, r, m, z }'
        kill "$WPID" && wait "$WPID" 2>/dev/null
        WPID=
    done
done
