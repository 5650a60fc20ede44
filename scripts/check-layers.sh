#!/bin/sh
# check-layers.sh - the dependency rule of the source tree (docs/architecture.md
# draws it), checked over the #include lines and over the built objects.
#
# A folder may include its own headers and those of the folders listed
# for it below, nothing else.  The lower a folder, the shorter its list:
# nothing below exec/ includes exec/, worker/, mcp/ or cli/.  A header of
# another folder allowed one by one is named as a path (scheduler/decide.h:
# the pure decisions, without the Redis side of scheduler/).  Checked:
#
#   - every `#include "dir/..."` line, against the folder's list;
#   - a private header (`*_int.h`, `internal.h`) is included by files of
#     its own folder only;
#   - what a file reaches through a chain of headers: a header of a folder
#     may include what its folder may, and a file that reaches a folder of
#     which its own list says nothing fails, naming the chain;
#   - no include circle anywhere: a chain of includes that comes back to
#     where it started fails, naming it;
#   - with --objects BUILD, the symbols each object uses (`nm`): one defined
#     by an object of a folder the user's folder may not include fails,
#     naming the symbol and both objects; this finds a prototype declared
#     by hand, which no include shows.  BUILD/x/y.o (or
#     BUILD/agent-static/x/y.o) is the object of x/y.c; tests/ are left out.
#
# Inside agent/ the files have an order of their own, lowest first (see
# agent_order below): a file includes the headers of the files before it
# and its own, so that no two of them include each other, however
# indirectly.  A file the order does not name fails too.
#
#   check-layers.sh [--objects BUILD] [ROOT]
#                               check the tree at ROOT (default: .) and,
#                               with --objects, the objects under BUILD
#   check-layers.sh --self-test check that each kind of violation fails
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
    batch) echo "eval exec sandbox backends/registry backends job config security languages proto common queue scheduler/decide.h" ;;
    eval) echo "job config languages proto common backends/opts.h" ;;
    worker) echo "exec sandbox backends/registry backends job config security languages proto common queue scheduler" ;;
    mcp) echo "batch exec sandbox backends/registry backends job config security languages proto common queue scheduler/decide.h" ;;
    front) echo "mcp/http_check.h batch exec sandbox backends/registry backends job config security languages proto common queue scheduler/decide.h" ;;
    bench) echo "batch exec sandbox backends/registry backends job config security languages proto common queue scheduler agent" ;;
    cli) echo "worker mcp front batch eval exec sandbox backends/registry backends images job config security languages proto common queue scheduler" ;;
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

# The source files under ROOT, one a line, relative to it (tests/ too: a
# header they hold is still a file an include may resolve to).
tree_files() {
    (cd "$1" && find . -name '*.[ch]' -not -path './build*' -not -path './bin/*' \
        -not -path './.git/*' | sed 's|^\./||' | sort)
}

# What the awk checks below read first: each folder of the files LIST
# with its list ("A<TAB>folder<TAB>list"), then the files ("F<TAB>path").
rule_table() {
    echo "$1" | awk -F/ '$1 != "tests" { if ($1 == "backends" && NF >= 3) print $1 "/" $2; else if (NF >= 2) print $1 }' |
        sort -u | while read -r d; do
        printf 'A\t%s\t%s\n' "$d" "$(allowed "$d")"
    done
    echo "$1" | sed 's/^/F\t/'
}

# The awk functions both checks below share: the folder of a path (as
# folder_of), whether folder X may include header H, whether H is private.
awk_rule='
function folder(p,  a, n) {
    n = split(p, a, "/")
    if (n >= 3 && a[1] == "backends") return a[1] "/" a[2]
    return n >= 2 ? a[1] : ""
}
function may(x, h,  to) {
    to = folder(h)
    return to == x || ((x, to) in ok) || ((x, h) in ok)
}
function private(h) { return h ~ /(^|\/)(internal|[^\/]*_int)\.h$/ }
function forbidden(x, h) { return !may(x, h) || (private(h) && folder(h) != x) }
function why(x, h) {
    if (private(h) && folder(h) != x) return "a header private to " folder(h) "/"
    return folder(h) "/ is not below " x "/; " x "/ may include: " (lists[x] == "" ? "nothing" : lists[x])
}
$1 == "A" { lists[$2] = $3; n = split($3, a, " "); for (i = 1; i <= n; i++) ok[$2, a[i]] = 1; next }
$1 == "F" { files[$2] = 1; next }
'

# What includes what: a private header of another folder, what each file
# reaches through chains of headers, and include circles.  Reads the
# allowed table, the files ("F<TAB>path") and every include line of the
# tree ("file:line:text", grep's).  An include resolves as the compiler's
# -I. does: beside the file for "...", then from the root; one that
# resolves to no file of the tree is a system header.
closure_awk='
function norm(p,  a, n, i, k, out) {
    n = split(p, a, "/"); k = 0
    for (i = 1; i <= n; i++) {
        if (a[i] == "." || a[i] == "") continue
        if (a[i] == "..") { if (k == 0) return ""; k--; continue }
        out[++k] = a[i]
    }
    p = ""
    for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
    return p
}
function dir(p) { return p ~ /\// ? substr(p, 1, match(p, /\/[^\/]*$/) - 1) : "" }
function chain(f, u, v,  s) {
    for (s = v; u != f; u = par[u]) s = u " -> " s
    return f " -> " s
}
# From file F of folder X, every header on its chains of includes: one X
# may not include, reached from a header whose own folder may, is reported
# with the shortest chain (one whose includer may not include it either is
# a failure of that includer, reported where it stands)
function reach(f, x,  q, h, t, u, i, v, seen) {
    h = t = 0; split("", par)
    for (i = 1; i <= nadj[f]; i++) {
        v = adj[f, i]
        if ((v in seen) || forbidden(x, v)) continue
        seen[v] = 1; par[v] = f; q[++t] = v
    }
    while (h < t) {
        u = q[++h]
        for (i = 1; i <= nadj[u]; i++) {
            v = adj[u, i]
            if (v in seen) continue
            seen[v] = 1
            if (!forbidden(x, v)) { par[v] = u; q[++t] = v; continue }
            if (!forbidden(folder(u), v))
                printf "%s: %s/ reaches \"%s\" through %s (%s)\n", f, x, v, chain(f, u, v), why(x, v)
        }
    }
}
# every include circle, once, as the first file of it on a depth-first walk
function circles(u,  i, v, k, s) {
    state[u] = 1; stack[++sp] = u
    for (i = 1; i <= nadj[u]; i++) {
        v = adj[u, i]
        if (state[v] == 1) {
            for (k = sp; stack[k] != v; k--) ;
            for (s = v; k < sp; ) s = s " -> " stack[++k]
            printf "%s: include circle: %s -> %s\n", v, s, v
        } else if (state[v] == 0) circles(v)
    }
    sp--; state[u] = 2
}
{
    f = $0; sub(/:.*/, "", f); rest = substr($0, length(f) + 2)
    line = rest; sub(/:.*/, "", line); text = substr(rest, length(line) + 2)
    if (f ~ /^tests\//) next
    inc = text; sub(/^[^<"]*[<"]/, "", inc); sub(/[">].*/, "", inc)
    to = ""
    if (text ~ /^[^<]*"/ && (norm(dir(f) "/" inc) in files)) to = norm(dir(f) "/" inc)
    else if (norm(inc) in files) to = norm(inc)
    x = folder(f)
    # a private header of another folder, by the path it resolves to, else
    # as spelled ("x_int.h" alone is beside the file)
    h = to != "" ? to : (inc ~ /\// ? norm(inc) : norm(dir(f) "/" inc))
    if (private(h) && folder(h) != x)
        printf "%s:%s: %s/ may not include \"%s\" (%s)\n", f, line, x, inc, why(x, h)
    if (to == "" || ((f, to) in edge)) next
    edge[f, to] = 1; adj[f, ++nadj[f]] = to
    if (!(f in src)) { src[f] = 1; order[++ns] = f }
}
END {
    for (i = 1; i <= ns; i++) if (folder(order[i]) in lists) reach(order[i], folder(order[i]))
    for (i = 1; i <= ns; i++) if (!state[order[i]]) circles(order[i])
}
'

# The symbols each object under BUILD uses, against the folders its own
# may include, read from `nm -A -g` ("N<TAB>line"); then the functions each
# header names (declares, or calls from a macro or an inline), read from
# the headers ("H<TAB>file:line:text"), against the folders the header's
# may include.  Objects come after the allowed table and the files.
symbols_awk='
function definer(x, sym,  n, d, k, h) {
    n = split(defs[sym], d, " ")
    for (k = 1; k <= n; k++) {
        h = srcof[d[k]]; sub(/\.c$/, ".h", h)
        if (may(x, h)) return ""
    }
    return d[1]
}
function header_line(f, line, t,  o, name) {
    if (f != hfile) { hfile = f; incomment = 0 }
    if (incomment) { if (!sub(/^([^*]|\*+[^*\/])*\*+\//, "", t)) return; incomment = 0 }
    gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, " ", t)
    if (sub(/\/\*.*/, "", t)) incomment = 1
    sub(/\/\/.*/, "", t)
    while (match(t, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
        name = substr(t, RSTART, RLENGTH - 1); sub(/[ \t]+$/, "", name)
        t = substr(t, RSTART + RLENGTH)
        if (!(name in fdefs) || (o = definer(folder(f), name)) == "") continue
        printf "%s:%s: names %s(), defined in %s (%s)\n", f, line, name, o, why(folder(f), srcof[o])
    }
}
$1 == "N" {
    o = substr($0, 3); sub(/:.*/, "", o); n = split(substr($0, length(o) + 4), a, " ")
    if (!(o in srcof)) {
        s = substr(o, length(build) + 2); sub(/\.o$/, ".c", s)
        if (!(s in files) && s ~ /^agent-static\//) sub(/^agent-static\//, "", s)
        srcof[o] = (s in files) && s !~ /^tests\// ? s : ""
    }
    if (srcof[o] == "") next
    if (a[n - 1] == "U") { if (!((o, a[n]) in used)) users[++nu] = o SUBSEP a[n]; used[o, a[n]] = 1 }
    else if (a[n - 1] ~ /^[A-TV-Z]$/) defs[a[n]] = defs[a[n]] " " o
    if (a[n - 1] == "T") fdefs[a[n]] = 1
    next
}
$1 == "H" {
    f = substr($0, 3); sub(/:.*/, "", f); rest = substr($0, length(f) + 4)
    line = rest; sub(/:.*/, "", line)
    header_line(f, line, substr(rest, length(line) + 2))
    next
}
END {
    for (i = 1; i <= nu; i++) {
        split(users[i], p, SUBSEP); o = p[1]; sym = p[2]
        if (!(sym in defs) || (d = definer(folder(srcof[o]), sym)) == "") continue
        printf "%s: uses %s, defined in %s (%s)\n", o, sym, d, why(folder(srcof[o]), srcof[d])
    }
}
'

check_closure() {
    root=$1
    list=$(tree_files "$root")
    {
        rule_table "$list"
        (cd "$root" && echo "$list" | grep -v '^tests/' | xargs -r grep -HnE \
            '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][^">]*[">]' || true)
    } | awk -F'\t' "$awk_rule$closure_awk" | sort
}

check_symbols() {
    root=$1
    build=$2
    [ -d "$build" ] || { echo "$build: no such directory (--objects: the build's objects)"; return 0; }
    objs=$(find "$build" -name '*.o' | sort)
    [ -n "$objs" ] || { echo "$build: no objects (make all first)"; return 0; }
    list=$(tree_files "$root")
    {
        rule_table "$list"
        echo "$objs" | xargs -r nm -A -g | sed 's/^/N\t/'
        (cd "$root" && echo "$list" | grep -v '^tests/' | grep '\.h$' | xargs -r grep -Hn '' |
            sed 's/^/H\t/')
    } | awk -F'\t' -v build="${build%/}" "$awk_rule$symbols_awk" | sort
}

check() {
    root=$1
    bad=0
    files=$(tree_files "$root" | grep -v '^tests/' || true)
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
    check_closure "$root" >>"${TMPDIR:-/tmp}/llmsb-layers.$$"
    [ -z "$objects" ] || check_symbols "$root" "$objects" >>"${TMPDIR:-/tmp}/llmsb-layers.$$"
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
    objects=
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
    rm "$t/agent/extra.c"
    # a private header: its own folder's files include it, another's fails,
    # even one whose list names that folder
    mkdir -p "$t/queue" "$t/scheduler" "$t/backends/registry"
    printf '#include "common/common.h"\n' >"$t/queue/queue.h"
    printf 'struct q;\n' >"$t/queue/queue_int.h"
    printf 'struct d;\n' >"$t/backends/docker/internal.h"
    printf '#include "queue/queue.h"\n#include "queue_int.h"\n' >"$t/queue/queue.c"
    printf '#include "internal.h"\n' >"$t/backends/docker/docker.c"
    check "$t" >/dev/null || { echo "check-layers self-test: a folder's own private header was refused"; exit 1; }
    printf '#include "queue/queue.h"\n#include "queue/queue_int.h"\n' >"$t/scheduler/x.c"
    reported 'scheduler/x.c:2: scheduler/ may not include "queue/queue_int.h" (a header private to queue/)'
    refused backends/registry/x.c '#include "backends/docker/internal.h"' \
        '#include "../docker/internal.h"' '#include <backends/docker/internal.h>'
    rm "$t/scheduler/x.c" "$t/backends/registry/x.c"
    # a chain of headers: each include allowed where it stands, the file
    # at its start reaches a folder its own list does not name
    mkdir -p "$t/job" "$t/config"
    printf '#include "queue/queue.h"\n' >"$t/scheduler/decide.h"
    printf '#include "backends/backend.h"\n' >"$t/config/config.h"
    printf '#include "config/config.h"\n' >"$t/job/job.h"
    printf '#include "job/job.h"\n' >"$t/job/job.c"
    printf '#include "scheduler/decide.h"\n' >"$t/exec/x.c"
    printf '#include "common/common.h"\n' >"$t/backends/backend.h"
    reported 'exec/x.c: exec/ reaches "queue/queue.h" through exec/x.c -> scheduler/decide.h -> queue/queue.h (queue/ is not below exec/'
    reported 'job/job.c: job/ reaches "backends/backend.h" through job/job.c -> job/job.h -> config/config.h -> backends/backend.h'
    printf '#include "backends/opts.h"\n' >"$t/config/config.h"
    printf 'struct o;\n' >"$t/backends/opts.h"
    rm "$t/exec/x.c"
    check "$t" >/dev/null || { echo "check-layers self-test: a chain of allowed headers was refused"; exit 1; }
    # an include circle, inside one folder
    printf '#include "queue/queue_int.h"\n' >"$t/queue/queue.h"
    printf '#include "queue.h"\n' >"$t/queue/queue_int.h"
    reported 'queue/queue.h: include circle: queue/queue.h -> queue/queue_int.h -> queue/queue.h'
    printf 'struct q;\n' >"$t/queue/queue_int.h"
    printf '#include "common/common.h"\n' >"$t/queue/queue.h"
    # a prototype declared by hand: no include shows it, the objects do
    mkdir -p "$t/build/exec" "$t/build/job"
    printf 'int job_check(void);\nint exec_scan(void) { return job_check(); }\n' >"$t/exec/scan.c"
    printf 'int job_check(void) { return 0; }\n' >"$t/job/check.c"
    ${CC:-cc} -c -o "$t/build/exec/scan.o" "$t/exec/scan.c"
    ${CC:-cc} -c -o "$t/build/job/check.o" "$t/job/check.c"
    objects=$t/build
    check "$t" >/dev/null || { echo "check-layers self-test: exec/ using job/'s function was refused"; exit 1; }
    printf 'int exec_scan(void);\nint job_check(void) { return exec_scan(); }\n' >"$t/job/check.c"
    ${CC:-cc} -c -o "$t/build/job/check.o" "$t/job/check.c"
    reported "$t/build/job/check.o: uses exec_scan, defined in $t/build/exec/scan.o (exec/ is not below job/"
    printf 'int job_check(void) { return 0; }\n' >"$t/job/check.c"
    ${CC:-cc} -c -o "$t/build/job/check.o" "$t/job/check.c"
    printf '#include "config/config.h"\n/* not exec_scan() */\nint exec_scan(void);\n' >"$t/job/job.h"
    reported "job/job.h:3: names exec_scan(), defined in $t/build/exec/scan.o (exec/ is not below job/"
    printf '#include "config/config.h"\n/* exec_scan() is exec/'"'"'s */\n' >"$t/job/job.h"
    check "$t" >/dev/null || { echo "check-layers self-test: a comment naming exec_scan() was refused"; exit 1; }
    echo "check-layers: self-test passed"
    exit 0
fi

objects=
if [ "${1:-}" = "--objects" ]; then
    objects=${2:?--objects takes the build directory}
    shift 2
fi
if check "${1:-.}"; then
    echo "check-layers: every include follows the layer rule${objects:+, and every symbol of the objects under $objects}"
else
    exit 1
fi
