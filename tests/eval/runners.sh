#!/bin/sh
# runners.sh - convert's Python runners against the early exits and stray
# writes its harnesses count as failures, with no engine: each job `convert`
# writes is run here with the local python3 (its code as main.py, its files
# beside it, each case's stdin), and must pass or fail as the benchmark's own
# harness decides (a program that leaves by os._exit(0) before its tests
# finished, output written around the captured stdout).  A job passes when
# every run exits 0 and its stdout has the expected tokens.  Part of make unit.
B=${LLMSB_BIN:-bin/llm-sandbox}
D=$(dirname "$0")/data
. "$(dirname "$0")/../lib.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
suite runners

# NAME WANT ARGS...: convert ARGS; WANT is one letter a job, p pass, f fail
check() {
    name=$1; want=$2; shift 2
    if ! $B convert "$@" --out "$T/$name.jobs" 2>"$T/err"; then
        bad "$name" "convert failed: $(cat "$T/err")"
        return
    fi
    if got=$(python3 - "$T/$name.jobs" "$T" 2>"$T/err" <<'PY'
import json, os, subprocess, sys, tempfile
verdicts = ""
for line in open(sys.argv[1]):
    job = json.loads(line)
    d = tempfile.mkdtemp(dir=sys.argv[2])
    with open(os.path.join(d, "main.py"), "w") as f:
        f.write(job["code"])
    for k, v in job.get("files", {}).items():
        with open(os.path.join(d, k), "w") as f:
            f.write(v)
    cases = job.get("cases") or [{"stdin": job.get("stdin", ""), "expect_stdout": job.get("expect_stdout")}]
    good = True
    for c in cases:
        p = subprocess.run([sys.executable, "main.py"] + job.get("args", []), cwd=d, timeout=30,
                           input=c.get("stdin", "").encode(), capture_output=True)
        want = c.get("expect_stdout")
        if p.returncode != 0 or (want is not None and p.stdout.decode().split() != want.split()):
            good = False
            break
    verdicts += "p" if good else "f"
print(verdicts)
PY
    ) && [ "$got" = "$want" ]; then
        ok "$name"
    else
        bad "$name" "verdicts $got, want $want $(tail -3 "$T/err")"
    fi
}

# HumanEval/0: the canonical solution, os._exit(0) in the completion, a
# completion whose multiprocessing child exits by os._exit as always
python3 - "$D/humaneval.jsonl" >"$T/he.jsonl" <<'PY'
import json, sys
row = json.loads(open(sys.argv[1]).readline())
sol = row["canonical_solution"]
mp = ("    import multiprocessing\n    p = multiprocessing.Process(target=len, args=((),))\n"
      "    p.start(); p.join()\n" + sol)
for c in ("    import os; os._exit(0)\n", "    import posix; posix._exit(3)\n", mp,
          "    try:\n        __import__('os')._exit(0)\n    except BaseException:\n        pass\n" + sol,
          sol):
    print(json.dumps({"task_id": row["task_id"], "completion": c}))
PY
head -1 "$D/humaneval.jsonl" >"$T/he_row.jsonl"
check humaneval_exit ffpfp "$T/he_row.jsonl" --samples "$T/he.jsonl"

# CRUXEval output prediction: an answer that leaves by os._exit(0)
head -1 "$D/cruxeval/cruxeval.jsonl" >"$T/crux.jsonl"
python3 - "$T/crux.jsonl" >"$T/crux_gen.json" <<'PY'
import json, sys
row = json.loads(open(sys.argv[1]).readline())
print(json.dumps({row["id"]: ["__import__('os')._exit(0)", row["output"]]}))
PY
check crux_exit fp "$T/crux.jsonl" --mode output --samples "$T/crux_gen.json"

# LiveCodeBench: a functional solution leaving by os._exit(0), two whose
# state carries from one test to the next (the checker builds the module
# and its Solution() once); a stdin one writing around the captured stdout
# (os.write, sys.__stdout__)
cat >"$T/lcb.jsonl" <<'J'
{"question_id": "q1", "question_title": "t", "public_test_cases": "[{\"input\": \"[1, 2]\", \"output\": \"3\", \"testtype\": \"functional\"}, {\"input\": \"[2, 2]\", \"output\": \"4\", \"testtype\": \"functional\"}]", "private_test_cases": "", "metadata": "{\"func_name\": \"add\"}", "difficulty": "easy", "platform": "leetcode", "contest_id": "c", "contest_date": "2024"}
{"question_id": "q2", "question_title": "t", "public_test_cases": "[{\"input\": \"5\\n\", \"output\": \"5\\n\", \"testtype\": \"stdin\"}]", "private_test_cases": "", "metadata": "{}", "difficulty": "easy", "platform": "atcoder", "contest_id": "c", "contest_date": "2024"}
J
cat >"$T/lcb_s.json" <<'J'
[{"question_id": "q1", "code_list": ["class Solution:\n    def add(self, a):\n        import os; os._exit(0)\n", "class Solution:\n    def add(self, a):\n        return sum(a)\n", "seen = []\nclass Solution:\n    def add(self, a):\n        seen.append(1)\n        return sum(a) if len(seen) == 1 else 0\n", "class Solution:\n    def __init__(self):\n        self.n = 0\n    def add(self, a):\n        self.n += 1\n        return sum(a) if self.n == 1 else 0\n"]},
 {"question_id": "q2", "code_list": ["import os\nos.write(1, input().encode() + b'\\n')\n", "import sys\nprint(input(), file=sys.__stdout__)\n", "print(input())\n"]}]
J
check lcb_exit fpffffp "$T/lcb.jsonl" --samples "$T/lcb_s.json"

# NAME MESSAGE ARGS...: convert ARGS must fail, its error containing MESSAGE
refuse() {
    name=$1; msg=$2; shift 2
    if $B convert "$@" --out "$T/$name.jobs" 2>"$T/err"; then
        bad "$name" "converted, where it must refuse: $msg"
    elif grep -qF "$msg" "$T/err"; then
        ok "$name"
    else
        bad "$name" "$(cat "$T/err")"
    fi
}

# a NUL (\u0000) would cut the text there (cJSON): refused, naming the field
python3 - "$T/crux.jsonl" >"$T/crux_nul.json" <<'PY'
import json, sys
row = json.loads(open(sys.argv[1]).readline())
print(json.dumps({row["id"]: [row["output"] + "\0 and False"]}))
PY
refuse crux_nul "crux_nul.json:1: field \"$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["id"])' "$T/crux.jsonl")\" holds a NUL character" \
    "$T/crux.jsonl" --mode output --samples "$T/crux_nul.json"
python3 - "$T/he_row.jsonl" >"$T/he_nul.jsonl" <<'PY'
import json, sys
row = json.loads(open(sys.argv[1]).readline())
row["prompt"] += "\0"
print(json.dumps(row))
PY
refuse humaneval_nul "he_nul.jsonl:1: field \"prompt\" holds a NUL character" "$T/he_nul.jsonl"

suite_end
