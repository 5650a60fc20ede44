# multiple.sh - MultiPL-E in every language end to end, then the open
# JSON Lines format (sourced by run.sh: B, D, T, ok, bad): `convert` of
# MultiPL-E's own files (its evaluator's
# test inputs, pretty-printed objects; prompt excerpts as JSON Lines and
# as a JSON array; completions files with completions lists; samples of
# {name, completion}), one `submit --local` of every job, and each job's
# verdict must be the one MultiPL-E's evaluator gave the same completion
# (data/multipl-e/harness-verdicts.tsv), so the pass rates are equal too.
M=$D/multipl-e
mkdir -p "$T/mple"
# the Python reference: HumanEval's canonical solutions on MultiPL-E's
# Python prompts, as {name, completion} samples
python3 - "$D/humaneval.jsonl" "$M/humaneval-py-reworded.jsonl" "$T/mple/py-canonical.samples" <<'EOF'
import json, sys
he = {r["task_id"]: r for r in map(json.loads, open(sys.argv[1]))}
with open(sys.argv[3], "w") as f:
    for r in map(json.loads, open(sys.argv[2])):
        n = r["name"].split("_")[1]
        f.write(json.dumps({"name": r["name"], "completion": he["HumanEval/" + n]["canonical_solution"]}) + "\n")
EOF
# mple_set SET DATASET [SAMPLES]: the jobs of SET, ids prefixed "SET|"
mple_set() {
    set=$1 data=$2 samples=$3
    if ! $B convert "$data" ${samples:+--samples "$samples"} --out "$T/mple/one" 2>"$T/err"; then
        bad "multiple_$set" "convert failed: $(cat "$T/err")"; return
    fi
    sed "s#^{\"id\":\"#{\"id\":\"$set|#" "$T/mple/one" >>"$T/mple/all.jsonl"
}
: >"$T/mple/all.jsonl"
# every language's files: its evaluator test input, its prompts with our
# samples (a language is added by adding its files and its verdicts)
for f in "$M"/test_inputs/*-davinci-0.2-keep-HumanEval53.json; do
    l=${f##*/}; l=${l%%-davinci-*}
    mple_set "test_inputs/$l" "$f"
done
for f in "$M"/samples/*.jsonl; do
    l=${f##*/}; l=${l%.jsonl}
    mple_set "$l-samples" "$M/humaneval-$l-reworded.jsonl" "$f"
done
mple_set py-canonical "$M/humaneval-py-reworded.jsonl" "$T/mple/py-canonical.samples"
mple_set java-2.1.0-samples "$M/humaneval-java-reworded-2.1.0.json" "$M/samples/java.jsonl"
mple_set cpp-gpt-oss-base "$M/cpp-gpt-oss-base.jsonl"
$B submit "$T/mple/all.jsonl" --local --wait --out "$T/mple/out" >"$T/mple/log" 2>&1
if python3 - "$M/harness-verdicts.tsv" "$T/mple/all.jsonl" "$T/mple/out" >"$T/why" 2>&1 <<'EOF'
import collections, json, sys
want = {}
import glob, os
for line in (l for f in sorted(glob.glob(os.path.join(os.path.dirname(sys.argv[1]), "harness-verdicts*.tsv"))) for l in open(f)):
    if not line.startswith("#"):
        s, i, status = line.rstrip("\n").split("\t")
        want[s + "|" + i] = status == "OK"
jobs = {j["id"]: j for j in map(json.loads, open(sys.argv[2]))}
got = {r["id"]: r for r in map(json.loads, open(sys.argv[3]))}
assert set(jobs) == set(want), f"jobs {sorted(set(jobs) ^ set(want))[:4]} differ from the harness's"
assert set(got) == set(want), f"{len(got)} results for {len(want)} jobs"
wrong = [i for i in want if (got[i].get("passed") is True) != want[i]]
why = {i: (got[i]["status"], (got[i].get("compile_output") or got[i].get("stderr") or "")[-200:]) for i in wrong[:3]}
assert not wrong, f"{len(wrong)} verdicts differ from MultiPL-E's: {why}"
rate = collections.defaultdict(lambda: [0, 0])
for i, ok in want.items():
    rate[jobs[i]["lang"]][0] += ok
    rate[jobs[i]["lang"]][1] += 1
print("_".join(f"{l}_{p}of{n}" for l, (p, n) in sorted(rate.items())))
EOF
then ok "multiple_verdicts_as_the_harness_$(cat "$T/why")"
else bad multiple_verdicts_as_the_harness "$(tail -3 "$T/why") $(tail -3 "$T/mple/log")"; fi

# refused FILE NAME TEXT: convert FILE exits 2 saying TEXT (grep pattern)
refused() {
    $B convert "$1" >/dev/null 2>"$T/err"
    if [ $? = 2 ] && grep -q "$3" "$T/err"; then ok "$2"; else bad "$2" "$(cat "$T/err")"; fi
}
# its .json.gz files are read as they are (the same jobs as unpacked); a
# cut gzip header is refused saying so; an array's bad element is named by
# its line and index
gzip -c "$D/multipl-e/cpp-gpt-oss-base.jsonl" >"$T/mple/j.json.gz"
if $B convert "$T/mple/j.json.gz" --out "$T/mple/jz.jsonl" 2>"$T/err" &&
    $B convert "$D/multipl-e/cpp-gpt-oss-base.jsonl" --out "$T/mple/j.jsonl" 2>/dev/null &&
    [ -s "$T/mple/j.jsonl" ] && cmp -s "$T/mple/jz.jsonl" "$T/mple/j.jsonl"; then
    ok multiple_gz_read_as_unpacked
else
    bad multiple_gz_read_as_unpacked "$(cat "$T/err")"
fi
printf '\037\213\010\000' >"$T/mple/c.json.gz"
refused "$T/mple/c.json.gz" multiple_gz_cut_header_refused \
    'c.json.gz: starts as gzip-compressed data (1f 8b) but its gzip header is cut or damaged'
printf '[\n  {"name": "A", "language": "py", "prompt": "", "tests": ""},\n  3\n]\n' >"$T/mple/a.json"
refused "$T/mple/a.json" multiple_array_element_named 'a.json:3: element \[1\] of the array is not a JSON object'

# The open JSON Lines format: a row per kind (a program with stdin, with
# cases, prompt + completion + test, args), in five languages; each job
# passes exactly when its meta.expect says so.
if $B convert "$D/open/tasks.jsonl" --out "$T/open.jobs" 2>"$T/err" &&
    { $B submit "$T/open.jobs" --local --wait --out "$T/open.out" >"$T/open.log" 2>&1; [ $? = 1 ]; } &&
    python3 - "$T/open.out" >"$T/why" 2>&1 <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 6, f"{len(rows)} results"
wrong = {r["id"]: r["status"] for r in rows if (r.get("passed") is True) != (r["meta"]["expect"] == "pass")}
assert not wrong, f"verdicts not as meta.expect: {wrong}"
PY
then ok open_format_jobs_pass_as_written
else bad open_format_jobs_pass_as_written "$(cat "$T/err") $(tail -3 "$T/why") $(tail -3 "$T/open.log")"; fi
