"""verdicts.py JOBS RESULTS CHECK: the verdicts of a suite's jobs as they must be.

JOBS is a job file (JSON Lines; its ids), RESULTS what `submit --out` wrote, CHECK
"NAME|N|ID|ID...": N jobs, each with a verdict, and exactly the IDs not passed.
Prints "P/N passed"; else an AssertionError names the jobs that differ and why
(their status and the end of their stderr).  Used by stdio.sh and extract.sh."""
import json
import sys

jobs = [json.loads(l)["id"] for l in open(sys.argv[1])]
res = {r["id"]: r for r in map(json.loads, open(sys.argv[2]))}
name, n, *failing = sys.argv[3].split("|")
failing = set(f for f in failing if f)
assert len(jobs) == int(n), f"{len(jobs)} jobs, want {n}"
missing = [j for j in jobs if "passed" not in res.get(j, {})]
assert not missing, f"no verdict for {missing[:3]}"
failed = {j for j in jobs if res[j]["passed"] is not True}
why = {j: (res[j]["status"], (res[j].get("stderr") or res[j].get("compile_output") or "")[-200:])
       for j in sorted(failed ^ failing)[:3]}
assert failed == failing, f"not passed {sorted(failed)}, want {sorted(failing)}: {why}"
print(f"{len(jobs) - len(failed)}/{len(jobs)} passed")
