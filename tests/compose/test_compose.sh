#!/bin/bash
# test_compose.sh - docker-compose.yml brings up Redis (AOF) and 2 workers,
# built from the offline base, and they drain a job file.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
B=${LLMSB_BIN:-$PWD/bin/llm-sandbox}
export LLMSB_REDIS_PORT=$((17400 + $$ % 1000))
export COMPOSE_PROJECT_NAME=llmsbtest$$
T=$(mktemp -d)
suite compose
down() { docker-compose down -v --remove-orphans >/dev/null 2>&1; rm -rf "$T"; }
trap down EXIT

if docker-compose up -d --build --scale worker=2 >"$T/up.log" 2>&1; then ok up_with_two_workers
else bad up_with_two_workers "$(tail -20 "$T/up.log")"; suite_end; exit 1; fi
export LLMSB_REDIS_URL=redis://127.0.0.1:$LLMSB_REDIS_PORT
alive=0
for _ in $(seq 1 100); do
    alive=$(redis-cli -p "$LLMSB_REDIS_PORT" --scan --pattern 'llmsb:worker:*' 2>/dev/null | wc -l)
    [ "$alive" -ge 2 ] && break; sleep 0.3
done
[ "$alive" = 2 ] && ok two_heartbeats || bad two_heartbeats "alive=$alive"
[ "$(redis-cli -p "$LLMSB_REDIS_PORT" config get appendonly | tail -1)" = yes ] && ok redis_aof_on || bad redis_aof_on "appendonly off"
"$B" submit examples/jobs.yaml --wait --timeout 180 --out "$T/out.jsonl" >"$T/submit.out" 2>&1; rc=$?
workers=$(grep -o '"worker":"[^"]*"' "$T/out.jsonl" | sort -u | wc -l)
if [ "$rc" = 1 ] && [ "$(wc -l < "$T/out.jsonl")" = 6 ] && grep -q 'total .* 83.3%' "$T/submit.out"; then
    ok job_file_drained
else bad job_file_drained "rc=$rc $(cat "$T/submit.out")"; fi
echo "  (results came from $workers worker(s))"
suite_end
