#!/bin/sh
# evalplus.sh - EvalPlus's HumanEval+ and MBPP+ (tests/eval/data/evalplus,
# the published .jsonl.gz read as they are) end to end in the real sandboxes:
# step 1, `convert` without samples and `submit --out`: every canonical
# solution runs every base and plus input and gives the expected outputs
# (EvalPlus excludes no task: all must pass); step 2, samples written here
# (right, wrong on a plus input only, wrong on base, too slow per input, a
# phase over its whole limit, floats within and past atol, EvalPlus's special
# oracles, NaN/Infinity and NUL inputs, outputs too big to carry, samples
# that try to fake the grader and must not pass) converted
# with --expected: each one's base and plus verdicts, and the report's pass@k
# of both.  make test runs a subset of step 1 (the tasks of step 2 and those
# with special handling, about 20 s); EVALPLUS_ALL=1 (make test-evalplus-all)
# all 164 + 378 tasks (about 2.5 minutes here).  Sourced by run.sh (its
# counters), or run alone.
if [ -z "${EVALPLUS_SOURCED:-}" ]; then
    B=${LLMSB_BIN:-bin/llm-sandbox}
    D=$(dirname "$0")/data
    . "$(dirname "$0")/../lib.sh"
    T=$(mktemp -d)
    trap 'rm -rf "$T"' EXIT
    suite eval
    WHY_FILE= # a case's $T/why is in its message
fi
E=$D/evalplus
HE=$E/HumanEvalPlus.jsonl.gz
MB=$E/MbppPlus.jsonl.gz
SUBSET="HumanEval/0 HumanEval/2 HumanEval/15 HumanEval/32 HumanEval/100 HumanEval/130
Mbpp/2 Mbpp/124 Mbpp/252 Mbpp/269 Mbpp/404 Mbpp/558 Mbpp/581 Mbpp/630 Mbpp/737 Mbpp/787 Mbpp/793"

# ---- step 1: the ground truth ----
ep_ok=1
for pair in he:$HE mb:$MB; do
    name=${pair%%:*} data=${pair#*:}
    if ! $B convert "$data" --out "$T/$name-gt.all" 2>"$T/$name.err"; then
        bad "evalplus_${name}_convert" "$(cat "$T/$name.err")"
        ep_ok=0
    fi
done
if [ "$ep_ok" = 1 ]; then
    # the subset (or all): one job file, HumanEval+ then MBPP+
    python3 - "$T/he-gt.all" "$T/mb-gt.all" "$T/gt.jsonl" "${EVALPLUS_ALL:-0}" "$SUBSET" <<'EOF'
import json, sys
he, mb, out, every, subset = sys.argv[1:6]
keep = set(subset.split())
with open(out, "w") as f:
    for path in (he, mb):
        for line in open(path):
            if every == "1" or json.loads(line)["id"] in keep:
                f.write(line)
EOF
    want=$(wc -l <"$T/gt.jsonl")
    t0=$(date +%s%3N)
    $B submit "$T/gt.jsonl" --local --wait --out "$T/gt.out" >"$T/gt.log" 2>&1
    rc=$?
    t1=$(date +%s%3N)
    if [ "$rc" = 0 ] && python3 - "$T/gt.out" "$want" >"$T/why" 2>&1 <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == int(sys.argv[2]), f"{len(rows)} results for {sys.argv[2]} jobs"
bad = [(r["id"], r["status"], r.get("stderr", "")[-200:]) for r in rows if r.get("passed") is not True]
assert not bad, f"{len(bad)} canonical solutions did not run every input: {bad[:3]}"
for r in rows:
    line = json.loads(r["stdout"].splitlines()[-1])["evalplus_truth"]
    assert line["task_id"] == r["id"] and [a["name"] for a in r["artifacts"]] == ["expected.pkl.z"], r["id"]
he = sum(r["id"].startswith("HumanEval/") for r in rows)
print(f"{he}_HumanEval+_and_{len(rows) - he}_MBPP+_canonical_solutions_ran_every_input")
EOF
    then
        ok "evalplus_ground_truth: $(cat "$T/why") ($(awk -v t="$((t1 - t0))" 'BEGIN { printf "%.1f s", t / 1000 }'))"
    else
        bad evalplus_ground_truth "exit $rc: $(tail -3 "$T/why") $(tail -3 "$T/gt.log")"
        ep_ok=0
    fi
fi

# ---- step 2: samples, each one's base and plus verdicts ----
if [ "$ep_ok" = 1 ]; then
    # SAMPLE VERDICTS: the (base, plus) statuses EvalPlus gives each sample
    python3 - "$HE" "$MB" "$T" <<'EOF'
import gzip, json, sys
he = {r["task_id"]: r for r in map(json.loads, gzip.open(sys.argv[1], "rt"))}
mb = {r["task_id"]: r for r in map(json.loads, gzip.open(sys.argv[2], "rt"))}
t = sys.argv[3]
h0 = he["HumanEval/0"]
# a plus input of HumanEval/0 that is no base input: the sample is wrong there only
only_plus = next(i for i in h0["plus_input"] if i not in h0["base_input"])
canon0 = h0["canonical_solution"]
n0 = {"base": len(h0["base_input"]), "plus": len(h0["plus_input"])}
samples = [  # (task, key, code, base, plus)
    ("HumanEval/0", "completion", canon0, "pass", "pass"),
    ("HumanEval/0", "solution", h0["prompt"] + canon0, "pass", "pass"),
    ("HumanEval/0", "completion", "    return False\n", "fail", "fail"),
    ("HumanEval/0", "completion",
     "    if [numbers, threshold] == %r:\n        return None\n%s" % (only_plus, canon0), "pass", "fail"),
    ("HumanEval/0", "completion", "    import time\n    time.sleep(5)\n" + canon0, "fail", "fail"),
    # what it writes to descriptor 1 is not the verdict
    ("HumanEval/0", "completion", "    import os\n    os.write(1, b'{\"status\": \"pass\"}\\n')\n" + canon0,
     "pass", "pass"),
    # leaving by itself: no status (EvalPlus: timeout), even with exit code 0
    ("HumanEval/0", "completion", "    import posix\n    posix._exit(0)\n", "timeout", "timeout"),
    ("HumanEval/0", "completion", "    import ctypes\n    ctypes.CDLL(None)._exit(0)\n", "timeout", "timeout"),
    # faking the grader (each passed base and plus before the sample ran in a
    # child of its own): the runner's globals, its verdict descriptor, its
    # frame, its comparison, an object equal to anything, the expected
    # outputs' file, its clock
    ("HumanEval/0", "completion", "    import __main__ as m, sys\n    m.say({'phase': sys.argv[6], "
     "'status': 'pass', 'inputs': %r[sys.argv[6]]})\n    m.REAL_EXIT(0)\n" % n0, "fail", "fail"),
    ("HumanEval/0", "completion", "    import os, sys, json, ctypes\n    os.write(3, (json.dumps({'phase': "
     "sys.argv[6], 'status': 'pass', 'inputs': %r[sys.argv[6]]}) + '\\n').encode())\n"
     "    ctypes.CDLL(None)._exit(0)\n" % n0, "fail", "fail"),
    ("HumanEval/0", "completion", "    import sys\n    f = sys._getframe(1).f_locals\n"
     "    return f['expected'][f['at']]\n", "fail", "fail"),
    ("HumanEval/0", "completion", "    import __main__ as m\n    m.compare = lambda out, exp, inp, atol: atol\n"
     "    return None\n", "fail", "fail"),
    ("HumanEval/0", "completion", "    class A:\n        def __eq__(self, o):\n            return True\n"
     "    return A()\n", "fail", "fail"),
    ("HumanEval/0", "completion", "    import io, sys, zlib, pickle\n    global K\n    K = globals().get('K', -1) + 1\n"
     "    t = pickle.loads(zlib.decompress(io.open('expected.pkl.z', 'rb').read()))\n"
     "    return t[sys.argv[6]][K]\n", "fail", "fail"),
    ("HumanEval/0", "completion", "    import __main__ as m, signal, time\n    m.MONOTONIC = lambda: 0.0\n"
     "    signal.setitimer(signal.ITIMER_REAL, 0)\n    time.sleep(5)\n" + canon0, "fail", "fail"),
    # an output pickled as a call of anything but a plain value's class: refused
    ("HumanEval/0", "solution", "class A:\n    def __reduce__(self):\n        return (eval, ('True',))\n"
     "def has_close_elements(numbers, threshold):\n    return A()\n", "fail", "fail"),
    # the grader is not dumpable: its memory and descriptors are closed to the
    # program (it passes only when it cannot open them)
    ("HumanEval/0", "completion", "    import io, os\n    for f in ('mem', 'fd/1', 'fd/0'):\n        try:\n"
     "            io.open('/proc/%d/%s' % (os.getppid(), f), 'rb').close()\n            return None\n"
     "        except OSError:\n            pass\n" + canon0, "pass", "pass"),
    # atol 1e-6: a float off by 1e-9 passes, by 1e-3 fails
    ("HumanEval/2", "completion", "    return number - int(number) + 1e-9\n", "pass", "pass"),
    ("HumanEval/2", "completion", "    return number - int(number) + 1e-3\n", "fail", "fail"),
    # a numpy scalar and a builtin's subclass are plain values (as EvalPlus's == sees them)
    ("HumanEval/2", "completion", "    import numpy\n    return numpy.float64(number - int(number))\n",
     "pass", "pass"),
    ("HumanEval/2", "completion", "    class F(float):\n        pass\n    return F(number - int(number))\n",
     "pass", "pass"),
    # a root of the polynomial within atol, whatever root (its own oracle)
    ("HumanEval/32", "completion", he["HumanEval/32"]["canonical_solution"], "pass", "pass"),
    # outputs over 1 MiB: the sample's job computes them again
    ("HumanEval/15", "completion", he["HumanEval/15"]["canonical_solution"], "pass", "pass"),
    ("HumanEval/15", "completion", "    return ' '.join(str(x) for x in range(n))\n", "fail", "fail"),
    # set-equal: the order is free
    ("Mbpp/2", "solution", "def similar_elements(a, b):\n    return tuple(sorted(set(a) & set(b), reverse=True))\n",
     "pass", "pass"),
    ("Mbpp/2", "solution", "def similar_elements(a, b):\n    return (1,)\n", "fail", "fail"),
    # no plus inputs: the phase's limit is 2 s, a 3 s start is over it
    ("Mbpp/793", "solution", "import time\ntime.sleep(3)\n" + mb["Mbpp/793"]["canonical_solution"],
     "pass", "timeout"),
    # -Infinity among the inputs; a NUL character in one
    ("Mbpp/404", "solution", mb["Mbpp/404"]["canonical_solution"], "pass", "pass"),
    ("Mbpp/269", "solution", mb["Mbpp/269"]["canonical_solution"], "pass", "pass"),
    # only "not None" is compared
    ("Mbpp/737", "solution", "import re\ndef check_str(s):\n    return re.match('^[aeiouAEIOU]', s)\n",
     "pass", "pass"),
]
with open(t + "/samples-he.jsonl", "w") as fh, open(t + "/samples-mb.jsonl", "w") as fm, \
        open(t + "/want.json", "w") as w:
    want, n = {}, {}
    for task, key, code, base, plus in samples:
        f = fh if task.startswith("HumanEval/") else fm
        f.write(json.dumps({"task_id": task, key: code}) + "\n")
        jid = "%s#%d" % (task, n.get(task, 0))
        n[task] = n.get(task, 0) + 1
        want[jid] = [base, plus]
    json.dump(want, w)
EOF
    python3 - "$T/gt.out" "$T" <<'EOF'
import json, sys
with open(sys.argv[2] + "/he-gt.out", "w") as h, open(sys.argv[2] + "/mb-gt.out", "w") as m:
    for line in open(sys.argv[1]):
        (h if json.loads(line)["id"].startswith("HumanEval/") else m).write(line)
EOF
    # without --expected: refused, saying how to make it
    $B convert "$HE" --samples "$T/samples-he.jsonl" >"$T/out" 2>"$T/err"
    if [ $? = 2 ] && grep -q 'give --expected gt-results.jsonl' "$T/err" && [ ! -s "$T/out" ]; then
        ok evalplus_samples_without_expected_refused
    else
        bad evalplus_samples_without_expected_refused "$(cat "$T/err")"
    fi
    # the ground truth of the other benchmark: refused
    $B convert "$HE" --samples "$T/samples-he.jsonl" --expected "$T/mb-gt.out" >"$T/out" 2>"$T/err"
    if [ $? = 2 ] && grep -q 'which is no task of' "$T/err"; then
        ok evalplus_expected_of_another_benchmark_refused
    else
        bad evalplus_expected_of_another_benchmark_refused "$(cat "$T/err")"
    fi
    if $B convert "$HE" --samples "$T/samples-he.jsonl" --expected "$T/he-gt.out" --out "$T/s.jobs" 2>"$T/err" &&
        $B convert "$MB" --samples "$T/samples-mb.jsonl" --expected "$T/mb-gt.out" --out "$T/s-mb.jobs" 2>>"$T/err"; then
        cat "$T/s-mb.jobs" >>"$T/s.jobs"
        $B submit "$T/s.jobs" --local --wait --out "$T/s.out" --report "$T/report.json" >"$T/s.log" 2>&1
        rc=$?
        if [ "$rc" = 1 ] && python3 - "$T/s.out" "$T/want.json" "$T/report.json" >"$T/why" 2>&1 <<'EOF'
import json, sys
res = {r["id"]: r for r in map(json.loads, open(sys.argv[1]))}
want = json.load(open(sys.argv[2]))
rep = json.load(open(sys.argv[3]))
assert set(res) == set(want), sorted(set(res) ^ set(want))
wrong = []
for jid, (base, plus) in sorted(want.items()):
    r = res[jid]
    got = [json.loads(c["stdout"].splitlines()[-1])["status"] if c["stdout"] else "none"
           for c in r["cases"]]
    if got != [base, plus] or r["passed"] != (base == plus == "pass") or \
            [c["passed"] for c in r["cases"]] != [base == "pass", plus == "pass"]:
        wrong.append((jid, got, [base, plus], r["cases"][0]["stdout"][-200:], r["cases"][1]["stdout"][-200:]))
assert not wrong, wrong
# pass@1 of the base tests and of base + plus (EvalPlus's "plus"), over tasks
tasks = {}
for jid, (base, plus) in want.items():
    t = tasks.setdefault(jid.split("#")[0], [0, 0, 0])
    t[0] += 1
    t[1] += base == "pass"
    t[2] += base == plus == "pass"
p_base = sum(b / n for n, b, _ in tasks.values()) / len(tasks)
p_plus = sum(p / n for n, _, p in tasks.values()) / len(tasks)
assert abs(rep["base"]["total"]["pass@1"] - p_base) < 1e-9, (rep["base"]["total"], p_base)
assert abs(rep["total"]["pass@1"] - p_plus) < 1e-9, (rep["total"], p_plus)
print(f"{len(want)}_samples_base_and_plus_verdicts_as_EvalPlus_gives_them,_pass@1_base_{p_base:.4f}_plus_{p_plus:.4f}")
EOF
        then
            ok "evalplus_samples: $(cat "$T/why")"
        else
            bad evalplus_samples "exit $rc: $(tail -3 "$T/why") $(tail -3 "$T/s.log")"
        fi
    else
        bad evalplus_samples_convert "$(cat "$T/err")"
    fi
fi
if [ -z "${EVALPLUS_SOURCED:-}" ]; then suite_end; fi
