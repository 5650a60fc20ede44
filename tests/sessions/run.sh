#!/bin/bash
# run.sh - sessions against the real engine and a real redis-server:
#   local   submit --local: a 3-call session (define, use, plot) whose names,
#           imports and open files persist (Python, then Ruby and R); an exception does not end it;
#           the security scan per call; close, then the id anew; a timeout
#           ends it and its next call is session_lost; the max lifetime
#   redis   two workers, calls sent one at a time: every call on the worker
#           that holds the session (the other hands its calls over), state
#           kept; kill -9 of the holder: the next call is session_lost with
#           why; close frees the id; a session_close job with no code
#   invalid what a session cannot take, by name; a call in another language
#           than its session's (under policy strict: scanned as one language,
#           it would run as the other), another env or limit: invalid, not
#           run; a call without lang runs, and is scanned, as the session's
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
T=$(mktemp -d /tmp/llmsb-sess.XXXXXX)
PORT=$((18400 + $$ % 1000))
pass=0; fail=0; PIDS=""

cleanup() {
    for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
    redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1
    sleep 0.3
    remove_containers_of $PIDS
    rm -rf "$T"
}
trap cleanup EXIT

ok() { echo "ok   sessions.$1"; pass=$((pass + 1)); }
bad() { echo "FAIL sessions.$1: $2"; fail=$((fail + 1)); }

# expect NAME FILE PYTHON-EXPR: the expression over r (id -> result) must be true
expect() {
    local out
    if out=$(python3 - "$2" "$3" 2>&1 <<'EOF'
import json, sys
r = {}
for line in open(sys.argv[1]):
    x = json.loads(line)
    r[x["id"]] = x
ok = eval("(" + sys.argv[2] + ")")
if not ok:  # the results the expression names
    import re
    named = set(re.findall(r"r\['([^']+)'\]", sys.argv[2]))
    print(json.dumps({k: {f: v.get(f) for f in ("status", "exit_code", "stdout", "stderr", "error",
                                                "worker", "attempts", "zygote")}
                      for k, v in r.items() if k in named})[:3000])
sys.exit(0 if ok else 1)
EOF
    ); then ok "$1"; else bad "$1" "$out"; fi
}

# ---- local ------------------------------------------------------------------
cat >"$T/local.yaml" <<'EOF'
defaults: {lang: python}
jobs:
  - {id: define, session: s1, code: "import math\nx = 41\nf = open('notes.txt', 'w')\nf.write('kept ')\nprint('defined')\n"}
  - {id: use, session: s1, code: "x += 1\nf.write('open')\nf.flush()\nprint(x, math.pi > 3, open('notes.txt').read())\n"}
  - {id: plot, session: s1, code: "import matplotlib.pyplot as plt\nplt.plot([1, x])\nplt.show()\nprint('plotted', x)\n"}
  - {id: raises, session: s1, code: "print('before', x)\nraise ValueError('boom')\n"}
  - {id: blocked, session: s1, code: "import os\nos.system('rm -rf /')\n"}
  - {id: after, session: s1, code: "print('still', x, len(plt.get_fignums()))\n"}
  - {id: other, code: "print('x' in globals())"}
  - {id: close, session: s1, session_close: true}
  - {id: anew, session: s1, code: "print('x' in globals())"}
  - {id: fork1, session: s4, code: "import os, sys\npid = os.fork()\n# one write each: stdout is unbuffered, print would write the newline apart\nos.write(1, b'parent\\n' if pid else b'child\\n')"}
  - {id: fork2, session: s4, code: "os.waitpid(pid, 0)\nos.chdir('/tmp')\nprint('after fork')"}
  - {id: fork3, session: s4, code: "print(os.getcwd())"}
  - {id: exit1, session: s5, code: "import sys\nsys.exit(3)"}
  - {id: exit2, session: s5, code: "print(1)"}
  - {id: rebind1, session: s7, code: "import os, gc, resource, sys\nfor n in ('open', 'dup2', 'close', 'write', 'getpid', 'fsdecode'):\n    setattr(os, n, None)\ngc.collect = resource.getrusage = None\nsys.modules['resource'] = None\nprint('rebound')"}
  - {id: rebind2, session: s7, code: "print('next call')\nraise KeyboardInterrupt"}
  - {id: rebind3, session: s7, code: "print('still here')"}
  - {id: fin1, session: s8, code: "class A:\n    def __del__(self):\n        print('bye')\na = A()\nprint('hi')"}
  - {id: fin2, session: s8, code: "import sys\nout = open(1, 'w', closefd=False)\nout.write('answer 42\\n')\nsys.exit(0)"}
  - {id: rb-define, lang: ruby, session: rb1, code: "x = 41\ndef twice(v) = v * 2\nrequire 'json'\nf = File.open('notes.txt', 'w')\nf.write('kept ')\nputs 'defined'"}
  - {id: rb-use, lang: ruby, session: rb1, stdin: "line\n", code: "f.flush\nputs twice(x + 1), JSON.generate([x]), File.read('notes.txt'), gets"}
  - {id: rb-raises, lang: ruby, session: rb1, code: "puts x\nraise ArgumentError, 'boom'"}
  - {id: rb-blocked, lang: ruby, session: rb1, code: "system('rm -rf /')"}
  - {id: rb-after, lang: ruby, session: rb1, code: "puts \"still #{x}\""}
  - {id: rb-in1, lang: ruby, session: rb1, stdin: "A\nB\n", code: "puts gets"}
  - {id: rb-in2, lang: ruby, session: rb1, stdin: "NEW\n", code: "puts gets, $stdin.equal?(STDIN)"}
  - {id: rb-exit, lang: ruby, session: rb1, code: "exit 3"}
  - {id: rb-lost, lang: ruby, session: rb1, code: "puts x"}
  - {id: rb-rebind1, lang: ruby, session: rb2, code: "def raise(*) = nil\ndef fail(*) = nil\nputs 'rebound'"}
  - {id: rb-rebind2, lang: ruby, session: rb2, code: "puts 'next'\n1 / 0"}
  - {id: rb-rebind3, lang: ruby, session: rb2, code: "exit 3"}
  - {id: r-define, lang: r, session: r1, code: "x <- 41\nf <- function(v) v * 2\nlibrary(ggplot2)\ncat('defined\\n')"}
  - {id: r-use, lang: r, session: r1, stdin: "line\n", code: "f(x + 1)\ncon <- file('stdin')\ncat(readLines(con), '\\n')\nclose(con)"}
  - {id: r-plot, lang: r, session: r1, code: "print(ggplot(data.frame(a = 1:3, b = 3:1), aes(a, b)) + geom_point())\ncat('plotted', x, '\\n')"}
  - {id: r-raises, lang: r, session: r1, code: "g <- function() stop('boom')\ncat('before\\n')\ng()\ncat('never\\n')"}
  - {id: r-warns, lang: r, session: r1, code: "warning('careful')\nx"}
  - {id: r-warns2, lang: r, session: r1, code: "warning(simpleWarning('x', call = quote(foo(1))))\nfor (i in 1:2) warning(paste('w', i))\ng <- function() warning('inner')\ng()"}
  - {id: r-blocked, lang: r, session: r1, code: "system('rm -rf /')"}
  - {id: r-quit, lang: r, session: r1, code: "cat(x, '\\n')\nquit(status = 4)"}
  - {id: r-lost, lang: r, session: r1, code: "cat(x)"}
  - {id: t1, session: s2, code: "y = 1"}
  - {id: t2, session: s2, timeout: 1, code: "while True: pass"}
  - {id: t3, session: s2, code: "print(y)"}
EOF
cat >"$T/life.yaml" <<'EOF'
defaults: {lang: python}
jobs:
  - {id: l1, session: s3, code: "z = 1"}
  - {id: l2, session: s3, code: "import time\ntime.sleep(1.5)"}
  - {id: l3, session: s3, code: "print(z)"}
EOF
{ [ -n "${LLMSB_CONFIG:-}" ] && cat "$LLMSB_CONFIG"; echo "sessions: {max_lifetime: 1}"; } >"$T/life.cfg"
"$B" submit "$T/local.yaml" --local --slots 2 --out "$T/local.jsonl" >"$T/local.log" 2>&1
LLMSB_CONFIG=$T/life.cfg "$B" submit "$T/life.yaml" --local --out "$T/life.jsonl" >"$T/life.log" 2>&1
# the same programs as calls of one session and as plain jobs (ruby FILE,
# Rscript FILE): equal stdout and stderr (a plain Rscript ends a failed run
# with "Execution halted", where the session goes on); the Ruby ones
# follow each other in one session: a call that closed its streams, a
# $stdout of its own, input read
python3 - "$T/same.jsonl" <<'PY'
import json, sys
rb = [("puts __FILE__ == $0, $_.inspect, $.", ""),
      ("STDOUT.close\nSTDIN.close\n$stderr.puts 'closed'", ""),
      ("puts 'back'\np STDERR.sync, gets, $.\n$stderr.puts 'e'\nwarn 'w'", "a\nb\n"),
      ("o = Object.new\ndef o.write(*a) = STDOUT.write(*a)\n$stdout = o\nputs 1", ""),
      ("puts gets, $.\n$stderr.puts 'a'\nwarn 'b'", "x\n")]
r = ["f <- function() g()\ng <- function() stop('boom')\nf()",
     "print.foo <- function(x, ...) stop('bad')\nstructure(1, class = 'foo')",
     "stop('bad\\n')",
     "h <- function() stop('bad2\\n')\nh()",
     "print.bar <- function(x, ...) { warning('pw'); cat('bar\\n') }\nstructure(1, class = 'bar')",
     "sapply(1:2, function(i) if (i == 2) stop('two') else i)",
     "k <- function() .Call('no_such_symbol_xyz')\nk()",
     "deep <- function(n) if (n == 0) stop('bottom') else deep(n - 1)\ndeep(30)",
     "y <- log(-1)\nas.integer('z')\nf2 <- function() { warning('fw'); stop('fe') }\nf2()",
     "1 + 'a'",
     "f3 <- function() 1 + 'a'\nf3()",
     "options(show.error.messages = FALSE)\nstop('hidden')"]
with open(sys.argv[1], "w") as out:
    for i, (code, stdin) in enumerate(rb):
        for kind, extra in (("s", {"session": "rb2"}), ("p", {"fresh_interpreter": True})):
            out.write(json.dumps(dict(id="rb%s%d" % (kind, i), lang="ruby", code=code, stdin=stdin, **extra)) + "\n")
    for i, code in enumerate(r):
        for kind, extra in (("s", {"session": "r2"}), ("p", {"fresh_interpreter": True})):
            out.write(json.dumps(dict(id="r%s%d" % (kind, i), lang="r", code=code, **extra)) + "\n")
PY
"$B" submit "$T/same.jsonl" --local --slots 2 --out "$T/same.out.jsonl" >"$T/same.log" 2>&1
expect local_three_calls "$T/local.jsonl" \
    "r['define']['stdout'] == 'defined\n' and r['use']['stdout'] == '42 True kept open\n' and
     r['plot']['stdout'] == 'plotted 42\n' and
     [a['name'] for a in r['plot']['artifacts']] == ['plot-001.png'] and
     r['plot']['artifacts'][0]['base64'].startswith('iVBOR')"
expect local_exception_keeps_it "$T/local.jsonl" \
    "r['raises']['status'] == 'runtime_error' and r['raises']['stdout'] == 'before 42\n' and
     r['raises']['stderr'].endswith('ValueError: boom\n') and r['raises']['artifacts'] == [] and
     r['after']['stdout'] == 'still 42 0\n'"
expect local_scan_per_call "$T/local.jsonl" \
    "r['blocked']['status'] == 'blocked' and r['after']['status'] == 'ok'"
expect local_no_session_no_state "$T/local.jsonl" "r['other']['stdout'] == 'False\n'"
expect local_close_then_anew "$T/local.jsonl" \
    "r['close']['status'] == 'ok' and r['anew']['status'] == 'ok' and r['anew']['stdout'] == 'False\n'"
expect local_timeout_ends_it "$T/local.jsonl" \
    "r['t2']['status'] == 'timeout' and r['t3']['status'] == 'session_lost' and
     'call \"t2\" ended it (timeout)' in r['t3']['error']"
expect local_fork_and_chdir_keep_it "$T/local.jsonl" \
    "r['fork1']['status'] == 'ok' and sorted(r['fork1']['stdout'].split()) == ['child', 'parent'] and
     r['fork2']['stdout'] == 'after fork\n' and r['fork3']['status'] == 'ok' and
     r['fork3']['stdout'] == '/tmp\n'"
expect local_exit_ends_it_and_says_so "$T/local.jsonl" \
    "r['exit1']['status'] == 'runtime_error' and r['exit1']['exit_code'] == 3 and
     'this call ended the session' in r['exit1']['error'] and
     r['exit2']['status'] == 'session_lost'"
# a call that ends the session lets the session's names go as a program's
# exit does: a writer left open is flushed, a finalizer runs
expect local_exit_lets_names_go "$T/local.jsonl" \
    "r['fin1']['stdout'] == 'hi\n' and r['fin2']['exit_code'] == 0 and
     sorted(r['fin2']['stdout'].splitlines()) == ['answer 42', 'bye']"
# what a call rebinds (os.dup2, resource.getrusage...) is not what the
# session calls between calls
expect local_rebound_modules_keep_it "$T/local.jsonl" \
    "r['rebind1']['stdout'] == 'rebound\n' and r['rebind2']['stdout'] == 'next call\n' and
     r['rebind2']['exit_code'] == 1 and r['rebind3']['status'] == 'ok' and
     r['rebind3']['stdout'] == 'still here\n'"
expect local_ruby_session "$T/local.jsonl" \
    "r['rb-define']['stdout'] == 'defined\n' and
     r['rb-use']['stdout'] == '84\n[41]\nkept \nline\n' and
     r['rb-raises']['status'] == 'runtime_error' and r['rb-raises']['stdout'] == '41\n' and
     r['rb-raises']['stderr'] == '/work/main.rb:2:in \x60<main>\x27: boom (ArgumentError)\n' and
     r['rb-blocked']['status'] == 'blocked' and r['rb-after']['stdout'] == 'still 41\n' and
     r['rb-exit']['exit_code'] == 3 and 'this call ended the session' in r['rb-exit']['error'] and
     r['rb-in1']['stdout'] == 'A\n' and r['rb-in2']['stdout'] == 'NEW\ntrue\n' and
     r['rb-lost']['status'] == 'session_lost' and
     all(r[k].get('zygote') for k in ('rb-define', 'rb-use', 'rb-after'))"
# a call that redefined raise still ends the session with its exit
expect local_ruby_rebound_raise "$T/local.jsonl" \
    "r['rb-rebind1']['stdout'] == 'rebound\n' and r['rb-rebind2']['exit_code'] == 1 and
     r['rb-rebind2']['stdout'] == 'next\n' and 'ZeroDivisionError' in r['rb-rebind2']['stderr'] and
     r['rb-rebind3']['exit_code'] == 3 and 'this call ended the session' in r['rb-rebind3']['error']"
expect local_r_session "$T/local.jsonl" \
    "r['r-define']['stdout'] == 'defined\n' and r['r-use']['stdout'] == '[1] 84\nline \n' and
     r['r-plot']['stdout'] == 'plotted 41 \n' and
     [a['name'] for a in r['r-plot']['artifacts']] == ['plot-001.png'] and
     r['r-plot']['artifacts'][0]['base64'].startswith('iVBOR') and
     r['r-raises']['status'] == 'runtime_error' and r['r-raises']['stdout'] == 'before\n' and
     r['r-raises']['stderr'] == 'Error in g() : boom\n' and r['r-raises']['artifacts'] == [] and
     r['r-warns']['status'] == 'ok' and r['r-warns']['stdout'] == '[1] 41\n' and
     r['r-warns']['stderr'] == 'Warning message:\ncareful \n' and
     r['r-warns2']['stderr'] == 'Warning message:\nIn foo(1) : x\n' +
         'Warning messages:\n1: w 1 \n2: w 2 \n' + 'Warning message:\nIn g() : inner\n' and
     r['r-blocked']['status'] == 'blocked' and r['r-quit']['exit_code'] == 4 and
     r['r-quit']['stdout'] == '41 \n' and r['r-lost']['status'] == 'session_lost'"
for lang in rb r; do
    if out=$(python3 - "$T/same.out.jsonl" "$lang" 2>&1 <<'PY'
import json, sys
r = {x["id"]: x for x in map(json.loads, open(sys.argv[1]))}
lang, bad = sys.argv[2], []
for i in range(len([k for k in r if k.startswith(lang + "s")])):
    s, p = r[lang + "s%d" % i], r[lang + "p%d" % i]
    halted = "Execution halted\n" if lang == "r" and p["exit_code"] else ""
    if not s.get("zygote") or s["stdout"] != p["stdout"] or s["stderr"] + halted != p["stderr"]:
        bad.append({f: (s.get(f), p.get(f)) for f in ("status", "stdout", "stderr", "error")})
print(json.dumps(bad)[:3000])
sys.exit(1 if bad or i < 4 else 0)
PY
    ); then ok "local_${lang}_session_prints_as_a_plain_run"; else bad "local_${lang}_session_prints_as_a_plain_run" "$out"; fi
done
expect local_max_lifetime "$T/life.jsonl" \
    "r['l2']['status'] == 'ok' and r['l3']['status'] == 'session_lost' and
     'max_lifetime' in r['l3']['error']"

# a job forked by the zygote cannot reach the byte the zygote reads its
# state from (writing it made the zygote take the job for a lost one, and
# the job ran twice)
cat >"$T/state.yaml" <<'EOF'
defaults: {lang: python}
jobs:
  - {id: warm, code: "print(1)"}
  - {id: warm2, code: "print(1)"}
  - id: poke
    code: |
      import sys
      f = sys._getframe(0)
      while f.f_back:
          f = f.f_back
      try:
          f.f_globals['_STATE'][0] = 0
          print('wrote it')
      except (ValueError, KeyError, TypeError) as e:
          print('refused', type(e).__name__)
EOF
"$B" submit "$T/state.yaml" --local --slots 1 --out "$T/state.jsonl" >/dev/null 2>&1
expect zygote_state_out_of_reach "$T/state.jsonl" \
    "r['poke']['zygote'] is True and r['poke']['status'] == 'ok' and
     r['poke']['stdout'].startswith('refused') and r['poke']['attempts'] == 1"

# ---- invalid ----------------------------------------------------------------
cat >"$T/invalid.yaml" <<'EOF'
jobs:
  - {id: i1, lang: javascript, session: a, code: "1"}
  - {id: i2, lang: python, session: "a b", code: "1"}
  - {id: i3, lang: python, session: a, libraries: [requests], code: "1"}
  - {id: i4, lang: python, session_close: true}
EOF
"$B" submit "$T/invalid.yaml" --local --allow-invalid --out "$T/invalid.jsonl" >/dev/null 2>&1
expect invalid_named "$T/invalid.jsonl" \
    "all(r[i]['status'] == 'invalid' for i in ('i1', 'i2', 'i3', 'i4')) and
     r['i1']['error'].startswith('session: \"javascript\" has no sessions') and
     r['i2']['error'].startswith('session: \"a b\" may hold only') and
     r['i3']['error'].startswith('libraries: not with session') and
     r['i4']['error'].startswith('session_close: needs session')"

# one language per session: the code of each bypass is blocked in the
# session's language; sent as the other it used to be scanned as that one
# and run in the session's interpreter (ok, uid=10001)
cat >"$T/onelang.yaml" <<'EOF'
defaults: {policy: strict}
jobs:
  - {id: py1, lang: python, session: lp, env: {A: "1"}, memory: 512, code: "x = 1\nprint('py')"}
  - {id: py-as-rb, lang: ruby, session: lp, code: "import subprocess; subprocess.run(['id'])"}
  - {id: py-nolang, session: lp, code: "import subprocess; subprocess.run(['id'])"}
  - {id: py-env, session: lp, env: {A: "2"}, code: "print(x)"}
  - {id: py-mem, session: lp, memory: 256, code: "print(x)"}
  - {id: py-fresh, session: lp, fresh_interpreter: true, code: "print(x)"}
  - {id: py-same, lang: python, session: lp, env: {A: "1"}, memory: 512, timeout: 5, code: "print(x, 1)"}
  - {id: rb1, lang: ruby, session: lr, code: "y = 2\nputs 'rb'"}
  - {id: rb-as-py, lang: python, session: lr, code: "puts IO.popen(['id']).read"}
  - {id: rb-nolang, session: lr, code: "puts IO.popen(['id']).read"}
  - {id: rb-after, session: lr, code: "puts y"}
  - {id: first-nolang, session: ln, code: "print(1)"}
  - {id: first-after, lang: python, session: ln, code: "print(2)"}
  - {id: lax1, lang: python, session: lx, policy: development, code: "import subprocess, builtins; builtins.sp = subprocess"}
  - {id: lax-strict, session: lx, policy: strict, code: "print(sp.run(['id'], capture_output=True).stdout)"}
EOF
"$B" submit "$T/onelang.yaml" --local --allow-invalid --out "$T/onelang.jsonl" >"$T/onelang.log" 2>&1
# the summary counts a call without lang under its session's language
if grep -Eq '^python +10 ' "$T/onelang.log" && grep -Eq '^ruby +4 ' "$T/onelang.log" &&
    grep -Eq '^\? +1 ' "$T/onelang.log"; then ok summary_counts_a_call_in_its_sessions_language
else bad summary_counts_a_call_in_its_sessions_language "$(cat "$T/onelang.log")"; fi
expect one_language_per_session "$T/onelang.jsonl" \
    "r['py1']['status'] == 'ok' and r['rb1']['status'] == 'ok' and
     r['py-as-rb']['status'] == 'invalid' and r['py-as-rb']['stdout'] == '' and
     r['py-as-rb']['error'].startswith('lang: session \"lp\" runs python, the call names ruby') and
     r['rb-as-py']['status'] == 'invalid' and r['rb-as-py']['stdout'] == '' and
     r['rb-as-py']['error'].startswith('lang: session \"lr\" runs ruby, the call names python')"
expect call_without_lang_is_the_sessions "$T/onelang.jsonl" \
    "r['py-nolang']['status'] == 'blocked' and r['rb-nolang']['status'] == 'blocked' and
     r['rb-after']['status'] == 'ok' and r['rb-after']['stdout'] == '2\n' and
     r['first-nolang']['status'] == 'invalid' and
     'lang: is required in a session' in r['first-nolang']['error'] and
     r['first-after']['status'] == 'ok'"
# a strict call cannot use what a lax call of its session let in
expect session_policy_fixed "$T/onelang.jsonl" \
    "r['lax1']['status'] == 'ok' and r['lax-strict']['status'] == 'invalid' and
     r['lax-strict']['stdout'] == '' and
     r['lax-strict']['error'].startswith('policy: \"strict\", session \"lx\"')"
expect session_env_and_limits_fixed "$T/onelang.jsonl" \
    "r['py-env']['status'] == 'invalid' and r['py-env']['error'].startswith('env: differs') and
     r['py-mem']['status'] == 'invalid' and
     r['py-mem']['error'].startswith('memory: 256 MB, session \"lp\"') and
     r['py-fresh']['status'] == 'invalid' and
     r['py-fresh']['error'].startswith('fresh_interpreter: not with session') and
     r['py-same']['status'] == 'ok' and r['py-same']['stdout'] == '1 1\n'"

# ---- redis: two workers ----------------------------------------------------------
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
    --logfile "$T/redis.log" --dir "$T"
for _ in $(seq 1 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT
# a lease well above the wait of a deferred call (5 s): a stale claim by the
# other worker would count an attempt
printf 'worker: {block: 1, lease: 20, heartbeat_ttl: 2}\n' >"$T/w.yaml"
for w in sw1 sw2; do
    LLMSB_CONFIG=$T/w.yaml "$B" worker --name "$w" --slots 1 >"$T/$w.log" 2>&1 &
    PIDS="$PIDS $!"
    eval "PID_$w=$!"
    disown $! 2>/dev/null
done
for _ in $(seq 1 50); do
    [ "$(redis-cli -p "$PORT" exists llmsb:worker:sw1 llmsb:worker:sw2)" = 2 ] && break; sleep 0.1
done
call() {  # call ID [CODE]: one job of session rs, waited for
    if [ $# -gt 1 ]; then
        printf 'defaults: {lang: python, session: rs}\njobs:\n  - {id: %s, code: "%s"}\n' "$1" "$2"
    else
        printf 'jobs:\n  - {id: %s, session: rs, session_close: true}\n' "$1"
    fi >"$T/call.yaml"
    "$B" submit "$T/call.yaml" --wait --timeout 60 --out "$T/call.jsonl" >/dev/null 2>&1
    cat "$T/call.jsonl" >>"$T/redis.jsonl"
}
for i in 1 2 3 4 5 6; do call "r$i" "n = globals().get('n', 0) + 1; print(n)"; done
holder=$(redis-cli -p "$PORT" hget llmsb:session:rs worker)
# the holder checks a call against its session, whichever worker read it
for i in 1 2 3; do
    cat >"$T/call.yaml" <<EOF
jobs:
  - {id: rx$i, lang: ruby, policy: strict, session: rs, code: "import subprocess; subprocess.run(['id'])"}
  - {id: ry$i, session: rs, code: "print(n)"}
EOF
    "$B" submit "$T/call.yaml" --wait --timeout 60 --allow-invalid --out "$T/call.jsonl" >/dev/null 2>&1
    cat "$T/call.jsonl" >>"$T/redis.jsonl"
done
expect redis_one_language_per_session "$T/redis.jsonl" \
    "all(r['rx%d' % i]['status'] == 'invalid' and r['rx%d' % i]['stdout'] == '' and
         'runs python, the call names ruby' in r['rx%d' % i]['error'] and
         r['ry%d' % i]['stdout'] == '6\n' for i in (1, 2, 3))"
# calls of one session enqueued at once run in the stream's order, on two
# workers of one slot each
{
    printf 'defaults: {lang: python, session: order}\njobs:\n  - {id: o0, code: "seq = []"}\n'
    for i in 1 2 3 4 5 6; do printf '  - {id: o%d, code: "seq.append(%d)\\nprint(seq)"}\n' "$i" "$i"; done
    printf '  - {id: oclose, session_close: true}\n'
} >"$T/order.yaml"
"$B" submit "$T/order.yaml" --wait --timeout 120 --out "$T/order.jsonl" >/dev/null 2>&1
expect redis_calls_in_stream_order "$T/order.jsonl" \
    "all(r['o%d' % i]['stdout'] == str(list(range(1, i + 1))) + '\n' for i in range(1, 7)) and
     r['oclose']['status'] == 'ok' and all(x['attempts'] == 1 for x in r.values())"
expect redis_one_worker_keeps_state "$T/redis.jsonl" \
    "[r['r%d' % i]['stdout'] for i in range(1, 7)] == ['%d\n' % i for i in range(1, 7)] and
     len({r['r%d' % i]['worker'] for i in range(1, 7)}) == 1 and r['r1']['worker'] == '$holder'"
if grep -q "handed to $holder, which holds session rs" "$T"/sw*.log; then
    ok redis_calls_handed_to_the_holder
else
    bad redis_calls_handed_to_the_holder "no hand-over logged (holder $holder)"
fi
eval "kill -9 \$PID_$holder"
sleep 4 # its heartbeat (2 s) runs out
call r7 "print(n)"
expect redis_holder_killed_is_session_lost "$T/redis.jsonl" \
    "r['r7']['status'] == 'session_lost' and 'the worker that held it ($holder) is gone' in r['r7']['error']"
call rclose
call r8 "print(globals().get('n'))"
expect redis_close_then_anew "$T/redis.jsonl" \
    "r['rclose']['status'] == 'ok' and r['r8']['status'] == 'ok' and r['r8']['stdout'] == 'None\n'"

echo "sessions: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
