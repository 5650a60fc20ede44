# evalplus_agree.sh - our HumanEval+ verdicts against EvalPlus's own
# evaluator's on real samples (sourced by run.sh: B, D, T, ok, bad): the
# tasks below, every one of CodeLlama-34b-Instruct's ten samples of each
# (data/evalplus/samples-humaneval-codellama34b.jsonl.gz), through
# `convert` (the ground-truth jobs, then the samples with their results) and
# `submit --local`; each sample's base and plus verdict must be the one
# EvalPlus's evaluator gave it on this host
# (data/evalplus/harness-verdicts-humaneval-codellama34b.tsv, made by
# bench/evalplus/harness.sh; the whole file's agreement is in docs/eval.md).
# The tasks: samples that pass base and fail plus, pass both, fail both.
EP=$D/evalplus
EP_TASKS=${EP_TASKS:-"HumanEval/46 HumanEval/97 HumanEval/138 HumanEval/151"}
mkdir -p "$T/ep"
if python3 - "$EP" "$T/ep" $EP_TASKS >"$T/why" 2>&1 <<'EOF_PY'
import gzip, json, sys
d, out, tasks = sys.argv[1], sys.argv[2], set(sys.argv[3:])
with gzip.open(f"{d}/HumanEvalPlus.jsonl.gz", "rt") as f, open(f"{out}/data.jsonl", "w") as o:
    rows = [l for l in f if json.loads(l)["task_id"] in tasks]
    assert len(rows) == len(tasks), f"{len(rows)} of the tasks {sorted(tasks)} in HumanEvalPlus.jsonl.gz"
    o.writelines(rows)
with gzip.open(f"{d}/samples-humaneval-codellama34b.jsonl.gz", "rt") as f, open(f"{out}/samples.jsonl", "w") as o:
    o.writelines(l for l in f if json.loads(l)["task_id"] in tasks)
with open(f"{d}/harness-verdicts-humaneval-codellama34b.tsv") as f, open(f"{out}/want.tsv", "w") as o:
    o.writelines(l for l in f if l.split("\t")[0] in tasks)
EOF_PY
then
    if $B convert "$T/ep/data.jsonl" --out "$T/ep/gt.jobs" 2>"$T/err" &&
        $B submit "$T/ep/gt.jobs" --local --wait --out "$T/ep/gt.out" >"$T/ep/gt.log" 2>&1 &&
        $B convert "$T/ep/data.jsonl" --samples "$T/ep/samples.jsonl" --expected "$T/ep/gt.out" \
            --out "$T/ep/s.jobs" 2>"$T/err"; then
        $B submit "$T/ep/s.jobs" --local --wait --out "$T/ep/s.out" >"$T/ep/s.log" 2>&1
        if python3 "$D/../../../bench/evalplus/compare.py" "$T/ep/want.tsv" "$T/ep/s.out" >"$T/why" 2>&1; then
            ok "evalplus_verdicts_as_its_evaluator_$(sed -n 's/.*: base \([0-9]*\)\/\([0-9]*\), plus \([0-9]*\)\/.*/base_\1of\2_plus_\3of\2/p' "$T/why")"
        else
            bad evalplus_verdicts_as_its_evaluator "$(head -4 "$T/why") $(tail -2 "$T/ep/s.log")"
        fi
    else
        bad evalplus_verdicts_as_its_evaluator "convert or the ground truth failed: $(cat "$T/err") $(tail -3 "$T/ep/gt.log" 2>/dev/null)"
    fi
else
    bad evalplus_verdicts_as_its_evaluator "the excerpt: $(tail -2 "$T/why")"
fi
