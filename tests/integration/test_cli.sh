#!/bin/sh
# test_cli.sh - the `run` verb as a user meets it: flags, errors naming the
# field and value, exit codes per status, stdin, --json, and Ctrl-C
# removing the container.  Against the real dockerd.
B=${LLMSB_BIN:-bin/llm-sandbox}
. "$(dirname "$0")/../lib.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
suite cli
WHY_SHOW="head -5"

# check NAME EXPECTED_EXIT ACTUAL_EXIT [FILE PATTERN]: a failure shows
# $T/err, or FILE when it lacks PATTERN
check() {
    if [ "$2" != "$3" ]; then
        WHY_FILE=$T/err; bad "$1" "exit $3, want $2"; return
    fi
    if [ -n "$4" ] && ! grep -q -- "$5" "$4"; then
        WHY_FILE=$4; bad "$1" "$4 lacks \"$5\""; return
    fi
    ok "$1"
}

echo 'import sys; print("out"); sys.exit(7)' > "$T/e.py"
$B run "$T/e.py" </dev/null >"$T/out" 2>"$T/err"; check exit_code_passthrough 7 $? "$T/out" '^out$'

$B run --timeout 1 "$T/e.py" --bogus </dev/null >"$T/out" 2>"$T/err"; check unknown_flag 2 $? "$T/err" 'unknown option "--bogus"'

$B run --timeout 99999 "$T/e.py" </dev/null >"$T/out" 2>"$T/err"
check timeout_above_ceiling 2 $? "$T/err" 'timeout: 99999 s is above the ceiling of 300 s (limits.max.timeout)'

$B run --memory lots "$T/e.py" </dev/null >"$T/out" 2>"$T/err"; check memory_not_a_number 2 $? "$T/err" 'memory: "lots" is not an integer'

$B run --lang cobol "$T/e.py" </dev/null >"$T/out" 2>"$T/err"; check unknown_language 2 $? "$T/err" 'lang: unknown language "cobol"'

echo 'x' > "$T/noext"
$B run "$T/noext" </dev/null >"$T/out" 2>"$T/err"; check no_language 2 $? "$T/err" 'pass --lang'

$B run "$T/missing.py" </dev/null >"$T/out" 2>"$T/err"; check missing_file 2 $? "$T/err" 'cannot open'

echo 'while True: pass' > "$T/spin.py"
$B run --timeout 1 "$T/spin.py" </dev/null >"$T/out" 2>"$T/err"; check timeout_status 124 $? "$T/err" 'timeout'

echo 'int main() { return x; }' > "$T/bad.cpp"
$B run "$T/bad.cpp" </dev/null >"$T/out" 2>"$T/err"; check compile_error_status 118 $? "$T/err" 'was not declared'

echo 'import sys; print(sys.stdin.read().upper(), end="")' > "$T/up.py"
echo hello | $B run "$T/up.py" >"$T/out" 2>"$T/err"; check stdin_piped 0 $? "$T/out" '^HELLO$'
echo file-input > "$T/in.txt"
$B run --stdin "$T/in.txt" "$T/up.py" </dev/null >"$T/out" 2>"$T/err"; check stdin_flag 0 $? "$T/out" '^FILE-INPUT$'

echo 'import sys; print(sys.argv[1:])' > "$T/args.py"
$B run "$T/args.py" -- a 'b c' </dev/null >"$T/out" 2>"$T/err"; check program_args 0 $? "$T/out" "\['a', 'b c'\]"

echo 'puts ENV["GREETING"]' | $B run --lang ruby --env GREETING=hi - >"$T/out" 2>"$T/err"; check code_from_stdin_env 0 $? "$T/out" '^hi$'

$B run --json "$T/e.py" </dev/null >"$T/out" 2>"$T/err"; rc=$?
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["status"]=="runtime_error" and d["exit_code"]==7 and d["stdout"]=="out\n", d' "$T/out" 2>"$T/err"; then
    check json_output 7 $rc
else
    check json_output valid-json invalid
fi

# the security check: scan exits 0/1 and names line and column; run
# refuses blocked code with 120 and runs nothing
printf 'import os\nos.system("rm -rf /")\n' > "$T/evil.py"
$B scan "$T/evil.py" >"$T/out" 2>"$T/err"; check scan_blocked 1 $? "$T/out" 'evil.py:2:1[0-9]*: high: destructive'
printf 's = "#"; import os\n' > "$T/hash.py"
$B scan --policy strict "$T/hash.py" >"$T/out" 2>"$T/err"; check scan_hash_in_string 1 $? "$T/out" 'hash.py:1:10: high: imports restricted module "os"'
$B scan "$T/hash.py" >"$T/out" 2>"$T/err"; check scan_safe 0 $? "$T/out" 'safe'
$B scan --policy lenient "$T/hash.py" >"$T/out" 2>"$T/err"; check scan_unknown_policy 2 $? "$T/err" 'not a preset'
$B run "$T/evil.py" </dev/null >"$T/out" 2>"$T/err"; check run_blocked 120 $? "$T/err" 'blocked by the security policy; nothing ran'
printf 'import os\nprint(os.environ.get("HOME"))\n' > "$T/env.py"
$B run "$T/env.py" </dev/null >"$T/out" 2>"$T/err"; check run_default_policy_allows 0 $? "$T/out" '^/tmp$'
$B run --policy production "$T/env.py" </dev/null >"$T/out" 2>"$T/err"; check run_policy_flag 120 $? "$T/err" 'low: reads or changes environment variables (production)'

# network for a job (run --network): the filtered egress network. Probes
# only this machine (a listener on all host addresses, via the bridge
# gateway and docker0) and the Debian package registry; private, shared and
# link-local ranges are checked as firewall rules, never with traffic.
lport=$((30000 + $$ % 20000))
socat TCP-LISTEN:$lport,bind=0.0.0.0,reuseaddr,fork SYSTEM:'echo hi' &
lpid=$!
cat > "$T/net.py" <<PYEOF
import socket
def probe(host, port):
    try:
        socket.create_connection((host, port), timeout=3).close()
        return "open"
    except OSError:
        return "blocked"
routes = [l.split() for l in open("/proc/net/route").read().split("\n")[1:] if l.strip()]
gw = routes[0][2] if routes else "0100007F"
gw = ".".join(str(int(gw[i:i+2], 16)) for i in (6, 4, 2, 0))
print("gateway", probe(gw, $lport), "docker0", probe("172.17.0.1", $lport), "registry", probe("deb.debian.org", 80))
PYEOF
$B run --network --timeout 20 "$T/net.py" </dev/null >"$T/out" 2>"$T/err"
check network_egress_filtered 0 $? "$T/out" '^gateway blocked docker0 blocked registry open$'
kill $lpid 2>/dev/null; wait $lpid 2>/dev/null
rules=0
for r in 10.0.0.0/8 172.16.0.0/12 192.168.0.0/16 169.254.0.0/16 100.64.0.0/10; do
    iptables -C DOCKER-USER -i llmsb-egress0 -d $r -j REJECT 2>/dev/null && rules=$((rules + 1))
done
iptables -C INPUT -i llmsb-egress0 -j REJECT 2>/dev/null && rules=$((rules + 1))
if [ "$rules" = 6 ]; then check network_rules_in_place 0 0; else echo "  rules found: $rules of 6"; check network_rules_in_place 6 $rules; fi
$B run "$T/net.py" </dev/null >"$T/out" 2>"$T/err"
check no_network_by_default 0 $? "$T/out" '^gateway blocked docker0 blocked registry blocked$'

# DOCKER_HOST=tcp://: the engine reached over TCP (socat forwards a loopback
# port to the unix socket), attach stream included.
port=$((20000 + $$ % 20000))
socat TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:/var/run/docker.sock &
socat_pid=$!
for _ in $(seq 1 30); do curl -fs "http://127.0.0.1:$port/_ping" >/dev/null 2>&1 && break; sleep 0.1; done
DOCKER_HOST=tcp://127.0.0.1:$port $B run "$T/e.py" </dev/null >"$T/out" 2>"$T/err"
check docker_host_tcp 7 $? "$T/out" '^out$'
DOCKER_HOST=tcp://127.0.0.1:1 $B run "$T/e.py" </dev/null >"$T/out" 2>"$T/err"
check docker_host_unreachable 3 $? "$T/err" 'is dockerd running'
kill $socat_pid 2>/dev/null; wait $socat_pid 2>/dev/null

# Output up to the protocol's 64 MiB comes back whole; past the limit the
# job ends output_limit and says it was cut (40 MiB came back "ok", 32 MiB,
# untruncated, before the agent's per-stream cap was made to show).
echo 'import sys; sys.stdout.write("x" * (40 << 20))' > "$T/big.py"
$B run --json --output 67108864 "$T/big.py" </dev/null >"$T/out" 2>"$T/err"; rc=$?
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert (r["status"], len(r["stdout"]), r["stdout_truncated"]) == ("ok", 40 << 20, False), (r["status"], len(r["stdout"]), r["stdout_truncated"])' "$T/out" 2>"$T/err"
check output_40mib_whole "0 0" "$rc $?"
echo 'import sys; sys.stdout.write("x" * (70 << 20))' > "$T/huge.py"
$B run --json --output 67108864 "$T/huge.py" </dev/null >"$T/out" 2>"$T/err"; rc=$?
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert (r["status"], len(r["stdout"]), r["stdout_truncated"]) == ("output_limit", 64 << 20, True), (r["status"], len(r["stdout"]), r["stdout_truncated"])' "$T/out" 2>"$T/err"
check output_past_the_cap_shows "121 0" "$rc $?"
printf 'limits:\n  max:\n    output: 100000000\n' > "$T/big.yaml"
$B run --config "$T/big.yaml" "$T/e.py" </dev/null >"$T/out" 2>"$T/err"
check output_bound_is_the_protocols 2 $? "$T/err" 'limits.max.output must be an integer between 1024 and 67108864'
printf 'artifacts:\n  max_total: 256\n' > "$T/art.yaml"
$B run --config "$T/art.yaml" "$T/e.py" </dev/null >"$T/out" 2>"$T/err"
check artifacts_bound_is_the_protocols 2 $? "$T/err" 'artifacts.max_total must be an integer between 1 and 48'

# Ctrl-C: the container goes away and the exit code says interrupted.
echo 'import time; print("up", flush=True); time.sleep(60)' > "$T/sleep.py"
: >"$T/err"; : >"$T/out" # empty before the background run starts: the loops below read them
$B run --timeout 120 "$T/sleep.py" </dev/null >"$T/out" 2>"$T/err" &
pid=$!
for _ in $(seq 1 50); do grep -q up "$T/out" 2>/dev/null && break; sleep 0.1; done
host=$(hostname)
before=$(curl -s --unix-socket /var/run/docker.sock "http://d/v1.41/containers/json?filters=%7B%22label%22%3A%5B%22llmsb.worker%3D$host-$pid%22%5D%7D" | grep -o '"Id"' | wc -l)
kill -INT $pid; wait $pid; rc=$?
after=$(curl -s --unix-socket /var/run/docker.sock "http://d/v1.41/containers/json?all=1&filters=%7B%22label%22%3A%5B%22llmsb.worker%3D$host-$pid%22%5D%7D" | grep -o '"Id"' | wc -l)
if [ "$before" = 1 ] && [ "$after" = 0 ]; then check ctrl_c_removes_container 130 $rc; else
    echo "  containers before=$before after=$after"; check ctrl_c_removes_container removed kept; fi

# --- submit checks the whole file before anything runs: every bad job with
# file:line, field and reason; duplicate ids; --allow-invalid runs the rest
cat > "$T/bad.yaml" <<'EOF'
defaults: {lang: python}
jobs:
  - {id: "HumanEval/0", code: "print(1)", expect_stdout: "1"}
  - {id: "HumanEval/0", code: "print(2)"}
  - {id: x, lang: cobol, code: "x"}
  - {id: y, code: "x", expected_stdout: "1"}
EOF
$B submit "$T/bad.yaml" --local --out "$T/bad.jsonl" </dev/null >"$T/out" 2>"$T/err"; rc=$?
if [ $rc = 2 ] && [ ! -e "$T/bad.jsonl" ] && grep -q 'bad.yaml:5: lang: unknown language "cobol"' "$T/err" &&
   grep -q 'bad.yaml:6: expected_stdout: unknown job field' "$T/err" &&
   grep -q 'bad.yaml:4: id "HumanEval/0" is also the id of the job at line 3' "$T/err" &&
   grep -q 'submit: 3 problem(s) in .*bad.yaml; nothing was run' "$T/err"; then check submit_checks_the_whole_file 0 0
else check submit_checks_the_whole_file "2 with every problem" "$rc"; fi
sed -i '4d' "$T/bad.yaml"  # the duplicate goes; the invalid jobs stay
$B submit "$T/bad.yaml" --local --allow-invalid --out "$T/bad.jsonl" </dev/null >"$T/out" 2>"$T/err"; rc=$?
if [ $rc = 1 ] && [ "$(grep -c '"status":"invalid"' "$T/bad.jsonl")" = 2 ] &&
   grep -q '"id":"HumanEval/0","status":"ok"' "$T/bad.jsonl" && grep -q 'total .* 100.0%' "$T/out"; then
    check submit_allow_invalid 0 0
else check submit_allow_invalid "1 with 2 invalid results" "$rc"; fi

# --- dataset ids: slashes, spaces, unicode; a directory per id with the
# path characters written %XX; exit 0 only when every job passed
cat > "$T/ids.yaml" <<'EOF'
defaults: {lang: python}
jobs:
  - {id: "HumanEval/7 ü", code: "open('o.txt','w').write('x'); print('hi')", expect_stdout: hi, artifacts: [o.txt]}
  - {id: "../up", code: "print(3)", expect_stdout: "3"}
EOF
$B submit "$T/ids.yaml" --local --artifacts "$T/arts" --out "$T/ids.jsonl" </dev/null >"$T/out" 2>"$T/err"; rc=$?
if [ $rc = 0 ] && [ -f "$T/arts/HumanEval%2F7 ü/o.txt" ] && grep -q '"id":"../up","status":"ok"' "$T/ids.jsonl" &&
   grep -q 'total .* 100.0%' "$T/out"; then check submit_dataset_ids 0 0
else ls -R "$T/arts" >"$T/err" 2>&1; check submit_dataset_ids "0 with HumanEval%2F7 ü/o.txt" "$rc"; fi

# --- test cases: a C++ program compiled once and run on 20 stdin cases; a
# job that expects a non-zero exit passes; stop_on_failure stops at the
# first case that does not pass, and the summary says how many passed
{
    printf '%s\n' 'jobs:'
    printf '%s\n' '  - id: "sq/20"'
    printf '%s\n' '    lang: cpp'
    printf '%s\n' '    code: "#include <iostream>\nint main(){long n; std::cin >> n; std::cout << n * n << std::endl;}"'
    printf '%s\n' '    cases:'
    for i in $(seq 1 20); do echo "      - {stdin: \"$i\", expect_stdout: \"$((i * i))\"}"; done
    printf '%s\n' '  - id: "exit/3"'
    printf '%s\n' '    lang: python'
    printf '%s\n' '    code: "import sys; print(sys.argv[1]); sys.exit(3)"'
    printf '%s\n' '    cases: [{args: ["x"], expect_stdout: "x  \n\n", expect_exit: 3}]'
    printf '%s\n' '  - id: "stop/1"'
    printf '%s\n' '    lang: python'
    printf '%s\n' '    code: "print(int(input()) + 1)"'
    printf '%s\n' '    stop_on_failure: true'
    printf '%s\n' '    cases: [{stdin: "1", expect_stdout: "2"}, {stdin: "2", expect_stdout: "4"}, {stdin: "3", expect_stdout: "4"}]'
} > "$T/cases.yaml"
$B submit "$T/cases.yaml" --local --out "$T/cases.jsonl" </dev/null >"$T/out" 2>"$T/err"; rc=$?
if [ $rc = 1 ] && python3 - "$T/cases.jsonl" >"$T/py" 2>&1 <<'PY2' && grep -q 'stop/1 .*: ok: 1 of 3 cases passed' "$T/out"; then check cases_compile_once_run_many 0 0
import json, sys
r = {j["id"]: j for j in map(json.loads, open(sys.argv[1]))}
sq, ex, st = r["sq/20"], r["exit/3"], r["stop/1"]
assert sq["status"] == "ok" and sq["passed"] and (sq["cases_passed"], sq["cases_total"]) == (20, 20), sq
assert [c["stdout"] for c in sq["cases"]] == ["%d\n" % (i * i) for i in range(1, 21)], sq["cases"]
assert all(c["passed"] and c["status"] == "ok" for c in sq["cases"]), sq["cases"]
assert ex["status"] == "runtime_error" and ex["passed"] and ex["exit_code"] == 3, ex
assert st["passed"] is False and len(st["cases"]) == 2 and st["cases_total"] == 3, st
assert st["stdout"] == "3\n" and st["cases"][1]["passed"] is False, st
PY2
else cat "$T/py" "$T/out" >>"$T/err"; check cases_compile_once_run_many "1 with sq/20 and exit/3 passed" "$rc"; fi

# --- compare: float judges each case in the agent by the documented number
# grammar: decimal only (0x10 is not 16), overflow and Infinity are inf;
# integers too big for a double (10**400) compare by value, not as inf
big1=$(python3 -c 'print(10**400)'); big2=$(python3 -c 'print(2 * 10**400)')
cat > "$T/fl.yaml" <<EOF
jobs:
  - id: fl
    lang: python
    compare: float
    code: "print(input())"
    cases: [{stdin: "0x10", expect_stdout: "16"}, {stdin: "Infinity 1e999 NaN", expect_stdout: "inf inf nan"},
            {stdin: "$big1", expect_stdout: "$big2"}, {stdin: "$big1", expect_stdout: "1e400"}]
EOF
$B submit "$T/fl.yaml" --local --out "$T/fl.jsonl" </dev/null >"$T/out" 2>"$T/err"; rc=$?
if python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read()); assert [c["passed"] for c in d["cases"]] == [False, True, False, True], d["cases"]' "$T/fl.jsonl" 2>>"$T/err"; then
    check float_cases_read_decimal_numbers 1 $rc
else check float_cases_read_decimal_numbers "cases [false, true, false, true]" "$rc"; fi

# --- Java runs with assertions on (-ea), as test harnesses expect
printf '%s\n' 'public class Main { public static void main(String[] a) { assert 1 > 2 : "asserts on"; System.out.println("off"); } }' > "$T/Main.java"
$B run "$T/Main.java" </dev/null >"$T/out" 2>"$T/err"; check java_assertions_on 1 $? "$T/err" 'AssertionError: asserts on'

# --- Java names of any length a file name holds: a 130-byte class (no public)
# in a 159-byte package runs as written
jname=$(python3 -c 'print("C" * 130)'); jpkg=$(python3 -c 'print(".".join(["p" * 9] * 16))')
printf 'package %s;\nclass %s { public static void main(String[] a) { System.out.println("long names"); } }\n' "$jpkg" "$jname" > "$T/long.java"
$B run "$T/long.java" </dev/null >"$T/out" 2>"$T/err"; check java_long_names 0 $? "$T/out" '^long names$'

# --- Go: a package other than main is a compile_error that says so (not a
# program that cannot start); a go_test file runs under `go test` with
# testify from the image; its exit code is the verdict
printf 'package solution\n\nfunc F() int { return 1 }\n' > "$T/lib.go"
$B run "$T/lib.go" </dev/null >"$T/out" 2>"$T/err"; check go_library_package_is_compile_error 118 $? "$T/err" 'is package solution, not package main'
cat > "$T/t_test.go" <<'EOF'
package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func Double(x int) int { return 2 * x }

func TestDouble(t *testing.T) { assert.Equal(t, 4, Double(2)) }
func TestWrong(t *testing.T)  { assert.Equal(t, 5, Double(2), "wrong on purpose") }
EOF
$B run --lang go_test "$T/t_test.go" -- -test.run 'TestDouble$' -test.v </dev/null >"$T/out" 2>"$T/err"
check go_test_passes_with_testify 0 $? "$T/out" '--- PASS: TestDouble'
$B run --lang go_test "$T/t_test.go" </dev/null >"$T/out" 2>"$T/err"
check go_test_failure_is_runtime_error 1 $? "$T/out" 'wrong on purpose'
printf 'package main\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc TestLeaves(t *testing.T) { os.Exit(0); t.Fatal("never") }\n' > "$T/x_test.go"
$B run --lang go_test "$T/x_test.go" </dev/null >"$T/out" 2>"$T/err"
check go_test_exit_0_before_the_end_fails 2 $? "$T/err" 'unexpected call to os.Exit(0) during test'

# --- Java: the image's jars (javatuples) are on the class path
printf '%s\n' 'import org.javatuples.Pair;' 'public class Main { public static void main(String[] a) { System.out.println(Pair.with(1, "x")); } }' > "$T/Main.java"
$B run "$T/Main.java" </dev/null >"$T/out" 2>"$T/err"; check java_javatuples_on_class_path 0 $? "$T/out" '^\[1, x\]$'

# --- Java as MultiPL-E and CRUXEval-X write it: `class Problem` without
# public, javatuples imported; it runs by the class that declares main, in
# a run and in a job with cases.  A file without main is a compile_error
# saying why.
cat > "$T/problem.java" <<'EOF'
import java.util.*;
import org.javatuples.*;

class Problem {
    public static Pair<Long, String> f(ArrayList<Long> xs) {
        return Pair.with(xs.stream().mapToLong(Long::longValue).sum(), "sum");
    }
    public static void main(String[] args) {
        assert(f((new ArrayList<Long>(Arrays.asList((long)1l, (long)2l)))).equals((Pair.with(3l, "sum"))));
        System.out.println(f(new ArrayList<Long>(Arrays.asList(4L))));
    }
}
EOF
$B run "$T/problem.java" </dev/null >"$T/out" 2>"$T/err"; check java_class_problem_without_public 0 $? "$T/out" '^\[4, sum\]$'
{
    printf '%s\n' 'jobs:' '  - id: jcases' '    lang: java' '    code: |'
    printf '      %s\n' 'import java.util.Scanner;' 'class Problem { public static void main(String[] a) {' \
        '  System.out.println(new Scanner(System.in).nextInt() * 2); } }'
    printf '%s\n' '    cases: [{stdin: "1", expect_stdout: "2"}, {stdin: "21", expect_stdout: "42"}]'
} > "$T/jcases.yaml"
$B submit "$T/jcases.yaml" --local --out "$T/jcases.jsonl" </dev/null >"$T/out" 2>"$T/err"; rc=$?
if python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read()); assert d["passed"] and d["cases_passed"] == 2, d' "$T/jcases.jsonl" 2>>"$T/err"; then
    check java_class_problem_with_cases 0 $rc
else check java_class_problem_with_cases "2 cases passed" "$rc"; fi
printf '%s\n' 'class Problem { static int f() { return 1; } }' > "$T/nomain.java"
$B run "$T/nomain.java" </dev/null >"$T/out" 2>"$T/err"
check java_without_main_is_compile_error 118 $? "$T/err" 'no top-level class declares `public static void main(String\[\] args)`'

# --- C++: compile_flags and link_flags reach g++ (C++20, OpenSSL); a flag
# naming a path is refused before anything runs
cat > "$T/fl.yaml" <<'EOF'
jobs:
  - id: c20
    lang: cpp
    compile_flags: ["-std=c++20"]
    link_flags: ["-lcrypto"]
    code: |
      #include <openssl/sha.h>
      #include <cstdio>
      #include <span>
      int main() { unsigned char d[20]; SHA1((const unsigned char *)"abc", 3, d); std::span<unsigned char> s(d, 20); std::printf("%02x%02x\n", s[0], s[1]); }
    expect_stdout: "a999"
EOF
$B submit "$T/fl.yaml" --local --wait >"$T/out" 2>"$T/err"; check cpp_compile_and_link_flags 0 $? "$T/out" '100.0%'
printf 'jobs:\n  - {id: p, lang: cpp, code: "int main(){}", compile_flags: ["-I/etc"]}\n' > "$T/fp.yaml"
$B submit "$T/fp.yaml" --local >"$T/out" 2>"$T/err"; check cpp_path_flag_refused 2 $? "$T/err" 'compile_flags: "-I/etc" is not allowed'

# --- pass@k: samples grouped into tasks by the id less "#N" or meta.task_id
# (never by "/N"), the unbiased estimator per task, the mean over tasks,
# --report as JSON and Markdown
cat > "$T/pk.yaml" <<'EOF'
defaults: {lang: python, expect_stdout: "1"}
jobs:
  - {id: "T/1#0", code: "print(1)"}
  - {id: "T/1#1", code: "print(1)"}
  - {id: "T/1#2", code: "print(2)"}
  - {id: "T/2#0", code: "print(0)"}
  - {id: "T/2#1", code: "print(0)"}
  - {id: "m-a", code: "print(1)", meta: {task_id: "T/3"}}
  - {id: "m-b", code: "print(1)", meta: {task_id: "T/3"}}
EOF
$B submit "$T/pk.yaml" --local --report "$T/pk.json" </dev/null >"$T/out" 2>"$T/err"; rc=$?
if [ $rc = 1 ] && grep -q '^total  *3  *7  *0.5556 ' "$T/out" && grep -q '| python | T/1 | 3 | 2 | 0.6667 |' "$T/pk.json.md" &&
   python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert abs(d["total"]["pass@1"] - 5/9) < 1e-9 and d["total"]["pass@10"] is None and [(t["task"], t["n"], t["c"]) for t in d["tasks"]] == [("T/1", 3, 2), ("T/2", 2, 0), ("T/3", 2, 2)], d' "$T/pk.json" 2>>"$T/err"; then
    check passk_by_task_and_report 0 0
else cat "$T/out" >>"$T/err"; check passk_by_task_and_report "1 with pass@1 0.5556 over 3 tasks" "$rc"; fi

# --- the README's example of cases and pass@k does what its comment says
$B submit examples/cases.yaml --local --report "$T/ex.json" </dev/null >"$T/out" 2>"$T/err"; rc=$?
if [ $rc = 1 ] && grep -q '^python  *1  *3  *0.6667 ' "$T/out" && grep -q '^cpp  *1  *1  *1.0000 ' "$T/out" &&
   grep -q 'add#2 .*: ok: 0 of 2 cases passed' "$T/out" && [ -s "$T/ex.json.md" ]; then check example_cases_yaml 0 0
else cat "$T/out" >>"$T/err"; check example_cases_yaml "1 with python pass@1 0.6667" "$rc"; fi

# --- submit --local cut short by Ctrl-C or --timeout keeps what finished:
# the summary, --out with the unfinished as not_finished, exit 130 / 124,
# and no container of this run left (counted by its own worker label)
own_containers() {  # own_containers PID -> containers labelled with that run
    curl -s --unix-socket /var/run/docker.sock "http://d/v1.41/containers/json?all=1&filters=%7B%22label%22%3A%5B%22llmsb.worker%3D$(hostname)-$1%22%5D%7D" | grep -o '"Id"' | wc -l
}
cat > "$T/stop.yaml" <<'EOF'
defaults: {lang: python, timeout: 60}
jobs:
  - {id: quick, code: "print(1)", expect_stdout: "1"}
  - {id: slow1, code: "import time; time.sleep(60)"}
  - {id: slow2, code: "import time; time.sleep(60)"}
  - {id: slow3, code: "import time; time.sleep(60)"}
EOF
: >"$T/err"; : >"$T/out" # empty before the background run starts: the loops below read them
$B submit "$T/stop.yaml" --local --no-dedup --slots 2 --out "$T/stop.jsonl" </dev/null >"$T/out" 2>"$T/err" &
pid=$!; tp=$(date +%s)
for _ in $(seq 1 300); do grep -q 'progress: 1/4' "$T/err" 2>/dev/null && break; sleep 0.1; done
tp=$(( $(date +%s) - tp ))
for _ in $(seq 1 50); do [ "$(own_containers $pid)" -ge 2 ] && break; sleep 0.1; done
before=$(own_containers $pid); t0=$(date +%s)
kill -INT $pid; wait $pid; rc=$?; took=$(( $(date +%s) - t0 ))
after=$(own_containers $pid)
if [ "$rc" = 130 ] && [ "$before" -ge 1 ] && [ "$after" = 0 ] && [ "$took" -le 5 ] &&
   grep -q '^not_finished  *3$' "$T/out" && grep -q 'slow1 (.*stop.yaml:4): not finished' "$T/out" &&
   grep -q 'interrupted with 3 of 4 jobs unfinished' "$T/err" &&
   [ "$(jq -r '"\(.id) \(.status)"' "$T/stop.jsonl" 2>/dev/null | tr '\n' ,)" = "quick ok,slow1 not_finished,slow2 not_finished,slow3 not_finished," ]; then
    check submit_local_ctrl_c_keeps_results 0 0
else
    echo "  rc=$rc containers before=$before after=$after, ${took}s (quick done after ${tp}s); out: $(tr '\n' '|' <"$T/out" | head -c 400); --out: $(tr '\n' '|' <"$T/stop.jsonl" 2>&1 | head -c 300)"
    check submit_local_ctrl_c_keeps_results "130 with summary and --out" "$rc"
fi

# Ctrl-C while the sandboxes start, on a job's last attempt: not finished,
# never an internal_error the stop made
cat > "$T/start.yaml" <<'EOF'
defaults: {lang: python, timeout: 60, max_attempts: 1}
jobs:
  - {id: s1, code: "import time; time.sleep(60)"}
  - {id: s2, code: "import time; time.sleep(60)"}
EOF
: >"$T/err"; : >"$T/out" # empty before the background run starts: the loops below read them
$B submit "$T/start.yaml" --local --slots 2 --out "$T/start.jsonl" </dev/null >"$T/out" 2>"$T/err" &
pid=$!
for _ in $(seq 1 300); do [ "$(own_containers $pid)" -ge 1 ] && break; sleep 0.02; done
kill -INT $pid; wait $pid; rc=$?
got=$(jq -r '"\(.id) \(.status)"' "$T/start.jsonl" 2>/dev/null | tr '\n' ,)
if [ "$rc" = 130 ] && [ "$got" = "s1 not_finished,s2 not_finished," ]; then check submit_local_ctrl_c_while_starting 0 0
else echo "  rc=$rc --out: $got"; check submit_local_ctrl_c_while_starting "130, both not_finished" "$rc"; fi

t0=$(date +%s)
: >"$T/err"; : >"$T/out" # empty before the background run starts: the loops below read them
$B submit "$T/stop.yaml" --local --slots 2 --timeout 3 --out "$T/stop.jsonl" </dev/null >"$T/out" 2>"$T/err" &
pid=$!; wait $pid; rc=$?; took=$(( $(date +%s) - t0 ))
after=$(own_containers $pid)
if [ "$rc" = 124 ] && [ "$took" -le 8 ] && [ "$after" = 0 ] && grep -q '^not_finished  *3$' "$T/out" &&
   grep -q -- '--timeout reached with 3 of 4 jobs unfinished' "$T/err" &&
   [ "$(jq -r '"\(.id) \(.status)"' "$T/stop.jsonl" 2>/dev/null | tr '\n' ,)" = "quick ok,slow1 not_finished,slow2 not_finished,slow3 not_finished," ]; then
    check submit_local_timeout 0 0
else
    echo "  rc=$rc after ${took}s, containers left=$after; out: $(tr '\n' '|' <"$T/out" | head -c 400)"
    check submit_local_timeout "124 within 8 s" "$rc"
fi

# --- submit --wait (through Redis, no worker: nothing finishes) keeps the
# same promise: --timeout and Ctrl-C print the summary and write --out
RPORT=$((18400 + $$ % 1000))
if redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
       --pidfile "$T/redis.pid" --logfile "$T/redis.log" >/dev/null 2>&1; then
    for _ in $(seq 1 50); do redis-cli -p "$RPORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
    RURL=redis://127.0.0.1:$RPORT
    $B submit "$T/stop.yaml" --redis "$RURL" --prefix wt1 --wait --timeout 2 --out "$T/w.jsonl" </dev/null >"$T/out" 2>"$T/err"; rc=$?
    if [ "$(jq -r .status "$T/w.jsonl" 2>/dev/null | sort -u)" = not_finished ] && grep -q '^not_finished  *4$' "$T/out"; then
        check submit_wait_timeout 124 $rc; else check submit_wait_timeout "124 with summary and --out" "$rc"; fi
    : >"$T/err"; : >"$T/out" # empty before the background run starts: the loops below read them
    $B submit "$T/stop.yaml" --redis "$RURL" --prefix wt2 --wait --out "$T/w.jsonl" </dev/null >"$T/out" 2>"$T/err" &
    pid=$!
    for _ in $(seq 1 50); do grep -q submitted "$T/err" 2>/dev/null && break; sleep 0.1; done
    sleep 0.3
    kill -INT $pid; wait $pid; rc=$?
    if [ "$(jq -r .status "$T/w.jsonl" 2>/dev/null | sort -u)" = not_finished ] && grep -q '^not_finished  *4$' "$T/out"; then
        check submit_wait_ctrl_c 130 $rc; else check submit_wait_ctrl_c "130 with summary and --out" "$rc"; fi
    # Redis refusing a command while submit looks for ids that already have
    # a result (here HGET, by its ACL) is the infrastructure failing (exit
    # 3), not a bad file (2): nothing was enqueued
    redis-cli -p "$RPORT" acl setuser default -hget >/dev/null
    $B submit "$T/stop.yaml" --redis "$RURL" --prefix wt3 </dev/null >"$T/out" 2>"$T/err"
    check submit_redis_refusal_is_internal 3 $? "$T/err" 'error: .*NOPERM'
    [ "$(redis-cli -p "$RPORT" xlen wt3:jobs)" = 0 ] || check submit_redis_refusal_sent_nothing 0 1
    redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1
else
    check submit_wait_redis "redis-server started" "not started"
fi

suite_end
