#!/bin/sh
# golden.sh - every converted job file as it was: `convert` of each dataset
# excerpt under data/ (references, each samples file the suites use, the
# modes, --timeout, --lang, --cut-at-stop-tokens, --extract, and inputs it refuses),
# its exit code, jobs and message hashed and compared with the hash in
# golden.sha256.  A change to what convert writes, on purpose or not, fails
# here naming the command; after one on purpose, `sh tests/eval/golden.sh
# --update` writes the new hashes (review the jobs first).  No engine: part
# of make unit.
B=${LLMSB_BIN:-bin/llm-sandbox}
case $B in /*) ;; *) B=$PWD/$B ;; esac
G=$(cd "$(dirname "$0")" && pwd)/golden.sha256
. "$(dirname "$0")/../lib.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
suite golden
cd "$(dirname "$0")/data" || exit 1

# the hash of what `convert ARGS` gives: exit code, stdout, stderr
digest() {
    "$B" convert "$@" >"$T/out" 2>"$T/err"
    { echo "exit $?"; cat "$T/out"; echo "--- stderr"; cat "$T/err"; } | sha256sum | cut -c1-64
}

if [ "$1" = --update ]; then
    while read -r sum args; do
        [ -n "$sum" ] || continue
        case $sum in '#'*) echo "$sum $args"; continue ;; esac
        # shellcheck disable=SC2086 # the arguments are words without blanks
        echo "$(digest $args) $args"
    done <"$G" >"$T/new" && cp "$T/new" "$G"
    echo "golden: $(grep -vc '^#' "$G") hashes written to $G"
    exit 0
fi

while read -r sum args; do
    case $sum in '#'* | '') continue ;; esac
    # shellcheck disable=SC2086
    got=$(digest $args)
    if [ "$got" = "$sum" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL golden: convert $args: exit, jobs or message changed ($(head -c 200 "$T/err"))"
    fi
done <"$G"
suite_end && [ "$pass" -gt 0 ]
