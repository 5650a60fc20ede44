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
#   check-layers.sh [ROOT]      check the tree at ROOT (default: .)
#   check-layers.sh --self-test check that a forbidden include fails
set -eu

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
    config) echo "backends languages security proto common" ;;
    job) echo "config languages security proto common" ;;
    sandbox) echo "backends proto common" ;;
    images) echo "backends config languages common" ;;
    queue) echo "common" ;;
    scheduler) echo "queue common" ;;
    exec) echo "sandbox backends job config security languages proto common scheduler/decide.h" ;;
    batch) echo "exec sandbox backends job config security languages proto common queue scheduler/decide.h" ;;
    eval) echo "job config languages common" ;;
    worker) echo "exec sandbox backends job config security languages proto common queue scheduler" ;;
    mcp) echo "batch exec sandbox backends job config security languages proto common queue scheduler/decide.h" ;;
    bench) echo "batch exec sandbox backends job config security languages proto common queue scheduler agent" ;;
    cli) echo "worker mcp batch eval exec sandbox backends images job config security languages proto common queue scheduler" ;;
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
    if [ -s "${TMPDIR:-/tmp}/llmsb-layers.$$" ]; then
        cat "${TMPDIR:-/tmp}/llmsb-layers.$$"
        bad=1
    fi
    rm -f "${TMPDIR:-/tmp}/llmsb-layers.$$"
    return $bad
}

if [ "${1:-}" = "--self-test" ]; then
    t=$(mktemp -d)
    trap 'rm -rf "$t"' EXIT
    mkdir -p "$t/backends/docker" "$t/exec"
    printf '#include "backends/backend.h"\n#include "common/common.h"\n' >"$t/backends/docker/ok.c"
    check "$t" >/dev/null || { echo "check-layers self-test: an allowed include was refused"; exit 1; }
    printf '#include "exec/exec.h"\n' >"$t/backends/docker/bad.c"
    out=$(check "$t") && { echo "check-layers self-test: backends/docker including exec/ passed"; exit 1; }
    echo "$out" | grep -q 'backends/docker/bad.c:1: backends/docker/ may not include "exec/exec.h"' ||
        { echo "check-layers self-test: unexpected report: $out"; exit 1; }
    rm "$t/backends/docker/bad.c"
    # every spelling the compiler takes is read
    mkdir -p "$t/worker" "$t/cli"
    for inc in '#include  "worker/worker.h"' '# include "worker/worker.h"' \
        '  #include "worker/worker.h"' '#include"worker/worker.h"' '#include <worker/worker.h>' \
        '#include "cli/cli.c"'; do
        printf '%s\n' "$inc" >"$t/exec/x.c"
        check "$t" >/dev/null && { echo "check-layers self-test: exec/ passed with: $inc"; exit 1; }
    done
    printf '#include <sys/stat.h>\n#include <cjson/cJSON.h>\n' >"$t/exec/x.c"
    check "$t" >/dev/null || { echo "check-layers self-test: a system header was refused"; exit 1; }
    printf '#include "scheduler/scheduler.h"\n' >"$t/exec/x.c"
    check "$t" >/dev/null && { echo "check-layers self-test: exec/ including scheduler/scheduler.h passed"; exit 1; }
    rm "$t/exec/x.c"
    printf 'int x;\n' >"$t/top.c"
    check "$t" >/dev/null && { echo "check-layers self-test: a file outside every folder passed"; exit 1; }
    echo "check-layers: self-test passed"
    exit 0
fi

check "${1:-.}" && echo "check-layers: every include follows the layer rule"
