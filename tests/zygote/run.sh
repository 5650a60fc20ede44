#!/bin/bash
# run.sh - the zygote against a fresh interpreter, on the real engine:
# tests/zygote/corpus.yaml (crashes, both streams, stdin, exits, signals,
# threads, multiprocessing, plots, the job's own modules...) and every
# HumanEval canonical solution run once with jobs.fresh_interpreter: true
# and once with false (one slot, so the pool's container is reused and its
# zygote serves all but the first job); status, exit code, signal, stdout,
# stderr, cases and artifacts must be equal, the zygote must have served
# the jobs (result field "zygote"), random numbers must differ between
# jobs.  The first job of a new process goes through the zygote too (it
# started when its container was handed over).  Then the hostile suite and the integration suite with fresh
# interpreters (make test runs them with the zygote, the default).
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
B=${LLMSB_BIN:-$PWD/bin/llm-sandbox}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
suite zygote

base=${LLMSB_CONFIG:-}
for mode in fresh zygote; do
    { [ -n "$base" ] && cat "$base"
      echo "jobs:"
      [ $mode = fresh ] && echo "  fresh_interpreter: true" || echo "  fresh_interpreter: false"
    } >"$T/$mode.yaml"
done
"$B" convert tests/eval/data/humaneval.jsonl --out "$T/humaneval.jsonl" 2>"$T/err" ||
    bad convert "$(cat "$T/err")"

for mode in fresh zygote; do
    for set in corpus humaneval; do
        in=tests/zygote/corpus.yaml
        [ $set = humaneval ] && in=$T/humaneval.jsonl
        LLMSB_CONFIG=$T/$mode.yaml "$B" submit "$in" --local --slots 1 --no-dedup --allow-invalid \
            --out "$T/$set.$mode.jsonl" >"$T/$set.$mode.log" 2>&1
        rc=$?
        if [ "$rc" -gt 1 ] || [ ! -s "$T/$set.$mode.jsonl" ]; then
            bad "${set}_$mode" "exit $rc: $(tail -5 "$T/$set.$mode.log")"
        fi
    done
done

python3 - "$T" >"$T/diff.out" 2>&1 <<'EOF'
import json, sys
T = sys.argv[1]
FIELDS = ("status", "exit_code", "signal", "stdout", "stderr", "stdout_truncated",
          "stderr_truncated", "compile_output", "passed", "cases_passed", "cases_total")

def load(name):
    with open("%s/%s.jsonl" % (T, name)) as f:
        return {r["id"]: r for r in map(json.loads, f)}

def arts(r):
    return sorted((a.get("name"), a.get("base64"), a.get("skipped")) for a in r.get("artifacts") or [])

def cases(r):
    return [{k: c.get(k) for k in ("status", "exit_code", "signal", "stdout", "stderr", "passed")}
            for c in r.get("cases") or []]

failed = 0
for s in ("corpus", "humaneval"):
    fresh, zyg = load(s + ".fresh"), load(s + ".zygote")
    if set(fresh) != set(zyg) or not fresh:
        print("FAIL %s: the two runs have different ids" % s)
        failed += 1
        continue
    served, unserved = 0, []
    for i in fresh:
        a, b = fresh[i], zyg[i]
        if a.get("zygote"):
            print("FAIL %s.%s: fresh_interpreter: true went through the zygote" % (s, i))
            failed += 1
        if b.get("zygote"):
            served += 1
        elif not i.startswith(("plain-", "warmup")) and i != list(zyg)[0]:
            unserved.append(i)
        if i.startswith("plain-") and b.get("zygote"):
            print("FAIL %s.%s: should have fallen back to a plain start" % (s, i))
            failed += 1
        for f in FIELDS:
            if f == "stdout" and i.startswith("rand-"):
                continue
            if a.get(f) != b.get(f):
                print("FAIL %s.%s: %s differs:\n  fresh:  %.400r\n  zygote: %.400r" % (s, i, f, a.get(f), b.get(f)))
                failed += 1
        if arts(a) != arts(b):
            print("FAIL %s.%s: artifacts differ: %r vs %r" % (s, i, [x[0] for x in arts(a)], [x[0] for x in arts(b)]))
            failed += 1
        if cases(a) != cases(b):
            print("FAIL %s.%s: cases differ:\n  %r\n  %r" % (s, i, cases(a), cases(b)))
            failed += 1
    # the first job of each profile in a container runs plainly, and a
    # container replaced after a job (timeout, memory_limit) starts over:
    # a few may be unserved, never more than a tenth
    print("%s: %d jobs, %d through the zygote, unserved: %s" % (s, len(zyg), served, unserved or "none"))
    if len(unserved) > max(4, len(zyg) // 10):
        print("FAIL %s: %d jobs did not go through the zygote" % (s, len(unserved)))
        failed += 1
    for name, run in (("fresh", fresh), ("zygote", zyg)):
        outs = [run[i]["stdout"] for i in run if i.startswith("rand-")]
        if len(set(outs)) != len(outs):
            print("FAIL %s.%s: two jobs drew the same random numbers: %r" % (s, name, outs))
            failed += 1
sys.exit(1 if failed else 0)
EOF
rc=$?
grep -v '^FAIL' "$T/diff.out" | sed 's/^/  /'
grep '^FAIL' "$T/diff.out" | head -30
[ $rc = 0 ] && ok "same_results_both_ways" || bad same_results_both_ways "see above"

# the first job of a new process: its container's zygote started when the
# container was handed over (sandbox_prestart), so that job went through it
# (each job below is the first of its container: the images differ, and
# the base-profile job runs in a process of its own)
cat >"$T/first.jsonl" <<'JSONL'
{"id": "first-plot", "lang": "python", "plots": true, "code": "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [3, 1, 2])\nplt.show()\nprint('plotted')\n"}
{"id": "first-ruby", "lang": "ruby", "code": "puts 6 * 7"}
{"id": "first-r", "lang": "r", "code": "cat(6 * 7, '\\n')"}
JSONL
echo '{"id": "first-base", "lang": "python", "code": "print(1)"}' >"$T/first-base.jsonl"
LLMSB_CONFIG=$T/zygote.yaml "$B" submit "$T/first.jsonl" --local --slots 3 --out "$T/first.out.jsonl" \
    >"$T/first.log" 2>&1
rc=$?
LLMSB_CONFIG=$T/zygote.yaml "$B" submit "$T/first-base.jsonl" --local --slots 1 \
    --out "$T/first-base.out.jsonl" >>"$T/first.log" 2>&1
r2=$?; [ $r2 -gt $rc ] && rc=$r2
out=$(cat "$T/first.out.jsonl" "$T/first-base.out.jsonl" 2>/dev/null | python3 -c '
import json, sys
rs = [json.loads(l) for l in sys.stdin]
for r in rs:
    if r.get("status") != "ok" or not r.get("zygote"):
        print("%s: status %s, zygote %s, plots %d" % (r.get("id"), r.get("status"), r.get("zygote"),
              len(r.get("artifacts") or [])))
if len(rs) != 4:
    print("%d results of 4" % len(rs))')
[ $rc -le 1 ] && [ -z "$out" ] && ok "first_job_of_a_process_served" ||
    bad first_job_of_a_process_served "exit $rc: $out $(tail -3 "$T/first.log")"

# the hostile suite and the hardening audit with fresh interpreters
out=$(LLMSB_CONFIG=$T/fresh.yaml tests/hostile/run.sh 2>&1); rc=$?
printf '%s\n' "$out" | grep '^FAIL' | head -10
[ $rc = 0 ] && ok "hostile_fresh ($(printf '%s\n' "$out" | tail -1))" ||
    bad hostile_fresh "$(printf '%s\n' "$out" | tail -1)"
out=$(LLMSB_CONFIG=$T/fresh.yaml "${LLMSB_TBIN:-$PWD/bin/tests}/test_integ_docker" 2>&1); rc=$?
printf '%s\n' "$out" | grep '^FAIL' | head -10
[ $rc = 0 ] && ok "integration_fresh ($(printf '%s\n' "$out" | tail -1))" ||
    bad integration_fresh "$(printf '%s\n' "$out" | tail -1)"

suite_end
