#!/usr/bin/env python3
"""bench_bare.py - each language's programs in the sandbox against the same
programs run bare on the host: the same compile and run commands (the
language row's, from `images languages --json`), no container, no agent.

The programs: every MultiPL-E set under tests/eval/data/multipl-e (its
evaluator's test inputs and our samples: passing and failing ones, compile
errors among them) and, for C++, CRUXEval-X's phi-1 programs in both modes
(compile errors among them), through `convert`.  Each round runs every
program once, a comment with the round's number appended (no cache keyed
on the text serves a repeat); one round warms up, ROUNDS are measured.
Sandbox: one `submit --local --slots 2 --no-dedup`, the measured window
from the first measured job's start to the last one's end.  Bare: two at a
time (as the two slots), each in a fresh directory, the wall time of the
measured rounds.  Prints jobs/s both ways, the ratio (sandbox time / bare
time: below 1.0 the sandbox is faster) and whether every program's verdict
(passed or not) is the same both ways.

A language whose tools are not on the host gets its Debian packages
installed (apt-get, as root), or is reported not measured.  Languages whose
file name comes from the code (Java) or whose commands are hooks of their
image (Go) are reported not measured bare.
  usage: bench/bench_bare.py LLM_SANDBOX [ROUNDS] [LANG...]
"""
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

B = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "bin/llm-sandbox")
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
ONLY = set(sys.argv[3:])
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
M = os.path.join(ROOT, "tests/eval/data/multipl-e")
X = os.path.join(ROOT, "tests/eval/data/cruxeval-x")
HOOK = "/usr/local/lib/llmsb/"


def convert(args):
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl") as out:
        subprocess.run([B, "convert", *args, "--out", out.name], check=True,
                       stderr=subprocess.DEVNULL)
        return [json.loads(l) for l in open(out.name)]


def sets():
    """{set name: jobs} of every program set there is."""
    got = {}
    for f in sorted(os.listdir(os.path.join(M, "samples"))):
        code = f[:-len(".jsonl")]
        got.setdefault(code, []).extend(convert([os.path.join(M, "humaneval-%s-reworded.jsonl" % code),
                                                 "--samples", os.path.join(M, "samples", f)]))
    for f in sorted(os.listdir(os.path.join(M, "test_inputs"))):
        code = f.split("-davinci-")[0]
        got.setdefault(code, []).extend(convert([os.path.join(M, "test_inputs", f)]))
    for mode in ("input", "output"):
        got.setdefault("cpp-crux", []).extend(convert([os.path.join(X, "cpp.jsonl"), "--mode", mode,
                                                       "--samples", os.path.join(X, "cpp_%s.json" % mode)]))
    return got


def bare_argv(tmpl, row, job):
    """The row's argv as the host runs it: {file}, {stem} and the job's flags in,
    cpp-build (which runs the plain command it is given) taken off."""
    stem = row["default_stem"]
    argv = []
    for a in tmpl:
        if a == "{compile_flags}":
            argv += job.get("compile_flags", [])
        elif a == "{link_flags}":
            argv += job.get("link_flags", [])
        else:
            argv.append(a.replace("{file}", stem + "." + row["ext"]).replace("{stem}", stem))
    if argv and argv[0] == HOOK + "cpp-build":
        argv = argv[1:]
    return argv


def bare_one(row, job):
    """Runs one job bare; returns whether it passed (compiled, exit 0, its
    expected stdout if it has one)."""
    d = tempfile.mkdtemp(prefix="llmsb-bare-")
    try:
        with open(os.path.join(d, row["default_stem"] + "." + row["ext"]), "w") as f:
            f.write(job["code"])
        for name, text in (job.get("files") or {}).items():  # a runner's program
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        env = dict(os.environ)
        env.update(e.split("=", 1) for e in row["env"])
        env.update(job.get("env", {}))
        t = job.get("timeout", 10)
        if row["compile"]:
            c = subprocess.run(bare_argv(row["compile"], row, job), cwd=d, env=env, timeout=60,
                               stdin=subprocess.DEVNULL, capture_output=True)
            if c.returncode != 0:
                return False
        try:
            r = subprocess.run(bare_argv(row["run"], row, job), cwd=d, env=env, timeout=t,
                               input=(job.get("stdin") or "").encode(), capture_output=True)
        except subprocess.TimeoutExpired:
            return False
        if r.returncode != 0:
            return False
        want = job.get("expect_stdout")
        return want is None or r.stdout.decode(errors="replace").strip() == want.strip()
    finally:
        shutil.rmtree(d, ignore_errors=True)


def rounds(jobs, row, n, first):
    out = []
    for k in range(first, first + n):
        for i, j in enumerate(jobs):
            j = dict(j, id="%d:%s@%d" % (i, j["id"], k))
            j["code"] = j["code"] + "\n" + row["line_comment"] + " round %d\n" % k
            out.append(j)
    return out


def sandbox(jobs, warm):
    with tempfile.TemporaryDirectory() as d:
        f, o = os.path.join(d, "jobs.jsonl"), os.path.join(d, "out.jsonl")
        with open(f, "w") as w:
            for j in warm + jobs:
                w.write(json.dumps(j) + "\n")
        run = subprocess.run([B, "submit", f, "--local", "--slots", "2", "--no-dedup", "--out", o],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if not os.path.exists(o):
            sys.exit("bench_bare: submit failed: " + run.stderr[-600:])
        res = {r["id"]: r for r in map(json.loads, open(o))}
    measured = [res[j["id"]] for j in jobs]
    starts = [r["started_at"] for r in measured if r.get("started_at")]
    ends = [r["finished_at"] for r in measured if r.get("finished_at")]
    secs = (max(ends) - min(starts)) / 1000 if starts and ends else float("nan")
    return secs, {r["id"]: r.get("passed") is True or (r.get("status") == "ok" and r.get("passed") is None)
                  for r in measured}


def bare(jobs, warm, row):
    with cf.ThreadPoolExecutor(2) as ex:
        list(ex.map(lambda j: bare_one(row, j), warm))
        t0 = time.monotonic()
        verdicts = list(ex.map(lambda j: bare_one(row, j), jobs))
        secs = time.monotonic() - t0
    return secs, {j["id"]: v for j, v in zip(jobs, verdicts)}


def have_tools(row):
    if all(shutil.which(t) for t in row["tools"].split()):
        return True
    if os.geteuid() != 0:
        return False
    subprocess.run(["apt-get", "-o", "DPkg::Lock::Timeout=600", "install", "-y", "-qq",
                    "--no-install-recommends", *row["packages"].split()],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return all(shutil.which(t) for t in row["tools"].split())


def main():
    rows = {}
    for line in subprocess.run([B, "images", "languages", "--json"], capture_output=True,
                               check=True, text=True).stdout.splitlines():
        r = json.loads(line)
        rows[r["name"]] = r
    print("bench_bare: each language's programs in the sandbox (submit --local, 2 slots) and "
          "bare on the host (the same commands, 2 at a time); %d measured rounds after 1 warm-up"
          % ROUNDS)
    print("%-12s %-10s %5s %10s %10s %7s %9s" % ("set", "language", "jobs", "sandbox/s", "bare/s",
                                                  "ratio", "verdicts"))
    for name, jobs in sets().items():
        lang = jobs[0]["lang"]
        row = rows.get(lang)
        if ONLY and lang not in ONLY and name not in ONLY:
            continue
        if not row:
            print("%-12s %-10s not measured: no such language" % (name, lang))
            continue
        hooks = [a for a in row["compile"] + row["run"] if a.startswith(HOOK) and a != HOOK + "cpp-build"]
        if row["names_its_file"] or hooks:
            print("%-12s %-10s not measured bare: %s" % (name, lang, "the file is named by the code"
                                                          if row["names_its_file"] else "its commands are the image's hooks"))
            continue
        if not have_tools(row):
            print("%-12s %-10s not measured bare: %s not on the host (apt-get install %s)" %
                  (name, lang, row["tools"], row["packages"]))
            continue
        warm, meas = rounds(jobs, row, 1, 0), rounds(jobs, row, ROUNDS, 1)
        s_secs, s_v = sandbox(meas, warm)
        b_secs, b_v = bare(meas, warm, row)
        same = sum(1 for i in s_v if s_v[i] == b_v.get(i))
        print("%-12s %-10s %5d %10.2f %10.2f %6.2fx %4d/%-4d" %
              (name, lang, len(meas), len(meas) / s_secs, len(meas) / b_secs, s_secs / b_secs,
               same, len(meas)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
