#!/bin/bash
# cpp.sh - the C++ compile cache (languages/hooks/cpp-build: precompiled
# headers for a program's leading #include lines) against the plain g++
# command, on the real engine: tests/compile-cache/cpp-corpus.yaml (compile
# errors in the program and inside a std template, warnings, a runtime
# error, an exception, a timeout, no main, a #define between the includes,
# one header more than a cached set, a comment first, compile and link
# flags, GCC's variables in the env...) and HumanEval-X's C++ reference
# solutions, each run with the cache and with LLMSB_COMPILE_CACHE=0; every
# result field but the timings must be equal. A third run with
# LLMSB_COMPILE_CACHE_TRACE=- (cpp-build's trace in
# compile_output, so this run is not compared) checks that each program
# took the path it should: "cached-" ids and the HumanEval-X programs whose
# flags and header sequence cpp-pch.list names compile with the precompiled
# header (or fall back, when the plain compile has output: a warning),
# "fallback-" ones try it and fall back, the rest never try.
#   usage: tests/compile-cache/cpp.sh [all]
# Without "all" (CI), one HumanEval-X program of each distinct leading
# include sequence (every cached set and the ones without a set) runs;
# with it (make test-cpp-cache-all), all 164.
set -u
cd "$(dirname "$0")/../.."
B=${LLMSB_BIN:-$PWD/bin/llm-sandbox}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok() { echo "ok   cpp_cache.$1"; pass=$((pass + 1)); }
bad() { echo "FAIL cpp_cache.$1: $2"; fail=$((fail + 1)); }

"$B" convert tests/eval/data/humaneval-x/humaneval_cpp.jsonl --out "$T/he.jsonl" 2>"$T/err" ||
    bad convert "$(cat "$T/err")"

# the three job files, and what each job should do (ID PATH) in $T/expect
python3 - "$T" "${1:-}" languages/hooks/cpp-pch.list tests/compile-cache/cpp-corpus.yaml <<'EOF' ||
import json, re, sys, yaml
T, every, plist, corpus = sys.argv[1:]
sets = set()
for line in open(plist):
    if line.strip() and not line.lstrip().startswith("#"):
        flags, hdrs = line.split("|")
        sets.add((" ".join(flags.split()), " ".join(hdrs.split())))

def prefix(code):
    seq = []
    for line in code.split("\n"):
        if line == "":
            continue
        m = re.fullmatch(r"#include ?<([A-Za-z0-9_./+-]+)>", line)
        if not m or ".." in m.group(1):
            break
        seq.append(m.group(1))
    return " ".join(seq)

jobs, expect, seen = [], [], set()
for line in open(T + "/he.jsonl"):
    j = json.loads(line)
    seq = prefix(j["code"])
    if every != "all" and seq in seen:
        continue
    seen.add(seq)
    flags = " ".join(["-std=c++17", "-O2", "-pipe"] + j.get("compile_flags", []))
    jobs.append(j)
    expect.append((j["id"], "cached" if (flags, seq) in sets else "plain"))
doc = yaml.safe_load(open(corpus))
for c in doc["jobs"]:
    j = dict(doc.get("defaults", {}))
    j.update(c)
    jobs.append(j)
    expect.append((j["id"], j["id"].split("-")[0]))

def write(name, env):
    with open("%s/%s.jsonl" % (T, name), "w") as f:
        for j in jobs:
            j = dict(j)
            if env:
                j["env"] = dict(j.get("env", {}), **env)
            f.write(json.dumps(j) + "\n")
write("cached", None)
write("plain", {"LLMSB_COMPILE_CACHE": "0"})
write("trace", {"LLMSB_COMPILE_CACHE_TRACE": "-"})
with open(T + "/expect", "w") as f:
    for i, e in expect:
        f.write("%s %s\n" % (i, e))
print("%d jobs: %d HumanEval-X, %d of the corpus" % (len(jobs), len(jobs) - len(doc["jobs"]),
                                                    len(doc["jobs"])))
EOF
    bad prepare "the job files"

for mode in plain cached trace; do
    "$B" submit "$T/$mode.jsonl" --local --slots 2 --out "$T/$mode.out" >"$T/$mode.log" 2>&1
    rc=$?
    if [ "$rc" -gt 1 ] || [ ! -s "$T/$mode.out" ]; then
        bad "run_$mode" "exit $rc: $(tail -5 "$T/$mode.log")"
    fi
done

python3 - "$T" >"$T/diff.out" 2>&1 <<'EOF'
import json, re, sys
T = sys.argv[1]
# the timings (and where the job ran) may differ; nothing else may
TIMES = re.compile(r"(_at|_ms|_kb)$|^(worker|attempts)$")

def load(name):
    with open("%s/%s.out" % (T, name)) as f:
        return {r["id"]: r for r in map(json.loads, f)}

failed = 0
plain, cached, trace = load("plain"), load("cached"), load("trace")
expect = dict(l.split() for l in open(T + "/expect"))
if set(plain) != set(expect) or set(cached) != set(expect) or set(trace) != set(expect):
    print("FAIL: the runs have different ids")
    sys.exit(1)
paths = {}
took = {"cached": [], "plain": []}
for i, want in expect.items():
    a, b = plain[i], cached[i]
    for f in sorted(set(a) | set(b)):
        if not TIMES.search(f) and a.get(f) != b.get(f):
            print("FAIL %s: %s differs:\n  plain:  %.600r\n  cached: %.600r" % (i, f, a.get(f), b.get(f)))
            failed += 1
    got = [l for l in (trace[i].get("compile_output") or "").split("\n")
           if re.fullmatch(r"(cached|fallback) \d+|plain", l)]
    path = got[-1].split()[0] if len(got) == 1 else "?%r" % got
    if want == "cached" and a.get("compile_output"):
        want = "fallback" # the compile says something (OpenSSL's deprecations)
    paths[path] = paths.get(path, 0) + 1
    if path != want:
        print("FAIL %s: cpp-build took %s, should take %s" % (i, path, want))
        failed += 1
    if want == "cached" and a.get("finished_at") and b.get("finished_at"):
        for m, r in (("plain", a), ("cached", b)):
            took[m].append(r["finished_at"] - r["started_at"] - (r.get("duration_ms") or 0))
statuses = {}
for r in cached.values():
    statuses[r.get("status")] = statuses.get(r.get("status"), 0) + 1
print("%d jobs, statuses %s; paths %s" % (len(expect), statuses, paths))
if took["plain"]:
    print("compile and the rest, the cached-path jobs: %d ms plain, %d ms cached" %
          (sum(took["plain"]), sum(took["cached"])))
sys.exit(1 if failed else 0)
EOF
rc=$?
grep -v '^FAIL' "$T/diff.out" | sed 's/^/  /'
grep '^FAIL' -A2 "$T/diff.out" | head -40
[ $rc = 0 ] && ok "same_results_both_ways_and_each_path_taken" ||
    bad same_results_both_ways_and_each_path_taken "see above"

echo "cpp_cache: $pass passed, $fail failed"
[ "$fail" = 0 ]
