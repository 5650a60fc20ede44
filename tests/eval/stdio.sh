#!/bin/sh
# stdio.sh - the stdin/stdout benchmarks of tests/eval/data/stdio end to end
# (APPS and LiveCodeBench rows taken from the datasets, and CodeContests,
# APPS and LiveCodeBench rows written in their layouts): `convert` writes one
# job per program with its tests as cases and the harness's compare,
# `submit --local` runs them in the real sandboxes, and every job's verdict
# must be the one the benchmark's own checker gives (data/README.md: how
# those were obtained): of each file exactly the listed jobs do not pass.
# Sourced by run.sh (its counters), or run alone.
if [ -z "${STDIO_SOURCED:-}" ]; then
    B=${LLMSB_BIN:-bin/llm-sandbox}
    D=$(dirname "$0")/data
    . "$(dirname "$0")/../lib.sh"
    T=$(mktemp -d)
    trap 'rm -rf "$T"' EXIT
    suite eval
    WHY_FILE= # a case's $T/why is in its message
fi
S=$D/stdio

# NAME DATASET [SAMPLES]: its jobs into $T/stdio.jobs
stdio_convert() {
    if $B convert "$S/$2" ${3:+--samples "$S/$3"} --out "$T/$1.jobs" 2>"$T/$1.err"; then
        cat "$T/$1.jobs" >>"$T/stdio.jobs"
        return 0
    fi
    bad "stdio_$1" "convert failed: $(cat "$T/$1.err")"
    return 1
}

: >"$T/stdio.jobs"
# real rows (data/README.md) first, then the rows written here for the rules
# no real row here exercises (*_constructed*; no CodeContests row was found)
stdio_convert apps_refs apps.jsonl
stdio_convert apps_samples apps.jsonl apps_samples.json
stdio_convert lcb_samples livecodebench.jsonl livecodebench_samples.json
stdio_convert cc_c_refs codecontests_constructed.jsonl
stdio_convert cc_c_samples codecontests_constructed.jsonl codecontests_constructed_samples.jsonl
stdio_convert apps_c_refs apps_constructed.jsonl
stdio_convert apps_c_samples apps_constructed.jsonl apps_constructed_samples.json
stdio_convert lcb_c_samples livecodebench_constructed.jsonl livecodebench_constructed_samples.json
$B submit "$T/stdio.jobs" --local --wait --out "$T/stdio.out" >"$T/stdio.log" 2>&1
# NAME JOBS FILE FAILING...: the jobs of FILE, exactly FAILING not passed
for check in \
    "apps_refs|9|2378/solutions/0|2378/solutions/1" \
    "apps_samples|7|0#1|2407#1|2407#2" \
    "lcb_samples|4|1873_A#2|1873_A#3" \
    "cc_c_refs|7|" \
    "cc_c_samples|11|llmsb_A. Even Sum#2|llmsb_A. Even Sum#3|llmsb_B. Circle Area#2|llmsb_B. Circle Area#3|llmsb_C. Reverse Lines#2" \
    "apps_c_refs|6|" \
    "apps_c_samples|10|9001#2|9001#3|9002#1|9002#2|9003#2" \
    "lcb_c_samples|11|llmsb_abc001_a#3|llmsb_abc001_b#1|llmsb_abc001_b#3|llmsb_3000#1|llmsb_3000#2"; do
    name=${check%%|*}
    [ -s "$T/$name.jobs" ] || continue
    if python3 "$(dirname "$0")/verdicts.py" "$T/$name.jobs" "$T/stdio.out" "$check" >"$T/why" 2>&1
    then
        ok "stdio_${name}_$(tr ' /' '_-' <"$T/why")"
    else
        bad "stdio_$name" "$(tail -3 "$T/why") $(tail -3 "$T/stdio.log")"
    fi
done

# LiveCodeBench's private tests as published (base64 of a zlib'd pickle; the
# real row): decoded in a sandbox job, the jobs are byte for byte those of the
# row decoded by hand (whose verdicts lcb_samples checked above)
if $B convert "$S/livecodebench_encoded.jsonl" --samples "$S/livecodebench_samples.json" \
    --out "$T/enc.jobs" 2>"$T/err" && cmp -s "$T/enc.jobs" "$T/lcb_samples.jobs" &&
    grep -q "decoding 1 rows' private_test_cases in sandbox jobs" "$T/err"; then
    ok stdio_lcb_pickled_private_tests_decoded_in_the_sandbox
else
    bad stdio_lcb_pickled_private_tests_decoded_in_the_sandbox "$(cat "$T/err")"
fi
# --no-decode: refused with how to decode them, nothing written
$B convert "$S/livecodebench_encoded.jsonl" --no-decode >"$T/out" 2>"$T/err"
if [ $? = 2 ] && grep -q 'livecodebench_encoded.jsonl:1: task "1873_A": private_test_cases is not JSON: .*pickle' "$T/err" &&
    [ ! -s "$T/out" ]; then
    ok stdio_lcb_pickled_private_tests_refused_with_no_decode
else
    bad stdio_lcb_pickled_private_tests_refused_with_no_decode "$(cat "$T/err")"
fi
# hostile pickles (data/README.md): unpickling runs os.system / eval, which
# happens in the sandbox only (no file appears here) and gives an error
# naming the row and the field, nothing written
M=/tmp/llmsb-lcb-pickle-ran
rm -f "$M"
for h in "system|private_test_cases could not be decoded in the sandbox: the decoder ended runtime_error: the pickle holds an object of type int, not a JSON string" \
    "schema|private_test_cases\[0\] (decoded in the sandbox) has a member that is not a string"; do
    $B convert "$S/livecodebench_hostile_${h%%|*}.jsonl" >"$T/out" 2>"$T/err"
    if [ $? = 2 ] && grep -q "livecodebench_hostile_${h%%|*}.jsonl:1: task \"1873_A\": ${h#*|}" "$T/err" &&
        [ ! -s "$T/out" ] && [ ! -e "$M" ]; then
        ok "stdio_lcb_hostile_pickle_${h%%|*}_only_in_the_sandbox"
    else
        bad "stdio_lcb_hostile_pickle_${h%%|*}_only_in_the_sandbox" "$(cat "$T/err"; ls -l "$M" 2>&1)"
    fi
done

if [ -z "${STDIO_SOURCED:-}" ]; then
    suite_end "eval stdio"
fi
