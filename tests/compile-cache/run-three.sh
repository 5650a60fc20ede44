# run-three.sh - sourced by cpp.sh and java.sh: run_three submits differ.py's
# three job files ($T/plain.jsonl, cached.jsonl, trace.jsonl) with
# `submit --local --slots 2` into $T/MODE.out, calling the script's bad()
# for a run that failed or wrote nothing.
run_three() {
    for mode in plain cached trace; do
        "$B" submit "$T/$mode.jsonl" --local --no-dedup --slots 2 --out "$T/$mode.out" >"$T/$mode.log" 2>&1
        rc=$?
        if [ "$rc" -gt 1 ] || [ ! -s "$T/$mode.out" ]; then
            bad "run_$mode" "exit $rc: $(tail -5 "$T/$mode.log")"
        fi
    done
}
