#!/bin/bash
# ts.sh - the TypeScript fast compile (languages/hooks/tsc-fast: tsc.js's
# own command line in a node started from a snapshot with the default libs
# parsed and bound) against the plain `tsc --target esnext main.ts`, on the
# real engine: tests/compile-cache/ts-corpus.yaml (passing programs, type
# and syntax errors, several errors in one file, a missing semicolon,
# unicode, a program that emits with errors, a runtime error, a timeout, an
# import of a module that does not exist, declare var require, programs
# that redeclare or augment the libs' globals, a stale main.js, a
# tsconfig.json, tsc's variables in the env, a small memory limit), a very
# long file (made here) and MultiPL-E's TypeScript rows
# (tests/eval/data/multipl-e: the samples of humaneval-ts-reworded.jsonl
# and test_inputs' completions), each run with the fast path and with
# LLMSB_COMPILE_CACHE=0; every result field but the timings must be equal.
# A third run with LLMSB_COMPILE_CACHE_TRACE=- (tsc-fast's trace in
# compile_output, so this run is not compared) checks that each program
# took the path it should: "fast" for the MultiPL-E programs, the long file
# and the corpus's "fast-" ids (whatever tsc says of them), "plain" for the
# "plain-" ones.
#   usage: tests/compile-cache/ts.sh
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
B=${LLMSB_BIN:-$PWD/bin/llm-sandbox}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
suite ts_fast_compile
# run_three: the plain, cached and trace runs of differ.py's job files
. tests/compile-cache/run-three.sh

M=tests/eval/data/multipl-e
"$B" convert $M/humaneval-ts-reworded.jsonl --samples $M/samples/ts.jsonl --out "$T/mpe.jsonl" 2>"$T/err" &&
    "$B" convert $M/test_inputs/ts-davinci-0.2-keep-HumanEval53.json --out "$T/mpe2.jsonl" 2>"$T/err" ||
    bad convert "$(cat "$T/err")"

# the jobs, and the path each should take (ID PATH) in $T/expect (differ.py)
python3 - "$T" <<'EOF2' || bad prepare "the job files"
import json, sys
T = sys.argv[1]
jobs = [json.loads(l) for l in open(T + "/mpe.jsonl")]
for l in open(T + "/mpe2.jsonl"): # the same tasks: ids of their own
    j = json.loads(l)
    jobs.append(dict(j, id="test_inputs/" + j["id"]))
# a very long file: 1500 typed functions, a class, and one error at the end
parts = ["declare var require: any;\nconst assert = require('node:assert');\n"]
for i in range(1500):
    parts.append("function f%d(xs: number[], k: string): [string, number] {\n"
                 "  const m = new Map<string, number>(xs.map((x, j) => [k + j, x * %d]));\n"
                 "  return [k.repeat(%d %% 3), [...m.values()].reduce((a, b) => a + b, 0)];\n}\n"
                 % (i, i, i))
parts.append("assert.deepEqual(f7([1, 2], 'a'), ['a', 21]);\nconst last: number = f1499([], '');\n")
jobs.append({"id": "long-file", "lang": "typescript", "timeout": 30, "code": "".join(parts)})
with open(T + "/jobs.jsonl", "w") as f:
    for j in jobs:
        f.write(json.dumps(j) + "\n")
with open(T + "/expect", "w") as f:
    for j in jobs:
        f.write("%s fast\n" % j["id"])
EOF2
python3 tests/compile-cache/differ.py write "$T" tests/compile-cache/ts-corpus.yaml ||
    bad prepare "the corpus"

run_three
# node's pid in its warnings ("(node:50) Warning: ...") is the container's
# count of processes so far, whichever way the job compiled
for mode in plain cached trace; do
    [ -s "$T/$mode.out" ] && sed -i 's/(node:[0-9]*)/(node:PID)/g' "$T/$mode.out"
done

python3 tests/compile-cache/differ.py compare "$T" 'fast \d+|fallback|plain' fast --said=fast >"$T/diff.out" 2>&1
rc=$?
grep -v '^FAIL' "$T/diff.out" | sed 's/^/  /'
grep '^FAIL' -A2 "$T/diff.out" | head -40
[ $rc = 0 ] && ok "same_results_both_ways_and_each_path_taken" ||
    bad same_results_both_ways_and_each_path_taken "see above"

suite_end
