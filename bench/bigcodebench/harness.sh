#!/bin/sh
# harness.sh - BigCodeBench's own evaluator on the excerpt, for the
# comparison in docs/eval.md ("BigCodeBench"): installs on the host the
# Debian packages the image has (the list of images/python-bigcodebench/
# Dockerfile and llmsb/python's numpy, pandas, matplotlib, seaborn), takes
# bigcodebench/eval/ from the harness at a pinned commit (a mirror of
# bigcode-project/bigcodebench: $BCB_REPO, a bare git dir) and runs its
# untrusted_check on the reference solution of every task of the excerpt
# and on every sample, the solution built as its evaluate.py builds it
# (complete_prompt + "\n" + canonical_solution for the ground truth;
# calibrated code_prompt + "\n    pass\n" + solution, or + complete_prompt +
# completion, for a sample), with Debian's /usr/bin/python3 (not a python3 of
# PATH that lacks the packages).  Prints one line a job id: id, status, the
# names of the failed tests.  Needs root (apt-get).
#   sh bench/bigcodebench/harness.sh > tests/eval/data/bigcodebench/harness-verdicts.tsv
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$HERE/../..
REPO=${BCB_REPO:-/work/.mirror/bigcode-project+bigcodebench/repo}
COMMIT=${BCB_COMMIT:-47eff25a9933ba89eee755bcf2696c4f17160b54}
DATA=$TOP/tests/eval/data/bigcodebench
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

pkgs=$(sed -n '/apt-get install/,/rm -rf/p' "$TOP/images/python-bigcodebench/Dockerfile" |
    tr ' \\' '\n\n' | grep '^python3-')
# shellcheck disable=SC2086 # a list of names
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    python3-numpy python3-pandas python3-matplotlib python3-seaborn $pkgs >&2
mkdir -p "$W/bigcodebench/eval"
: >"$W/bigcodebench/__init__.py"
for f in __init__.py utils.py _special_oracle.py; do
    git -C "$REPO" show "$COMMIT:bigcodebench/eval/$f" >"$W/bigcodebench/eval/$f"
done
cd "$W"
export BCB_COMMIT=$COMMIT
# the evaluator and the code it runs print to stdout: the verdicts go to a file
MPLBACKEND=Agg /usr/bin/python3 - "$DATA/bigcodebench-excerpt.jsonl" "$DATA/samples.jsonl" \
    "$W/verdicts.tsv" <<'PY' >&2
import collections, json, os, sys
COMMIT = os.environ["BCB_COMMIT"]
from bigcodebench.eval import untrusted_check

rows = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    rows[r["task_id"]] = r
jobs = [(t, r["complete_prompt"] + "\n" + r["canonical_solution"]) for t, r in rows.items()]
n = collections.Counter()
for l in open(sys.argv[2]):
    s = json.loads(l)
    r = rows[s["task_id"]]
    sol = s["solution"] if "solution" in s else r["complete_prompt"] + s["completion"]
    jobs.append((f"{s['task_id']}#{n[s['task_id']]}", r["code_prompt"] + "\n    pass\n" + sol))
    n[s["task_id"]] += 1
out = open(sys.argv[3], "w")
print(f"# bigcodebench {COMMIT} untrusted_check ({len(jobs)} jobs): id, status, failed tests",
      file=out, flush=True)
for jid, sol in jobs:
    r = rows[jid.split("#")[0]]
    # evaluate.py's defaults: 30 GB address space and data, 10 MB stack,
    # min_time_limit 1, gt_time_limit 20 (no ground-truth time cached)
    stat, details = untrusted_check(sol, r["test"], r["entry_point"], 30 * 1024, 30 * 1024, 10,
                                    1, 20)
    print(f"{jid}\t{stat}\t{','.join(sorted(details))}", file=out, flush=True)
PY
cat "$W/verdicts.tsv"
