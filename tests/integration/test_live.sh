#!/bin/bash
# test_live.sh - live output (docs/jobs.md, "Live output") against the real
# dockerd and a redis-server of its own (temp port), through a real worker:
# `result ID --follow` prints a live job's first line while the job still
# runs (its result still says running), then the rest; what it prints
# equals `result ID`'s stdout and stderr, for a live job followed from its
# start, one capped at its output limit, a job that was not live and one
# already finished; the stream has a TTL and holds no more than the output
# limit; an unknown id is a clear error; a job with cases streams nothing
# and passes; a session's calls stream.  `run` prints a line as the program
# writes it, long before the program ends, whichever way the program
# starts: the Python and Ruby zygotes, JavaScript's node started ahead, a
# compiled C++ binary.  A retried job's follower starts again with the new
# attempt and checks its bytes against the result; the follower exits as
# `run` would.  A corpus run live and not live gives the same results
# (and the live ones streamed); a stream always expires, even when the
# job's result lives a second.
# A late reader of `run` and a stalled Redis change no verdict.  Two
# entries of one id at once run one after the other, not into one stream.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
T=$(mktemp -d /tmp/llmsb-live.XXXXXX)
PORT=$(free_port)
PREFIX=livetest$$
R="redis-cli -p $PORT"
suite live; WORKER=""

cleanup() {
    stop_worker_and_redis
    rm -rf "$T"
}
trap cleanup EXIT

start_redis "$PORT" "$T" --enable-debug-command local || { echo "live: redis-server did not start"; exit 1; }
export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT LLMSB_PREFIX=$PREFIX
$B worker --name livew --slots 2 >"$T/worker.log" 2>&1 &
WORKER=$!
for _ in $(seq 1 100); do [ "$($R exists "$PREFIX:worker:livew")" = 1 ] && break; sleep 0.1; done

# follow ID NAME: `result ID --follow` with its stdout and stderr kept in
# $T/NAME.out and $T/NAME.err, the result's status when the first stdout
# line came in $T/NAME.first ("absent" when there was none) and, when that
# line came a second or more before the follower ended, "early" after it;
# its exit code in $T/NAME.rc
follow() {
    python3 - "$B" "$1" "$PREFIX:result:$1" "$PORT" "$T/$2" <<'EOF'
import subprocess, sys, time
b, jid, key, port, out = sys.argv[1:]
p = subprocess.Popen([b, "result", jid, "--follow", "--wait", "60"], stdout=subprocess.PIPE,
                     stderr=open(out + ".err", "wb"))
first = p.stdout.readline()
t1 = time.monotonic()
st = subprocess.run(["redis-cli", "-p", port, "hget", key, "status"], capture_output=True,
                    text=True).stdout.strip() if first else "absent"
rest = p.stdout.read()
rc = p.wait()
early = " early" if first and time.monotonic() - t1 >= 1.0 else ""
open(out + ".out", "wb").write(first + rest)
open(out + ".first", "w").write((st or "absent") + early)
open(out + ".rc", "w").write(str(rc))
EOF
}

# same ID NAME [RC]: what the follower printed equals the final result's
# stdout and stderr (after run's one-line note, when its status has one),
# byte for byte, and it exited RC (default 0: run's code for the status)
same() {
    $B result "$1" >"$T/$2.json" 2>"$T/why"
    python3 - "$T/$2" "${3:-0}" <<'EOF' >"$T/why" 2>&1
import json, sys
n, rc = sys.argv[1:]
r = json.load(open(n + ".json"))
out, err = open(n + ".out", "rb").read(), open(n + ".err", "rb").read()
if r["status"] not in ("ok", "runtime_error"):
    assert err.endswith(b"\n") and err.rsplit(b"\n", 2)[-2].startswith(b"llm-sandbox: " + r["status"].encode()), err[-200:]
    err = err[:err.rstrip(b"\n").rfind(b"\n") + 1]
assert open(n + ".rc").read() == rc, "exit " + open(n + ".rc").read()
assert out == r["stdout"].encode(), (len(out), len(r["stdout"]), out[:80], r["stdout"][:80])
assert err == r["stderr"].encode(), (err[:200], r["stderr"][:200])
EOF
}

# submit ID CODE [FIELDS]: enqueues a Python job, FIELDS (JSON) added
submit() {
    jq -nc --arg id "$1" --arg code "$2" --argjson more "${3:-{\}}" \
        '{id: $id, lang: "python", code: $code} + $more' >"$T/job.jsonl"
    $B submit "$T/job.jsonl" </dev/null >"$T/submit.out" 2>&1
    for _ in $(seq 1 100); do [ "$($R exists "$PREFIX:result:$1")" = 1 ] && break; sleep 0.1; done
}

# 1. a live job followed from its start: the first line before the result
submit slow 'import sys, time
print("first", flush=True)
sys.stderr.write("err line\n"); sys.stderr.flush()
time.sleep(3)
print("second")' '{"live": true}'
follow slow slow
if [ "$(cat "$T/slow.first")" = "running early" ] && [ "$(head -1 "$T/slow.out")" = first ] &&
    grep -qx second "$T/slow.out" && grep -qx 'err line' "$T/slow.err"; then
    ok first_line_before_the_result
else
    { echo "status at the first line: $(cat "$T/slow.first")"; cat "$T/slow.out" "$T/slow.err"; } >"$T/why"
    bad first_line_before_the_result "the first line did not come while the job ran"
fi
if same slow slow; then ok followed_bytes_equal_the_result; else bad followed_bytes_equal_the_result "differ"; fi

# the stream: a restart entry, fields, an end entry with the status, a
# TTL of at most 300 s once ended (the result holds it all)
ttl=$($R ttl "$PREFIX:out:slow")
last=$($R --raw xrevrange "$PREFIX:out:slow" + - count 1 | sed 1d | tr '\n' ' ')
first=$($R --raw xrange "$PREFIX:out:slow" - + count 1 | sed 1d | tr '\n' ' ')
if [ "$ttl" -gt 0 ] && [ "$ttl" -le 300 ] && [ "$last" = "fd end status ok " ] &&
    [ "$first" = "fd restart attempt 1 " ] &&
    $R --raw xrange "$PREFIX:out:slow" - + count 2 | grep -qx stdout; then
    ok stream_fields_end_and_ttl
else
    { echo "ttl $ttl"; $R xrange "$PREFIX:out:slow" - +; } >"$T/why"
    bad stream_fields_end_and_ttl "the stream is not as documented"
fi

# 2. capped: 3 MB printed under a 100000-byte output limit: output_limit,
# the follower's bytes the result's, the stream's data within the limit
submit big 'import sys
for i in range(30):
    sys.stdout.write(str(i % 10) * 100000); sys.stdout.flush()' '{"live": true, "output": 100000}'
follow big big
sum=$($R eval "local t = 0 for _, e in ipairs(redis.call('XRANGE', KEYS[1], '-', '+')) do for i = 1, #e[2], 2 do if e[2][i] == 'data' then t = t + #e[2][i + 1] end end end return t" 1 "$PREFIX:out:big")
if same big big 121 && [ "$($R hget "$PREFIX:result:big" status)" = output_limit ] &&
    [ "$sum" -le 100000 ] && [ "$(wc -c <"$T/big.out")" -ge 90000 ]; then
    ok capped_output_equal_and_within_the_limit
else
    echo "stream data $sum bytes, followed $(wc -c <"$T/big.out")" >>"$T/why"
    bad capped_output_equal_and_within_the_limit "differ, or over the limit"
fi

# 3. a job that is not live: no stream; the follower prints its result's output
submit plain 'import time
time.sleep(1)
print("plain out")'
follow plain plain
if same plain plain && [ "$(cat "$T/plain.out")" = "plain out" ] &&
    [ "$($R exists "$PREFIX:out:plain")" = 0 ]; then
    ok not_live_job_prints_its_result
else
    bad not_live_job_prints_its_result "$(cat "$T/plain.out" "$T/plain.err" | head -c 300)"
fi

# 4. a live job followed once it finished: the same bytes
follow slow again
if same slow again && [ "$(cat "$T/again.first")" = ok ]; then
    ok finished_job_prints_the_same
else
    bad finished_job_prints_the_same "differ"
fi

# 5. an unknown id
$B result no-such-job --follow >"$T/unk.out" 2>"$T/unk.err"; rc=$?
if [ "$rc" = 1 ] && grep -q 'no result for "no-such-job"' "$T/unk.err" && [ ! -s "$T/unk.out" ]; then
    ok unknown_id_is_an_error
else
    cp "$T/unk.err" "$T/why"; bad unknown_id_is_an_error "exit $rc"
fi

# 6. a job with cases: nothing streams (each case's output is in its
# entry), the cases pass, the stream holds the end entry alone
submit cased 'print(int(input()) * 2)' '{"live": true, "cases": [{"stdin": "2", "expect_stdout": "4\n"}, {"stdin": "5", "expect_stdout": "10\n"}]}'
follow cased cased
if same cased cased && [ "$($R hget "$PREFIX:result:cased" status)" = ok ] &&
    [ "$($R xlen "$PREFIX:out:cased")" -le 2 ] &&
    ! $R --raw xrange "$PREFIX:out:cased" - + | grep -qx stdout; then
    ok cases_stream_nothing_and_pass
else
    { $R hget "$PREFIX:result:cased" status; $R xrange "$PREFIX:out:cased" - +; } >>"$T/why"
    bad cases_stream_nothing_and_pass "not as documented"
fi

# 6b. a retried job (the stream as a worker writes it: attempt 1's
# chunks, then attempt 2's restart entry and chunks): the follower says on
# stderr that the output starts again, prints attempt 2's bytes after
# attempt 1's, checks them against the result and exits 0; a stream whose
# bytes are not the result's makes it warn and exit 117
fake_stream() { # ID: its stream's entries from stdin (a job still running)
    while read -r fd a b; do
        if [ "$fd" = restart ]; then $R xadd "$PREFIX:out:$1" '*' fd restart attempt "$a" >/dev/null
        else $R xadd "$PREFIX:out:$1" '*' fd "$fd" offset "$a" data "$b
" >/dev/null; fi
    done
}
fake_end() { # ID RESULT-STDOUT STATUS EXIT: the end entry and the result
    $R hset "$PREFIX:result:$1" id "$1" status "$3" stdout "$2" stderr "" exit_code "$4" error "" >/dev/null
    $R xadd "$PREFIX:out:$1" '*' fd end status "$3" >/dev/null
}
# follow_running ID NAME ...: follows ID while it runs, fake_end ... after a second
follow_running() {
    follow "$1" "$2" &
    local fp=$!
    sleep 1
    shift 2
    fake_end "$@"
    wait $fp
}
fake_stream retried <<'EOS'
restart 1
stdout 0 attempt1-line1
stdout 15 attempt1-line2
restart 2
stdout 0 A2
stdout 3 attempt2 second line, longer
EOS
follow_running retried retried retried "A2
attempt2 second line, longer
" ok 0
printf 'attempt1-line1\nattempt1-line2\nA2\nattempt2 second line, longer\n' >"$T/retried.want"
if [ "$(cat "$T/retried.rc")" = 0 ] && cmp -s "$T/retried.out" "$T/retried.want" &&
    grep -q 'attempt 2 starts again' "$T/retried.err"; then
    ok retried_job_follower_restarts
else
    { echo "exit $(cat "$T/retried.rc")"; od -c "$T/retried.out" | head -5; cat "$T/retried.err"; } >"$T/why"
    bad retried_job_follower_restarts "the follower kept attempt 1's offsets"
fi
fake_stream stale <<'EOS'
stdout 0 wrong
EOS
follow_running stale stale stale "right
" ok 0
if [ "$(cat "$T/stale.rc")" = 117 ] && grep -q 'not what its result holds' "$T/stale.err"; then
    ok follower_checks_its_bytes_against_the_result
else
    { echo "exit $(cat "$T/stale.rc")"; cat "$T/stale.out" "$T/stale.err"; } >"$T/why"
    bad follower_checks_its_bytes_against_the_result "exited 0 on bytes that are not the result"
fi

# the final attempt failed before its program ran (the stream still
# holds the attempt before's chunks, the result no output, no exit code):
# no mismatch, the follower says the output was the earlier attempt's
# and exits as `run` would for internal_error (3)
fake_stream norun <<'EOS'
restart 1
stdout 0 attempt1
EOS
follow norun norun &
fp=$!
sleep 1
$R hset "$PREFIX:result:norun" id norun status internal_error stdout "" stderr "" error "create failed" >/dev/null
$R xadd "$PREFIX:out:norun" '*' fd end status internal_error >/dev/null
wait $fp
if [ "$(cat "$T/norun.rc")" = 3 ] && ! grep -q 'not what its result holds' "$T/norun.err" &&
    grep -q 'never ran' "$T/norun.err"; then
    ok follower_voids_chunks_of_a_final_attempt_that_never_ran
else
    { echo "exit $(cat "$T/norun.rc")"; cat "$T/norun.err"; } >"$T/why"
    bad follower_voids_chunks_of_a_final_attempt_that_never_ran "a false mismatch"
fi

# 6c. the follower ends as `run` would: its exit code for the status and
# its one-line note on stderr
fake_stream failed <<'EOS'
stdout 0 x
EOS
fake_end failed "x
" runtime_error 3
fake_end slowjob '' timeout 137
follow failed failed
follow slowjob slowjob
if [ "$(cat "$T/failed.rc")" = 3 ] && [ "$(cat "$T/slowjob.rc")" = 124 ] &&
    grep -q '^llm-sandbox: timeout' "$T/slowjob.err" && [ ! -s "$T/failed.err" ]; then
    ok follower_exit_code_and_note_are_runs
else
    { echo "rc $(cat "$T/failed.rc") $(cat "$T/slowjob.rc")"; cat "$T/failed.err" "$T/slowjob.err"; } >"$T/why"
    bad follower_exit_code_and_note_are_runs "exit codes $(cat "$T/failed.rc") $(cat "$T/slowjob.rc")"
fi

# 7. a session's calls: each streams its own output
submit s1 'x = 6
print("defined", flush=True)' '{"live": true, "session": "live-s"}'
follow s1 s1
submit s2 'print(x * 7, flush=True)' '{"live": true, "session": "live-s"}'
follow s2 s2
if same s1 s1 && same s2 s2 && [ "$(cat "$T/s2.out")" = 42 ] &&
    $R --raw xrange "$PREFIX:out:s2" - + | grep -qx '42'; then
    ok session_calls_stream
else
    { cat "$T/s1.out" "$T/s2.out"; $R xrange "$PREFIX:out:s2" - +; } >>"$T/why"
    bad session_calls_stream "a session's call did not stream"
fi
printf '{"id": "s3", "lang": "python", "session": "live-s", "session_close": true}\n' >"$T/close.jsonl"
$B submit "$T/close.jsonl" --wait </dev/null >/dev/null 2>&1

# 8. JavaScript through the worker: a later job finds its node started
# ahead (prespawned) and streams all the same; the Python jobs above ran
# in the zygote
JS='console.log("early");
setTimeout(() => console.log("late"), 1500);'
for n in 1 2 3; do
    jq -nc --arg id "js$n" --arg code "$JS" '{id: $id, lang: "javascript", live: true, code: $code}' >"$T/job.jsonl"
    $B submit "$T/job.jsonl" </dev/null >"$T/submit.out" 2>&1
    for _ in $(seq 1 100); do [ "$($R exists "$PREFIX:result:js$n")" = 1 ] && break; sleep 0.1; done
    follow "js$n" "js$n"
done
if same js3 js3 && [ "$(cat "$T/js3.first")" = "running early" ] &&
    [ "$($R hget "$PREFIX:result:js3" prespawned)" = true ] &&
    [ "$($R hget "$PREFIX:result:slow" zygote)" = true ]; then
    ok prespawned_and_zygote_jobs_stream
else
    { echo "js3 first: $(cat "$T/js3.first"); prespawned: $($R hget "$PREFIX:result:js3" prespawned); slow zygote: $($R hget "$PREFIX:result:slow" zygote)"; } >>"$T/why"
    bad prespawned_and_zygote_jobs_stream "not streamed, or not the path asked for"
fi

# 9. `run` prints a line as the program writes it: the first line comes
# seconds before the program ends, however the program starts; --json
# prints one object still
printf 'import time\nprint("early", flush=True)\ntime.sleep(2)\nprint("late")\n' >"$T/run.py"
printf '$stdout.sync = true\nputs "early"\nsleep 2\nputs "late"\n' >"$T/run.rb"
printf 'console.log("early");\nsetTimeout(() => console.log("late"), 2000);\n' >"$T/run.js"
printf '#include <cstdio>\n#include <unistd.h>\nint main(){ puts("early"); fflush(stdout); sleep(2); puts("late"); }\n' >"$T/run.cpp"
for f in run.py run.rb run.js run.cpp; do
    python3 - "$B" "$T/$f" >"$T/why" 2>&1 <<'EOF'
import subprocess, sys, time
p = subprocess.Popen([sys.argv[1], "run", sys.argv[2]], stdout=subprocess.PIPE,
                     stdin=subprocess.DEVNULL)
first = p.stdout.readline(); t1 = time.monotonic()
rest = p.stdout.read(); rc = p.wait(); t2 = time.monotonic()
assert first == b"early\n" and rest == b"late\n" and rc == 0, (first, rest, rc)
assert t2 - t1 >= 1.5, "the first line came %.2f s before the end" % (t2 - t1)
EOF
    if [ $? = 0 ]; then ok "run_prints_as_it_comes.${f#run.}"; else bad "run_prints_as_it_comes.${f#run.}" "printed only at the end"; fi
done
if $B run --json "$T/run.py" </dev/null | jq -e '.stdout == "early\nlate\n"' >/dev/null; then
    ok run_json_one_object
else
    bad run_json_one_object "run --json printed more than the result"
fi

# 10. live against not live: the same corpus through the worker twice,
# `live: true` and `live: false`; status, exit code, signal, stdout,
# stderr, the truncation flags and the error (its digits aside) must be
# the same, whichever way each job ends and starts (the Python zygote,
# JavaScript started ahead, a compiled C++ binary, a session's call)
python3 - "$T/corpus.jsonl" <<'EOS'
import json, sys
jobs = {
 "ok": {"lang": "python", "code": "print('hi')"},
 "rterr": {"lang": "python", "code": "import sys\nprint('before')\nsys.stderr.write('bad\\n')\nsys.exit(3)"},
 "tmo": {"lang": "python", "code": "import time\nprint('t', flush=True)\ntime.sleep(30)", "timeout": 2},
 "olim": {"lang": "python", "code": "import sys\nfor i in range(50):\n    sys.stdout.write('x' * 10000); sys.stdout.flush()", "output": 100000},
 "mem": {"lang": "python", "code": "print('m', flush=True)\nb = bytearray(400 << 20)\nprint(len(b))", "memory": 128},
 "bigout": {"lang": "python", "code": "import sys\nsys.stdout.write(''.join('%07d\\n' % i for i in range(400000)))"},
 "errheavy": {"lang": "python", "code": "import sys\nfor i in range(20000):\n    sys.stderr.write('e%d\\n' % i)\nprint('done')"},
 "stdin": {"lang": "python", "code": "import sys\nd = sys.stdin.read()\nprint(len(d), d[:5])", "stdin": "hello " * 100000},
 "closeout": {"lang": "python", "code": "import os, sys, time\nprint('bye', flush=True)\nos.close(1)\ntime.sleep(0.5)\nsys.stderr.write('after\\n')"},
 "js": {"lang": "javascript", "code": "console.log('js'); console.error('jserr'); process.exitCode = 2;"},
 "cpp": {"lang": "cpp", "code": "#include <cstdio>\nint main(){ for (int i = 0; i < 100000; i++) printf(\"%d\\n\", i); fprintf(stderr, \"c\\n\"); return 5; }"},
}
with open(sys.argv[1], "w") as f:
    for live in (True, False):
        for name, j in jobs.items():
            f.write(json.dumps(dict(j, id="d-%s-%d" % (name, live), live=live)) + "\n")
        for k, code in enumerate(["y = 5\nprint('s', y, flush=True)", "import sys\nprint(y * 2)\nsys.exit(4)"]):
            f.write(json.dumps({"id": "d-sess%d-%d" % (k, live), "lang": "python", "code": code,
                                "session": "diff-%d" % live, "live": live}) + "\n")
EOS
$B submit "$T/corpus.jsonl" --wait </dev/null >"$T/corpus.out" 2>&1
for f in 0 1; do
    printf '{"id": "d-close-%s", "lang": "python", "session": "diff-%s", "session_close": true}\n' "$f" "$f"
done >"$T/close2.jsonl"
$B submit "$T/close2.jsonl" --wait </dev/null >/dev/null 2>&1
python3 - "$B" "$T/corpus.jsonl" >"$T/why" 2>&1 <<'EOS'
import json, re, subprocess, sys
b, corpus = sys.argv[1:]
names = sorted({json.loads(l)["id"][2:-2] for l in open(corpus)})
keys = ["status", "exit_code", "signal", "stdout", "stderr", "stdout_truncated", "stderr_truncated", "error"]
bad, seen = [], set()
for n in names:
    r = [json.loads(subprocess.run([b, "result", "d-%s-%d" % (n, live)], capture_output=True).stdout)
         for live in (1, 0)]
    seen.add(r[0]["status"])
    for k in keys:
        a, c = (re.sub(r"[0-9.]+", "N", x[k]) if k == "error" and x.get(k) else x.get(k) for x in r)
        if a != c:
            bad.append("%s: %s live %r, not live %r" % (n, k, str(a)[:80], str(c)[:80]))
print("statuses:", sorted(seen))
for x in bad:
    print(x)
want = {"ok", "runtime_error", "timeout", "output_limit", "memory_limit"}
assert want <= seen, "the corpus did not end every way: %s" % sorted(seen)
assert not bad
EOS
if [ $? = 0 ]; then ok live_and_not_live_results_equal; else bad live_and_not_live_results_equal "a live job's result differs"; fi
# ... and the live ones did stream (a restart entry, a chunk, an end
# entry), the others not, so a silent fall back to not live fails here
: >"$T/why"
for id in $(jq -r '.id' "$T/corpus.jsonl"); do
    fds=$($R --raw xrange "$PREFIX:out:$id" - + | awk 'p == "fd" { print } { p = $0 }' | tr '\n' ' ')
    case "$id:$fds" in
    *-1:"restart "*std*"end ") ;;
    *-0:) ;;
    *) echo "$id: fd of its entries: $fds" >>"$T/why" ;;
    esac
done
if [ ! -s "$T/why" ]; then ok live_jobs_streamed; else bad live_jobs_streamed "a live job left no stream, or a job not live one"; fi

# 10b. a live job whose result lives 1 s and prints for 4 s: its stream
# always expires (no TTL of -1: a chunk after the key expired made it
# again), while it runs and once it ended
submit shortttl 'import time
for i in range(16):
    print(i, flush=True); time.sleep(0.25)' '{"live": true, "result_ttl": 1}'
: >"$T/ttls"
for _ in $(seq 1 40); do
    $R ttl "$PREFIX:out:shortttl" >>"$T/ttls"
    [ "$($R hget "$PREFIX:result:shortttl" status)" = running ] || [ "$($R exists "$PREFIX:result:shortttl")" = 0 ] || break
    sleep 0.2
done
$R ttl "$PREFIX:out:shortttl" >>"$T/ttls"
if ! grep -qx -- -1 "$T/ttls" && grep -q '^[1-9]' "$T/ttls"; then
    ok short_result_ttl_stream_always_expires
else
    { echo "TTLs seen:"; sort "$T/ttls" | uniq -c; } >"$T/why"
    bad short_result_ttl_stream_always_expires "the stream lost its expiry"
fi

# 11. slow readers never change a verdict: `run` into a pipe read 4 s
# late (a 2 s timeout, 600 kB written at once) ends ok with all of it;
# through the worker, a Redis that stalls 1.5 s under a live job (2 s
# timeout) leaves it ok with all its output, and the worker stops its
# chunks rather than wait (its log says so)
printf 'import sys\nsys.stdout.write("x" * 600000)\nsys.stdout.flush()\n' >"$T/burst.py"
( $B run --timeout 2 "$T/burst.py" </dev/null 2>"$T/burst.err"; echo $? >"$T/burst.rc" ) |
    { sleep 4; wc -c >"$T/burst.n"; }
if [ "$(cat "$T/burst.rc")" = 0 ] && [ "$(tr -d ' ' <"$T/burst.n")" = 600000 ]; then
    ok run_into_a_late_reader_keeps_the_verdict
else
    { echo "exit $(cat "$T/burst.rc"), $(cat "$T/burst.n") bytes"; cat "$T/burst.err"; } >"$T/why"
    bad run_into_a_late_reader_keeps_the_verdict "the late reader changed the verdict"
fi
submit stall 'import sys, time
for i in range(20):
    sys.stdout.write(str(i % 10) * 40000 + "\n"); sys.stdout.flush(); time.sleep(0.05)' '{"live": true, "timeout": 2}'
for _ in $(seq 1 50); do [ "$($R xlen "$PREFIX:out:stall")" -gt 1 ] 2>/dev/null && break; sleep 0.05; done
$R debug sleep 1.5 >/dev/null
$B result stall --wait 30 >"$T/stall.json" 2>"$T/why"
if jq -e '.status == "ok" and (.stdout | length) == 800020' "$T/stall.json" >/dev/null &&
    grep -q "job=stall: live output stopped" "$T/worker.log"; then
    ok stalled_redis_keeps_the_verdict
else
    { jq -c '{status, n: (.stdout | length), error}' "$T/stall.json"; grep stall "$T/worker.log"; } >>"$T/why"
    bad stalled_redis_keeps_the_verdict "a stalled Redis changed the verdict or held the chunks"
fi

# 12. two stream entries with one id at once on the 2-slot worker, each
# printing its own letter: one run of an id at a time (the other entry
# waits for that run's result, then is acknowledged with it), so the
# follower prints exactly one run's output, the result's, and the stream
# holds one restart entry
twin_code() { printf 'import time\nfor i in range(6):\n    print("%s", i, flush=True)\n    time.sleep(0.5)\n' "$1"; }
$R xadd "$PREFIX:jobs" '*' id twin lang python live true code "$(twin_code A)" >/dev/null
$R xadd "$PREFIX:jobs" '*' id twin lang python live true code "$(twin_code B)" >/dev/null
for _ in $(seq 1 100); do [ "$($R exists "$PREFIX:result:twin")" = 1 ] && break; sleep 0.1; done
follow twin twin
for _ in $(seq 1 150); do [ "$($R xlen "$PREFIX:jobs")" = 0 ] && break; sleep 0.1; done
letters=$(awk '{ print $1 }' "$T/twin.out" | sort | uniq -c | tr -s ' ' | tr '\n' ',')
restarts=$($R --raw xrange "$PREFIX:out:twin" - + | grep -cx restart)
results=$($R --raw xrange "$PREFIX:results" - + | grep -cx twin)
if same twin twin && { [ "$letters" = " 6 A," ] || [ "$letters" = " 6 B," ]; } && [ "$restarts" = 1 ] &&
    [ "$results" = 1 ] && [ "$($R xlen "$PREFIX:jobs")" = 0 ] &&
    grep -q 'job=twin: another entry of this id runs it' "$T/worker.log"; then
    ok one_run_of_an_id_at_a_time
else
    { echo "letters: $letters restarts: $restarts results: $results jobs left: $($R xlen "$PREFIX:jobs")"
      grep 'job=twin' "$T/worker.log"; cat "$T/twin.out"; } >>"$T/why"
    bad one_run_of_an_id_at_a_time "two runs of one id wrote its stream"
fi

echo "live: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
