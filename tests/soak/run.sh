#!/bin/bash
# tests/soak/run.sh - the soak: SOAK_SECONDS (default 1800: `make soak`; make
# test runs 180) of mixed jobs through three workers, with faults injected at
# random, then the books: every job exactly one result with the verdict it
# should have, none lost; the workers' memory, open files and threads flat
# after the warm-up; nothing left on the engine once they stop, and no Redis
# key without a TTL but the documented streams.
#
# The mix, each with its expected verdict: a hello program in every language
# (SOAK_LANGS), Python that fails (exit 3), loops past its timeout, or
# allocates past its memory limit; a job with cases; a figure (plot-001.png);
# a live job, followed by `result --follow` as it runs; sessions (a counter
# kept in the interpreter from call to call); and job files submitted with
# identical programs (dedup: the copies get the original's result).  The
# producer keeps about SOAK_BACKLOG jobs waiting.
#
# The faults, one every SOAK_FAULT_S seconds on average (10-50 s), the kinds
# in turn from a random one: kill -9 of worker s2 or s3 (started again 2 s
# later), kill -9 of one of the engine's running containers, Redis stopped
# (kill -9 or SHUTDOWN, in turn; AOF with appendfsync always) and started
# again; and once, halfway, the engine restarted.  Worker s1 is never killed: its RSS, fds and threads are the
# flat-line figures (printed every SOAK_MONITOR_S seconds, for every worker).
#
# A session whose worker or container a fault killed goes on `session_lost`
# (as documented), and the soak closes it and opens another; that is the
# one verdict a fault may change.  Everything runs on a private dockerd and
# redis-server (tests/lib.sh), so the soak can share a host with other suites.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
SECS=${SOAK_SECONDS:-1800}
LANGS=${SOAK_LANGS:-python javascript ruby r go cpp java go_test}
BACKLOG=${SOAK_BACKLOG:-8}
FAULT_S=${SOAK_FAULT_S:-30}
MON_S=${SOAK_MONITOR_S:-60}
SEED=${SOAK_SEED:-$$}
RANDOM=$SEED
FD=$(mktemp -d /tmp/llmsb-sk.XXXXXX) # short: the socket path must fit sun_path
T=$FD
BR=llmsbsk$(($$ % 100000))
suite soak
WORKERS="" FOLLOWERS=""

for tool in dockerd docker redis-server redis-cli ip jq python3; do
    command -v "$tool" >/dev/null || { echo "FAIL soak.setup: $tool is not installed"; exit 1; }
done
PORT=$(free_port)
R="redis-cli -p $PORT"
export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT
export LLMSB_CONFIG=$FD/config.yaml
# a sanitized binary's allocator holds freed memory in quarantine (256 MB
# by default): bounded, so that its RSS can show a leak
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16

cleanup() {
    local p
    for p in $WORKERS $FOLLOWERS; do kill -9 "$p" 2>/dev/null; done
    $R shutdown nosave >/dev/null 2>&1
    pe_cleanup
    rm -rf "$FD"
}
trap cleanup EXIT

# ---- the engine, Redis and the workers ------------------------------------------

pe_init "$FD" "$BR" || { echo "FAIL soak.setup: cannot make bridge $BR"; exit 1; }
pe_start || { echo "FAIL soak.setup: the private dockerd did not start"; exit 1; }
t0=$(date +%s)
imgs=""
for l in $LANGS; do # one image a language (go_test has its own)
    imgs="$imgs llmsb/$l:latest"
done
# shellcheck disable=SC2086
pe_load $imgs || { echo "FAIL soak.setup: cannot copy$imgs to the private engine"; exit 1; }
echo "  (private dockerd up,$imgs loaded in $(($(date +%s) - t0)) s; seed $SEED)"

cat >"$FD/config.yaml" <<EOF
backend: {host: "unix://$PE_SOCK"}
worker: {lease: 6, heartbeat_ttl: 3, block: 1, drain: 20}
pool: {min_idle: 1, wait: 60}
jobs: {max_attempts: 5}
EOF

redis_up() {
    start_redis "$PORT" "$FD" --appendonly yes --appendfsync always ||
        { echo "FAIL soak.redis: redis-server did not start"; tail -5 "$FD/redis.log"; exit 1; }
}
worker_up() { start_named_worker "$B" "$1" 2 || { echo "FAIL soak.worker: $1 did not come up"; exit 1; }; }

redis_up
worker_up s1
worker_up s2
worker_up s3

# ---- the jobs -----------------------------------------------------------------
# Each job's expectation is a line of $FD/expect: ID KIND STATUS STDOUT-FILE
# (the file holds the stdout it must have; "-" for none to check).

N=0
expect() { # expect ID KIND STATUS STDOUT
    printf '%s' "$4" >"$FD/out.$1"
    echo "$1 $2 $3 $FD/out.$1" >>"$FD/expect"
}

xadd() { # xadd FIELD VALUE...: a job; fails (and the job is not expected) when Redis refuses it
    $R xadd llmsb:jobs '*' "$@" 2>>"$FD/producer.log" | grep -q '^[0-9]*-[0-9]*$' && return 0
    echo "  (xadd $2 failed)" >>"$FD/producer.log"
    return 1
}

hello_code() { # hello_code LANG TOKEN
    case $1 in
        python) printf 'print("%s")\n' "$2" ;;
        javascript) printf 'console.log("%s");\n' "$2" ;;
        ruby) printf 'puts "%s"\n' "$2" ;;
        r) printf 'cat("%s\\n")\n' "$2" ;;
        go) printf 'package main\nimport "fmt"\nfunc main() { fmt.Println("%s") }\n' "$2" ;;
        cpp) printf '#include <cstdio>\nint main() { std::puts("%s"); }\n' "$2" ;;
        java) printf 'public class Main { public static void main(String[] a) { System.out.println("%s"); } }\n' "$2" ;;
        go_test) printf 'package main\nimport "testing"\nfunc TestSoak(t *testing.T) { t.Log("%s") }\n' "$2" ;;
    esac
}

job_hello() {
    local l id
    set -- $LANGS
    shift $((RANDOM % $#))
    l=$1 id=sk-$N
    xadd id "$id" lang "$l" timeout 60 code "$(hello_code "$l" "$id")" || return 0
    if [ "$l" = go_test ]; then expect "$id" "hello-$l" ok -; else expect "$id" "hello-$l" ok "$id"$'\n'; fi
}

job_fail() {
    local id=sk-$N
    case $((RANDOM % 3)) in
        0) xadd id "$id" lang python code 'import sys; print("x"); sys.exit(3)' &&
           expect "$id" exit3 runtime_error $'x\n' ;;
        1) xadd id "$id" lang python timeout 1 code 'while True: pass' &&
           expect "$id" loop timeout - ;;
        2) xadd id "$id" lang python memory 64 code 'b = bytearray(512 << 20); print(len(b))' &&
           expect "$id" alloc memory_limit - ;;
    esac
}

job_cases() {
    local id=sk-$N
    xadd id "$id" lang python code 'print(int(input()) * 2)' \
        cases '[{"stdin": "2", "expect_stdout": "4"}, {"stdin": "21", "expect_stdout": "42"}]' || return 0
    expect "$id" cases ok -
}

job_plot() {
    local id=sk-$N
    xadd id "$id" lang python timeout 60 code "import matplotlib.pyplot as plt
plt.plot([1, 2, 3])
plt.show()
print('$id')" || return 0
    expect "$id" plot ok "$id"$'\n'
}

job_live() { # a live job and its follower
    local id=sk-$N
    xadd id "$id" lang python live true code "import time
print('first', flush=True)
time.sleep(0.5)
print('$id')" || return 0
    expect "$id" live ok $'first\n'"$id"$'\n'
    # a follower that finds Redis down when it starts (a fault right after
    # the XADD) ends 3 at once, as documented; a user runs it again, and
    # so does the soak, up to 5 times (an outage mid-follow is a pause)
    ( for _ in 1 2 3 4 5; do
          "$B" result "$id" --follow --wait 120 >"$FD/follow.$id" 2>"$FD/follow-err.$id"; rc=$?
          [ "$rc" = 3 ] && [ ! -s "$FD/follow.$id" ] && grep -q '^error: redis: connect' "$FD/follow-err.$id" ||
              break
          sleep 3
      done
      echo "$rc" >"$FD/follow-rc.$id" ) &
    FOLLOWERS="$FOLLOWERS $!"
}

# dedup: a job file of four jobs, two of them one program twice; `submit`
# sends the copies along with the one that runs
job_dedup() {
    local id=sk-$N f=$FD/dedup.$N.jsonl
    jq -cn --arg a "$id-a" --arg b "$id-b" --arg c "$id-c" --arg d "$id-d" '
        {id: $a, lang: "python", code: "print(\"same\")"},
        {id: $b, lang: "ruby", code: "puts \"same\""},
        {id: $c, lang: "python", code: "print(\"same\")"},
        {id: $d, lang: "python", code: "print(\"same\")"}' >"$f"
    if "$B" submit "$f" >>"$FD/producer.log" 2>&1; then
        for s in a b c d; do expect "$id-$s" dedup ok $'same\n'; done
    else
        echo "  (submit of $f failed)" >>"$FD/producer.log"
    fi
}

# sessions: one at a time; call k prints k; a session_lost one is closed
# and another opened
SESS="" SESS_K=0 SESS_LAST=""
session_step() {
    local st id
    if [ -n "$SESS_LAST" ]; then
        st=$($R hget "llmsb:result:$SESS_LAST" status 2>/dev/null)
        case $st in "" | running) return 1 ;; esac
        if [ "$st" != ok ]; then
            xadd id "$SESS-close" session "$SESS" session_close true || return 1
            expect "$SESS-close" session-close ok -
            SESS="" SESS_LAST=""
        fi
    fi
    if [ -z "$SESS" ]; then SESS=ss-$N SESS_K=0; fi
    SESS_K=$((SESS_K + 1))
    id=$SESS-$SESS_K
    if [ "$SESS_K" = 1 ]; then
        xadd id "$id" lang python session "$SESS" code 'k = 1; print(k)' || { SESS_K=0; return 1; }
    else
        xadd id "$id" lang python session "$SESS" code 'k += 1; print(k)' || { SESS_K=$((SESS_K - 1)); return 1; }
    fi
    expect "$id" session ok "$SESS_K"$'\n'
    SESS_LAST=$id
    return 0
}

produce() {
    local backlog
    backlog=$($R xlen llmsb:jobs 2>/dev/null) || return 0
    case $backlog in "" | *[!0-9]*) return 0 ;; esac # Redis loading its AOF, say
    [ "$backlog" -lt "$BACKLOG" ] || return 0
    N=$((N + 1))
    session_step
    case $((RANDOM % 12)) in
        0 | 1 | 2 | 3 | 4) job_hello ;;
        5 | 6) job_fail ;;
        7) job_cases ;;
        8) job_plot ;;
        9 | 10) job_live ;;
        11) job_dedup ;;
    esac
}

# ---- faults --------------------------------------------------------------------

FAULTS=0 FAULT0=$((RANDOM % 3)) ENGINE_RESTARTED=0 REDIS_KILLS=0
fault() {
    local w c
    FAULTS=$((FAULTS + 1))
    if [ "$ENGINE_RESTARTED" = 0 ] && [ "$(($(date +%s) - START))" -ge $((SECS / 2)) ]; then
        ENGINE_RESTARTED=1
        echo "  fault $FAULTS at $(($(date +%s) - START)) s: the engine restarted"
        pe_stop
        pe_start || { echo "FAIL soak.engine: the private dockerd did not start again"; exit 1; }
        return
    fi
    # the kinds in turn from a random one, so that a short soak has each
    case $(((FAULTS + FAULT0) % 3)) in
        0) w=s$((2 + RANDOM % 2))
           echo "  fault $FAULTS at $(($(date +%s) - START)) s: kill -9 of worker $w"
           eval "kill -9 \$PID_$w"
           sleep 2
           worker_up "$w" ;;
        1) c=$($PE ps -q --filter label=llmsb.managed=1 | shuf -n 1 --random-source=<(yes "$RANDOM"))
           echo "  fault $FAULTS at $(($(date +%s) - START)) s: kill -9 of container ${c:-(none running)}"
           [ -n "$c" ] && $PE kill -s KILL "$c" >/dev/null 2>&1 ;;
        2) REDIS_KILLS=$((REDIS_KILLS + 1))
           if [ $((REDIS_KILLS % 2)) = 1 ]; then
               echo "  fault $FAULTS at $(($(date +%s) - START)) s: kill -9 of Redis"
               kill -9 "$(cat "$FD/redis.pid")"
           else
               echo "  fault $FAULTS at $(($(date +%s) - START)) s: Redis SHUTDOWN"
               $R shutdown >/dev/null 2>&1
           fi
           sleep 1
           redis_up ;;
    esac
}

# ---- the figures ------------------------------------------------------------------

# proc_figures PID: "RSS_KB FDS THREADS" of a process, or "- - -"
proc_figures() {
    local rss thr fds
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null)
    thr=$(awk '/^Threads:/ {print $2}' "/proc/$1/status" 2>/dev/null)
    fds=$(ls "/proc/$1/fd" 2>/dev/null | wc -l)
    [ -n "$rss" ] && echo "$rss $fds $thr" || echo "- - -"
}

monitor() {
    local t line w p
    t=$(($(date +%s) - START))
    line=$(printf '%5ds %5d jobs %3s waiting %3s containers %5s keys %6s redis' "$t" "$N" \
        "$($R xlen llmsb:jobs 2>/dev/null || echo -)" "$($PE ps -q | wc -l)" \
        "$($R dbsize 2>/dev/null || echo -)" \
        "$($R info memory 2>/dev/null | awk -F: '/^used_memory_human:/ {print $2}' | tr -d '\r')")
    for w in s1 s2 s3; do
        eval "p=\$PID_$w"
        line="$line | $w $(proc_figures "$p" | awk '{printf "%s kB %s fds %s thr", $1, $2, $3}')"
    done
    echo "  $line"
    echo "$t $(proc_figures "$PID_s1")" >>"$FD/s1.figures"
}

# ---- the run ----------------------------------------------------------------------

echo "  (soak: $SECS s, languages: $LANGS; three workers of 2 slots; a fault every ~$FAULT_S s)"
START=$(date +%s)
next_fault=$((START + FAULT_S / 3 + RANDOM % FAULT_S))
next_mon=$START
while [ "$(date +%s)" -lt $((START + SECS)) ]; do
    produce
    now=$(date +%s)
    if [ "$now" -ge "$next_mon" ]; then monitor; next_mon=$((now + MON_S)); fi
    if [ "$now" -ge "$next_fault" ]; then
        fault
        next_fault=$(($(date +%s) + FAULT_S / 3 + RANDOM % (FAULT_S * 4 / 3)))
    fi
    sleep 0.2
done
[ "$ENGINE_RESTARTED" = 1 ] || { FAULTS=$((FAULTS + 1)); ENGINE_RESTARTED=1; echo "  fault $FAULTS: the engine restarted"; pe_stop; pe_start; }
# the open session's end, then every job to its end (at most 5 minutes)
if [ -n "$SESS" ]; then xadd id "$SESS-close" session "$SESS" session_close true; expect "$SESS-close" session-close ok -; fi
ids=$(awk '{print $1}' "$FD/expect")
deadline=$(($(date +%s) + 300))
while :; do
    left=0
    for id in $ids; do
        case $($R hget "llmsb:result:$id" status) in "" | running) left=$((left + 1)) ;; esac
    done
    [ "$left" = 0 ] || [ "$(date +%s)" -ge "$deadline" ] && break
    sleep 2
done
monitor
for p in $FOLLOWERS; do wait "$p" 2>/dev/null; done

# ---- the books ------------------------------------------------------------------

jobs=$(wc -l <"$FD/expect")
$R xrange llmsb:results - + | paste - - - - - | awk '{print $3}' | sort | uniq -c >"$FD/results.count"
lost=0 doubled=0 wrong=0 lost_sessions=0 kinds=""
while read -r id kind status outf; do
    n=$(awk -v id="$id" '$2 == id {print $1}' "$FD/results.count")
    d=$($R llen "llmsb:done:$id")
    got=$($R hget "llmsb:result:$id" status)
    if [ -z "$got" ] || [ "$got" = running ]; then
        lost=$((lost + 1)); echo "  lost: $id ($kind)"; continue
    fi
    if [ "${n:-0}" != 1 ] || [ "$d" != 1 ]; then
        doubled=$((doubled + 1)); echo "  not one result: $id ($kind): ${n:-0} on llmsb:results, $d on its done list"
    fi
    if [ "$kind" = session ] && [ "$got" = session_lost ]; then
        lost_sessions=$((lost_sessions + 1)); continue
    fi
    why=""
    [ "$got" = "$status" ] || why="status $got, not $status ($($R hget "llmsb:result:$id" error | head -c 200))"
    if [ -z "$why" ] && [ "$(cat "$outf")" != - ]; then
        [ "$($R hget "llmsb:result:$id" stdout)"$'\n' = "$(cat "$outf")"$'\n' ] ||
            why="stdout $($R hget "llmsb:result:$id" stdout | head -c 80 | od -c | head -2 | tr -s ' ')"
    fi
    case $kind in
        cases) [ -n "$why" ] || [ "$($R hget "llmsb:result:$id" passed)" = true ] || why="cases: not passed" ;;
        plot) [ -n "$why" ] || $R hget "llmsb:result:$id" artifacts | grep -q 'plot-001.png' || why="no plot-001.png" ;;
        dedup) [ -n "$why" ] || case $id in *-a | *-b) ;; *) [ -n "$($R hget "llmsb:result:$id" copy_of)" ] ||
                   why="no copy_of" ;; esac ;;
        live) if [ -z "$why" ]; then
                  frc=$(cat "$FD/follow-rc.$id" 2>/dev/null)
                  # a retried attempt's output follows the earlier one's (the
                  # follower says so on stderr): what it printed ends with the final's
                  [ "$frc" = 0 ] && [ "$(tail -c "$(wc -c <"$outf")" "$FD/follow.$id")" = "$(cat "$outf")" ] ||
                      why="follower exit ${frc:-none}: $(head -c 120 "$FD/follow-err.$id" | tr '\n' ' ')"
              fi ;;
    esac
    [ -z "$why" ] || { wrong=$((wrong + 1)); echo "  wrong: $id ($kind): $why"; }
    kinds="$kinds $kind"
done <"$FD/expect"
echo "soak: $jobs jobs ($(printf '%s\n' $kinds | sed 's/-.*//' | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}')$lost_sessions session calls session_lost), $FAULTS faults"
echo "soak: $lost lost, $doubled with other than one result, $wrong with a wrong verdict"
[ "$lost" = 0 ] && [ "$doubled" = 0 ] && ok every_job_one_result || bad every_job_one_result "lost=$lost doubled=$doubled"
[ "$wrong" = 0 ] && ok every_verdict_right || bad every_verdict_right "$wrong wrong"

# flat after the warm-up: s1's figures over the last two thirds, against its
# RSS at the first sample after the first third, and the most fds and
# threads it had in the first third once it started work: those come and go
# with its containers (each an attach stream, 2 to ~10 of them as the
# refillers follow the rate), its slots' engine connections that curl keeps
# or closes, and reconnects, so one sample is no baseline and the margin is
# 16 fds (CI runs: 45 fds at 30 s, 39 at 60, 48 at 90; 42, 45, 54, 54, 42;
# the 30-minute soak 72-84): a leak of one a job is hundreds in 3 minutes,
# one a fault is past 16 in the 30-minute soak's 60 faults
warm=$((SECS / 3))
read -r fl_rss0 fl_fd0 fl_thr0 <<<"$(awk -v w="$warm" '$1 > 0 && $1 < w && $2 != "-" {if ($3 > f) f = $3; if ($4 > t) t = $4}
    $1 >= w && $2 != "-" {if ($3 > f) f = $3; if ($4 > t) t = $4; print $2, f, t; exit}' "$FD/s1.figures")"
read -r fl_rss1 fl_fd1 fl_thr1 <<<"$(awk -v w="$warm" '$1 >= w && $2 != "-" {if ($2 > r) r = $2; if ($3 > f) f = $3; if ($4 > t) t = $4}
    END {print r, f, t}' "$FD/s1.figures")"
echo "soak: worker s1 after the warm-up (${warm} s): RSS ${fl_rss0:-?} -> at most ${fl_rss1:-?} kB," \
    "fds at most ${fl_fd0:-?} -> at most ${fl_fd1:-?}, threads at most ${fl_thr0:-?} -> at most ${fl_thr1:-?}"
# RSS: a sanitized binary's allocator keeps freed memory in quarantine
# (ASAN_OPTIONS below bounds it), so the bound is 32 MB over the warm
# figure; fds and threads come and go with the slots' jobs and reconnects
if [ -n "${fl_rss0:-}" ] && [ "$fl_rss1" -le $((fl_rss0 + 32768)) ] && [ "$fl_fd1" -le $((fl_fd0 + 16)) ] &&
   [ "$fl_thr1" -le $((fl_thr0 + 4)) ]; then ok worker_flat
else bad worker_flat "RSS ${fl_rss0:-?}->${fl_rss1:-?} kB fds ${fl_fd0:-?}->${fl_fd1:-?} threads ${fl_thr0:-?}->${fl_thr1:-?}"; fi

# a worker killed near the end left containers that the worker started
# again in its place reaps at its next upkeep (every 10 s, not while it
# drains): up to 30 s for them to go before the workers stop
live=" $PID_s1 $PID_s2 $PID_s3 "
for _ in $(seq 1 30); do
    orphans=$($PE ps -a --filter label=llmsb.managed=1 --format '{{.Label "llmsb.pid"}}' |
        while read -r p; do case "$live" in *" $p "*) ;; *) echo "$p" ;; esac; done | wc -l)
    [ "$orphans" = 0 ] && break
    sleep 1
done
# the workers stop (drain): nothing on the engine, and no key without a TTL
# but the streams (jobs, results, dead) and the consumer group's
for w in s1 s2 s3; do eval "kill -TERM \$PID_$w"; done
for w in s1 s2 s3; do
    eval "p=\$PID_$w"
    for _ in $(seq 1 300); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
done
left=$($PE ps -aq | wc -l)
[ "$left" = 0 ] && ok nothing_left_on_the_engine || bad nothing_left_on_the_engine "$left containers: $($PE ps -a --format '{{.Names}} {{.Status}}' | head -3)"
forever=$($R --scan | while read -r k; do [ "$($R ttl "$k")" = -1 ] && echo "$k"; done |
    grep -vxE 'llmsb:(jobs|results|dead)' | sort)
echo "soak: $($R dbsize) keys in Redis after the run; without a TTL beside the streams: $(echo "$forever" | grep -c .)"
[ -z "$forever" ] && ok no_key_without_ttl || bad no_key_without_ttl "$(echo "$forever" | head -5 | tr '\n' ' ')"
for w in s1 s2 s3; do
    n=$(grep -c "AddressSanitizer\|runtime error:" "$FD/$w.log")
    [ "$n" = 0 ] || bad "sanitizer_$w" "$(grep -m3 "AddressSanitizer\|runtime error:" "$FD/$w.log")"
done

echo "soak: $pass passed, $fail failed"
[ "$fail" = 0 ]
