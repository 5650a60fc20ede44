#!/usr/bin/env bash
# gvisor-up.sh - gVisor (Debian's runsc package) as the OCI runtime `runsc`
# of the system dockerd, for `backend.runtime: runsc`, and again under the
# name `gvisor-test`, for make test-gvisor's check that gVisor is known by
# its binary, not its name (docs/security.md).  Idempotent: what is there
# already is kept.
#   scripts/gvisor-up.sh          install runsc, register it, check a container starts on it
#
# The runtime is registered in /etc/docker/daemon.json (merged with what the
# file holds) and dockerd reloads it on SIGHUP: no restart, the running
# containers and the default runtime (runc) are untouched.  The images are
# the daemon's own, so nothing is copied.  Its arguments:
#   --platform=ptrace  the only platform that runs here: kvm hangs at boot in
#                      a nested VM (docs/security.md); the default of this
#                      version, written down so that a newer runsc keeps it
#   no --oci-seccomp   this runsc turns every SCMP_ACT_ERRNO of a profile
#                      into EPERM (errnoRet ignored), so clone3 answers EPERM
#                      instead of ENOSYS, glibc does not fall back to clone,
#                      and no thread starts (node, java, go); without it
#                      gVisor's own kernel is the filter (docs/security.md)
#   --network=none     the gVisor netstack cannot take over the interfaces
#                      Docker gives it on this kernel (docs/security.md): a
#                      sandbox has loopback only, so network jobs get none
set -euo pipefail
cd "$(dirname "$0")/.."

RUNSC=/usr/bin/runsc
ARGS='["--platform=ptrace", "--network=none"]'
CONF=/etc/docker/daemon.json
log() { printf '== gvisor-up: %s\n' "$*" >&2; }
die() { printf 'error: gvisor-up: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (it installs runsc and registers it with dockerd)"

if ! dpkg-query -W -f='${Status}' runsc 2>/dev/null | grep -q "install ok installed"; then
    log "installing runsc"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends runsc jq >&2
fi
command -v jq >/dev/null || die "jq is missing (scripts/setup.sh installs it)"
log "$("$RUNSC" --version | head -1)"

docker_up() { curl -fsS --max-time 3 --unix-socket /var/run/docker.sock http://d/_ping >/dev/null 2>&1; }
docker_up || die "dockerd does not answer on /var/run/docker.sock (scripts/setup.sh starts it)"

want=$(jq -cn --arg p "$RUNSC" --argjson a "$ARGS" '{path: $p, runtimeArgs: $a}')
NAMES='["runsc", "gvisor-test"]'
# each name's {path, runtimeArgs} as dockerd has them, one line a name
registered() { docker info --format '{{json .Runtimes}}' | jq -c --argjson n "$NAMES" '. as $r | $n[] | $r[.] // {} | {path, runtimeArgs}'; }
all_want=$(jq -cn --argjson n "$NAMES" --argjson w "$want" '$n[] | $w')
have=$(registered)
if [ "$have" != "$all_want" ]; then
    log "registering runsc (as $(jq -r 'join(", ")' <<<"$NAMES")) in $CONF and reloading dockerd (SIGHUP)"
    mkdir -p "$(dirname "$CONF")"
    [ -s "$CONF" ] || echo '{}' >"$CONF"
    jq --argjson r "$want" --argjson n "$NAMES" 'reduce $n[] as $k (.; .runtimes[$k] = $r)' "$CONF" >"$CONF.new" ||
        die "$CONF is not valid JSON"
    mv "$CONF.new" "$CONF"
    pid=$(cat /var/run/docker.pid 2>/dev/null || pidof dockerd) || die "cannot find dockerd's pid"
    kill -HUP "$pid"
    for _ in $(seq 1 50); do
        have=$(registered)
        [ "$have" = "$all_want" ] && break
        sleep 0.2
    done
    [ "$have" = "$all_want" ] ||
        die "dockerd did not take the runtime from $CONF (it has $have; is it started with --add-runtime or another --config-file?)"
fi

# the smallest sandbox image, as a job's container is made: a read-only root
image=llmsb/base:latest
docker image inspect "$image" >/dev/null 2>&1 || die "no $image (scripts/setup.sh builds the images)"
out=$(docker run --rm --runtime runsc --network none --read-only --entrypoint uname "$image" -r 2>&1) ||
    die "a container does not start on runsc: $out"
[ "$out" != "$(uname -r)" ] || die "the container ran on the host kernel ($out), not in gVisor"
log "runsc is dockerd's runtime \"runsc\" (a container's kernel: $out; the host's: $(uname -r))"
