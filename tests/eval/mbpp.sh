#!/bin/sh
# mbpp.sh - MBPP end to end (called by run.sh, or alone): `convert` of the
# excerpts of the original (mbpp-excerpt.jsonl) and the sanitized split
# (sanitized-mbpp-excerpt.json), then one `submit --local --wait`.  Every
# reference solution (the row's code) must pass; of the samples (samples
# files beside them, written for this test) the right ones pass and the
# wrong ones fail, each with the status it must have: an assert failed is
# runtime_error, an endless loop a timeout at the harness's 3 s.
B=${LLMSB_BIN:-bin/llm-sandbox}
D=$(dirname "$0")/data/mbpp
. "$(dirname "$0")/../lib.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
suite eval
WHY_FILE=

# conv SPLIT ARGS...: convert into $T/SPLIT.jsonl (the splits share task
# ids, so each is submitted apart)
conv() {
    split=$1; shift
    if $B convert "$@" --out "$T/one.jsonl" 2>"$T/err"; then
        cat "$T/one.jsonl" >>"$T/$split.jsonl"
    else
        bad "mbpp_convert" "$*: $(cat "$T/err")"
    fi
}
: >"$T/mbpp.jsonl"
: >"$T/sanitized.jsonl"
conv mbpp "$D/mbpp-excerpt.jsonl"
conv mbpp "$D/mbpp-excerpt.jsonl" --samples "$D/samples.jsonl"
conv sanitized "$D/sanitized-mbpp-excerpt.json"
conv sanitized "$D/sanitized-mbpp-excerpt.json" --samples "$D/sanitized-samples.jsonl"
t0=$(date +%s%3N)
for s in mbpp sanitized; do
    $B submit "$T/$s.jsonl" --local --wait --out "$T/$s.out" >"$T/$s.log" 2>&1
done
t1=$(date +%s%3N)
if python3 - "$D" "$T/mbpp.out" "$T/sanitized.out" >"$T/why" 2>&1 <<'PY'
import json, sys
d = sys.argv[1]
want = {"mbpp": {str(json.loads(l)["task_id"]): "ok" for l in open(f"{d}/mbpp-excerpt.jsonl")},
        "mbpp-sanitized": {str(r["task_id"]): "ok"
                           for r in json.load(open(f"{d}/sanitized-mbpp-excerpt.json"))}}
want["mbpp"].update({"17#0": "ok", "17#1": "runtime_error", "12#0": "ok", "367#0": "ok",
                     "367#1": "runtime_error", "3#0": "timeout"})
want["mbpp-sanitized"].update({"82#0": "ok", "82#1": "runtime_error", "2#0": "ok"})
for out in sys.argv[2:]:
    rows = [json.loads(l) for l in open(out)]
    bench = rows[0]["meta"]["benchmark"]
    got = {r["id"]: r["status"] for r in rows}
    assert set(got) == set(want[bench]), f"{bench}: {sorted(set(got) ^ set(want[bench]))[:5]}"
    wrong = [(i, s, want[bench][i]) for i, s in got.items() if s != want[bench][i]]
    assert not wrong, f"{bench}: unexpected statuses (id, got, want): {wrong[:5]}"
    refs = sum("#" not in i for i in got)
    print(f"{bench}: {refs} references ok; {len(got) - refs} samples as expected")
PY
then
    ok "mbpp_references_pass_samples_as_expected ($(cat "$T/mbpp.jsonl" "$T/sanitized.jsonl" | grep -c .) jobs, $(((t1 - t0) / 1000)) s)"
    sed 's/^/  | /' "$T/why"
else
    bad mbpp_references_pass_samples_as_expected "$(tail -3 "$T/why")"
    tail -5 "$T/mbpp.log" "$T/sanitized.log"
fi
# a file of both splits is refused (one split per file), naming the line
{ head -1 "$D/mbpp-excerpt.jsonl"; python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))[0]))' "$D/sanitized-mbpp-excerpt.json"; } >"$T/mixed.jsonl"
if ! $B convert "$T/mixed.jsonl" --out "$T/x.jsonl" 2>"$T/err" &&
    grep -q "mixed.jsonl:2: a row of another benchmark, where the first row is mbpp's" "$T/err"; then
    ok mbpp_one_split_per_file
else
    bad mbpp_one_split_per_file "$(cat "$T/err")"
fi
# a sample of a task not in the dataset is named
echo '{"task_id": 9999, "completion": "x"}' >"$T/s.jsonl"
if ! $B convert "$D/mbpp-excerpt.jsonl" --samples "$T/s.jsonl" --out "$T/x.jsonl" 2>"$T/err" &&
    grep -q "s.jsonl:1: task 9999 is not in" "$T/err"; then
    ok mbpp_unknown_task_named
else
    bad mbpp_unknown_task_named "$(cat "$T/err")"
fi
suite_end mbpp
