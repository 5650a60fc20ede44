#!/bin/bash
# http.sh - `llm-sandbox mcp --http` (MCP's Streamable HTTP transport):
# tests/mcp/http_client.mjs drives it with the SDK's own HTTP client and
# raw requests (token, Origin, media types, sessions, DELETE, the body
# cap, the tools, two clients' sessions kept apart); then, with curl, a
# client hanging up mid-call (its container goes at once), DELETE
# stopping a running call, progress and its bounds (http_progress.mjs),
# clients without the token that never finish a request
# (tests/slow_clients.py) while one with it is served (http_served.mjs),
# the session cap and the idle timeout (with their sandbox sessions
# closed), the token from a file, and a non-loopback address refused
# without a token; two clients calling at once (in process and with
# --queue through a redis-server of its own and a worker) overlap and
# keep apart.  A missing node, SDK or curl is a failure, never a skip.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
T=$(mktemp -d /tmp/llmsb-mcphttp.XXXXXX)
PORT=$((18400 + $$ % 1000)); PORT2=$((PORT + 1000)); PORT3=$((PORT + 3000))
U=http://127.0.0.1:$PORT/mcp; U2=http://127.0.0.1:$PORT2/mcp
suite mcp_http; SERVER=""; SERVER2=""; SERVER3=""; SERVER4=""; WORKER=""; SLOW=""

cleanup() {
    for p in $SLOW $SERVER $SERVER2 $SERVER3 $SERVER4 $WORKER; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    [ -n "${RPORT:-}" ] && redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1
    rm -rf "$T"
}
trap cleanup EXIT

# start_server PORT LOG ARGS...: waits until it listens; sets STARTED (pid)
start_server() {
    local port=$1 log=$2; shift 2
    "$B" mcp --http "127.0.0.1:$port" "$@" >"$log.out" 2>"$log" &
    STARTED=$!
    for _ in $(seq 1 50); do grep -qs "serving MCP over HTTP" "$log" && return 0; sleep 0.1; done
    return 1
}
H=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}'
session_of() {  # session_of URL CURL-ARGS...: initialize, print the session id
    local url=$1; shift
    curl -s -D - -o /dev/null "${H[@]}" "$@" -d "$INIT" "$url" | tr -d '\r' |
        awk -F': ' 'tolower($1) == "mcp-session-id" {print $2}'
}
code_of() {  # code_of URL CURL-ARGS...: the HTTP status
    local url=$1; shift
    curl -s -o /dev/null -w '%{http_code}' "${H[@]}" "$@" "$url"
}
PING='{"jsonrpc":"2.0","id":2,"method":"ping"}'

for tool in node curl; do
    command -v $tool >/dev/null || { bad $tool "$tool is not installed (scripts/setup.sh installs it)"; }
done
[ -d "$ROOT/tests/mcp/node_modules/@modelcontextprotocol/sdk" ] ||
    bad sdk "the MCP SDK is not installed: npm ci --prefix tests/mcp (scripts/setup.sh does it)"
[ "$fail" -eq 0 ] || { suite_end; exit 1; }

# a session's idle time for its sandbox sessions (as tests/mcp/run.sh);
# 4 MiB of output a call (http_progress.mjs prints 2 MiB)
{ [ -n "${LLMSB_CONFIG:-}" ] && cat "$LLMSB_CONFIG"; echo "sessions: {idle_ttl: 30}"
  echo "limits: {defaults: {output: 4194304}}"; } >"$T/config.yaml"
export LLMSB_CONFIG=$T/config.yaml
TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')

# node_checks SCRIPT ARGS...: a client script's ok/FAIL lines, counted into ours
node_checks() {
    local out
    out=$(cd "$ROOT/tests/mcp" && node "$@" 2>"$T/client.err")
    checks_of "$out" || bad "$1" "no check ran: $(tail -5 "$T/client.err")"
}

# ---- the SDK client and raw requests
if LLMSB_MCP_TOKEN=$TOKEN start_server "$PORT" "$T/server.log"; then
    SERVER=$STARTED
    # a body over the cap sent chunked (no Content-Length to refuse it early)
    sid=$(session_of "$U" -H "Authorization: Bearer $TOKEN")
    head -c 9000000 /dev/zero | tr '\0' 'x' >"$T/big"
    c=$(code_of "$U" -H "Authorization: Bearer $TOKEN" -H "Mcp-Session-Id: $sid" \
        -H 'Transfer-Encoding: chunked' --data-binary @"$T/big")
    [ "$c" = 413 ] && ok chunked_oversized_413 || bad chunked_oversized_413 "HTTP $c"

    # long_call SID OUT CODE: starts a call of CODE (60 s timeout) in MCP
    # session SID, its answer to OUT, and returns once its container is
    # there (cpid: the client; before, during: the server's containers)
    long_call() {
        before=$(worker_containers "$label"); during=$before
        curl -s -m 60 -o "$2" "${H[@]}" -H "Authorization: Bearer $TOKEN" -H "Mcp-Session-Id: $1" \
            -d '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute_code","arguments":{"code":"'"$3"'","timeout":60}}}' \
            "$U" & cpid=$!
        for _ in $(seq 1 300); do
            during=$(worker_containers "$label"); [ "$during" -gt "$before" ] && break; sleep 0.1
        done
        sleep 1
    }
    # a client hanging up mid-call: the call stops and its container goes
    # at once, not at the call's 60 s timeout; the server still answers.
    # First, while the server has no warm container the call could reuse
    label=$(hostname)-$SERVER
    long_call "$sid" "$T/hangup.out" 'import time; time.sleep(30)'
    kill "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null
    t0=$(date +%s%N); after=$during
    for _ in $(seq 1 50); do after=$(worker_containers "$label"); [ "$after" -le "$before" ] && break; sleep 0.1; done
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    c=$(code_of "$U" -H "Authorization: Bearer $TOKEN" -H "Mcp-Session-Id: $sid" -d "$PING")
    if [ "$during" -gt "$before" ] && [ "$after" -le "$before" ] && [ "$ms" -le 3000 ] && [ "$c" = 200 ]; then
        ok hangup_stops_the_call
    else bad hangup_stops_the_call "containers before $before, during $during, after $after ($ms ms); ping then: HTTP $c"; fi

    # DELETE during a call stops the call rather than waiting for its 20 s:
    # the call is answered cancelled, and its container is gone by the 204
    sid2=$(session_of "$U" -H "Authorization: Bearer $TOKEN")
    long_call "$sid2" "$T/deleted.out" 'import time; time.sleep(20); print(\"slept\")'
    t0=$(date +%s%N)
    c=$(curl -s -m 60 -o /dev/null -w '%{http_code}' -X DELETE -H "Authorization: Bearer $TOKEN" \
        -H "Mcp-Session-Id: $sid2" "$U")
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    after=$(worker_containers "$label")
    wait "$cpid"
    if [ "$c" = 204 ] && [ "$during" -gt "$before" ] && [ "$after" -le "$before" ] &&
        grep -q 'cancelled: the MCP session was ended (DELETE); the call was stopped and its sandbox removed' "$T/deleted.out" &&
        ! grep -q slept "$T/deleted.out"; then
        ok delete_stops_the_running_call; echo "     (the DELETE's 204 after $ms ms)"
    else bad delete_stops_the_running_call "DELETE: HTTP $c after $ms ms; containers before $before, during $during, after the 204 $after; the call's answer: $(head -c 300 "$T/deleted.out")"; fi

    node_checks http_client.mjs "$U" "$TOKEN"
    node_checks http_parallel.mjs "$U" "$TOKEN" mcp_http
    node_checks http_progress.mjs "$U" "$TOKEN"
    # the SDK's DELETE ended the MCP session and the sandbox session s1 with it
    if grep -q 'ended (DELETE; 1 sandbox session closed)' "$T/server.log"; then
        ok delete_closes_sandbox_sessions
    else bad delete_closes_sandbox_sessions "$(grep 'ended (' "$T/server.log" | tail -3)"; fi
else
    bad server "did not start: $(tail -3 "$T/server.log")"
fi

# ---- --queue: the calls are jobs of a worker, through a redis-server of
# our own; two clients at once, each with its own session
RPORT=$(free_port)
start_redis "$RPORT" "$T"
LLMSB_REDIS_URL=redis://127.0.0.1:$RPORT LLMSB_PREFIX=mcphttp "$B" worker --name mcphttp-w1 --slots 2 \
    >"$T/worker.log" 2>&1 &
WORKER=$!
if LLMSB_REDIS_URL=redis://127.0.0.1:$RPORT LLMSB_PREFIX=mcphttp LLMSB_MCP_TOKEN=$TOKEN \
    start_server "$PORT3" "$T/server3.log" --queue; then
    SERVER3=$STARTED
    node_checks http_parallel.mjs "http://127.0.0.1:$PORT3/mcp" "$TOKEN" mcp_http_queue
    w=$(for k in $(redis-cli -p "$RPORT" --scan --pattern 'mcphttp:result:mcp-*'); do
            redis-cli -p "$RPORT" hget "$k" worker; done | sort -u | tr '\n' ' ')
    [ "$w" = "mcphttp-w1 " ] && ok queue_calls_on_the_worker || bad queue_calls_on_the_worker "results by: '$w'"
else
    bad server3 "did not start: $(tail -3 "$T/server3.log")"
fi

# ---- clients without the token that never finish a request must not lock
# out one with it (the default caps: 80 connections): 250 sockets idle or
# dribble a byte every 5 s for 14 s (the front door answers each 408 at
# its 10 s deadline), then 400 for 8 s (past its 256 waiting places: the
# oldest give way, 503); the SDK's client is served round after round.
# No engine needed.
PORT4=$(free_port)
# slow_phase N SECONDS ROUNDS NAME: the slow sockets, the client's rounds
# meanwhile; the sockets' stats (slow_clients.py's last line) in $T/slow.NAME
slow_phase() {
    python3 "$ROOT/tests/slow_clients.py" 127.0.0.1 "$PORT4" "$1" "$2" >"$T/slow.$4" 2>&1 & SLOW=$!
    for _ in $(seq 1 100); do grep -q '^ready' "$T/slow.$4" && break; sleep 0.1; done
    node_checks http_served.mjs "http://127.0.0.1:$PORT4/mcp" "$TOKEN" "$3" 4500 "$4"
    wait "$SLOW"; SLOW=""
}
if LLMSB_MCP_TOKEN=$TOKEN start_server "$PORT4" "$T/server4.log"; then
    SERVER4=$STARTED
    slow_phase 250 14 3 served_among_slow_clients
    st=$(tail -1 "$T/slow.served_among_slow_clients")
    if [ "$(printf '%s' "$st" | jq '(.answers | keys) == ["408"] and .answers["408"] >= 250')" = true ]; then
        ok slow_clients_get_408_at_the_deadline
    else bad slow_clients_get_408_at_the_deadline "their sockets: $st"; fi
    slow_phase 400 8 2 served_past_the_waiting_room
    st=$(tail -1 "$T/slow.served_past_the_waiting_room")
    if [ "$(printf '%s' "$st" | jq '.answers["503"] // 0')" -ge 144 ]; then
        ok oldest_waiting_give_way_503
    else bad oldest_waiting_give_way_503 "their sockets: $st"; fi
    kill "$SERVER4" 2>/dev/null && wait "$SERVER4" 2>/dev/null; SERVER4=""
else
    bad server4 "did not start: $(tail -3 "$T/server4.log")"
fi

# ---- the session cap, idleness, the token from a file: no engine needed
printf '%s\n' "$TOKEN" >"$T/token"
if start_server "$PORT2" "$T/server2.log" --token-file "$T/token" --max-sessions 2 --session-idle 2; then
    SERVER2=$STARTED
    A=(-H "Authorization: Bearer $TOKEN")
    s1=$(session_of "$U2" "${A[@]}"); s2=$(session_of "$U2" "${A[@]}")
    c3=$(code_of "$U2" "${A[@]}" -d "$INIT")
    [ -n "$s1" ] && [ -n "$s2" ] && [ "$c3" = 503 ] && ok session_cap_503 || bad session_cap_503 "sessions '$s1' '$s2', third: HTTP $c3"
    c=$(code_of "$U2" -d "$INIT")
    [ "$c" = 401 ] && ok token_file_required || bad token_file_required "HTTP $c"
    sleep 3.5
    c1=$(code_of "$U2" "${A[@]}" -H "Mcp-Session-Id: $s1" -d "$PING")
    s3=$(session_of "$U2" "${A[@]}")
    if [ "$c1" = 404 ] && [ -n "$s3" ] && grep -q 'ended (idle' "$T/server2.log"; then
        ok idle_session_ends
    else bad idle_session_ends "ping of an idle session: HTTP $c1; a new one: '$s3'"; fi
    # a burst of three times the connection cap (24 here), each a complete
    # header block without the token whose body never comes: the server
    # goes on (the gate answers 503 past the cap; libmicrohttpd given one
    # past its own cap deadlocked for good, and SIGTERM no longer stopped it)
    burst=$(python3 "$ROOT/tests/burst_clients.py" 127.0.0.1 "$PORT2" 72 1 \
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:$PORT2\r\nContent-Length: 100000\r\n\r\n")
    s4=$(session_of "$U2" "${A[@]}" --max-time 10)
    kill -TERM "$SERVER2"
    for _ in $(seq 1 100); do kill -0 "$SERVER2" 2>/dev/null || break; sleep 0.1; done
    if [ -n "$s4" ] && ! kill -0 "$SERVER2" 2>/dev/null; then
        ok served_and_stopped_after_a_burst_past_the_cap
    else
        bad served_and_stopped_after_a_burst_past_the_cap "the burst: $burst; then initialize: session '$s4'; stopped: $(kill -0 "$SERVER2" 2>/dev/null && echo no || echo yes)"
        kill -9 "$SERVER2" 2>/dev/null
    fi
    wait "$SERVER2" 2>/dev/null; SERVER2=""
else
    bad server2 "did not start: $(tail -3 "$T/server2.log")"
fi

# ---- off loopback without a token: refused, with the way out named
env -u LLMSB_MCP_TOKEN "$B" mcp --http 0.0.0.0:$((PORT2 + 1)) >/dev/null 2>"$T/open.err"; rc=$?
if [ "$rc" = 2 ] && grep -q 'not a loopback address, and no token' "$T/open.err"; then
    ok non_loopback_needs_token
else bad non_loopback_needs_token "exit $rc: $(cat "$T/open.err")"; fi

suite_end
