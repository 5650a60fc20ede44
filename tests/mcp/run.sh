#!/bin/bash
# run.sh - `llm-sandbox mcp` driven by a real MCP client, the SDK's
# (@modelcontextprotocol/sdk, installed from the npm registry by
# scripts/setup.sh into tests/mcp/node_modules): tests/mcp/client.mjs and
# tests/mcp/batch.mjs (submit_jobs: a job file with repeated programs run
# once each through the batch module) against the server running jobs in
# its own process, then again with --queue through a real redis-server
# (temp port) and a worker, whose own log counts the programs it ran.  A
# missing node or SDK is a failure, never a skip.  The transcript of the
# in-process run is kept in $LLMSB_MCP_TRANSCRIPT when set.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
T=$(mktemp -d /tmp/llmsb-mcp.XXXXXX)
PORT=$(free_port)
suite mcp; WORKER=""

cleanup() {
    stop_worker_and_redis
    rm -rf "$T"
}
trap cleanup EXIT

# client.mjs and batch.mjs print their own ok/FAIL lines; count them into ours
sdk_client() {  # sdk_client SCRIPT ARG [SERVER ARGS...]
    local out name=${1%.mjs}
    out=$(cd "$ROOT/tests/mcp" && node "$1" "$B" "${@:2}" 2>"$T/$name.err")
    checks_of "$out" || bad "$name" "no check ran: $(tail -5 "$T/$name.err")"
}
client() { sdk_client client.mjs "$@"; }      # client TRANSCRIPT [SERVER ARGS...]
batch_client() { sdk_client batch.mjs "$@"; } # batch_client TAG [SERVER ARGS...]

# the wire itself, without the SDK: CRLF, blank lines, a batch answered as
# one array, errors with their JSON-RPC codes, a NUL in a string refused
# (it would cut the code), a line over the 8 MiB cap refused and skipped,
# and the server still answering after each
{
    printf '{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n\n'
    printf '[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":3,"method":"nope"}]\n'
    printf 'not json\n{"jsonrpc":"1.0","id":4,"method":"ping"}\n'
    printf '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}\n'
    printf '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute_code","arguments":{"code":"print(1)\\u0000x"}}}\n'
    head -c 9000000 /dev/zero | tr '\0' 'x'
    printf '\n{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}\n'
} | "$B" mcp >"$T/wire.out" 2>"$T/wire.err"
expect='{"jsonrpc":"2.0","id":1,"result":{}}
[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found: nope"}}]
-32700 null
-32600 4
-32602 5
-32602 7
-32600 null
2024-11-05 6'
got=$(jq -c 'if type == "object" and .error then "\(.error.code) \(.id)"
             elif type == "object" and .result.protocolVersion then "\(.result.protocolVersion) \(.id)"
             else . end' "$T/wire.out" 2>&1 | sed 's/^"//; s/"$//')
if [ "$got" = "$expect" ]; then
    ok wire
else
    bad wire "got: $got (stderr: $(tail -3 "$T/wire.err"))"
fi

# stdin's end during a call (the client is gone): the call stops, its
# container goes and the server exits at once, not at the call's timeout.
# eof_mid_call LABEL [SERVER ARGS...]: a 30 s call, stdin closed 1 s after a
# container labelled llmsb.worker=LABEL (default: the server's) runs;
# sets EOF_RC, EOF_MS (exit after the close), EOF_DURING and EOF_AFTER
# (containers with that label, during the call and after the exit)
eof_mid_call() {
    local label=$1 t0 mpid; shift
    rm -f "$T/in"; mkfifo "$T/in"
    "$B" mcp "$@" <"$T/in" >"$T/eof.out" 2>"$T/eof.err" &
    mpid=$!; EOF_PID=$mpid
    [ -n "$label" ] || label=$(hostname)-$mpid
    exec 7>"$T/in"
    printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_code","arguments":{"code":"import time; time.sleep(30)","timeout":60}}}' >&7
    EOF_DURING=0
    for _ in $(seq 1 300); do
        EOF_DURING=$(worker_containers "$label")
        [ "$EOF_DURING" -ge 1 ] && break; sleep 0.1
    done
    sleep 1
    t0=$(date +%s%N)
    exec 7>&-
    wait $mpid; EOF_RC=$?; EOF_MS=$(( ($(date +%s%N) - t0) / 1000000 ))
    EOF_AFTER=$(worker_containers "$label")
}
eof_mid_call ""
# the stopped call's answer, if the client still reads, says why: never an
# internal_error (the sandbox did not fail)
if [ "$EOF_DURING" -ge 1 ] && [ "$EOF_RC" = 0 ] && [ "$EOF_MS" -le 3000 ] && [ "$EOF_AFTER" = 0 ] &&
    ! grep -q internal_error "$T/eof.out" && { ! grep -q '"id":2' "$T/eof.out" ||
    grep '"id":2' "$T/eof.out" | grep -q 'cancelled: stdin ended (the client left)'; }; then
    ok stdin_end_stops_the_call
else bad stdin_end_stops_the_call "exit $EOF_RC $EOF_MS ms after stdin closed; containers during the call $EOF_DURING, after $EOF_AFTER; $(tail -2 "$T/eof.err"); answer: $(grep '"id":2' "$T/eof.out" | head -c 300)"; fi

# the session test's idle time, for the server and the worker alike
{ [ -n "${LLMSB_CONFIG:-}" ] && cat "$LLMSB_CONFIG"; echo "sessions: {idle_ttl: 3}"; } >"$T/config.yaml"
export LLMSB_CONFIG=$T/config.yaml

if ! command -v node >/dev/null; then
    bad node "node is not installed (scripts/setup.sh installs it)"
elif [ ! -d "$ROOT/tests/mcp/node_modules/@modelcontextprotocol/sdk" ]; then
    bad sdk "the MCP SDK is not installed: npm ci --prefix tests/mcp (scripts/setup.sh does it)"
else
    client "${LLMSB_MCP_TRANSCRIPT:-$T/transcript.txt}"
    batch_client "b$$-"

    # bytes that are not UTF-8 read as U+FFFD in the messages and the
    # answer alike, and the last message brings only what the pieces did
    # not (it took the answer's text at the raw bytes' offset: "end" twice)
    (cd "$ROOT/tests/mcp" && node one_call.mjs "$B" 'import sys, time
sys.stdout.buffer.write(b"\xff\xfe ok\n"); sys.stdout.flush()
time.sleep(1)
print("end")') >"$T/bin.json" 2>"$T/bin.err"
    if jq -e '.isError == false and .text[0] == "\ufffd\ufffd ok\nend\n" and
            ([.progress[].message] | add) == .text[0]' "$T/bin.json" >/dev/null; then
        ok progress_messages_are_the_output_not_utf8
    else
        bad progress_messages_are_the_output_not_utf8 "$(head -c 400 "$T/bin.json"; tail -3 "$T/bin.err")"
    fi

    # the same client, the jobs through Redis to a worker
    start_redis "$PORT" "$T"
    export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT LLMSB_PREFIX=mcptest
    "$B" worker --name mcp-w1 --slots 2 >"$T/worker.log" 2>&1 &
    WORKER=$!
    client "$T/queue-transcript.txt" --queue
    # the queue's own record: the calls were jobs of the stream, results of
    # the result keys, done by the worker
    n=$(redis-cli -p "$PORT" --scan --pattern 'mcptest:result:mcp-*' | wc -l)
    w=$(for k in $(redis-cli -p "$PORT" --scan --pattern 'mcptest:result:mcp-*'); do
            redis-cli -p "$PORT" hget "$k" worker; done | sort -u | tr '\n' ' ')
    if [ "$n" -ge 16 ] && [ "$w" = "mcp-w1 " ]; then
        ok queue_results_in_redis
    else
        bad queue_results_in_redis "$n results, workers: $w"
    fi
    # submit_jobs through the queue: the worker's own count is the distinct
    # programs (b1, c1, d1, e1 of batch.mjs), every id has its result key,
    # in the server's scope (mcp-<8 hex>-), none under the bare id
    TAG="bq$$-"
    batch_client "$TAG" --queue
    for _ in $(seq 1 50); do # the worker logs a job just after its result
        ran=$(grep -c "job=mcp-[0-9a-f]*-$TAG" "$T/worker.log")
        [ "$ran" -ge 4 ] && break; sleep 0.1
    done
    keys=$(redis-cli -p "$PORT" --scan --pattern "mcptest:result:*$TAG*" | sort | tr '\n' ' ')
    if [ "$ran" = 4 ] && [ "$(echo "$keys" | wc -w)" = 8 ] &&
        [ "$(echo "$keys" | tr ' ' '\n' | grep -cE "^mcptest:result:mcp-[0-9a-f]{8}-$TAG(b[123]|c[12]|d1|e[12])\$")" = 8 ]; then
        ok queue_batch_ran_each_program_once
    else
        bad queue_batch_ran_each_program_once "the worker ran $ran of 4; result keys: $keys"
    fi
    # --queue: Redis drops every connection mid-call (as a restart or a
    # failover does): the server connects again and answers the call, its
    # progress messages the output (it ended the call with the error)
    for k in $(redis-cli -p "$PORT" --scan --pattern 'mcptest:out:*'); do # the calls' before
        redis-cli -p "$PORT" del "$k" >/dev/null
    done
    (cd "$ROOT/tests/mcp" && node one_call.mjs "$B" 'import time
print("a", flush=True)
time.sleep(3)
print("b")' --queue --wait 60) >"$T/drop.json" 2>"$T/drop.err" &
    cp=$!
    for _ in $(seq 1 100); do # the call's job running, its first line streamed
        k=$(redis-cli -p "$PORT" --scan --pattern 'mcptest:out:mcp-*' | tail -1)
        [ -n "$k" ] && [ "$(redis-cli -p "$PORT" xlen "$k")" -ge 2 ] && break
        sleep 0.1
    done
    redis-cli -p "$PORT" client kill type normal >/dev/null
    wait $cp
    if jq -e '.isError == false and (.text | index("a\nb\n")) != null and
            ([.progress[].message] | add) == "a\nb\n"' "$T/drop.json" >/dev/null; then
        ok queued_call_answered_after_redis_dropped_it
    else
        bad queued_call_answered_after_redis_dropped_it "$(head -c 400 "$T/drop.json"; tail -3 "$T/drop.err")"
    fi
    # --queue: stdin's end cancels the call on its worker (which removes its
    # container) and the server exits at once
    eof_mid_call mcp-w1 --queue
    id=$(redis-cli -p "$PORT" --scan --pattern "mcptest:result:mcp-$EOF_PID-*" | head -1)
    id=${id#mcptest:result:}
    for _ in $(seq 1 50); do
        [ -z "$id" ] || [ "$(redis-cli -p "$PORT" hget "mcptest:result:$id" status)" = cancelled ] && break; sleep 0.1
    done
    st=$(redis-cli -p "$PORT" hget "mcptest:result:$id" status)
    if [ "$EOF_RC" = 0 ] && [ "$EOF_MS" -le 3000 ] && [ -n "$id" ] && [ "$st" = cancelled ]; then
        ok stdin_end_cancels_the_queued_call
    else bad stdin_end_cancels_the_queued_call "exit $EOF_RC $EOF_MS ms after stdin closed; job ${id:-none} $st; $(tail -2 "$T/eof.err")"; fi
fi
suite_end
