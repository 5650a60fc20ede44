#!/usr/bin/env python3
"""compare.py - our base and plus verdicts against EvalPlus's evaluator's,
sample by sample.
    compare.py HARNESS.tsv RESULTS.jsonl [--show N]
HARNESS.tsv: harness.sh's output (task_id, n-th sample of the task, base,
plus). RESULTS.jsonl: `submit --out` of the jobs `convert --samples ...
--expected ...` made from the same samples file: job TASK#N, its case
meta.base_case (0) the base tests, the other the plus tests.
Prints the agreement (n/n base, n/n plus) and each sample that differs
with what our result says; exits 1 when one does."""
import json
import sys


def harness(path):
    want = {}
    for line in open(path):
        if line.startswith("#") or line.startswith("task_id\t"):
            continue
        task, n, base, plus = line.rstrip("\n").split("\t")
        want[f"{task}#{n}"] = (base == "pass", plus == "pass", base, plus)
    return want


def ours(path):
    got = {}
    for line in open(path):
        r = json.loads(line)
        cases = r.get("cases") or []
        b = (r.get("meta") or {}).get("base_case", 0)
        verdict = [c.get("passed") is True for c in cases]
        if len(verdict) != 2:
            got[r["id"]] = (None, None, r)
        else:
            got[r["id"]] = (verdict[b], verdict[1 - b], r)
    return got


def why(r):
    if r is None:
        return "no result"
    bits = [r.get("status", "?")]
    for c in r.get("cases") or []:
        bits.append(f"{c.get('status')}{'' if c.get('passed') else '(fail)'}")
    text = (r.get("error") or r.get("stderr") or "").strip().splitlines()
    if text:
        bits.append(text[-1][:160])
    return " ".join(bits)


def main():
    want, got = harness(sys.argv[1]), ours(sys.argv[2])
    show = int(sys.argv[sys.argv.index("--show") + 1]) if "--show" in sys.argv else 20
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    n = len(want)
    diff_b = [k for k in want if k in got and got[k][0] != want[k][0]]
    diff_p = [k for k in want if k in got and got[k][1] != want[k][1]]
    print(f"agreement with EvalPlus's evaluator: base {n - len(diff_b) - len(missing)}/{n}, "
          f"plus {n - len(diff_p) - len(missing)}/{n}"
          + (f"; {len(missing)} samples without our result" if missing else "")
          + (f"; {len(extra)} results of no sample" if extra else ""))
    for k in sorted(set(diff_b) | set(diff_p), key=lambda k: (int(k.split("/")[1].split("#")[0]), k))[:show]:
        w = want[k]
        g = got[k]
        print(f"  {k}: EvalPlus base {w[2]} plus {w[3]}; ours base "
              f"{'pass' if g[0] else 'fail'} plus {'pass' if g[1] else 'fail'}: {why(g[2])}")
    for k in missing[:show]:
        print(f"  {k}: no result of ours")
    return 1 if diff_b or diff_p or missing or extra else 0


if __name__ == "__main__":
    sys.exit(main())
