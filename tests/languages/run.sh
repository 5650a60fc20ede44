#!/bin/bash
# run.sh - every language of tests/languages/LANG.yaml in its own image
# (LLMSB_LANGS="a b" for some): the status cases and the hostile ones of
# LANG.yaml through the real engine (submit --local), each result checked
# against its meta (expect: statuses "a|b"; check: passed; exit: the exit
# code; rule: a violation whose rule holds it), every file holding the
# cases each language must have; then the hardening audit (audit.sh) in
# the language's image; then the host: no container of this run left, no
# process of the sandbox uid outside every container, dockerd answering.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
B=${LLMSB_BIN:-$PWD/bin/llm-sandbox}
ENGINE_SOCK=/var/run/docker.sock
suite languages
T=$(mktemp -d)
trap 'kill "${WATCH_PID:-}" 2>/dev/null; rm -rf "$T"' EXIT
langs=${LLMSB_LANGS:-$(ls tests/languages/*.yaml | sed 's#.*/##; s#\.yaml$##')}
# every language: a program's statuses, the hostile cases, the strict
# policy on a spawn and on a spawn's text in a string or comment
need="hello runtime_error exit_code stdin timeout memory output_flood fork_bomb network write_outside_work spawn_blocked spawn_in_string"

watch_containers "$T/created"
for L in $langs; do
    f=tests/languages/$L.yaml
    track "$B" submit "$f" --local --slots 2 --allow-invalid --out "$T/$L.out" >"$T/$L.log" 2>&1
    rc=$?
    if [ "$rc" -gt 1 ] || [ ! -s "$T/$L.out" ]; then
        cp "$T/$L.log" "$T/why"; bad "${L}_ran" "submit $f: exit $rc"; continue
    fi
    for c in $need; do
        grep -q "^  - id: $L-$c\$" "$f" || bad "${L}_has_$c" "$f has no case $L-$c"
    done
    grep -qE "^  - id: $L-(compile|syntax)_error\$" "$f" || bad "${L}_has_compile_error" "$f has no case $L-compile_error or $L-syntax_error"
    while IFS= read -r line; do
        why=$(jq -r '
            (.meta.expect // "") as $e | .status as $s | (.meta.rule // "") as $r |
            if ("|" + $e + "|" | contains("|" + $s + "|")) | not then "got \($s), want \($e)"
            elif .meta.check == "passed" and .passed != true then "did not pass"
            elif (.meta | has("exit")) and .exit_code != .meta.exit then "exit code \(.exit_code), want \(.meta.exit)"
            elif $r != "" and ([.violations[]?.rule | contains($r)] | any | not) then "no violation \"\($r)\""
            else empty end' <<<"$line" 2>&1)
        if [ -z "$why" ]; then
            ok "$(jq -r '.id + " (" + .status + ")"' <<<"$line")"
        else
            bad "$(jq -r .id <<<"$line")" "$why $(jq -c '{stdout: .stdout[0:160], stderr: .stderr[0:160], compile_output: .compile_output[0:160], error}' <<<"$line")"
        fi
    done <"$T/$L.out"
    # the audit, in L's image
    printf 'images:\n  bash: llmsb/%s:latest\n' "$L" >"$T/audit.yaml"
    if ! track "$B" --config "$T/audit.yaml" run --lang bash tests/languages/audit.sh </dev/null >"$T/audit" 2>"$T/why"; then
        bad "${L}_hardened" "the audit did not run in llmsb/$L"; continue
    fi
    missing=
    for want in "NoNewPrivs 1" "Seccomp 2" "CapEff 0000000000000000" "CapBnd 00000000000000e0" \
        "uid 10001 10001" "rootfs ro" "ifaces lo " "env " "nofile 1024 fsize 65536 core 0 nproc 4096" \
        "size /work 256" "size /tmp 256" "size /var/tmp 256" "size /dev/shm 64" "setid " "mem 512"; do
        grep -qxF "$want" "$T/audit" || missing="$missing [$want]"
    done
    grep -q '^writable' "$T/audit" && missing="$missing $(grep '^writable' "$T/audit" | tr '\n' ' ')"
    if [ -z "$missing" ]; then ok "${L}_hardened"; else cp "$T/audit" "$T/why"; bad "${L}_hardened" "missing:$missing"; fi
done

# `run FILE`: each language's hello program, named by its extension only
"$B" images languages --json >"$T/rows"
for L in $langs; do
    jq -r --arg l "$L" 'select(.name == $l) | .hello' "$T/rows" >"$T/hello_src"
    ext=$(jq -r --arg l "$L" 'select(.name == $l) | .ext' "$T/rows")
    stem=$(jq -r --arg l "$L" 'select(.name == $l) | .default_stem' "$T/rows")
    mkdir -p "$T/hello_$L" && head -c -1 "$T/hello_src" >"$T/hello_$L/$stem.$ext"
    out=$(track "$B" run "$T/hello_$L/$stem.$ext" </dev/null 2>"$T/why")
    [ "$out" = hello ] && ok "${L}_run_hello_$stem.$ext" || bad "${L}_run_hello_$stem.$ext" "printed \"$out\""
done

# the host after the suite: what this run's processes made
left=$(containers_of $RUN_PIDS | wc -l)
[ "$left" = 0 ] && ok no_container_left || bad no_container_left "$left"
sleep 1
kill "$WATCH_PID" 2>/dev/null; wait "$WATCH_PID" 2>/dev/null
made=$(watched_containers "$T/created" $RUN_PIDS)
{ processes_in $made; processes_outside_containers 10001; } >"$T/stray"
if [ -z "$made" ]; then bad no_sandbox_process_left "no container of this run seen on the engine's events"
elif [ ! -s "$T/stray" ]; then ok no_sandbox_process_left
else cp "$T/stray" "$T/why"; bad no_sandbox_process_left "$(wc -l <"$T/stray") in $(echo "$made" | wc -l) containers"; fi
curl -fs --max-time 5 --unix-socket "$ENGINE_SOCK" http://d/_ping >/dev/null && ok engine_healthy || bad engine_healthy "no answer"
suite_end
