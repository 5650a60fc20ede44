#!/usr/bin/env python3
"""eval_bench.py - the job files and the tables of bench/bench_eval.sh.

  samples LANG DATASET N        model-like samples ({"task_id", "generation"}) for
                                `convert --samples`: of every 4, one reference solution,
                                one cut short (a generation stopped at its token limit),
                                one that throws at its first line, one another task's
                                solution; so compile errors, failed tests and passes.
  crux JOBS                     CRUXEval-X-style C++ jobs from converted ones: the leading
                                #include lines become CRUXEval-X's `#include <assert.h>`,
                                `#include <bits/stdc++.h>`, with the default flags.
  prep JOBS W [SWITCH]          the measured job file: W warm-up copies of the first
                                jobs (ids "warmup-N"), then every job, each with the
                                JSON object SWITCH merged in (the "plain" run's switch).
  report DIR SLOTS [OUT...]     the tables, from DIR's results (LANG.SET.MODE.out, made
                                by `submit --local --out`) and from the other benches'
                                output files OUT (bench_run, bench_queue) when given.
  phases DIR                    where a compiled job's time goes: DIR/phases.txt
                                (compile_phases.sh's "LABEL PHASE MS" lines) and the go
                                command's traces DIR/go*.N.json, as one table.

Only the results' own fields are used: started_at..finished_at is the job in its sandbox
(files, compile, run and the agent's collection), duration_ms the run step; so the
compile step and what surrounds it is their difference. Throughput is over the measured
jobs only (first start to last finish), after the warm-up jobs of the same process, so
each sandbox has run a job of its kind before (a zygote is up when the cache is one).
"""
import json
import re
import sys

LANGS = ["python", "js", "java", "cpp", "go"]
# the model-like samples as CRUXEval-X's C++ programs start: C++ only
SETS = ("ref", "samples", "crux")
NAMES = {"python": "Python", "js": "JavaScript", "java": "Java", "cpp": "C++", "go": "Go"}
# a first statement that throws, whatever the function returns
THROW = {
    "python": "    raise RuntimeError('model')\n",
    "js": "  throw new Error('model');\n",
    "java": '        if (true) throw new RuntimeException("model");\n',
    "cpp": "    throw 1;\n",
    "go": '    if true { panic("model") }\n',
}


def samples(lang, dataset, n):
    rows = [json.loads(l) for l in open(dataset, encoding="utf-8") if l.strip()]
    for i in range(n):
        row = rows[i % len(rows)]
        sol = row["canonical_solution"]
        kind = i % 4
        if kind == 1:
            lines = sol.splitlines(keepends=True)
            gen = "".join(lines[: max(1, len(lines) // 2)])
        elif kind == 2:
            gen = THROW[lang] + sol
        elif kind == 3:
            gen = rows[(i + 1) % len(rows)]["canonical_solution"]
        else:
            gen = sol
        print(json.dumps({"task_id": row["task_id"], "generation": gen}))


def crux(path):
    for line in open(path, encoding="utf-8"):
        j = json.loads(line)
        body = j["code"].split("\n")
        while body and (body[0] == "" or re.fullmatch(r"#include ?<[^>]*>", body[0])):
            body.pop(0)
        j["code"] = "#include <assert.h>\n#include <bits/stdc++.h>\n" + "\n".join(body)
        j.pop("compile_flags", None)
        print(json.dumps(j))


def prep(path, warm, switch):
    jobs = [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]
    extra = json.loads(switch) if switch else {}
    out = []
    for i in range(warm):
        w = dict(jobs[i % len(jobs)])
        w["id"] = "warmup-%d" % i
        w.pop("meta", None)
        out.append(w)
    out += jobs
    for j in out:
        j.update(extra)
        print(json.dumps(j))


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = (len(xs) - 1) * p / 100.0
    f = int(k)
    c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f)


def load(path):
    """The measured results of one run: a dict of figures, or None."""
    try:
        rs = [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]
    except OSError:
        return None
    rs = [r for r in rs if not str(r.get("id", "")).startswith("warmup-")]
    # a job decided before it reached a sandbox (a Java file without main) has no times
    ran = [r for r in rs if r.get("started_at") and r.get("finished_at")]
    if not ran:
        return None
    st = [r["started_at"] for r in ran]
    fi = [r["finished_at"] for r in ran]
    sb = [f - s for s, f in zip(st, fi)]
    # the run step's time, of the jobs whose program ran (not a compile error)
    run = [r["duration_ms"] for r in ran if r.get("duration_ms") is not None]
    span = max(fi) - min(st)
    statuses = {}
    for r in rs:
        statuses[r.get("status", "?")] = statuses.get(r.get("status", "?"), 0) + 1
    return {
        "verdicts": {r.get("id"): (r.get("status"), r.get("passed")) for r in rs},
        "n": len(rs),
        "passed": sum(1 for r in rs if r.get("passed")),
        "jobs_s": len(rs) * 1000.0 / span if span > 0 else float("nan"),
        "sandbox": sb,
        "run": run,
        "other": [r["finished_at"] - r["started_at"] - (r.get("duration_ms") or 0) for r in ran],
        "statuses": statuses,
        "zygote": sum(1 for r in rs if r.get("zygote")),
        "prespawned": sum(1 for r in rs if r.get("prespawned")),
    }


def ratio(a, b):
    return "%.2fx" % (a / b) if a and b and a == a and b == b else "-"


def report(d, slots, outs):
    res = {}
    print("\njobs/s per language, `submit --local --slots %s`, one run; plain: the cache off, "
          "cached: the cache on (only the switch differs)" % slots)
    print("%-11s %-8s %5s %6s %9s %9s %-18s  %s" % ("lang", "set", "jobs", "passed", "plain",
                                                 "cached", "ratio", "statuses (plain)"))
    for lang in LANGS:
        for s in SETS:
            p = load("%s/%s.%s.plain.out" % (d, lang, s))
            c = load("%s/%s.%s.cached.out" % (d, lang, s))
            res[(lang, s)] = (p, c)
            if not p:
                continue
            st = " ".join("%s %d" % kv for kv in sorted(p["statuses"].items()))
            if c:
                st += "; zygote: plain %d, cached %d" % (p["zygote"], c["zygote"])
            if c and c["prespawned"]:
                st += "; prespawned: plain %d, cached %d" % (p["prespawned"], c["prespawned"])
            print("%-11s %-8s %5d %6d %9.2f %9s %-18s  %s" % (
                NAMES[lang], s, p["n"], p["passed"], p["jobs_s"],
                "%.2f" % c["jobs_s"] if c else "n/a", ratio(c and c["jobs_s"], p["jobs_s"])
                if c else "n/a (no cache yet)", st))

    for (lang, s), (p, c) in res.items():
        if p and c and p["verdicts"] != c["verdicts"]:
            diff = sorted(k for k in p["verdicts"] if p["verdicts"][k] != c["verdicts"].get(k))
            print("  %s %s: plain and cached verdicts differ: %s" % (NAMES[lang], s,
                                                                    " ".join(map(str, diff))))
    print("\nwhere a job's time goes, ms p50/p95 (in sandbox = started_at..finished_at; "
          "run = duration_ms;\ncompile+ = the difference: files, compile, a wait for a starting zygote, "
          "collection; a job decided before its sandbox is left out)")
    print("%-11s %-8s %-6s %13s %13s %13s" % ("lang", "set", "mode", "in sandbox", "compile+",
                                            "run"))
    for lang in LANGS:
        for s in SETS:
            for mode, r in zip(("plain", "cached"), res.get((lang, s), (None, None))):
                if r:
                    print("%-11s %-8s %-6s %s %s %s" % (NAMES[lang], s, mode, *(
                        "%6.0f/%6.0f" % (pct(r[k], 50), pct(r[k], 95))
                        for k in ("sandbox", "other", "run"))))

    goals(d, res, outs)


def grep(outs, pattern):
    for path in outs:
        try:
            for line in open(path, encoding="utf-8", errors="replace"):
                m = re.search(pattern, line)
                if m:
                    return m
        except OSError:
            pass
    return None


def goals(d, res, outs):
    def cache_row(lang, goal, then, more=""):
        got = []
        for s in SETS:
            p, c = res.get((lang, s), (None, None))
            if p:
                got.append("%s %.2f jobs/s, cached %s" % (
                    s, p["jobs_s"], ratio(c["jobs_s"], p["jobs_s"]) if c else "n/a"))
        return (NAMES[lang], goal, then, "; ".join(got) + more if got else "not measured")

    rows = [cache_row("cpp", ">= 4x with caches vs without", "1.65 and 0.40 jobs/s"),
            cache_row("java", ">= 4x", "1.41 jobs/s"), cache_row("go", ">= 2x", "1.19 jobs/s"),
            cache_row("js", ">= 2x", "6.3 jobs/s")]
    triv, num = load(d + "/trivial.out"), load(d + "/numpy.out")
    hx = res.get(("python", "ref"), (None, None))[1]
    if triv and num:
        t = pct(triv["run"], 50)
        got = "own run p50: numpy job %s, HumanEval-X Python %s of a trivial job's (%.0f ms)" % (
            ratio(pct(num["run"], 50), t), ratio(hx and pct(hx["run"], 50), t), t)
    else:
        got = "not measured"
    rows.append(("Python, a job importing numpy", "<= 2x a trivial job's", "own run 3x", got))
    plot = d + "/plot.out"
    try:
        rs = [json.loads(l) for l in open(plot, encoding="utf-8") if l.strip()]
    except OSError:
        rs = []
    if len(rs) >= 40:
        rs.sort(key=lambda r: r.get("started_at") or 0)
        sb = [(r.get("finished_at") or 0) - (r.get("started_at") or 0) for r in rs]
        first, warm = pct(sb[:20], 50), pct(sb[20:], 50)
        got = "plot in sandbox p50 (mean): first 20 %.0f ms (%.0f), next 20 %.0f ms (%.0f): %s" % (
            first, sum(sb[:20]) / 20.0, warm, sum(sb[20:]) / len(sb[20:]), ratio(first, warm))
        plot_warm = warm
    else:
        got, plot_warm = "not measured", None
    rows.append(("first 20 jobs of a new submit --local", "<= 1.5x the warm pool's p50",
                 "plot p50 572 vs 234 ms", got))
    q = grep(outs, r"queue >= 50x run-rm \(got ([0-9.]+)x\)")
    rows.append(("queue vs docker run --rm", ">= 50x", "44x", "%sx (bench_queue above)" %
                 q.group(1) if q else "not measured (bench_queue not run)"))
    pz = grep(outs, r"^plot\s+zygote\s+n=\d+\s+p50\s+([0-9.]+) ms")
    got = []
    if pz:
        got.append("%s ms (bench_run above)" % pz.group(1))
    if plot_warm is not None:
        got.append("%.0f ms in sandbox via submit --local" % plot_warm)
    rows.append(("plot job p50", "<= 100 ms", "104 ms", ", ".join(got) or "not measured"))
    print("\nthe issue's goals, beside this run's figures (issue: the figures it was filed with)")
    rows.insert(0, ("jobs", "goal", "issue", "this run"))
    w = [max(len(r[i]) for r in rows) for i in range(3)]
    for r in rows:
        print("%-*s  %-*s  %-*s  %s" % (w[0], r[0], w[1], r[1], w[2], r[2], r[3]))


def trace_phases(path):
    """The go command's -debug-trace of one build, in ms: load (packages, up to the
    action graph's run), compile (the job's package and, for a test, its generated
    main), vet, link, and graph (the rest: the action graph's cache checks of every
    dependency, its bookkeeping, the tool starts between)."""
    spans, open_ = [], {}
    for e in json.load(open(path)):
        k = (e.get("tid"), e.get("name", ""))
        if e.get("ph") == "B":
            open_.setdefault(k, []).append(e["ts"])
        elif e.get("ph") == "E" and open_.get(k):
            spans.append((k[1], open_[k].pop(), e["ts"]))
    t0, t1 = min(s[1] for s in spans), max(s[2] for s in spans)
    ph = {"total": (t1 - t0) / 1000.0, "load": 0.0, "compile": 0.0, "vet": 0.0, "link": 0.0}
    for name, a, b in spans:
        m = re.match(r"Executing action \((build|vet|link) (.*)\)$", name)
        if name.startswith("exec.Builder.Do"):
            ph["load"] = (a - t0) / 1000.0
        elif m and ("/ph." in m.group(2) or "command-line-arguments" in m.group(2)):
            key = "compile" if m.group(1) == "build" else m.group(1)
            ph[key] += (b - a) / 1000.0
    ph["graph"] = ph["total"] - ph["load"] - ph["compile"] - ph["link"]  # vet runs beside
    return ph


def phases(d):
    import glob
    import statistics

    rows, fig = [], {}
    for line in open(d + "/phases.txt"):
        f = line.split()
        if len(f) >= 2 and f[1] == "FAILED":
            sys.exit("bench_eval: compile phases: " + line.strip())
        if len(f) == 3 and f[2].isdigit():
            fig.setdefault(f[0], {}).setdefault(f[1], []).append(float(f[2]))
    for label in ("go_test", "go"):
        for t in sorted(glob.glob("%s/%s.*.json" % (d, label))):
            for k, v in trace_phases(t).items():
                fig.setdefault(label, {}).setdefault("t_" + k, []).append(v)
    med = lambda lab, k: statistics.median(fig[lab][k]) if k in fig.get(lab, {}) else None
    cols = ["total", "go: load", "go: graph", "compile", "vet", "assemble", "link", "run"]
    names = {
        "go_test": "go test -c (HumanEval-X)",
        "go": "go build (a program)",
        "cpp_he": "g++ HumanEval-X, no pch",
        "cpp_he_pch": "g++ HumanEval-X, pch",
        "cpp_stdcpp": "g++ CRUXEval-X, no pch",
        "cpp_stdcpp_pch": "g++ CRUXEval-X, pch",
    }
    print("%-26s" % "job (ms, median)" + "".join("%10s" % c for c in cols))
    for lab in names:
        if lab not in fig:
            continue
        if lab.startswith("go"):
            # the traced build's split, scaled to the plain build's total (tracing
            # costs time of its own, spread over the go command's work)
            total, traced = med(lab, "total"), med(lab, "t_total")
            k = total / traced if traced else 1.0
            v = [total] + [med(lab, "t_" + p) * k for p in ("load", "graph", "compile", "vet")]
            v += [None, med(lab, "t_link") * k, med(lab, "run")]
        else:
            v = [med(lab, "total"), None, None, med(lab, "compile"), None]
            v += [med(lab, "assemble"), med(lab, "link"), med(lab, "run")]
        print("%-26s" % names[lab] + "".join("%10s" % ("-" if x is None else "%.0f" % x) for x in v))


def main(a):
    if len(a) >= 4 and a[0] == "samples":
        samples(a[1], a[2], int(a[3]))
    elif len(a) >= 2 and a[0] == "crux":
        crux(a[1])
    elif len(a) >= 3 and a[0] == "prep":
        prep(a[1], int(a[2]), a[3] if len(a) > 3 else "")
    elif len(a) >= 2 and a[0] == "phases":
        phases(a[1])
    elif len(a) >= 3 and a[0] == "report":
        report(a[1], a[2], a[3:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
