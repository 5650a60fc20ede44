#!/bin/bash
# run.sh - `llm-sandbox mcp` driven by a real MCP client, the SDK's
# (@modelcontextprotocol/sdk, installed from the npm registry by
# scripts/setup.sh into tests/mcp/node_modules): tests/mcp/client.mjs
# against the server running jobs in its own process, then again with
# --queue through a real redis-server (temp port) and a worker.  A
# missing node or SDK is a failure, never a skip.  The transcript of the
# in-process run is kept in $LLMSB_MCP_TRANSCRIPT when set.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
T=$(mktemp -d /tmp/llmsb-mcp.XXXXXX)
PORT=$((17400 + $$ % 1000))
pass=0; fail=0; WORKER=""

cleanup() {
    [ -n "$WORKER" ] && kill "$WORKER" 2>/dev/null && wait "$WORKER" 2>/dev/null
    redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1
    rm -rf "$T"
}
trap cleanup EXIT

ok() { echo "ok   mcp.$1"; pass=$((pass + 1)); }
bad() { echo "FAIL mcp.$1: $2"; fail=$((fail + 1)); }

# client.mjs prints its own ok/FAIL lines; count them into ours
client() {  # client TRANSCRIPT [SERVER ARGS...]
    local out
    out=$(cd "$ROOT/tests/mcp" && node client.mjs "$B" "$@" 2>"$T/client.err")
    printf '%s\n' "$out"
    pass=$((pass + $(printf '%s\n' "$out" | grep -c '^ok ')))
    fail=$((fail + $(printf '%s\n' "$out" | grep -c '^FAIL ')))
    if ! printf '%s\n' "$out" | grep -q '^ok '; then
        bad client "no check ran: $(tail -5 "$T/client.err")"
    fi
}

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
own_containers() {  # own_containers WORKER-LABEL
    curl -s --unix-socket /var/run/docker.sock "http://d/v1.41/containers/json?all=1&filters=%7B%22label%22%3A%5B%22llmsb.worker%3D$1%22%5D%7D" | grep -o '"Id"' | wc -l
}
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
        EOF_DURING=$(own_containers "$label")
        [ "$EOF_DURING" -ge 1 ] && break; sleep 0.1
    done
    sleep 1
    t0=$(date +%s%N)
    exec 7>&-
    wait $mpid; EOF_RC=$?; EOF_MS=$(( ($(date +%s%N) - t0) / 1000000 ))
    EOF_AFTER=$(own_containers "$label")
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
    redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
        --logfile "$T/redis.log" --dir "$T"
    for _ in $(seq 1 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
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
echo "mcp: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
