#!/bin/bash
# test_phases.sh - the per-phase timings of a result (docs/jobs.md,
# "phases") from every front end against the real dockerd and a
# redis-server of its own (temp port): a worker's result (the Redis hash's
# phases field), a `submit --local` result and `run --json` each carry
# phases with plausible, consistent values (a C++ compile, run close to
# duration_ms, the phases inside the total, a warm acquire after the
# first job), and `submit --report` prints the per-phase percentiles with
# the machine, engine and image digest lines, and writes them.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
T=$(mktemp -d /tmp/llmsb-phases.XXXXXX)
PORT=$(free_port)
PREFIX=phasetest$$
R="redis-cli -p $PORT"
suite phases; WORKER=""

cleanup() {
    stop_worker_and_redis
    rm -rf "$T"
}
trap cleanup EXIT

WHY_SHOW="head -8"

# check NAME FILE: FILE holds result objects (one JSON a line); the
# checks below are asked of each, and of the sequence (warm after first).
check() {
    if python3 - "$2" "${3:-}" >"$T/why" 2>&1 <<'EOF'; then ok "$1"; else bad "$1" "phases implausible"; fi
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mode = sys.argv[2]
assert rs, "no results"
HOST = ["queue_wait_ms", "prepare_ms", "acquire_ms", "agent_ms", "finish_ms"]
AGENT = ["install_ms", "compile_ms", "run_ms", "collect_ms"]
for r in rs:
    p = r.get("phases")
    assert isinstance(p, dict), "%s: no phases object: %r" % (r["id"], p)
    assert r["status"] == "ok", "%s: %s" % (r["id"], r["status"])
    for k in HOST + ["total_ms"]:
        assert isinstance(p.get(k), int) and p[k] >= 0, "%s: %s = %r" % (r["id"], k, p.get(k))
    assert p["acquire"] in ("warm", "cold"), p
    # the host's phases one after another: within the total (10 ms of rounding)
    assert sum(p[k] for k in HOST) <= p["total_ms"] + 10, (r["id"], p)
    # the agent's steps inside its turn
    assert sum(p.get(k, 0) for k in AGENT) <= p["agent_ms"] + 5, (r["id"], p)
    # the run step is the program's run, with little around it
    assert "run_ms" in p and abs(p["run_ms"] - r["duration_ms"]) <= 30 + r["duration_ms"] // 5, (r["id"], r["duration_ms"], p)
    assert "collect_ms" in p and "install_ms" not in p, p
    if r["id"].startswith("cpp"):
        assert p.get("compile_ms", 0) > 0, (r["id"], p)
    else:
        assert "compile_ms" not in p, (r["id"], p)
    if mode == "run":
        assert p["queue_wait_ms"] == 0, p
ids = [r["id"] for r in rs]
# the same key's later jobs find the container the earlier left
for lang in ("cpp", "py"):
    mine = [r for r in rs if r["id"].startswith(lang)]
    if len(mine) > 1:
        assert all(r["phases"]["acquire"] == "warm" for r in mine[1:]), [r["phases"] for r in mine]
if mode == "local":
    # one slot: the last job waited for those before it
    last = rs[-1]["phases"]
    assert last["queue_wait_ms"] >= sum(r["phases"]["agent_ms"] for r in rs[:-1]), [r["phases"] for r in rs]
print("checked", len(rs))
EOF
}

cat >"$T/jobs.jsonl" <<'EOF'
{"id": "cpp-1", "lang": "cpp", "code": "#include <cstdio>\nint main(){ puts(\"hi\"); }\n", "expect_stdout": "hi\n"}
{"id": "cpp-2", "lang": "cpp", "code": "#include <vector>\n#include <cstdio>\nint main(){ std::vector<int> v(10, 2); int s = 0; for (int x : v) s += x; printf(\"%d\\n\", s); }\n", "expect_stdout": "20\n"}
{"id": "py-1", "lang": "python", "code": "import time; time.sleep(0.3); print(1)", "expect_stdout": "1\n"}
{"id": "py-2", "lang": "python", "code": "print(2)", "expect_stdout": "2\n"}
EOF

# 1. run --json: no queue, a cold container
echo 'import time; time.sleep(0.2); print(3)' >"$T/p.py"
printf '#include <cstdio>\nint main(){ puts("x"); }\n' >"$T/c.cpp"
: >"$T/run.jsonl"
for f in p.py c.cpp; do
    $B run --json "$T/$f" </dev/null | jq -c --arg id "$( [ $f = c.cpp ] && echo cpp-run || echo py-run)" '.id = $id' >>"$T/run.jsonl" 2>"$T/err"
done
check run_json "$T/run.jsonl" run

# 2. submit --local, one slot: queue waits grow, later jobs warm
$B submit "$T/jobs.jsonl" --local --slots 1 --out "$T/local.jsonl" </dev/null >"$T/out" 2>"$T/err"
check submit_local "$T/local.jsonl" local

# 3. a worker through Redis: the hash's phases field is JSON text
start_redis "$PORT" "$T" || { echo "phases: redis-server did not start"; exit 1; }
export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT
LLMSB_PREFIX=$PREFIX $B worker --name phw --slots 1 >"$T/worker.log" 2>&1 &
WORKER=$!
for _ in $(seq 1 100); do [ "$($R exists "$PREFIX:worker:phw")" = 1 ] && break; sleep 0.1; done
LLMSB_PREFIX=$PREFIX $B submit "$T/jobs.jsonl" --wait --out "$T/worker.jsonl" --report "$T/wrep.json" \
    </dev/null >"$T/out" 2>"$T/err"
check worker "$T/worker.jsonl" worker
if jq -e '(.environment.where | test("ran on the workers phw$")) and .phases.cpp.compile_ms.p50 > 0' \
    "$T/wrep.json" >/dev/null 2>&1; then
    ok worker_report
else
    cp "$T/out" "$T/why"; bad worker_report "the report through Redis does not name the worker"
fi
if $R hget "$PREFIX:result:cpp-1" phases | jq -e '.compile_ms > 0 and (.acquire | type) == "string"' >/dev/null 2>&1; then
    ok redis_hash_field
else
    $R hgetall "$PREFIX:result:cpp-1" >"$T/why" 2>&1; bad redis_hash_field "no phases JSON in the hash"
fi

# 4. submit --report: the percentile table, machine, engine, digests, limits
$B submit "$T/jobs.jsonl" --local --slots 2 --report "$T/rep.json" </dev/null >"$T/out" 2>"$T/err"
if grep -q '^phases (milliseconds; nearest-rank' "$T/out" &&
   grep -Eq '^cpp +compile +2 +[0-9]+ +[0-9]+ +[0-9]+$' "$T/out" &&
   grep -Eq '^python +total +2 ' "$T/out" &&
   grep -q '^provenance: The machine and engine submit --local ran the jobs on$' "$T/out" &&
   grep -q '^machine: .*, [0-9.]* GiB$' "$T/out" &&
   grep -q '^engine: docker [0-9]' "$T/out" &&
   grep -Eq '^image llmsb/cpp:latest: sha256:[0-9a-f]{64}' "$T/out" &&
   grep -q '^limits python: timeout [0-9]* ms, memory [0-9]* MB' "$T/out" &&
   jq -e '.percentiles == "nearest-rank" and .phases.cpp.compile_ms.p50 > 0 and
          (.environment.images | length) == 2 and .environment.machine.cpus > 0' "$T/rep.json" >/dev/null &&
   grep -q '^| cpp | compile | 2 |' "$T/rep.json.md" && grep -q '^- engine: docker' "$T/rep.json.md"; then
    ok report_table_and_provenance
else
    cp "$T/out" "$T/why"; bad report_table_and_provenance "the report lacks the phases or the provenance"
fi

echo "phases: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
