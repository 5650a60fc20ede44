# differ.py - the shared half of the compile caches' differential tests
# (cpp.sh, java.sh).  Each script writes its HumanEval-X jobs to
# $T/jobs.jsonl and $T/expect (ID PATH per job: the path its compile must
# take) and then:
#   differ.py write T CORPUS
#       adds the corpus's jobs (a YAML file of "defaults" and "jobs"; the
#       first word of a job's id is its path) and writes the three job
#       files: cached (as written), plain (LLMSB_COMPILE_CACHE=0) and trace
#       (LLMSB_COMPILE_CACHE_TRACE=-)
#   differ.py compare T LINE FAST [NONE] [--trace-compared] [--said=PATH]
#       compares the plain and the cached results on every field but the
#       timings, and checks the path each job took in the trace run: the
#       compile output's lines matching the regex LINE, whose first word is
#       the path (NONE when there is none; without NONE, exactly one line
#       is required).  A job expected on the FAST path whose plain compile
#       says something must take PATH instead ("fallback" unless --said).  With --trace-compared the
#       trace run, its LINE lines taken out of the compile output, is
#       compared with the plain one too: the run that shows its path is
#       also one whose results must agree.
import json, re, sys

def write(T, corpus):
    import yaml
    jobs = [json.loads(l) for l in open(T + "/jobs.jsonl")]
    he = len(jobs)
    doc = yaml.safe_load(open(corpus))
    with open(T + "/expect", "a") as f:
        for c in doc["jobs"]:
            j = dict(doc.get("defaults", {}))
            j.update(c)
            jobs.append(j)
            f.write("%s %s\n" % (j["id"], j["id"].split("-")[0]))
    print("%d jobs: %d HumanEval-X, %d of the corpus" % (len(jobs), he, len(jobs) - he))
    for name, env in (("cached", None), ("plain", {"LLMSB_COMPILE_CACHE": "0"}),
                      ("trace", {"LLMSB_COMPILE_CACHE_TRACE": "-"})):
        with open("%s/%s.jsonl" % (T, name), "w") as f:
            for j in jobs:
                j = dict(j)
                if env:
                    j["env"] = dict(j.get("env", {}), **env)
                f.write(json.dumps(j) + "\n")

def load(T, name):
    with open("%s/%s.out" % (T, name)) as f:
        return {r["id"]: r for r in map(json.loads, f)}

# the timings (and where the job ran, and how its sandbox was had: the
# phases) may differ; nothing else may
TIMES = re.compile(r"(_at|_ms|_kb)$|^(worker|attempts|phases)$")

def untimed(v):
    """v without its timing fields, at any depth (a test case's own)."""
    if isinstance(v, dict):
        return {k: untimed(x) for k, x in v.items() if not TIMES.search(k)}
    if isinstance(v, list):
        return [untimed(x) for x in v]
    return v

def untraced(r, line):
    """r with the lines matching line taken out of its compile output."""
    r = dict(r)
    out = "".join(l for l in (r.get("compile_output") or "").splitlines(keepends=True)
                  if not re.fullmatch(line, l.rstrip("\n")))
    r["compile_output"] = out or None
    return r

def compare(T, line, fast, none=None, trace_compared=False, said="fallback"):
    failed = 0
    plain, cached, trace = load(T, "plain"), load(T, "cached"), load(T, "trace")
    expect = dict(l.split() for l in open(T + "/expect"))
    if set(plain) != set(expect) or set(cached) != set(expect) or set(trace) != set(expect):
        print("FAIL: the runs have different ids")
        return 1
    paths, statuses = {}, {}
    took = {"cached": [], "plain": []}
    for i, want in expect.items():
        a, b = plain[i], cached[i]
        others = [("cached", b)]
        if trace_compared: # no compile output: absent or empty alike
            a = dict(a, compile_output=a.get("compile_output") or None)
            others = [("cached", dict(b, compile_output=b.get("compile_output") or None)),
                      ("trace", untraced(trace[i], line))]
        for name, o in others:
            for f in sorted(set(a) | set(o)):
                if not TIMES.search(f) and untimed(a.get(f)) != untimed(o.get(f)):
                    print("FAIL %s: %s differs:\n  plain:  %.600r\n  %-7s %.600r" %
                          (i, f, a.get(f), name + ":", o.get(f)))
                    failed += 1
        got = [l for l in (trace[i].get("compile_output") or "").split("\n")
               if re.fullmatch(line, l)]
        path = got[0].split()[0] if len(got) == 1 else none if not got and none else "?%r" % got
        if want == fast and a.get("compile_output"):
            want = said # the plain compile says something
        paths[path] = paths.get(path, 0) + 1
        if path != want:
            print("FAIL %s: the compile took %s, should take %s" % (i, path, want))
            failed += 1
        if want == fast and a.get("finished_at") and b.get("finished_at"):
            for m, r in (("plain", a), ("cached", b)):
                took[m].append(r["finished_at"] - r["started_at"] - (r.get("duration_ms") or 0))
        statuses[b.get("status")] = statuses.get(b.get("status"), 0) + 1
    print("%d jobs, statuses %s; paths %s" % (len(expect), statuses, paths))
    if took["plain"]:
        print("compile and the rest, the %s-path jobs: %d ms plain, %d ms %s" %
              (fast, sum(took["plain"]), sum(took["cached"]), fast))
    return 1 if failed else 0

if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3])
    else:
        said = [a.split("=", 1)[1] for a in sys.argv[2:] if a.startswith("--said=")]
        args = [a for a in sys.argv[2:] if a != "--trace-compared" and not a.startswith("--said=")]
        sys.exit(compare(*args, trace_compared="--trace-compared" in sys.argv,
                         said=said[0] if said else "fallback"))
