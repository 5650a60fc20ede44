#!/bin/sh
# bench_eval.sh - HumanEval-X in the compiled languages (C++, Java, Go tests):
# the first N reference solutions of each through `convert` and
# `submit --local` (jobs per second), and what the images' warm caches give
# one compile, measured in the same image with each cache and without it
# (Go's build cache, javac's class-data archive, the precompiled
# <bits/stdc++.h>): the "before" is the same compile with the cache away.
#   usage: bench/bench_eval.sh [LLM_SANDBOX] [N]
B=${1:-bin/llm-sandbox}
N=${2:-40}
D=$(dirname "$0")/../tests/eval/data/humaneval-x
T=$(mktemp -d)
chmod 755 "$T" # the sandbox user reads the programs in it
trap 'rm -rf "$T"' EXIT
ms() { date +%s%3N; }

# One compile, warm and cold, inside the image (no container start in the
# figures); prints "WARM_MS COLD_MS". The program: $T/<file>.
compile_pair() { # IMAGE FILE USER SCRIPT
    docker run --rm --network none --user "$3" --entrypoint sh -v "$T:/in:ro" "$1" -c "
        t() { s=\$(date +%s%N); \"\$@\" >/dev/null 2>&1 || { echo FAILED \"\$@\" >&2; exit 1; }; echo \$(( (\$(date +%s%N) - s) / 1000000 )); }
        mkdir -p /work/b && cd /work/b && cp /in/$2 . && $4"
}

printf '%-8s %6s %10s %14s %14s %7s\n' lang jobs 'jobs/s' 'compile warm' 'compile cold' ratio
for lang in cpp java go; do
    head -n "$N" "$D/humaneval_$lang.jsonl" >"$T/$lang.data"
    "$B" convert "$T/$lang.data" --out "$T/$lang.jobs" 2>/dev/null || { echo "bench_eval: convert failed"; exit 1; }
    "$B" submit --local "$T/$lang.jobs" >/dev/null 2>&1 </dev/null # warm-up: image, pool
    t0=$(ms)
    if ! "$B" submit --local --rerun "$T/$lang.jobs" >"$T/$lang.log" 2>&1 </dev/null; then
        echo "bench_eval: $lang: a reference solution did not pass"; tail -5 "$T/$lang.log"; exit 1
    fi
    t1=$(ms)
    case $lang in
    cpp)
        printf '#include <bits/stdc++.h>\nusing namespace std;\nint main(){vector<int> v{3,1,2}; sort(v.begin(), v.end()); cout << v[0] << endl;}\n' >"$T/a.cpp"
        # as root, to take the precompiled header away for the cold run
        pair=$(compile_pair llmsb/cpp:latest a.cpp 0 't g++ -std=c++17 -O2 -pipe -o a a.cpp; rm /usr/include/x86_64-linux-gnu/c++/*/bits/stdc++.h.gch; t g++ -std=c++17 -O2 -pipe -o a a.cpp') ;;
    java)
        python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["code"])' "$T/java.jobs" >"$T/Main.java"
        J='-J-XX:+UseSerialGC -J-XX:TieredStopAtLevel=1 -J-Xshare:auto -encoding UTF-8 -cp ".:/usr/share/java/*" -d .'
        pair=$(compile_pair llmsb/java:latest Main.java 10001 "t javac -J-XX:SharedArchiveFile=/usr/local/lib/llmsb/javac.jsa $J Main.java; t javac $J Main.java") ;;
    go)
        python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["code"])' "$T/go.jobs" >"$T/main_test.go"
        E='GOPATH=/tmp/go:/usr/share/gocode CGO_ENABLED=0 GO111MODULE=auto GOFLAGS=-buildvcs=false'
        pair=$(compile_pair llmsb/go_test:latest main_test.go 10001 "export $E; GOCACHE=/usr/local/lib/llmsb/gocache t go test -c -o w.test .; GOCACHE=/tmp/cold t go test -c -o c.test .") ;;
    esac
    set -- $pair
    if [ $# != 2 ]; then echo "bench_eval: $lang: the compile timing failed"; exit 1; fi
    awk -v l="$lang" -v n="$N" -v t="$((t1 - t0))" -v w="$1" -v c="$2" 'BEGIN {
        printf "%-8s %6d %10.2f %11d ms %11d ms %6.1fx\n", l, n, n * 1000 / t, w, c, c / (w ? w : 1) }'
done
