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
# header (or keep what it said, when the plain compile has output: a
# warning), "reused-" ones (errors and warnings in the program's own lines)
# keep the attempt's output and compile once, "fallback-" ones (an include
# chain in what it said) try it and fall back, the rest never try.
#   usage: tests/compile-cache/cpp.sh [all]
# Without "all" (CI), one HumanEval-X program of each distinct leading
# include sequence (every cached set and the ones without a set) runs;
# with it (make test-cpp-cache-all), all 164.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
B=${LLMSB_BIN:-$PWD/bin/llm-sandbox}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
suite cpp_cache
# run_three: the plain, cached and trace runs of differ.py's job files
. tests/compile-cache/run-three.sh

"$B" convert tests/eval/data/humaneval-x/humaneval_cpp.jsonl --out "$T/he.jsonl" 2>"$T/err" ||
    bad convert "$(cat "$T/err")"

# the jobs, and what each should do (ID PATH) in $T/expect (differ.py)
python3 - "$T" "${1:-}" languages/hooks/cpp-pch.list <<'EOF' ||
import json, re, sys
T, every, plist = sys.argv[1:]
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
with open(T + "/jobs.jsonl", "w") as f:
    for j in jobs:
        f.write(json.dumps(j) + "\n")
with open(T + "/expect", "w") as f:
    for i, e in expect:
        f.write("%s %s\n" % (i, e))
EOF
    bad prepare "the job files"
python3 tests/compile-cache/differ.py write "$T" tests/compile-cache/cpp-corpus.yaml ||
    bad prepare "the corpus"

run_three

python3 tests/compile-cache/differ.py compare "$T" '(cached|reused|fallback) \d+|plain' cached --said=reused >"$T/diff.out" 2>&1
rc=$?
grep -v '^FAIL' "$T/diff.out" | sed 's/^/  /'
grep '^FAIL' -A2 "$T/diff.out" | head -40
[ $rc = 0 ] && ok "same_results_both_ways_and_each_path_taken" ||
    bad same_results_both_ways_and_each_path_taken "see above"

suite_end
