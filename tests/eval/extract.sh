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
            "$T/x.jobs" $mode >"$T/$mode.jobs"
        cat "$T/$mode.jobs" >>"$T/extract.jobs"
    else
        bad "extract_convert_$mode" "$(cat "$T/x.err")"
    fi
done
$B submit "$T/extract.jobs" --local --wait --out "$T/extract.out" >"$T/extract.log" 2>&1
# MODE|JOBS|FAILING...: exactly FAILING not passed; meta.extract on every job
# of a mode, and meta.extracted is in the program that ran
for check in \
    "heuristic|13|heuristic:HumanEval/30#0|heuristic:1873_A#2" \
    "fenced|13|fenced:HumanEval/30#0|fenced:HumanEval/60#0|fenced:1873_A#2" \
    "off|13$(for t in 2 13 23 28 42 53 55 60 30; do printf '|off:HumanEval/%s#0' $t; done)|off:1873_A#0|off:1873_A#1|off:1873_A#2"; do
    mode=${check%%|*}
    [ -s "$T/$mode.jobs" ] || continue
    if python3 "$(dirname "$0")/verdicts.py" "$T/$mode.jobs" "$T/extract.out" "$check" >"$T/why" 2>&1 &&
        python3 -c '
import json, sys
for j in map(json.loads, open(sys.argv[1])):
    x = j["meta"].get("extract")
    assert (x is None) == (sys.argv[2] == "off"), (j["id"], x)
    program = j.get("files", {}).get("program.py", j["code"])
    assert not x or x["found"] == "none" or j["meta"]["extracted"] in program, j["id"]' \
            "$T/$mode.jobs" $mode >>"$T/why" 2>&1; then
        ok "extract_${mode}_$(tr ' /' '_-' <"$T/why")"
    else
        bad "extract_$mode" "$(tail -3 "$T/why") $(tail -3 "$T/extract.log")"
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
