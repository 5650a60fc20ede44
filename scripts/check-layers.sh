#!/bin/sh
# check-layers.sh - the dependency rule of the source tree, checked over
# every `#include "dir/..."` line (docs/architecture.md draws it).
#
# A folder may include its own headers and those of the folders listed
# for it below, nothing else.  The lower a folder, the shorter its list:
# nothing below exec/ includes exec/, worker/, mcp/ or cli/.  A header of
# another folder allowed one by one is named as a path (scheduler/decide.h:
# the pure decisions, without the Redis side of scheduler/).
#
# Inside agent/ the files have an order of their own, lowest first (see
# agent_order below): a file includes the headers of the files before it
# and its own, so that no two of them include each other, however
# indirectly.  A file the order does not name fails too.
#
#   check-layers.sh [ROOT]      check the tree at ROOT (default: .)
#   check-layers.sh --self-test check that a forbidden include fails
set -eu

# agent/'s files by name (x.c and x.h are one), lowest first: the agent's
# own confinement, the sandbox user's world, a job's process up to its
# exec, a job's files as the sandbox user, the warm helpers and their
# table, one supervised step, the job, the main loop.  zygote_lib is
# built on its own (bin/llmsb_zygote.so) and includes job_limits only.
agent_order="job_limits confine zygote_lib user child snapshot artifacts zygote prespawn javac warm live step run agent"

allowed() {
    case "$1" in
    common) echo "" ;;
    proto) echo "common" ;;
    agent) echo "proto common" ;;
    languages) echo "common" ;;
    security) echo "languages common" ;;
    backends) echo "common" ;;
    backends/http) echo "common" ;;
    backends/docker) echo "backends backends/http common" ;;
    backends/kubernetes) echo "backends backends/http common" ;;
    backends/registry) echo "backends backends/docker backends/kubernetes common" ;;
    config) echo "backends/registry backends languages security proto common" ;;
    job) echo "config languages security proto common backends/opts.h" ;;
    sandbox) echo "backends proto common" ;;
    images) echo "backends config languages common" ;;
    queue) echo "common" ;;
    scheduler) echo "queue common" ;;
    exec) echo "sandbox backends/registry backends job config security languages proto common scheduler/decide.h" ;;
    batch) echo "exec sandbox backends/registry backends job config security languages proto common queue scheduler/decide.h" ;;
    eval) echo "job config languages proto common backends/opts.h" ;;
    worker) echo "exec sandbox backends/registry backends job config security languages proto common queue scheduler" ;;
    mcp) echo "batch exec sandbox backends/registry backends job config security languages proto common queue scheduler/decide.h" ;;
    bench) echo "batch exec sandbox backends/registry backends job config security languages proto common queue scheduler agent" ;;
    cli) echo "worker mcp batch eval exec sandbox backends/registry backends images job config security languages proto common queue scheduler" ;;
    *) echo "?" ;;
    esac
}

# The folder a path belongs to: its first component, two for backends/x/.
folder_of() {
    case "$1" in
    backends/*/*) echo "$1" | cut -d/ -f1-2 ;;
    */*) echo "${1%%/*}" ;;
    *) echo "" ;;
    esac
}

# The position of agent/'s file NAME (without .c or .h) in agent_order,
# empty when it has none.
agent_rank() {
    i=0
    for n in $agent_order; do
        i=$((i + 1))
        [ "$n" = "$1" ] && echo $i && return
    done
    return 0
}

# Every include of a file of agent/ by another (spelled "x.h" beside it,
# or "agent/x.h"), checked against agent_order.
check_agent_order() {
    root=$1
    [ -d "$root/agent" ] || return 0
    for f in $(cd "$root" && find agent -name '*.[ch]' | sort); do
        name=$(basename "$f")
        name=${name%.*}
        me=$(agent_rank "$name")
        if [ -z "$me" ]; then
            echo "$f: has no place in agent/'s file order (agent_order in scripts/check-layers.sh)"
            continue
        fi
        grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][^">]*[">]' "$root/$f" |
            while IFS= read -r line; do
                n=${line%%:*}
                inc=$(echo "$line" | sed -E 's/^[0-9]*:[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^">]*)[">].*/\1/')
                case "$inc" in
                agent/*) to=${inc#agent/} ;;
                */*) continue ;; # another folder's: the rule above
                *) case "$line" in *'<'*) continue ;; esac # a system header
                    to=$inc ;;
                esac
                to=${to%.*}
                them=$(agent_rank "$to")
                [ -n "$them" ] && [ "$them" -le "$me" ] && continue
                echo "$f:$n: agent/$name may not include \"$inc\" (${them:+it comes after $name }in agent/'s file order: $agent_order)"
            done
    done
}

check() {
    root=$1
    bad=0
    files=$(cd "$root" && find . -name '*.[ch]' -not -path './tests/*' -not -path './build*' \
        -not -path './bin/*' -not -path './.git/*' | sed 's|^\./||' | sort)
    for f in $files; do
        from=$(folder_of "$f")
        ok=$(allowed "${from:-/}")
        if [ "$ok" = "?" ]; then
            echo "$f: ${from:+folder $from/ }has no place in the layer rule (scripts/check-layers.sh)"
            bad=1
            continue
        fi
        # any spelling the preprocessor takes: spaces around '#', <> or ""
        grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][^">]*/[^">]*[">]' "$root/$f" |
            while IFS= read -r line; do
                n=${line%%:*}
                inc=$(echo "$line" | sed -E 's/^[0-9]*:[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^">]*)[">].*/\1/')
                # a system header (<sys/stat.h>, <cjson/cJSON.h>) is no folder of ours
                case "$line" in *'<'*) [ -d "$root/$(echo "$inc" | cut -d/ -f1)" ] || continue ;; esac
                to=$(folder_of "$inc")
                [ "$to" = "$from" ] && continue
                for a in $ok; do
                    [ "$a" = "$to" ] || [ "$a" = "$inc" ] && continue 2
                done
                echo "$f:$n: $from/ may not include \"$inc\" ($to/ is not below $from/; $from/ may include: ${ok:-nothing})"
            done
    done >"${TMPDIR:-/tmp}/llmsb-layers.$$"
    check_agent_order "$root" >>"${TMPDIR:-/tmp}/llmsb-layers.$$"
    if [ -s "${TMPDIR:-/tmp}/llmsb-layers.$$" ]; then
        cat "${TMPDIR:-/tmp}/llmsb-layers.$$"
        bad=1
    fi
    rm -f "${TMPDIR:-/tmp}/llmsb-layers.$$"
    return $bad
}

# refused FILE INCLUDE...: the check of $t fails with each include line
# alone in $t/FILE (names of its own: check's loops set f, name, inc)
refused() {
    rf_file=$1
    shift
    for rf_inc in "$@"; do
        printf '%s\n' "$rf_inc" >"$t/$rf_file"
        check "$t" >/dev/null && { echo "check-layers self-test: $rf_file passed with: $rf_inc"; exit 1; }
    done
    return 0
}

# reported TEXT: the check of $t fails, and its report holds TEXT
reported() {
    rp_out=$(check "$t") && { echo "check-layers self-test: passed, where it should report: $1"; exit 1; }
    echo "$rp_out" | grep -qF "$1" || { echo "check-layers self-test: unexpected report: $rp_out"; exit 1; }
    return 0
}

if [ "${1:-}" = "--self-test" ]; then
    t=$(mktemp -d)
    trap 'rm -rf "$t"' EXIT
    mkdir -p "$t/backends/docker" "$t/exec"
    printf '#include "backends/backend.h"\n#include "common/common.h"\n' >"$t/backends/docker/ok.c"
    check "$t" >/dev/null || { echo "check-layers self-test: an allowed include was refused"; exit 1; }
    printf '#include "exec/exec.h"\n' >"$t/backends/docker/bad.c"
    reported 'backends/docker/bad.c:1: backends/docker/ may not include "exec/exec.h"'
    rm "$t/backends/docker/bad.c"
    # every spelling the compiler takes is read
    mkdir -p "$t/worker" "$t/cli"
    refused exec/x.c '#include  "worker/worker.h"' '# include "worker/worker.h"' \
        '  #include "worker/worker.h"' '#include"worker/worker.h"' '#include <worker/worker.h>' \
        '#include "cli/cli.c"'
    printf '#include <sys/stat.h>\n#include <cjson/cJSON.h>\n' >"$t/exec/x.c"
    check "$t" >/dev/null || { echo "check-layers self-test: a system header was refused"; exit 1; }
    printf '#include "scheduler/scheduler.h"\n' >"$t/exec/x.c"
    check "$t" >/dev/null && { echo "check-layers self-test: exec/ including scheduler/scheduler.h passed"; exit 1; }
    rm "$t/exec/x.c"
    printf 'int x;\n' >"$t/top.c"
    check "$t" >/dev/null && { echo "check-layers self-test: a file outside every folder passed"; exit 1; }
    rm "$t/top.c"
    # agent/'s file order: forward includes pass, a backward one fails
    mkdir -p "$t/agent"
    printf '#include "user.h"\n#include "common/common.h"\n#include <stdio.h>\n' >"$t/agent/user.c"
    printf '#include "run.h"\n#include "step.h"\n#include "agent/user.h"\n' >"$t/agent/run.c"
    check "$t" >/dev/null || { echo "check-layers self-test: agent/ files in order were refused"; exit 1; }
    printf '#include "user.h"\n#include "run.h"\n' >"$t/agent/user.c"
    reported 'agent/user.c:2: agent/user may not include "run.h" (it comes after user in'
    refused agent/user.c '#include "agent/step.h"' '# include "step.h"' '#include <agent/run.h>' \
        '#include"warm.h"'
    printf '#include "user.h"\n' >"$t/agent/user.c"
    printf '#include "user.h"\n' >"$t/agent/extra.c"
    check "$t" >/dev/null && { echo "check-layers self-test: an agent/ file outside the order passed"; exit 1; }
    echo "check-layers: self-test passed"
    exit 0
fi

check "${1:-.}" && echo "check-layers: every include follows the layer rule"
