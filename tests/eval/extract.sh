#!/bin/sh
# extract.sh - convert --extract end to end (docs/eval.md "Code out of raw
# answers"): Markdown answers of the shapes models give (data/extract/:
# written here for HumanEval and LiveCodeBench tasks: a python, py, untagged,
# ~~~, indented, CRLF or unclosed fence, a js or C++ fence before the
# Python one, prose around bare code, a bare body, and wrong answers) are
# converted with --extract heuristic, fenced and without, all run in one
# `submit --local`, and exactly the listed jobs must not pass: with the
# extraction every right answer passes, without it only the bare body does.
# Sourced by run.sh (its counters), or run alone.
if [ -z "${EXTRACT_SOURCED:-}" ]; then
    B=${LLMSB_BIN:-bin/llm-sandbox}
    D=$(dirname "$0")/data
    . "$(dirname "$0")/../lib.sh"
    T=$(mktemp -d)
    trap 'rm -rf "$T"' EXIT
    suite eval
    WHY_FILE=
fi
X=$D/extract

: >"$T/extract.jobs"
for mode in heuristic fenced off; do
    flag="--extract $mode"
    [ $mode = off ] && flag=
    # the ids of each mode's jobs get the mode in front (one file, one run)
    if $B convert "$D/humaneval.jsonl" --samples "$X/humaneval_answers.jsonl" $flag \
        --out "$T/x.jobs" 2>"$T/x.err" &&
        $B convert "$D/stdio/livecodebench.jsonl" --samples "$X/livecodebench_answers.json" \
            $flag >>"$T/x.jobs" 2>>"$T/x.err"; then
        python3 -c '
import json, sys
for l in open(sys.argv[1]):
    j = json.loads(l); j["id"] = sys.argv[2] + ":" + j["id"]; print(json.dumps(j))' \
            "$T/x.jobs" $mode >>"$T/extract.jobs"
    else
        bad "extract_convert_$mode" "$(cat "$T/x.err")"
    fi
done
$B submit "$T/extract.jobs" --local --wait --out "$T/extract.out" >"$T/extract.log" 2>&1
HE_ALL="2 13 23 28 42 53 55 60 3 30"
for check in \
    "heuristic|13|HumanEval/30#0 1873_A#2" \
    "fenced|13|HumanEval/30#0 HumanEval/60#0 1873_A#2" \
    "off|13|$(for t in $HE_ALL; do [ $t = 3 ] || printf 'HumanEval/%s#0 ' $t; done)1873_A#0 1873_A#1 1873_A#2"; do
    if python3 - "$T/extract.jobs" "$T/extract.out" "$check" >"$T/why" 2>&1 <<'EOF'
import json, sys
mode, n, failing = sys.argv[3].split("|")
jobs = [j for j in map(json.loads, open(sys.argv[1])) if j["id"].startswith(mode + ":")]
res = {r["id"]: r for r in map(json.loads, open(sys.argv[2]))}
want = {mode + ":" + f for f in failing.split()}
assert len(jobs) == int(n), f"{len(jobs)} jobs, want {n}"
missing = [j["id"] for j in jobs if "passed" not in res.get(j["id"], {})]
assert not missing, f"no verdict for {missing[:3]}"
failed = {j["id"] for j in jobs if res[j["id"]]["passed"] is not True}
why = {j: (res[j]["status"], (res[j].get("stderr") or "")[-200:]) for j in sorted(failed ^ want)[:3]}
assert failed == want, f"not passed {sorted(failed)}, want {sorted(want)}: {why}"
for j in jobs:  # meta says what was taken, and it is what ran
    x = j["meta"].get("extract")
    assert (x is None) == (mode == "off"), f"{j['id']}: meta.extract {x}"
    if x and x["found"] != "none":
        prog = j.get("files", {}).get("program.py", j["code"])
        assert j["meta"]["extracted"] in prog, f"{j['id']}: meta.extracted is not in the program"
print(f"{len(jobs) - len(failed)}/{len(jobs)} passed")
EOF
    then
        ok "extract_${check%%|*}_$(tr ' /' '_-' <"$T/why")"
    else
        bad "extract_${check%%|*}" "$(tail -3 "$T/why") $(tail -3 "$T/extract.log")"
    fi
done

# --extract names its modes
$B convert "$D/humaneval.jsonl" --extract fences >/dev/null 2>"$T/err"
if [ $? = 2 ] && grep -q -- '--extract: "fences" is none of fenced' "$T/err"; then
    ok extract_unknown_mode_refused
else
    bad extract_unknown_mode_refused "$(cat "$T/err")"
fi

if [ -z "${EXTRACT_SOURCED:-}" ]; then
    suite_end "eval extract"
fi
