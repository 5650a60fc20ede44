#!/bin/bash
# run.sh - the hostile suite: every case of hostile.yaml through the real
# engine (submit --local, 2 slots, the default policy "minimal"), each
# result checked against meta.expect; then the host: no container of this
# run left, no process left in one nor of the sandbox uid outside every
# container, dockerd answering.  Other runs on the host are not counted
# (tests/lib.sh): a decoy, another run's sandbox, runs meanwhile.
# LLMSB_BACKEND=podman runs it against the Podman service (suite
# hostile_podman); LLMSB_RUNTIME=runsc on gVisor (suite hostile_runsc, make
# test-gvisor).  Whether the jobs run on gVisor is the job's kernel's to
# say, whatever the runtime's name (a path, another name of runsc): there
# a case's meta.expect_runsc and meta.stdout_runsc, where given, stand for
# meta.expect and its expected stdout.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
B=${LLMSB_BIN:-$PWD/bin/llm-sandbox}
rt=${LLMSB_RUNTIME:+_$(basename "$LLMSB_RUNTIME")}; rt=${rt//[^a-z0-9_]/_} # a suite name run-suite.sh reads
case ${LLMSB_BACKEND:-docker} in
    docker) SUITE=hostile$rt; SOCK=/var/run/docker.sock ;;
    podman) SUITE=hostile_podman; SOCK=/run/podman/podman.sock ;;
    *) echo "FAIL hostile: LLMSB_BACKEND=$LLMSB_BACKEND has no host check here"; echo "hostile: 0 passed, 1 failed"; exit 1 ;;
esac
ENGINE_SOCK=$SOCK
T=$(mktemp -d)
trap 'kill "${WATCH_PID:-}" 2>/dev/null; [ -n "${decoy:-}" ] && remove_container "$decoy"; rm -rf "$T"' EXIT
pass=0; fail=0

# the jobs run on the runtime asked for: gVisor has a kernel of its own
# (release 4.4.0, version "#1 SMP Sun Jan 10 15:06:54 PST 2016"), runc the
# host's; a runtime named for gVisor must give gVisor's
echo 'import os; print(os.uname().release, os.uname().version)' >"$T/kernel.py"
kernel=$("$B" run "$T/kernel.py" </dev/null 2>"$T/kernel.err")
gvisor=0
case $kernel in *"SMP Sun Jan 10 15:06:54 PST 2016") gvisor=1 ;; esac
kernel_ok() { # kernel_ok: a job's kernel is the one the runtime gives
    case ${LLMSB_RUNTIME:-} in
        "") [ "${kernel%% *}" = "$(uname -r)" ] ;;
        *runsc*|*gvisor*) [ "$gvisor" = 1 ] ;;
        *) [ -n "$kernel" ] ;;
    esac
}
if kernel_ok; then echo "ok   $SUITE.runtime (a job's kernel: $kernel${LLMSB_RUNTIME:+; runtime $LLMSB_RUNTIME}, gVisor: $gvisor)"; pass=$((pass + 1))
else
    echo "FAIL $SUITE.runtime: a job's kernel is \"$kernel\" (the host's: $(uname -r)) $(tail -2 "$T/kernel.err")"
    fail=$((fail + 1))
fi

watch_containers "$T/created"
# another run's sandbox, with a process of the sandbox uid, which the host
# checks must not count
decoy=$(decoy_container llmsb/python:latest) ||
    { echo "FAIL $SUITE.decoy: cannot start a container of llmsb/python:latest"; echo "$SUITE: 0 passed, 1 failed"; exit 1; }
track "$B" submit tests/hostile/hostile.yaml --local --slots 2 --allow-invalid --out "$T/out.jsonl" >"$T/run.log" 2>&1
rc=$?
if [ "$rc" -gt 1 ] || [ ! -s "$T/out.jsonl" ]; then  # 1: jobs did not pass, as hostile ones do
    echo "FAIL $SUITE.suite_ran: exit $rc"; tail -20 "$T/run.log"; echo "$SUITE: 0 passed, 1 failed"; exit 1
fi
while IFS= read -r line; do
    id=$(jq -r .id <<<"$line"); status=$(jq -r .status <<<"$line")
    expect=$(jq -r '.meta.expect // empty' <<<"$line"); check=$(jq -r '.meta.check // empty' <<<"$line")
    passed=$(jq -r '.passed // empty' <<<"$line")
    # gVisor's own answers where they differ, each justified in hostile.yaml
    # and docs/security.md: a status, or the stdout the check compares
    if [ "$gvisor" = 1 ]; then
        expect=$(jq -r --arg e "$expect" '.meta.expect_runsc // $e' <<<"$line")
        jq -e 'has("meta") and (.meta | has("stdout_runsc"))' <<<"$line" >/dev/null &&
            passed=$(jq -r '.stdout == .meta.stdout_runsc' <<<"$line")
    fi
    data=$(jq '[.artifacts[]? | select(.base64)] | length' <<<"$line")
    if [[ "|$expect|" == *"|$status|"* ]] && { [ "$check" != passed ] || [ "$passed" = true ]; } &&
       { [ "$check" != no_artifact_data ] || [ "$data" = 0 ]; }; then
        echo "ok   $SUITE.$id ($status)"; pass=$((pass + 1))
    else
        echo "FAIL $SUITE.$id: got $status (want $expect${check:+, passed}) $(jq -c '{stdout: .stdout[0:120], error}' <<<"$line")"
        fail=$((fail + 1))
    fi
done <"$T/out.jsonl"

# a huge code field (2 MB, over the 1 MiB cap) is invalid, nothing runs
{ printf '{"id": "huge-code", "lang": "python", "code": "'; head -c 2000000 /dev/zero | tr '\0' 'x'; printf '"}\n'; } > "$T/huge.jsonl"
track "$B" submit "$T/huge.jsonl" --local --out "$T/huge.out" >/dev/null 2>"$T/huge.err"; hrc=$?
# refused before anything runs, naming file, line, field and cap; with
# --allow-invalid it becomes an invalid result
track "$B" submit "$T/huge.jsonl" --local --allow-invalid --out "$T/huge.out" >/dev/null 2>&1
if [ "$hrc" = 2 ] && grep -q "huge.jsonl:1: code: 2000000 bytes is over the 1048576 byte cap" "$T/huge.err" &&
   jq -e '.status == "invalid" and (.error | test("code: 2000000 bytes is over the 1048576 byte cap"))' "$T/huge.out" >/dev/null; then
    echo "ok   $SUITE.huge-code (invalid)"; pass=$((pass + 1))
else echo "FAIL $SUITE.huge-code: $(jq -c '{status, error}' "$T/huge.out")"; fail=$((fail + 1)); fi

# the host after the suite: what this run's processes made
left=$(containers_of $RUN_PIDS | wc -l)
[ "$left" = 0 ] && { echo "ok   $SUITE.no_container_left"; pass=$((pass + 1)); } ||
    { echo "FAIL $SUITE.no_container_left: $left"; fail=$((fail + 1)); }
sleep 1
kill "$WATCH_PID" 2>/dev/null; wait "$WATCH_PID" 2>/dev/null
made=$(watched_containers "$T/created" $RUN_PIDS)
{ processes_in $made; processes_outside_containers 10001; } >"$T/stray"
if [ -z "$made" ]; then
    echo "FAIL $SUITE.no_sandbox_process_left: no container of this run seen on the engine's events"; fail=$((fail + 1))
elif [ ! -s "$T/stray" ]; then echo "ok   $SUITE.no_sandbox_process_left"; pass=$((pass + 1))
else
    echo "FAIL $SUITE.no_sandbox_process_left: $(wc -l <"$T/stray") in $(echo "$made" | wc -l) containers ($(head -3 "$T/stray"))"
    fail=$((fail + 1))
fi
[ -n "$(processes_in "$decoy")" ] ||
    { echo "FAIL $SUITE.decoy: the other run's container had no process while the host was checked"; fail=$((fail + 1)); }
remove_container "$decoy"; decoy=
curl -fs --max-time 5 --unix-socket "$SOCK" http://d/_ping >/dev/null &&
    { echo "ok   $SUITE.engine_healthy"; pass=$((pass + 1)); } ||
    { echo "FAIL $SUITE.engine_healthy"; fail=$((fail + 1)); }
echo "$SUITE: $pass passed, $fail failed"
[ "$fail" = 0 ]
