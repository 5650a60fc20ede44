#!/bin/bash
# java.sh - the Java compile server (agent/javac.c, a warm javac in a
# long-lived JVM: languages/hooks/LlmsbJavac.java) against the plain javac
# command, on the real engine: tests/compile-cache/java-corpus.yaml
# (compile errors in the program and in a helper file, an unchecked note, a
# deprecation note, a removal warning, a runtime exception, exit codes, a
# timeout, no main, a public class not named Main, a package, a helper
# .java beside Main, stdin, unicode, META-INF and module-info in the work
# dir, .hotspotrc and .hotspot_compiler, the class files' modes,
# JAVA_TOOL_OPTIONS and other env, test cases, a container below the
# server's memory or pids threshold) and HumanEval-X's Java reference
# solutions, each run with the server and with LLMSB_COMPILE_CACHE=0 (a
# sandbox that runs no server at all);
# every result field but the timings must be equal, the class files
# (artifacts) too.  A third run with LLMSB_COMPILE_CACHE_TRACE=- (the
# agent's trace in compile_output) checks that each program took the path
# it should: "warm-" ids and the HumanEval-X programs compile in the server
# (or fall back, when the plain compile has output), "fallback-" ones ask
# and fall back, "plain-" ones never ask; it is compared too, its trace
# lines taken out.  Then, one sandbox in turn: a
# job's run step tries to signal the server, read its /proc files
# (environ, mem, fd) and find a socket to connect to (with
# LLMSB_COMPILE_CACHE=0 it finds no server), and leaves files in
# the work dir and /tmp that would change the next job's compile, which
# must compile as if they were not there; a compile past the compile step's
# limit times out as the plain one does, and the next job is served warm; a
# compile with a note, under a limit of 1.6 times its plain time here, falls back and is "ok" (the
# plain javac has a deadline of its own), and the next job is served warm;
# the server killed from the host during a job's run step: the next jobs'
# results are as plain, the one after served warm.  Last, a program starts
# as many threads as a sandbox without the server has room for, less 4:
# with the server too (its threads are on top of the job's pids limit).
# The one-sandbox part keeps the caller's LLMSB_CONFIG (its images among
# them), as the corpus runs do.
#   usage: tests/compile-cache/java.sh [all]
# Without "all" (CI), every fourth HumanEval-X program runs; with it (make
# test-java-cache-all), all 164.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
B=${LLMSB_BIN:-$PWD/bin/llm-sandbox}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
suite java_cache
# run_three: the plain, cached and trace runs of differ.py's job files
. tests/compile-cache/run-three.sh

"$B" convert tests/eval/data/humaneval-x/humaneval_java.jsonl --out "$T/he.jsonl" 2>"$T/err" ||
    bad convert "$(cat "$T/err")"

# the jobs, and what each should do (ID PATH) in $T/expect (differ.py)
python3 - "$T" "${1:-}" <<'EOF' ||
import json, sys
T, every = sys.argv[1:]
jobs, expect = [], []
for n, line in enumerate(open(T + "/he.jsonl")):
    if every == "all" or n % 4 == 0:
        j = json.loads(line)
        j["artifacts"] = ["*.class"] # the class files must be javac's
        jobs.append(j)
        expect.append((j["id"], "warm"))
with open(T + "/jobs.jsonl", "w") as f:
    for j in jobs:
        f.write(json.dumps(j) + "\n")
with open(T + "/expect", "w") as f:
    for i, e in expect:
        f.write("%s %s\n" % (i, e))
EOF
    bad prepare "the job files"
python3 tests/compile-cache/differ.py write "$T" tests/compile-cache/java-corpus.yaml ||
    bad prepare "the corpus"

run_three

python3 tests/compile-cache/differ.py compare "$T" 'warm|fallback \(.*\)' warm plain \
    --trace-compared >"$T/diff.out" 2>&1
rc=$?
grep -v '^FAIL' "$T/diff.out" | sed 's/^/  /'
grep '^FAIL' -A2 "$T/diff.out" | head -40
[ $rc = 0 ] && ok "same_results_both_ways_and_each_path_taken" ||
    bad same_results_both_ways_and_each_path_taken "see above"

# One sandbox, one job after the other: a job's run step against the server,
# then a job that leaves what would change a compile, then its victim.
python3 - "$T" <<'EOF'
import json, sys
T = sys.argv[1]
probe = r'''
import java.io.*;
import java.util.*;
public class Main {
    static String read(String path) {
        try (FileInputStream in = new FileInputStream(path)) {
            in.read();
            return "read";
        } catch (IOException e) {
            return "denied";
        }
    }
    public static void main(String[] args) throws Exception {
        String pid = null;
        for (File p : new File("/proc").listFiles()) {
            if (!p.getName().matches("[0-9]+")) continue;
            try (BufferedReader r = new BufferedReader(new FileReader(new File(p, "cmdline")))) {
                String line = r.readLine();
                if (line != null && line.contains("LlmsbJavac")) pid = p.getName();
            } catch (IOException e) {}
        }
        System.out.println("server: " + (pid != null ? "found" : "none"));
        if (pid == null) return;
        Process kill = new ProcessBuilder("sh", "-c", "kill -KILL " + pid).redirectErrorStream(true).start();
        kill.getInputStream().readAllBytes();
        System.out.println("kill: " + (kill.waitFor() == 0 ? "sent" : "denied"));
        System.out.println("environ: " + read("/proc/" + pid + "/environ"));
        System.out.println("mem: " + read("/proc/" + pid + "/mem"));
        String[] fds = new File("/proc/" + pid + "/fd").list();
        System.out.println("fd: " + (fds == null ? "denied" : "listed"));
        String[] tmp = new File("/tmp").list((d, n) -> n.startsWith(".llmsb"));
        System.out.println("socket dirs: " + (tmp == null ? 0 : tmp.length));
        // the server's socket is still listed under the name it was bound
        // to, which is gone: nothing to connect to
        int connected = 0;
        try (BufferedReader r = new BufferedReader(new FileReader("/proc/net/unix"))) {
            for (String l; (l = r.readLine()) != null;) {
                String[] f = l.trim().split("\\s+");
                if (f.length < 8 || !f[7].startsWith("/")) continue;
                try (java.nio.channels.SocketChannel c = java.nio.channels.SocketChannel.open(
                         java.net.UnixDomainSocketAddress.of(f[7]))) {
                    connected++;
                } catch (IOException e) {}
            }
        }
        System.out.println("connected: " + connected);
        System.out.println("alive: " + new File("/proc/" + pid).exists());
    }
}
'''
poison = r'''
import java.io.*;
public class Main {
    public static void main(String[] args) throws Exception {
        try (PrintWriter w = new PrintWriter("/work/Helper.java")) {
            w.println("public class Helper { public static String hi() { return \"poisoned\"; } }");
        }
        try (PrintWriter w = new PrintWriter("/work/Helper.class")) { w.println("junk"); }
        new File("/work/META-INF/services").mkdirs();
        new File("/tmp/Helper.java").createNewFile();
        System.out.println("left files");
    }
}
'''
victim = r'''
public class Main {
    public static void main(String[] args) {
        System.out.println(Helper.hi());
    }
}
'''
clean = 'public class Main { public static void main(String[] a) { System.out.println("clean"); } }\n'
# overload resolution of nested implicit lambdas: javac's time grows ~3x a
# level (~25 s plain at 10 levels here): past the compile step's limit both
# ways, and the server, ended with it, is back for the next job
slow = "m(q -> q)"
for i in range(10):
    slow = "m(x%d -> { %s; return x%d; })" % (i, slow, i)
slow = """public class Main {
    interface F { int f(int x); }
    interface G { long g(long x); }
    static int m(F f) { return 1; }
    static int m(G g) { return 2; }
    public static void main(String[] a) { System.out.println(%s); }
}
""" % slow
# ~2-5 s of plain javac with a note (the compile step's limit 1.6 times that): the
# warm compile, said something, gives way to the plain one, which has the
# step's whole time of its own
big = "\n".join("    static int f%d(List<Integer> xs) { return xs.stream().map(x -> x + %d)"
                ".filter(x -> x %% 3 == 0).reduce(0, Integer::sum); }" % (i, i) for i in range(1900))
big = """import java.util.*;
public class Main {
%s
    public static void main(String[] a) {
        List l = new ArrayList();
        l.add(1);
        System.out.println(f1(List.of(1, 2, 3)) + " " + l);
    }
}
""" % big
# the server is killed from outside (by kill_server below) while this job
# runs: the next jobs compile as before
sleeper = """public class Main {
    public static void main(String[] a) throws Exception {
        new java.io.File("/tmp/llmsb-test-kill-server").createNewFile();
        Thread.sleep(3000);
        System.out.println("slept");
    }
}
"""
jobs = [("probe", probe), ("poison", poison), ("victim", victim), ("after", clean),
        ("slow-compile", slow), ("after-slow", clean), ("slow-note", big), ("after-note", clean),
        ("sleeper", sleeper), ("after-kill", clean), ("after-restart", clean)]
for name, env in (("seq-cached", {"LLMSB_COMPILE_CACHE_TRACE": "-"}),
                  ("seq-plain", {"LLMSB_COMPILE_CACHE": "0"})):
    with open("%s/%s.jsonl" % (T, name), "w") as f:
        for i, code in jobs:
            f.write(json.dumps({"id": i, "lang": "java", "code": code, "env": env}) + "\n")
EOF
# slow-note's plain compile timed on this host first (~2 s on one machine, 5
# on another): the compile limit is 1.6 times that, at least 3 s, so that it
# fits the limit once, not twice, and slow-compile (~25 s plain where
# slow-note took 2) stays past it
grep '"id": "slow-note"' "$T/seq-plain.jsonl" >"$T/calib.jsonl"
python3 - "$T/calib.yaml" <<'EOF'
import os, sys, yaml
path = os.environ.get("LLMSB_CONFIG")
cfg = (yaml.safe_load(open(path)) if path else None) or {}
cfg.setdefault("limits", {}).setdefault("defaults", {})["compile_timeout"] = 60
yaml.safe_dump(cfg, open(sys.argv[1], "w"))
EOF
"$B" --config "$T/calib.yaml" submit "$T/calib.jsonl" --local --out "$T/calib.out" >"$T/calib.log" 2>&1
NOTE_MS=$(jq -r 'select(.status == "ok") | .phases.compile_ms' "$T/calib.out" 2>/dev/null)
[ -n "$NOTE_MS" ] || bad prepare "slow-note's plain compile: $(tail -c 300 "$T/calib.out" "$T/calib.log")"
COMPILE_LIMIT=$(( (${NOTE_MS:-2000} * 16 / 10 + 999) / 1000 ))
[ "$COMPILE_LIMIT" -ge 3 ] || COMPILE_LIMIT=3
echo "  (slow-note's plain compile: ${NOTE_MS:-?} ms; the compile limit: $COMPILE_LIMIT s)"
# the caller's config (LLMSB_CONFIG: its images, say) with that compile
# limit, and the Java image it names, in whose containers kill_server looks
JAVA_IMAGE=$(COMPILE_LIMIT=$COMPILE_LIMIT python3 - "$T/seq.yaml" <<'EOF'
import os, sys, yaml
path = os.environ.get("LLMSB_CONFIG")
cfg = (yaml.safe_load(open(path)) if path else None) or {}
cfg.setdefault("limits", {}).setdefault("defaults", {})["compile_timeout"] = int(os.environ["COMPILE_LIMIT"])
yaml.safe_dump(cfg, open(sys.argv[1], "w"))
print((cfg.get("images") or {}).get("java", "llmsb/java:latest"))
EOF
) || bad prepare "the one-sandbox config"
# Kills the server, from the host, of the container whose job made the
# marker file; says so in $T/killed.
kill_server() {
    for _ in $(seq 600); do
        for c in $(docker ps -q --filter ancestor="$JAVA_IMAGE" 2>/dev/null); do
            docker exec "$c" test -e /tmp/llmsb-test-kill-server 2>/dev/null || continue
            pid=$(docker top "$c" -o pid,args | awk '/Llmsb[J]avac/ {print $1}')
            [ -n "$pid" ] && kill -KILL $pid && echo killed >"$T/killed" && return
        done
        sleep 0.2
    done
}
for mode in seq-cached seq-plain; do
    killer=
    if [ "$mode" = seq-cached ]; then kill_server & killer=$!; fi
    "$B" --config "$T/seq.yaml" submit "$T/$mode.jsonl" --local --no-dedup --slots 1 --out "$T/$mode.out" \
        >"$T/$mode.log" 2>&1 ||
        [ -s "$T/$mode.out" ] || bad "run_$mode" "$(tail -5 "$T/$mode.log")"
    [ -n "$killer" ] && { kill "$killer" 2>/dev/null; wait "$killer"; }
done
python3 - "$T" >"$T/seq.out" 2>&1 <<'EOF'
import json, os, re, sys
T = sys.argv[1]
res = {r["id"]: r for r in map(json.loads, open(T + "/seq-cached.out"))}
paths = {}
for r in res.values(): # the trace lines out of the compile output, kept apart
    lines = (r.get("compile_output") or "").splitlines(keepends=True)
    trace = [l for l in lines if re.fullmatch(r"warm|fallback \(.*\)", l.rstrip("\n"))]
    paths[r["id"]] = "".join(trace)
    r["compile_output"] = "".join(l for l in lines if l not in trace) or None
plain = {r["id"]: r for r in map(json.loads, open(T + "/seq-plain.out"))}
failed = 0
def check(what, got, want):
    global failed
    if got != want:
        print("FAIL %s: %r, want %r" % (what, got, want))
        failed += 1
check("probe", res["probe"].get("stdout"),
      "server: found\nkill: denied\nenviron: denied\nmem: denied\nfd: denied\n"
      "socket dirs: 0\nconnected: 0\nalive: true\n")
check("probe's compile", paths["probe"], "warm\n")
# the plain side runs no server at all (LLMSB_COMPILE_CACHE=0): what the
# corpus compares is a sandbox without it, its memory and threads included
check("probe without the server", plain["probe"].get("stdout"), "server: none\n")
check("poison", res["poison"].get("stdout"), "left files\n")
for i in ("victim", "after", "slow-compile", "after-slow", "slow-note", "after-note",
          "sleeper", "after-kill", "after-restart"):
    for f in ("status", "stdout", "stderr", "exit_code", "compile_output"):
        check("%s %s" % (i, f), res[i].get(f) or None, plain[i].get(f) or None)
check("slow-compile timed out", "timed out" in (res["slow-compile"].get("compile_output") or ""), True)
check("after-slow's path", paths["after-slow"], "warm\n")
check("victim status", res["victim"].get("status"), "compile_error")
check("victim's path", paths["victim"], "fallback (javac said something)\n")
check("after's path", paths["after"], "warm\n")
check("slow-note's status", res["slow-note"].get("status"), "ok")
check("slow-note's path", paths["slow-note"].split(" ")[0], "fallback")
check("after-note's path", paths["after-note"], "warm\n")
check("the server killed from outside", open(T + "/killed").read() if os.path.exists(T + "/killed") else None, "killed\n")
check("after-restart's path", paths["after-restart"], "warm\n")
sys.exit(1 if failed else 0)
EOF
rc=$?
cat "$T/seq.out"
[ $rc = 0 ] && ok "a_job_cannot_reach_the_server_or_change_the_next_compile" ||
    bad a_job_cannot_reach_the_server_or_change_the_next_compile "see above"

# Threads at the pids limit: the server's threads count in its sandbox's
# pids cgroup, so the worker puts them on top of the job's pids limit, and
# a program that starts as many threads as a sandbox without the server
# has room for starts them with it too.  How many: what a plain sandbox
# (LLMSB_COMPILE_CACHE=0: no server) takes at pids 256, less 4 (the
# JVM's own threads vary a little); the server has 12.
python3 - "$T" <<'EOF'
import json, sys
T = sys.argv[1]
code = """import java.util.concurrent.CountDownLatch;
public class Main {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]), started = 0;
        CountDownLatch done = new CountDownLatch(1);
        try {
            for (; started < n; started++) {
                Thread t = new Thread(() -> {
                    try { done.await(); } catch (InterruptedException e) { }
                });
                t.setDaemon(true);
                t.start();
            }
        } catch (OutOfMemoryError e) { // unable to create native thread
        }
        done.countDown();
        System.out.println(started == n ? n + " threads ran" : "only " + started + " of " + n);
    }
}
"""
job = {"lang": "java", "code": code, "pids": 256, "memory": 1024, "timeout": 30}
with open(T + "/threads-probe.jsonl", "w") as f:
    f.write(json.dumps(dict(job, id="probe", args=["100000"], env={"LLMSB_COMPILE_CACHE": "0"})) + "\n")
with open(T + "/threads.json", "w") as f:
    json.dump(job, f)
EOF
"$B" submit "$T/threads-probe.jsonl" --local --slots 1 --out "$T/threads-probe.out" >"$T/threads.log" 2>&1
most=$(jq -r '.stdout' "$T/threads-probe.out" 2>/dev/null | sed -nE 's/^only ([0-9]+) of 100000$/\1/p')
if [ -z "$most" ]; then
    bad threads_at_the_pids_limit "the plain probe: $(jq -c '{status, stdout, stderr: .stderr[0:200]}' "$T/threads-probe.out" 2>/dev/null)"
else
    n=$((most - 4))
    # plain (no server), then warm (a first job so the server is up, traced)
    jq -c --arg n "$n" '. + {id: "plain", args: [$n], env: {LLMSB_COMPILE_CACHE: "0"}}' "$T/threads.json" >"$T/threads-plain.jsonl"
    { jq -c '. + {id: "first", args: ["1"], env: {LLMSB_COMPILE_CACHE_TRACE: "-"}}' "$T/threads.json"
      jq -c --arg n "$n" '. + {id: "warm", args: [$n], env: {LLMSB_COMPILE_CACHE_TRACE: "-"}}' "$T/threads.json"; } >"$T/threads-warm.jsonl"
    for side in plain warm; do
        "$B" submit "$T/threads-$side.jsonl" --local --slots 1 --no-dedup --out "$T/threads-$side.out" >>"$T/threads.log" 2>&1
    done
    python3 - "$T" "$n" >"$T/threads.out" 2>&1 <<'EOF'
import json, sys
T, n = sys.argv[1:]
res = {}
for side in ("plain", "warm"):
    for line in open("%s/threads-%s.out" % (T, side)):
        r = json.loads(line)
        res[r["id"]] = r
wrong = ["%s: %r" % (i, res.get(i, {}).get("stdout")) for i in ("plain", "warm")
         if res.get(i, {}).get("stdout") != "%s threads ran\n" % n]
if res.get("warm", {}).get("compile_output") != "warm\n":
    wrong.append("warm's compile: %r" % res.get("warm", {}).get("compile_output"))
print("; ".join(wrong))
sys.exit(1 if wrong else 0)
EOF
    [ $? = 0 ] && ok "threads_at_the_pids_limit ($n, a plain sandbox's $most less 4, both ways)" ||
        bad threads_at_the_pids_limit "$(cat "$T/threads.out") (want $n threads both ways; a plain sandbox took $most)"
fi

suite_end
