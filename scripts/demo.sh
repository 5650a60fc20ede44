#!/usr/bin/env bash
# demo.sh - the main job end to end: a Redis (AOF on) on a free port, a
# worker, examples/jobs.yaml submitted and waited for, results in
# results.jsonl; then the worker drains and both stop.
#   scripts/demo.sh [JOBFILE]
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${1:-examples/jobs.yaml}
DIR=$(mktemp -d /tmp/llmsb-demo.XXXXXX)
PORT=$((18400 + $$ % 1000))
export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT
stop() {
    [ -n "${WPID:-}" ] && kill -TERM "$WPID" 2>/dev/null && wait "$WPID" 2>/dev/null
    redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1 || true
    rm -rf "$DIR"
}
trap stop EXIT
redis-server --port "$PORT" --bind 127.0.0.1 --appendonly yes --dir "$DIR" --save '' \
    --daemonize yes --logfile "$DIR/redis.log"
for _ in $(seq 1 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
echo "== redis on port $PORT (AOF on); starting a worker"
bin/llm-sandbox worker --slots 2 >"$DIR/worker.log" 2>&1 &
WPID=$!
echo "== bin/llm-sandbox submit $JOBS --wait --out results.jsonl"
rc=0
bin/llm-sandbox submit "$JOBS" --wait --out results.jsonl </dev/null || rc=$?
if [ "$rc" -gt 1 ]; then echo "submit failed (exit $rc)" >&2; exit "$rc"; fi
echo "== submit exited $rc (1 when a job did not pass: examples/jobs.yaml's wrong-answer fails on purpose)"
echo "== results.jsonl: $(wc -l < results.jsonl) result(s); the worker's log:"
sed 's/^/   /' "$DIR/worker.log"
