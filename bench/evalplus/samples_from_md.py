#!/usr/bin/env python3
"""samples_from_md.py - EvalPlus samples ({task_id, solution}) out of the
per-task Markdown traces of jamesmurdza/humaneval-results (MODEL/N.md: ten
runs a task, each a fenced ```python block holding the model's whole program).
Reads the files from a git directory (the code library's mirror) at a commit:
    samples_from_md.py GIT_DIR COMMIT MODEL >samples.jsonl
A run whose block is missing gives an empty solution (a failing sample, as
EvalPlus would grade a model that wrote no code), so every task keeps ten.
"""
import json
import re
import subprocess
import sys

RUN = re.compile(r"^### .*Run (\d+)$", re.M)
FENCE = re.compile(r"^```python\n(.*?)^```$", re.M | re.S)


def runs(text):
    heads = list(RUN.finditer(text))
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        m = FENCE.search(text, h.end(), end)
        yield int(h.group(1)), m.group(1) if m else ""


def main():
    git_dir, commit, model = sys.argv[1:4]
    for n in range(164):
        text = subprocess.run(
            ["git", "-C", git_dir, "show", f"{commit}:{model}/{n}.md"],
            check=True, capture_output=True, text=True).stdout
        got = list(runs(text))
        if len(got) != 10:
            sys.exit(f"{model}/{n}.md: {len(got)} runs, expected 10")
        for _, code in sorted(got):
            print(json.dumps({"task_id": f"HumanEval/{n}", "solution": code}))


if __name__ == "__main__":
    main()
