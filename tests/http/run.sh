#!/bin/bash
# run.sh - `llm-sandbox serve --http`, the front door the peers' clients
# speak (docs/http.md), on the real engine: the clients of each API run
# unchanged against it (tests/http/fusion_client.py and judge0_client.py,
# written from SandboxFusion's and Judge0's published API docs; npm's
# piston-client, tests/http/piston_client.mjs), the OpenAPI document
# validated and the one served equal to it; then the refusals, each with
# the server still serving the others: a wrong token, a 100 MB body
# (announced, and chunked), a client that stops reading its answer,
# 1,000 connections at once, a client past --rate, calls past --max-calls
# and --max-waiting (429 and Retry-After); a client hanging up stops its
# call; and through the queue (--queue, a redis-server of its own and a
# worker): the clients again, Judge0's tokens looked up in Redis.  A
# missing node, client or curl is a failure, never a skip.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
T=$(mktemp -d /tmp/llmsb-http.XXXXXX)
suite http
PIDS=""; RPORT=""

cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    [ -n "$RPORT" ] && redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1
    rm -rf "$T"
}
trap cleanup EXIT

for tool in node curl python3 jq; do
    command -v $tool >/dev/null || bad $tool "$tool is not installed (scripts/setup.sh installs it)"
done
[ -d "$ROOT/tests/http/node_modules/piston-client" ] ||
    bad piston_client "npm's piston-client is not installed: npm ci --prefix tests/http (scripts/setup.sh does it)"
[ "$fail" -eq 0 ] || { suite_end; exit 1; }

TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
# 4 MiB of output a job: the client that stops reading gets a large answer
{ [ -n "${LLMSB_CONFIG:-}" ] && cat "$LLMSB_CONFIG"; echo "limits: {defaults: {output: 4194304}}"; } >"$T/config.yaml"
export LLMSB_CONFIG=$T/config.yaml

# start_server NAME ARGS...: serve on a free port, waits until it listens;
# sets PORT, URL and STARTED (its pid), its log in $T/NAME.log
start_server() {
    local name=$1; shift
    PORT=$(free_port); URL=http://127.0.0.1:$PORT
    "$B" serve --http "127.0.0.1:$PORT" "$@" >"$T/$name.out" 2>"$T/$name.log" &
    STARTED=$!; PIDS="$PIDS $STARTED"
    for _ in $(seq 1 50); do grep -qs "http: serving on" "$T/$name.log" && return 0; sleep 0.1; done
    bad "$name" "did not start: $(tail -3 "$T/$name.log")"
    return 1
}
stop_server() {
    kill "$1" 2>/dev/null && wait "$1" 2>/dev/null
}

# client_checks NAME CMD...: a client's "ok - X" / "not ok - X: why"
# lines, counted into ours (prefixed with NAME)
client_checks() {
    local name=$1 out; shift
    out=$("$@" 2>"$T/$name.err" | sed -e "s/^ok - /ok $name: /" -e "s/^not ok - /FAIL $name: /")
    checks_of "$out" || bad "$name" "no check ran: $(tail -5 "$T/$name.err")"
}

# status_of CURL-ARGS...: the HTTP status of a request
status_of() {
    curl -s -o "$T/body" -D "$T/head" -w '%{http_code}' --max-time 30 "$@"
}
PY='{"code":"print(6*7)","language":"python"}'
served() {  # served URL [TOKEN]: a trivial /run_code is answered with its output
    curl -s --max-time 60 -H "Authorization: Bearer ${2:-$TOKEN}" -d "$PY" "$1/run_code" |
        jq -e '.status == "Success" and .run_result.stdout == "42\n"' >/dev/null
}

# ---- in process, with a token: the three clients, the OpenAPI document
if LLMSB_HTTP_TOKEN=$TOKEN start_server main --callback-allow 127.0.0.1; then
    MAIN=$STARTED; MURL=$URL; MPORT=$PORT
    export LLMSB_HTTP_TOKEN=$TOKEN
    client_checks sandboxfusion python3 "$ROOT/tests/http/fusion_client.py" "$MURL"
    client_checks judge0 python3 "$ROOT/tests/http/judge0_client.py" "$MURL"
    client_checks openapi bash "$ROOT/tests/http/openapi.sh" "$MURL"
    unset LLMSB_HTTP_TOKEN

    # a wrong token, on each API's route: 401, nothing run
    for r in /run_code /submissions?wait=true /api/v2/execute; do
        c=$(status_of -H "Authorization: Bearer x$TOKEN" -d "$PY" "$MURL$r")
        c2=$(status_of -H "X-Auth-Token: wrong" -d "$PY" "$MURL$r")
        if [ "$c" = 401 ] && [ "$c2" = 401 ] && grep -qi '^WWW-Authenticate: Bearer' "$T/head" &&
            jq -e '.error | test("Unauthorized")' "$T/body" >/dev/null; then
            ok "wrong_token_401 $r"
        else bad "wrong_token_401 $r" "HTTP $c and $c2: $(head -c 200 "$T/body")"; fi
    done

    # a 100 MB body: announced (refused before it is read), then chunked
    # (read up to the cap, then refused); the server serves on
    head -c 100000000 /dev/zero | tr '\0' 'x' >"$T/big"
    t0=$(date +%s%N)
    c=$(status_of -H "Authorization: Bearer $TOKEN" --data-binary @"$T/big" "$MURL/run_code")
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    if [ "$c" = 413 ] && jq -e '.error | test("Content Too Large")' "$T/body" >/dev/null; then
        ok body_100mb_announced_413; echo "     ($ms ms)"
    else bad body_100mb_announced_413 "HTTP $c after $ms ms: $(head -c 200 "$T/body")"; fi
    c=$(status_of -H "Authorization: Bearer $TOKEN" -H 'Transfer-Encoding: chunked' \
        --data-binary @"$T/big" "$MURL/run_code")
    # curl may not see the 413 if the server closed before reading it all
    if [ "$c" = 413 ] || [ "$c" = 000 ]; then ok body_100mb_chunked_refused; else
        bad body_100mb_chunked_refused "HTTP $c: $(head -c 200 "$T/body")"; fi
    rm -f "$T/big"
    served "$MURL" && ok served_after_big_bodies || bad served_after_big_bodies "no answer"

    # a client that stops reading a 4 MB answer holds its own connection
    # only: others are served meanwhile
    python3 - "$MPORT" "$TOKEN" >"$T/stuck.out" 2>&1 <<'EOF' &
import socket, sys, time
port, token = int(sys.argv[1]), sys.argv[2]
body = b'{"code":"import sys\\nsys.stdout.write(\\"y\\" * 4000000)","language":"python"}'
s = socket.create_connection(("127.0.0.1", port))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.sendall(b"POST /run_code HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token.encode() +
          b"\r\nContent-Type: application/json\r\nContent-Length: " + str(len(body)).encode() +
          b"\r\n\r\n" + body)
print("sent", flush=True)
time.sleep(40)  # never reads
EOF
    STUCK=$!; PIDS="$PIDS $STUCK"
    sleep 3
    n=0; for _ in 1 2 3; do served "$MURL" && n=$((n + 1)); done
    [ "$n" = 3 ] && ok served_while_a_client_stops_reading || bad served_while_a_client_stops_reading "$n of 3 answered"
    kill "$STUCK" 2>/dev/null; wait "$STUCK" 2>/dev/null

    # a client hanging up mid-call: its call stops and its container goes
    # at once, not at the job's 60 s timeout
    label=$(hostname)-$MAIN
    before=$(worker_containers "$label"); during=$before
    curl -s -m 60 -o /dev/null -H "Authorization: Bearer $TOKEN" \
        -d '{"code":"import time\ntime.sleep(30)","language":"python","run_timeout":60}' "$MURL/run_code" &
    cpid=$!
    sleep 2 # its run began (a warm container taken, or a new one)
    during=$(worker_containers "$label")
    kill "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null
    t0=$(date +%s%N); after=$during
    for _ in $(seq 1 50); do after=$(worker_containers "$label"); [ "$after" -lt "$during" ] && break; sleep 0.1; done
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    if [ "$after" -lt "$during" ] && [ "$ms" -le 5000 ] && served "$MURL"; then
        ok hangup_stops_the_call; echo "     (its container gone after $ms ms)"
    else bad hangup_stops_the_call "containers before $before, during $during, after $after ($ms ms)"; fi

    # 1,000 clients at once, each a whole call on its own connection (one
    # program that sleeps 2 s: identical calls share a run, so those taken
    # are answered within seconds while the rest come): the calls taken
    # (--max-calls and --max-waiting, 256 each) are answered, the others
    # refused with Retry-After (429 past the two, 503 past the door's cap
    # of 576), none left without an answer; and the server serves on
    python3 "$ROOT/tests/http/flood.py" 127.0.0.1 "$MPORT" 1000 240 \
        "POST /run_code HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer $TOKEN\r\nContent-Type: application/json\r\n" \
        '{"code":"import time\ntime.sleep(2)\nprint(6*7)","language":"python"}' >"$T/flood" 2>&1
    st=$(tail -1 "$T/flood")
    if printf '%s' "$st" | jq -e '.answers["200"] >= 256 and (.answers["429"] // 0) + (.answers["503"] // 0) >= 200
            and ([.answers | to_entries[] | select(.key != "200" and .key != "429" and .key != "503")] | length) == 0
            and .refusals_without_retry_after == 0' >/dev/null && served "$MURL"; then
        ok thousand_clients_answered_or_refused; echo "     (their answers: $st)"
    else bad thousand_clients_answered_or_refused "answers $st"; fi
    stop_server "$MAIN"
fi

# ---- npm's piston-client sends no header of its own (no token): a server
# on loopback without one
if start_server piston; then
    client_checks piston node "$ROOT/tests/http/piston_client.mjs" "$URL"
    stop_server "$STARTED"
fi

# ---- a client past --rate: 429 with Retry-After, another client served
if start_server rate --rate 1 --burst 2; then
    c1=$(status_of -d "$PY" "$URL/run_code"); c2=$(status_of -d "$PY" "$URL/run_code")
    c3=$(status_of -d "$PY" "$URL/run_code")
    ra=$(tr -d '\r' <"$T/head" | awk -F': ' 'tolower($1) == "retry-after" {print $2}')
    if [ "$c1" = 200 ] && [ "$c2" = 200 ] && [ "$c3" = 429 ] && [ "${ra:-0}" -ge 1 ] &&
        jq -e '.error | test("--rate")' "$T/body" >/dev/null; then
        ok rate_429_retry_after
    else bad rate_429_retry_after "HTTP $c1 $c2 $c3, Retry-After '$ra': $(head -c 200 "$T/body")"; fi
    # ::1 is another client (IPv4 and IPv6 loopback are two addresses)
    sleep 1.1
    c=$(status_of -d "$PY" "$URL/run_code")
    [ "$c" = 200 ] && ok rate_refills || bad rate_refills "HTTP $c"
    stop_server "$STARTED"
fi

# ---- calls past --max-calls and --max-waiting: 429, the rest answered
if start_server busy --max-calls 1 --max-waiting 1 --slots 1; then
    SLOW='{"code":"import time\ntime.sleep(3)\nprint(1)","language":"python"}'
    cpids=""
    for i in 1 2 3; do
        curl -s -o "$T/busy$i" -D "$T/busyh$i" -w '%{http_code}' -d "$SLOW" "$URL/run_code" >"$T/busyc$i" &
        cpids="$cpids $!"
        sleep 0.3
    done
    wait $cpids
    codes=$(cat "$T"/busyc1 "$T"/busyc2 "$T"/busyc3 | tr -d '\n' | fold -w3 | sort | tr '\n' ' ')
    if [ "$codes" = "200 200 429 " ] && grep -qi '^Retry-After: 1' "$T"/busyh*; then
        ok max_calls_and_waiting_429
    else bad max_calls_and_waiting_429 "codes $codes: $(cat "$T"/busy1 "$T"/busy2 "$T"/busy3 | head -c 400)"; fi
    stop_server "$STARTED"
fi

# ---- through the queue: a redis-server of our own, a worker, serve --queue
RPORT=$(free_port)
if start_redis "$RPORT" "$T"; then
    export LLMSB_REDIS_URL=redis://127.0.0.1:$RPORT LLMSB_PREFIX=httpq
    "$B" worker --name httpq-w1 --slots 2 >"$T/worker.log" 2>&1 &
    PIDS="$PIDS $!"
    if LLMSB_HTTP_TOKEN=$TOKEN start_server queue --queue --callback-allow 127.0.0.1; then
        export LLMSB_HTTP_TOKEN=$TOKEN
        client_checks sandboxfusion_queue python3 "$ROOT/tests/http/fusion_client.py" "$URL"
        client_checks judge0_queue python3 "$ROOT/tests/http/judge0_client.py" "$URL"
        unset LLMSB_HTTP_TOKEN
        w=$(for k in $(redis-cli -p "$RPORT" --scan --pattern 'httpq:result:*'); do
                redis-cli -p "$RPORT" hget "$k" worker; done | sort -u | tr '\n' ' ')
        [ "$w" = "httpq-w1 " ] && ok queue_calls_on_the_worker || bad queue_calls_on_the_worker "results by: '$w'"
        stop_server "$STARTED"
    fi
    unset LLMSB_REDIS_URL LLMSB_PREFIX
else
    bad redis "redis-server did not start"
fi

# ---- off loopback without a token: refused at start
PORT=$(free_port)
"$B" serve --http "0.0.0.0:$PORT" >/dev/null 2>"$T/open.log"; c=$?
if [ "$c" = 2 ] && grep -q 'not a loopback address, and no token' "$T/open.log"; then
    ok no_token_off_loopback_refused
else bad no_token_off_loopback_refused "exit $c: $(cat "$T/open.log")"; fi

suite_end
