#!/bin/sh
# compile_phases.sh - where one compiled job's time goes, run INSIDE a
# sandbox image by bench/bench_eval.sh (as the sandbox user, no network):
# the build as the language's hook runs it, REPS times, each in a fresh
# directory (a job's work dir is fresh: nothing of an earlier build is up
# to date), then the program's run.
#   compile_phases.sh go     IN OUT   go test -c of IN/main_test.go, go build of IN/main.go
#   compile_phases.sh cpp    IN OUT   g++ of IN/a.cpp (HumanEval-X) and IN/b.cpp (<bits/stdc++.h>)
# Go: each build once plain (its time) and once with -debug-trace=OUT/LABEL.N.json
# (what the go command did when: loading, the action graph and cache checks,
# each tool's action), which eval_bench.py phases reads.  C++: g++'s stages run
# one by one with the flags cpp-build passes (-S: preprocess and compile in
# cc1plus; -c of the .s: as; the link: collect2 and ld), with the image's
# precompiled header (-include, as cpp-build adds it) and without it.
# Prints "LABEL PHASE MS" lines.
set -u
LANG_=$1 IN=$2 OUT=$3
REPS=${REPS:-3}
ms() { date +%s%N | cut -c1-13; }
fresh() { d=$(mktemp -d /tmp/ph.XXXXXX) && cp "$@" "$d/" && cd "$d"; }
timed() { # LABEL PHASE CMD...: one line, or a FAILED line and exit 1
    l=$1 p=$2
    shift 2
    s=$(ms)
    "$@" >/dev/null 2>"$OUT/err" || { echo "$l FAILED $* $(head -c 300 "$OUT/err")"; exit 1; }
    echo "$l $p $(($(ms) - s))"
}

if [ "$LANG_" = go ]; then
    export GOCACHE=/usr/local/lib/llmsb/gocache GOPATH=/tmp/go:/usr/share/gocode CGO_ENABLED=0 \
        GO111MODULE=auto GOFLAGS=-buildvcs=false
    for i in $(seq 1 "$REPS"); do
        fresh "$IN/main_test.go" && timed go_test total go test -c -o w.test .
        timed go_test run ./w.test
        fresh "$IN/main_test.go" && timed go_test traced go test -c -debug-trace="$OUT/go_test.$i.json" -o w.test .
        fresh "$IN/main.go" && timed go total go build -o main main.go
        timed go run ./main
        fresh "$IN/main.go" && timed go traced go build -debug-trace="$OUT/go.$i.json" -o main main.go
    done
    exit 0
fi

# cpp: the flags and precompiled header cpp-build would use for FILE
F="-std=c++17 -O2 -pipe"
pch_of() { # FILE [FLAGS...]: the header cpp-build's key names, if the image has it
    file=$1
    shift
    hdrs=$(sed -n '/^#include/!q;s/^#include *<\([A-Za-z0-9_./+-]*\)>$/\1/p' "$file" | tr '\n' ' ')
    key="$F${*:+ }$*|${hdrs% }"
    n=$(printf '%s\n' "$key" | cksum | cut -d' ' -f1)
    h=/usr/local/lib/llmsb/pch/$n.h
    [ -f "$h.gch" ] && [ "$(head -n 1 "$h")" = "// $key" ] && echo "$h"
}
stages() { # LABEL FILE INCLUDE FLAGS...: g++ in one go, then stage by stage
    l=$1 file=$2 inc=$3
    shift 3
    for i in $(seq 1 "$REPS"); do
        fresh "$IN/$file"
        timed "$l" total g++ $F "$@" $inc -o p "$file"
        rm -f p
        timed "$l" compile g++ $F "$@" $inc -S -o p.s "$file"
        timed "$l" assemble g++ $F "$@" -c -o p.o p.s
        timed "$l" link g++ $F "$@" -o p p.o
        timed "$l" run ./p
    done
}
ha=$(pch_of "$IN/a.cpp" -std=c++11 -O0)
hb=$(pch_of "$IN/b.cpp")
[ -n "$ha" ] && [ -n "$hb" ] || { echo "cpp FAILED no precompiled header for the programs"; exit 1; }
stages cpp_he a.cpp "" -std=c++11 -O0
stages cpp_he_pch a.cpp "-include $ha" -std=c++11 -O0
stages cpp_stdcpp b.cpp ""
stages cpp_stdcpp_pch b.cpp "-include $hb"
