#!/bin/sh
# bench_cases.sh - compile once, run many: N stdin test cases of one C++
# program as one job with `cases` against N separate jobs (each compiling
# the same program), both through `submit --local` with the same pool, in
# this one run.  Prints the wall times and the ratio.
#   usage: bench/bench_cases.sh [LLM_SANDBOX] [N]
B=${1:-bin/llm-sandbox}
N=${2:-20}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CODE='#include <iostream>\nint main(){long n; std::cin >> n; std::cout << n * n << std::endl;}'

{
    printf '%s\n' 'jobs:' '  - id: "sq"' '    lang: cpp' "    code: \"$CODE\"" '    cases:'
    for i in $(seq 1 "$N"); do printf '      - {stdin: "%d", expect_stdout: "%d"}\n' "$i" $((i * i)); done
} > "$T/cases.yaml"
{
    printf '%s\n' 'defaults: {lang: cpp}' 'jobs:'
    for i in $(seq 1 "$N"); do
        printf '  - {id: "sq#%d", code: "%s", stdin: "%d", expect_stdout: "%d"}\n' "$i" "$CODE" "$i" $((i * i))
    done
} > "$T/jobs.yaml"

ms() { date +%s%3N; }
# one warm-up so both runs find the image and a started pool alike
"$B" submit --local --slots 1 "$T/cases.yaml" >/dev/null 2>&1 </dev/null
t0=$(ms); "$B" submit --local --slots 1 "$T/jobs.yaml" >"$T/a" 2>&1 </dev/null; ra=$?; t1=$(ms)
"$B" submit --local --slots 1 "$T/cases.yaml" >"$T/b" 2>&1 </dev/null; rb=$?; t2=$(ms)
if [ $ra != 0 ] || [ $rb != 0 ]; then
    echo "bench_cases: a run did not pass (separate: exit $ra, cases: exit $rb)"; cat "$T/a" "$T/b"; exit 1
fi
sep=$((t1 - t0)); one=$((t2 - t1))
echo "C++, $N stdin cases, 1 slot:"
echo "  $N separate jobs (a compile each): $sep ms ($(( sep / N )) ms per case)"
echo "  one job with $N cases (one compile): $one ms ($(( one / N )) ms per case)"
awk -v a="$sep" -v b="$one" 'BEGIN { printf "  compile once: %.1fx faster\n", a / b }'
