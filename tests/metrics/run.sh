#!/bin/bash
# run.sh - the worker's Prometheus endpoint (docs/operations.md, "Metrics")
# against the real dockerd and a redis-server of its own (temp port, its own
# prefix): a worker started with --metrics is scraped with curl while and
# after it runs jobs of two languages (one of each failing), and the text is
#   - linted by promtool check metrics (Prometheus' own parser, Debian's
#     prometheus package), which must find nothing to say;
#   - parsed by the official Python client's parser
#     (python3-prometheus-client), whose numbers must equal the jobs run
#     (llmsb_jobs_total by status and language, the phase histograms'
#     counts) and `status --json` (queued, pending, dead letters, slots),
#     read between two scrapes that agree, with jobs queued and running;
#   - a bad --metrics address stops the worker naming it;
#   - and scrapes get through while 250 connections never finish a request
#     (tests/slow_clients.py), each answered 408 at the front door's deadline,
#     and after a burst past its connection cap, when it stops on SIGTERM.
# Both parsers are required: a missing one fails the suite (scripts/setup.sh
# installs them).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
T=$(mktemp -d /tmp/llmsb-metrics.XXXXXX)
PORT=$(free_port)
MPORT=$((20400 + $$ % 1000))
PREFIX=metricstest$$
R="redis-cli -p $PORT"
PY=/usr/bin/python3 # Debian's, with python3-prometheus-client
suite metrics; WORKER=""; SLOW=""

cleanup() {
    [ -n "${SLOW:-}" ] && kill "$SLOW" 2>/dev/null
    stop_worker_and_redis
    rm -rf "$T"
}
trap cleanup EXIT

scrape() { curl -sf --max-time 5 "http://127.0.0.1:$MPORT/metrics" -o "$1"; }

# values FILE: "name{labels} value" per sample, as the client's parser reads them
values() {
    "$PY" - "$1" <<'EOF'
import sys
from prometheus_client.parser import text_string_to_metric_families
for fam in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in fam.samples:
        labels = ",".join('%s="%s"' % kv for kv in sorted(s.labels.items()))
        print("%s{%s} %g" % (s.name, labels, s.value))
EOF
}

# lint NAME FILE: promtool finds nothing wrong
lint() {
    if [ -s "$2" ] && promtool check metrics <"$2" >"$T/why" 2>&1; then ok "$1"; else bad "$1" "no scrape, or promtool check metrics objects"; fi
}

for tool in promtool curl; do
    command -v $tool >/dev/null || { echo "FAIL metrics.tools: $tool missing (scripts/setup.sh)"; echo "metrics: 0 passed, 1 failed"; exit 1; }
done
"$PY" -c 'import prometheus_client.parser' 2>/dev/null ||
    { echo "FAIL metrics.tools: python3-prometheus-client missing (scripts/setup.sh)"; echo "metrics: 0 passed, 1 failed"; exit 1; }

start_redis "$PORT" "$T" || { echo "metrics: redis-server did not start"; exit 1; }
export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT LLMSB_PREFIX=$PREFIX

# 1. a bad address: the worker does not start, and says which
if ! timeout 30 "$B" worker --name mbad --slots 1 --metrics 127.0.0.1:http0 >"$T/why" 2>&1 &&
    grep -q 'worker.metrics_addr "127.0.0.1:http0"' "$T/why"; then
    ok bad_address_refused
else
    bad bad_address_refused "no error naming the address"
fi

"$B" worker --name mw --slots 2 --metrics "127.0.0.1:$MPORT" >"$T/worker.log" 2>&1 &
WORKER=$!
for _ in $(seq 1 100); do [ "$($R exists "$PREFIX:worker:mw")" = 1 ] && break; sleep 0.1; done

# 2. before any job: lints, no job series, the queue read
scrape "$T/m0"
lint lint_idle "$T/m0"
if values "$T/m0" >"$T/v0" 2>"$T/why" && ! grep -q '^llmsb_jobs_total{' "$T/v0" &&
    grep -qx 'llmsb_queue_up{} 1' "$T/v0" && grep -qx 'llmsb_worker_slots{} 2' "$T/v0"; then
    ok idle_values
else
    cp "$T/v0" "$T/why" 2>/dev/null; bad idle_values "unexpected values before any job"
fi

# 3. jobs of two languages, each with a failure
cat >"$T/jobs.jsonl" <<'EOF'
{"id": "py-ok-1", "lang": "python", "code": "print(1)"}
{"id": "py-ok-2", "lang": "python", "code": "print(2)"}
{"id": "py-fail", "lang": "python", "code": "raise SystemExit(3)"}
{"id": "cpp-ok", "lang": "cpp", "code": "#include <cstdio>\nint main(){ puts(\"hi\"); }\n"}
{"id": "cpp-bad", "lang": "cpp", "code": "int main(){ return nope; }\n"}
EOF
"$B" submit "$T/jobs.jsonl" --wait --out "$T/res.jsonl" </dev/null >"$T/out" 2>&1
# the worker counts a result right after writing it: a scrape may come first
scrape_until() {
    for _ in $(seq 1 30); do
        scrape "$1" && values "$1" >"$2" 2>"$T/why" &&
            [ "$(awk '/^llmsb_jobs_total\{/ {s += $2} END {print s + 0}' "$2")" = "$3" ] && return 0
        sleep 0.1
    done
    return 1
}
scrape_until "$T/m1" "$T/v1" 5
lint lint_after_jobs "$T/m1"
want="llmsb_jobs_total{lang=\"cpp\",status=\"compile_error\"} 1
llmsb_jobs_total{lang=\"cpp\",status=\"ok\"} 1
llmsb_jobs_total{lang=\"python\",status=\"ok\"} 2
llmsb_jobs_total{lang=\"python\",status=\"runtime_error\"} 1"
got=$(grep '^llmsb_jobs_total{' "$T/v1" | sort)
# the same four series, built from the results the jobs wrote
fromres=$(jq -r '"llmsb_jobs_total{lang=\"\(.id | sub("-.*"; "") | sub("py"; "python"))\",status=\"\(.status)\"}"' \
    "$T/res.jsonl" | sort | uniq -c | awk '{print $2, $1}')
if [ "$got" = "$want" ] && [ "$fromres" = "$want" ]; then
    ok jobs_by_status_and_language
else
    { echo "scraped:"; echo "$got"; echo "results:"; jq -c '{id, status}' "$T/res.jsonl"; } >"$T/why"
    bad jobs_by_status_and_language "llmsb_jobs_total does not count the jobs run"
fi
# every job observed once in queue_wait and total; run for the four that ran
if grep -qx 'llmsb_job_phase_seconds_count{phase="total"} 5' "$T/v1" &&
    grep -qx 'llmsb_job_phase_seconds_count{phase="queue_wait"} 5' "$T/v1" &&
    grep -qx 'llmsb_job_phase_seconds_bucket{le="+Inf",phase="total"} 5' "$T/v1" &&
    grep -qx "llmsb_job_phase_seconds_count{phase=\"run\"} $(jq -s '[.[] | select(.phases.run_ms != null)] | length' "$T/res.jsonl")" "$T/v1" &&
    grep -qx "llmsb_job_phase_seconds_count{phase=\"compile\"} $(jq -s '[.[] | select(.phases.compile_ms != null)] | length' "$T/res.jsonl")" "$T/v1"; then
    ok phase_histograms
else
    { grep '_count{' "$T/v1"; jq -c '{id, phases}' "$T/res.jsonl"; } >"$T/why"; bad phase_histograms "phase counts differ from the results"
fi
# the pool: every job had a sandbox, warm or cold
acq=$(awk '/^llmsb_pool_acquires_total\{how="(warm|cold)"\}/ {s += $2} END {print s + 0}' "$T/v1")
if [ "$acq" = 5 ] && grep -qx 'llmsb_engine_errors_total{} 0' "$T/v1"; then
    ok pool_and_engine
else
    grep -E 'pool|engine' "$T/v1" >"$T/why"; bad pool_and_engine "acquires $acq, not 5"
fi

# 4. queue gauges equal status --json, with jobs queued and running
$R xadd "$PREFIX:dead" '*' id fake-dead lang python reason "metrics test" >/dev/null
: >"$T/slow.jsonl"
for i in 1 2 3 4; do
    echo "{\"id\": \"slow-$i\", \"lang\": \"python\", \"code\": \"import time; time.sleep(3); print($i)\"}" >>"$T/slow.jsonl"
done
"$B" submit "$T/slow.jsonl" </dev/null >"$T/out" 2>&1
for _ in $(seq 1 100); do
    [ "$("$B" status --json 2>/dev/null | jq .pending)" = 2 ] && break
    sleep 0.1
done
same=0
for _ in 1 2 3; do
    t0=$(date +%s%N)
    scrape "$T/a"; "$B" status --json >"$T/st.json" 2>/dev/null; scrape "$T/b"
    t1=$(date +%s%N)
    values "$T/a" | grep '^llmsb_queue_' >"$T/qa"; values "$T/b" | grep '^llmsb_queue_' >"$T/qb"
    cmp -s "$T/qa" "$T/qb" && { same=1; break; }
done
exp=$(jq -r '"llmsb_queue_dead_letters{} \(.dead)\nllmsb_queue_pending{} \(.pending)\nllmsb_queue_queued{} \(.queued)\nllmsb_queue_up{} 1"' "$T/st.json")
if [ "$same" = 1 ] && [ "$(sort "$T/qa")" = "$exp" ] && grep -qx 'llmsb_queue_queued{} 2' "$T/qa" &&
    grep -qx 'llmsb_queue_dead_letters{} 1' "$T/qa"; then
    ok queue_gauges_equal_status
else
    { echo "scrape:"; cat "$T/qa"; echo "status --json:"; echo "$exp"; } >"$T/why"
    bad queue_gauges_equal_status "the queue gauges differ from status --json"
fi
if [ "$(jq '.workers[0].slots' "$T/st.json")" = "$(values "$T/a" | sed -n 's/^llmsb_worker_slots{} //p')" ] &&
    values "$T/a" | grep -qx 'llmsb_worker_slots_busy{} 2'; then
    ok slots_equal_status
else
    { jq -c .workers "$T/st.json"; values "$T/a" | grep worker_; } >"$T/why"; bad slots_equal_status "slots differ"
fi
# a scrape while both slots run: answered at once (it never waits on a slot)
if [ $(((t1 - t0) / 1000000)) -lt 2000 ]; then
    ok scrape_while_busy
else
    echo "two scrapes and a status took $(((t1 - t0) / 1000000)) ms" >"$T/why"; bad scrape_while_busy "slow"
fi
for i in 1 2 3 4; do "$B" result "slow-$i" --wait 30 >/dev/null 2>&1; done
scrape_until "$T/m2" "$T/v2" 9
lint lint_end "$T/m2"
if grep -qx 'llmsb_jobs_total{lang="python",status="ok"} 6' "$T/v2" &&
    grep -qx 'llmsb_queue_pending{} 0' "$T/v2" && grep -qx 'llmsb_queue_queued{} 0' "$T/v2"; then
    ok counts_after_all
else
    grep -E 'jobs_total|queue_' "$T/v2" >"$T/why"; bad counts_after_all "not 6 python ok / an empty queue"
fi

# 5. scrapes get through while 250 connections idle or dribble a byte every
# 5 s (the worker's server takes 16 at once, and used to keep each for 10 s
# from its last byte): a scrape a second for 12 s, each answered; the
# front door answered every slow socket 408 at its 10 s deadline
python3 "$ROOT/tests/slow_clients.py" 127.0.0.1 "$MPORT" 250 12 >"$T/slow" 2>&1 & SLOW=$!
for _ in $(seq 1 100); do grep -q '^ready' "$T/slow" && break; sleep 0.1; done
got=0
for i in $(seq 1 12); do
    scrape "$T/s$i" && grep -q '^llmsb_worker_slots 2$' "$T/s$i" && got=$((got + 1))
    sleep 1
done
wait "$SLOW"; SLOW=""
st=$(tail -1 "$T/slow")
if [ "$got" = 12 ]; then
    ok scrapes_among_slow_clients
else
    echo "$st" >"$T/why"; bad scrapes_among_slow_clients "$got of 12 scrapes answered"
fi
if [ "$(printf '%s' "$st" | jq '(.answers | keys) == ["408"] and .answers["408"] >= 250')" = true ]; then
    ok slow_clients_get_408_at_the_deadline
else
    echo "$st" >"$T/why"; bad slow_clients_get_408_at_the_deadline "not each slow socket answered 408"
fi

# 6. a burst of three times the server's connections (16), each a complete
# header block whose body never comes: scrapes go on, and the worker stops
# on SIGTERM (libmicrohttpd given a connection past its own cap deadlocked:
# every scrape after it failed, and the worker's stop hung in it)
burst=$(python3 "$ROOT/tests/burst_clients.py" 127.0.0.1 "$MPORT" 48 1 \
    "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\n")
got=0
for i in 1 2 3; do scrape "$T/b$i" && grep -q '^llmsb_worker_slots 2$' "$T/b$i" && got=$((got + 1)); done
kill -TERM "$WORKER"
for _ in $(seq 1 300); do kill -0 "$WORKER" 2>/dev/null || break; sleep 0.1; done
if [ "$got" = 3 ] && ! kill -0 "$WORKER" 2>/dev/null; then
    ok scraped_and_stopped_after_a_burst_past_the_cap
else
    echo "the burst: $burst" >"$T/why"
    bad scraped_and_stopped_after_a_burst_past_the_cap "$got of 3 scrapes answered; stopped in 30 s: $(kill -0 "$WORKER" 2>/dev/null && echo no || echo yes)"
    kill -9 "$WORKER" 2>/dev/null
fi
wait "$WORKER" 2>/dev/null

echo "metrics: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
