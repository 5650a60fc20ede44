#!/bin/sh
# harness.sh - EvalPlus's own evaluator (`python3 -m evalplus.evaluate`) run on
# this host, for the comparison and the bench of docs/eval.md and
# docs/benchmarks.md: its code exported from a git directory at a pinned
# commit, its Python dependencies from Debian's archive only (installed when
# missing; the ones Debian lacks and `evaluate` never calls are the labelled
# stand-ins in standin/), the dataset from a file (its override variables),
# no network. Writes each sample's base and plus status as a TSV
# (task_id, n-th sample of the task, base, plus) and prints its wall time.
#   usage: bench/evalplus/harness.sh humaneval|mbpp SAMPLES.jsonl[.gz] OUT.tsv [PARALLEL]
# EVALPLUS_GIT: the evalplus repository (a git directory; default the code
#   library's mirror), EVALPLUS_COMMIT: its commit (default the pinned one),
# EVALPLUS_DATA: the HumanEvalPlus / MbppPlus .jsonl[.gz] (default the
#   release mirrors' v0.1.10 / v0.2.0 files, or tests/eval/data/evalplus/),
# EVALPLUS_CACHE: where its ground-truth cache lives (default a fresh
#   temporary directory: the expected outputs are computed in this run).
# PARALLEL: its --parallel (default its own: half the CPUs).
set -eu
[ $# -ge 3 ] || { echo "usage: $0 humaneval|mbpp SAMPLES OUT.tsv [PARALLEL]" >&2; exit 2; }
DATASET=$1 SAMPLES=$2 OUT=$3 PAR=${4:-}
H=$(cd "$(dirname "$0")" && pwd)
EVALPLUS_GIT=${EVALPLUS_GIT:-/work/.mirror/evalplus+evalplus/repo}
EVALPLUS_COMMIT=${EVALPLUS_COMMIT:-26d6d00bb1fd0fa37f39c99d5290da67891d1c5e}
PY=/usr/bin/python3 # Debian's, whose packages these are (not a python3 earlier in PATH)
PKGS="python3-numpy python3-psutil python3-tqdm python3-termcolor python3-appdirs
      python3-fire python3-wget python3-multipledispatch python3-rich"

case $DATASET in
humaneval) REL=humanevalplus_release/repo FILE=HumanEvalPlus.jsonl.gz VAR=HUMANEVAL_OVERRIDE_PATH ;;
mbpp) REL=mbppplus_release/repo FILE=MbppPlus.jsonl.gz VAR=MBPP_OVERRIDE_PATH ;;
*) echo "harness.sh: dataset \"$DATASET\": expected humaneval or mbpp" >&2; exit 2 ;;
esac

missing=
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "harness.sh: Debian packages missing:$missing (run as root, or apt-get install them)" >&2
        exit 1
    fi
    echo "harness.sh: installing$missing" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >&2 ||
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >&2; }
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
git -C "$EVALPLUS_GIT" cat-file -e "$EVALPLUS_COMMIT^{commit}" 2>/dev/null ||
    { echo "harness.sh: $EVALPLUS_GIT has no commit $EVALPLUS_COMMIT (set EVALPLUS_GIT to a clone of evalplus/evalplus)" >&2; exit 1; }
mkdir "$T/src"
git -C "$EVALPLUS_GIT" archive "$EVALPLUS_COMMIT" evalplus | tar -x -C "$T/src"

DATA=${EVALPLUS_DATA:-}
if [ -z "$DATA" ]; then
    if [ -f "$H/../../tests/eval/data/evalplus/$FILE" ]; then
        DATA=$H/../../tests/eval/data/evalplus/$FILE
    else
        DATA=$T/$FILE
        git -C "/work/.mirror/evalplus+$REL" cat-file -p "HEAD:$FILE" >"$DATA" ||
            { echo "harness.sh: no $FILE (set EVALPLUS_DATA)" >&2; exit 1; }
    fi
fi
case $SAMPLES in
*.gz) zcat "$SAMPLES" >"$T/samples.jsonl" ;;
*) cp "$SAMPLES" "$T/samples.jsonl" ;;
esac
CACHE=${EVALPLUS_CACHE:-$T/cache}
mkdir -p "$CACHE"

ms() { date +%s%3N; }
t0=$(ms)
(
    cd "$T"
    export PYTHONPATH="$T/src:$H/standin" XDG_CACHE_HOME="$CACHE" TOKENIZERS_PARALLELISM=false
    export "$VAR=$DATA"
    "$PY" -m evalplus.evaluate --dataset "$DATASET" --samples "$T/samples.jsonl" \
        --output_file "$T/results.json" ${PAR:+--parallel "$PAR"}
) >"$T/log" 2>&1 || { echo "harness.sh: evalplus.evaluate failed:" >&2; tail -20 "$T/log" >&2; exit 1; }
t1=$(ms)
tr '\r' '\n' <"$T/log" | sed 's/\x1b\[[0-9;]*m//g' | grep -E '^(Expected outputs|humaneval|mbpp|pass@)' >&2 || true
"$PY" - "$T/results.json" "$EVALPLUS_COMMIT" "$DATA" "${PAR:-default}" >"$OUT" <<'PY'
import hashlib, json, os, sys
r = json.load(open(sys.argv[1]))
md5 = hashlib.md5(open(sys.argv[3], "rb").read()).hexdigest()
print(f"# evalplus.evaluate of evalplus/evalplus {sys.argv[2]}, dataset {os.path.basename(sys.argv[3])} (md5 {md5}),"
      f" --parallel {sys.argv[4]}, bench/evalplus/harness.sh, {r['date']}")
print("task_id\tsample\tbase\tplus")
def key(t):
    return int(t.split("/")[1])
for tid in sorted(r["eval"], key=key):
    for i, s in enumerate(r["eval"][tid]):
        print(f"{tid}\t{i}\t{s['base_status']}\t{s['plus_status']}")
PY
echo "evalplus.evaluate: $DATASET, $(grep -vc -e "^#" -e "^task_id" "$OUT") samples, ${PAR:-default} parallel: $((t1 - t0)) ms wall"
