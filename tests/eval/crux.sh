#!/bin/sh
# crux.sh - CRUXEval and CRUXEval-X end to end (called by run.sh, or alone):
# `convert --mode input|output` of the excerpts in data/cruxeval and
# data/cruxeval-x, then one `submit --local --wait` of all their jobs.
# Every reference (the row's own input and output) must pass, and every
# generation's verdict must be the one its harness gave: CRUXEval's
# published scores (scored-excerpt*.json, from its evaluate_score) and
# CRUXEval-X's results (the "res" of each row of LANG_MODE.json), but for
# the known differences below, which must fail here.
B=${LLMSB_BIN:-bin/llm-sandbox}
D=$(dirname "$0")/data
. "$(dirname "$0")/../lib.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
suite eval
WHY_FILE= # $T/why is shown after the case

# conv NAME ARGS...: convert into $T/NAME.jsonl, appended to $T/all.jsonl
conv() {
    name=$1; shift
    if $B convert "$@" --out "$T/$name.jsonl" 2>"$T/err"; then
        cat "$T/$name.jsonl" >>"$T/all.jsonl"
    else
        bad "crux_convert_$name" "$(cat "$T/err")"
    fi
}
: >"$T/all.jsonl"
for m in input output; do
    s=generations-excerpt.json; [ $m = output ] && s=generations-excerpt-output.json
    conv "cruxeval_ref_$m" "$D/cruxeval/cruxeval.jsonl" --mode $m
    conv "cruxeval_gen_$m" "$D/cruxeval/cruxeval.jsonl" --mode $m --samples "$D/cruxeval/$s"
    for l in py js java cpp go rb r; do
        conv "x_ref_${l}_$m" "$D/cruxeval-x/$l.jsonl" --mode $m
        conv "x_gen_${l}_$m" "$D/cruxeval-x/$l.jsonl" --mode $m --samples "$D/cruxeval-x/${l}_$m.json"
    done
done
t0=$(date +%s%3N)
$B submit "$T/all.jsonl" --local --wait --out "$T/all.out" >"$T/log" 2>&1
t1=$(date +%s%3N)
if python3 - "$D" "$T/all.out" >"$T/why" 2>&1 <<'PY'
import json, sys, collections
d, out = sys.argv[1], sys.argv[2]
want = {}  # job id -> (group, verdict its harness gives)
for m in ("input", "output"):
    sfx = "" if m == "input" else "-output"
    for l in open(f"{d}/cruxeval/cruxeval.jsonl"):
        want[f"{json.loads(l)['id']}/{m}"] = (f"cruxeval {m} references", True)
    for k, v in json.load(open(f"{d}/cruxeval/scored-excerpt{sfx}.json")).items():
        for i, ok in enumerate(v):
            want[f"{k}/{m}#{i}"] = (f"cruxeval {m} codellama-7b generations", ok)
    for lang in ("py", "js", "java", "cpp", "go", "rb", "r"):
        for l in open(f"{d}/cruxeval-x/{lang}.jsonl"):
            want[f"{lang}/{json.loads(l)['id']}/{m}"] = (f"cruxeval-x {lang} {m} references", True)
        for r in json.load(open(f"{d}/cruxeval-x/{lang}_{m}.json")):
            want[f"{lang}/{r['id']}/{m}#0"] = (f"cruxeval-x {lang} {m} phi-1", bool(r["res"]))
# go/6: the row's code is English, not Go; MultiPL-E's Go evaluator reads
# only go test's stdout, where a file that does not parse leaves no "FAIL",
# so it passes there (9 more Go rows of the dataset are alike)
differ = {f"go/6/{m}{s}": False for m in ("input", "output") for s in ("", "#0")}
for i, v in differ.items():
    want[i] = (want[i][0], v, want[i][1])
rows = {r["id"]: r for r in map(json.loads, open(out))}
assert set(rows) == set(want), f"{len(rows)} results for {len(want)} jobs: {sorted(set(want) ^ set(rows))[:5]}"
groups = collections.defaultdict(lambda: [0, 0, 0])
wrong = []
for i, (g, ok, *harness) in want.items():
    got = rows[i].get("passed") is True
    groups[g][0] += 1; groups[g][1] += got; groups[g][2] += harness[0] if harness else ok
    if got != ok:
        r = rows[i]
        wrong.append((i, r["status"], (r.get("compile_output") or r.get("stderr") or "")[-200:]))
for g, (n, got, ok) in sorted(groups.items()):
    print(f"{g}: {got}/{n} passed (harness {ok}/{n})")
assert not wrong, f"{len(wrong)} verdicts differ from the harness's, the first: {wrong[:3]}"
print(f"known differences (fail here, pass there): {' '.join(sorted(differ))}")
PY
then
    ok "crux_all_verdicts_as_the_harness ($(grep -c . "$T/all.jsonl") jobs, $(((t1 - t0) / 1000)) s)"
    sed 's/^/  | /' "$T/why"
else
    bad crux_all_verdicts_as_the_harness "$(tail -3 "$T/why")"
    sed 's/^/  | /' "$T/why" | head -40; tail -5 "$T/log"
fi
suite_end crux
