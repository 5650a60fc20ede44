#!/bin/sh
# bench_http.sh - the HTTP front (`llm-sandbox serve --http`) against
# `submit --local`, in one run with the same slots: N trivial Python jobs
# (print(i), each different) and N C++ test-case jobs (one a-plus-b
# program, a different stdin each), as
#   (a) a job file through `submit --local` (jobs/s from the wall time);
#   (b) SandboxFusion /run_code calls to `serve --http` in process
#       (--slots S), through bench_http with 64 clients; the Python
#       programs as Judge0 (wait=true) and Piston calls too;
#   (c) the same calls to `serve --http --queue` with 2 workers (S slots
#       each) on a redis-server of this run (temp port, a prefix of its
#       own), then a Python run where one worker is killed -9 mid-run and
#       another started in its place.
# Each call's answer must carry the stdout its program prints (bench_http
# --check), every call must get a 2xx answer (lost 0), and no job may
# reach the results stream twice (doubled 0): the bench fails otherwise.
# Speed is reported as a ratio to submit --local, never asserted.
#   sh bench/bench_http.sh [LLM_SANDBOX] [BENCH_HTTP]
# BENCH_HTTP_N (1000): jobs of each language; BENCH_HTTP_SLOTS (2, the
# config's worker.slots default): S.
set -u
B=${1:-bin/llm-sandbox}
H=${2:-bin/bench/bench_http}
N=${BENCH_HTTP_N:-1000}
S=${BENCH_HTTP_SLOTS:-2}
C=64
T=$(mktemp -d /tmp/llmsb-benchhttp.XXXXXX)
RPORT=$((17600 + $$ % 1000))
HPORT=$((18600 + $$ % 1000))
P=llmsbbench$$
R="redis-cli -p $RPORT"
URL=http://127.0.0.1:$HPORT/run_code
export LLMSB_REDIS_URL="redis://127.0.0.1:$RPORT" LLMSB_PREFIX="$P" LLMSB_CONFIG="$T/config.yaml"
SPID='' WORKERS='' KILLED='' BASE_py='' BASE_cpp='' fail=0

# lease 6 s: the killed worker's jobs go back to the stream soon
cat >"$T/config.yaml" <<EOF
worker: {lease: 6, heartbeat_ttl: 3, block: 1}
EOF
od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$T/token"
chmod 600 "$T/token"
TOKEN=$(cat "$T/token")

cleanup() {
    [ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
    for w in $WORKERS; do kill "$w" 2>/dev/null; done
    for w in $WORKERS; do wait "$w" 2>/dev/null; done
    # the containers the killed worker left behind (only its own: its pid's label)
    for k in $KILLED; do
        docker ps -aq --filter "label=llmsb.host=$(hostname)" --filter "label=llmsb.pid=$k" |
            xargs -r docker rm -f >/dev/null 2>&1
    done
    $R shutdown nosave >/dev/null 2>&1
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ms() { date +%s%3N; }
val() { awk -v k="$1" '$1 == k { print $2 }' "$2"; } # val KEY FILE: bench_http's KEY

# ---- the job files: the same programs as job lines and as /run_code bodies ----
python3 - "$T" "$N" <<'PY'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
cpp = ("#include <iostream>\n"
       "int main() { long long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }\n")
with open(d + "/py.jobs", "w") as pj, open(d + "/py.jsonl", "w") as pb, \
     open(d + "/cpp.jobs", "w") as cj, open(d + "/cpp.jsonl", "w") as cb:
    for i in range(n):
        code = "print(%d)" % i
        pj.write(json.dumps({"id": "py-%d" % i, "lang": "python", "code": code, "timeout": 10}) + "\n")
        pb.write(json.dumps({"code": code, "language": "python", "run_timeout": 10,
                             "expect": "%d\n" % i}) + "\n")
        stdin = "%d %d\n" % (i, 7 * i + 1)
        cj.write(json.dumps({"id": "cpp-%d" % i, "lang": "cpp", "code": cpp, "stdin": stdin,
                             "timeout": 10}) + "\n")
        cb.write(json.dumps({"code": cpp, "language": "cpp", "stdin": stdin, "run_timeout": 10,
                             "expect": "%d\n" % (8 * i + 1)}) + "\n")
# the Python programs as Judge0 (wait=true) and Piston calls too
with open(d + "/pyj0.jsonl", "w") as jb, open(d + "/pypiston.jsonl", "w") as xb:
    for i in range(n):
        code = "print(%d)" % i
        jb.write(json.dumps({"language_id": 71, "source_code": code, "cpu_time_limit": 10,
                             "expect": "%d\n" % i}) + "\n")
        xb.write(json.dumps({"language": "python", "version": "*", "files": [{"content": code}],
                             "run_timeout": 10000, "expect": "%d\n" % i}) + "\n")
PY
[ -s "$T/cpp.jsonl" ] || { echo "bench_http: could not write the job files"; exit 1; }

# ---- the table: one line a run in $T/rows ---------------------------------------
# row NAME CALLS SECONDS P50 P99 BASE_CPS LOST DOUBLED (NAME without spaces)
row() { echo "$*" >>"$T/rows"; }

# ---- (a) submit --local ---------------------------------------------------------
submit_local() { # submit_local py|cpp: the job file in this process, timed
    sed -n '1,4s/"id": "/"id": "warm-/p' "$T/$1.jobs" >"$T/warm.jobs"
    "$B" submit "$T/warm.jobs" --local --slots "$S" >/dev/null 2>&1 </dev/null
    t0=$(ms)
    "$B" submit "$T/$1.jobs" --local --slots "$S" --out "$T/sub-$1.out" >"$T/sub-$1.txt" 2>&1 </dev/null
    t1=$(ms)
    okn=$(grep -c '"status":"ok"' "$T/sub-$1.out" 2>/dev/null)
    secs=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1000 }')
    cps=$(awk -v n="$N" -v s="$secs" 'BEGIN { printf "%.1f", n / s }')
    case $1 in py) BASE_py=$cps ;; cpp) BASE_cpp=$cps ;; esac
    row "submit-local:$1" "$N" "$secs" - - "$cps" $((N - ${okn:-0})) -
    [ "${okn:-0}" = "$N" ] || { echo "bench_http: submit --local $1: ${okn:-0} of $N jobs ok"; tail -5 "$T/sub-$1.txt"; fail=1; }
}

# ---- (b), (c) serve --http and bench_http ----------------------------------------
# start_serve --slots S | --queue --wait 300: serve's defaults otherwise (no
# rate limit; calls at once: the slots in process, 256 with --queue; 256
# more may wait), until GET /v1/ping gets an answer
start_serve() {
    "$B" serve --http "127.0.0.1:$HPORT" --token-file "$T/token" "$@" >"$T/serve.log" 2>&1 &
    SPID=$!
    for _ in $(seq 1 100); do
        code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
            "http://127.0.0.1:$HPORT/v1/ping")
        [ "$code" != 000 ] && return 0
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.1
    done
    echo "bench_http: serve $* did not come up"; tail -20 "$T/serve.log"; exit 1
}

stop_serve() {
    kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
    SPID=
}

# calls py|cpp|pyj0|pypiston OUT [URL]: N calls of the file's bodies, 64
# clients, checked (URL: /run_code's by default)
calls() {
    sed -n '1,4p' "$T/$1.jsonl" >"$T/warm.jsonl"
    "$H" --url "${3:-$URL}" --body "$T/warm.jsonl" --clients 4 --token "$TOKEN" >/dev/null 2>&1
    "$H" --url "${3:-$URL}" --body "$T/$1.jsonl" --clients "$C" --token "$TOKEN" --check >"$2" 2>"$2.err"
}

# The results stream (one entry a final result: id, status) of this run's
# prefix: its last entry id now (0-0: empty), its entries after MARK (raw
# lines: entry id, "id", job id, "status", status), and how many job ids
# are there more than once after MARK.
stream_mark() { $R xrevrange "$P:results" + - COUNT 1 | head -n 1 | grep . || echo 0-0; }
stream_after() { $R xrange "$P:results" "${1%-*}-$((${1#*-} + 1))" +; }
doubled_since() {
    stream_after "$1" |
        awk 'prev == "id" { n[$0]++ } { prev = $0 } END { d = 0; for (i in n) if (n[i] > 1) d++; print d }'
}
base_of() { case $1 in py) echo "$BASE_py" ;; cpp) echo "$BASE_cpp" ;; esac; }

# http_row NAME OUT BASE DOUBLED: a row from bench_http's output; fails the
# bench on a lost call, a wrong stdout or a doubled job
http_row() {
    lost=$(val lost "$2") mis=$(val mismatch "$2")
    row "$1" "$(val calls "$2")" "$(val seconds "$2")" "$(val p50_ms "$2")" "$(val p99_ms "$2")" \
        "$(val calls_per_s "$2")" "${lost:-?}" "$4" "$3"
    if [ "${lost:-x}" != 0 ] || [ "${mis:-x}" != 0 ] || { [ "$4" != - ] && [ "$4" != 0 ]; }; then
        echo "bench_http: $1: lost ${lost:-?}, wrong stdout ${mis:-?}, doubled $4"
        grep -E '^(http|status)_' "$2"; cat "$2.err"
        fail=1
    fi
}

start_worker() { # start_worker NAME: a worker with S slots, until its heartbeat shows
    "$B" worker --name "$1" --slots "$S" >"$T/$1.log" 2>&1 &
    LASTW=$!
    WORKERS="$WORKERS $LASTW"
    for _ in $(seq 1 100); do
        [ "$($R exists "$P:worker:$1")" = 1 ] && return 0
        sleep 0.1
    done
    echo "bench_http: worker $1 did not come up"; tail -20 "$T/$1.log"; exit 1
}

echo "bench_http: $N Python and $N C++ jobs, $S slots, $C clients (BENCH_HTTP_N, BENCH_HTTP_SLOTS)"
for l in py cpp; do submit_local "$l"; done

start_serve --slots "$S"
for l in py cpp; do
    calls "$l" "$T/in-$l.out"
    http_row "run_code-in-process:$l" "$T/in-$l.out" "$(base_of "$l")" -
done
# the other route sets, the same Python programs
calls pyj0 "$T/in-j0.out" "http://127.0.0.1:$HPORT/submissions?wait=true"
http_row "judge0-wait-in-process:py" "$T/in-j0.out" "$BASE_py" -
calls pypiston "$T/in-piston.out" "http://127.0.0.1:$HPORT/api/v2/execute"
http_row "piston-in-process:py" "$T/in-piston.out" "$BASE_py" -
stop_serve

redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
    --logfile "$T/redis.log" --dir "$T"
for _ in $(seq 1 50); do $R ping >/dev/null 2>&1 && break; sleep 0.1; done
start_worker "bh$$-w1"
W1=$LASTW
start_worker "bh$$-w2"
start_serve --queue --wait 300
for l in py cpp; do
    m=$(stream_mark)
    calls "$l" "$T/q-$l.out"
    http_row "run_code-queue-2-workers:$l" "$T/q-$l.out" "$(base_of "$l")" "$(doubled_since "$m")"
done

# the Python calls once more; a quarter of the way in, worker 1 is killed -9
# and another worker started: its jobs come back after the lease (6 s)
m=$(stream_mark)
"$H" --url "$URL" --body "$T/py.jsonl" --clients "$C" --token "$TOKEN" --check >"$T/kill.out" 2>"$T/kill.out.err" &
HPID=$!
for _ in $(seq 1 1200); do
    done_n=$(stream_after "$m" | grep -c '^id$')
    [ "$done_n" -ge $((N / 4)) ] && break
    kill -0 "$HPID" 2>/dev/null || break
    sleep 0.1
done
kill -9 "$W1" 2>/dev/null
KILLED=$W1
echo "bench_http: worker 1 killed -9 with ${done_n:-0} of $N results of the run in$(kill -0 "$HPID" 2>/dev/null || echo ' (after the run: no call was in flight)')"
start_worker "bh$$-w1-again"
wait "$HPID"
http_row "run_code-queue-kill-9:py" "$T/kill.out" "$BASE_py" "$(doubled_since "$m")"
stop_serve

# ---- the table and the issue's targets ------------------------------------------
echo
awk '
    BEGIN { printf "%-30s %6s %9s %8s %8s %7s %5s %7s\n", "route/mode", "calls", "calls/s",
            "p50 ms", "p99 ms", "ratio", "lost", "doubled" }
    { ratio = $9 > 0 ? sprintf("%.2f", $6 / $9) : "1.00"
      printf "%-30s %6s %9s %8s %8s %7s %5s %7s\n", $1, $2, $6, $4, $5, ratio, $7, $8 }
' "$T/rows"
echo "(ratio: calls/s over submit --local's jobs/s for the same jobs; --queue: 2 workers of $S slots each)"
awk -v b="$BASE_py" '$1 == "run_code-in-process:py" {
    pct = b > 0 ? 100 * $6 / b : 0
    printf "target: /run_code python calls/s >= 80%% of submit --local: %s (%.0f%%)\n",
           (pct >= 80 ? "yes" : "no"), pct
    printf "target: p99 <= 3 x p50 at 64 clients: %s (in process, python: p50 %s ms, p99 %s ms)\n",
           ($5 <= 3 * $4 ? "yes" : "no"), $4, $5 }' "$T/rows"
[ "$fail" = 0 ] || { echo "bench_http: FAILED (see above)"; exit 1; }
