#!/usr/bin/env bash
# podman-up.sh - a rootful Podman API service for backend `podman`, with the
# sandbox images in its store.  Idempotent: what is there already is kept.
#   scripts/podman-up.sh            install podman, start the service, copy images
#   scripts/podman-up.sh --build    build the images with Podman instead of copying
#   PODMAN_LANGS="a b" scripts/podman-up.sh   only those languages' images
#
# The service is `podman system service --time=0` on /run/podman/podman.sock
# (where backend `podman` looks first; CONTAINER_HOST or backend.host say
# otherwise).  Images: each llmsb/<lang> image of the local dockerd is
# copied (docker save | podman load, both its :latest and its content-hash
# tag) unless Podman has that hash tag already; with --build, or without a
# dockerd, `llm-sandbox images build` builds them in Podman itself.
set -euo pipefail
cd "$(dirname "$0")/.."

SOCK=/run/podman/podman.sock
log() { printf '== podman-up: %s\n' "$*" >&2; }
die() { printf 'error: podman-up: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (it installs podman and starts its rootful service)"

if ! command -v podman >/dev/null 2>&1; then
    log "installing podman"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends podman >&2
fi

podman_up() { curl -fsS --max-time 3 --unix-socket "$SOCK" http://d/_ping >/dev/null 2>&1; }
if ! podman_up; then
    log "starting podman system service on $SOCK (log: /var/log/llmsb-podman.log)"
    mkdir -p "$(dirname "$SOCK")"
    rm -f "$SOCK"
    # from /: conmon leaves files (an empty "oom" when a container hits its
    # memory limit) in the service's working directory
    (cd / && exec setsid nohup podman system service --time=0 "unix://$SOCK" \
        >/var/log/llmsb-podman.log 2>&1 </dev/null) &
    for _ in $(seq 1 60); do podman_up && break; sleep 0.5; done
    podman_up || { tail -20 /var/log/llmsb-podman.log >&2; die "the podman service did not answer on $SOCK"; }
fi

[ -x bin/llm-sandbox ] || make -j"$(nproc)" all >&2

docker_up() { curl -fsS --max-time 3 --unix-socket /var/run/docker.sock http://d/_ping >/dev/null 2>&1; }
if [ "${1:-}" = "--build" ] || ! docker_up; then
    log "building the sandbox images with Podman"
    # shellcheck disable=SC2086
    LLMSB_BACKEND=podman bin/llm-sandbox images build ${PODMAN_LANGS:-} >&2
    exit 0
fi

# The hash tag of an image: its other tag in the same repository.
copied=0
# PODMAN_LANGS="python ruby": only those languages' images (make test-podman
# copies the eight its suites run); every language's by default
for ref in $(docker images --filter label=llmsb.lang --format '{{.Repository}}:{{.Tag}}' | grep -E "^llmsb/[a-z_]+:latest$"; echo llmsb/base:latest); do
    repo=${ref%:latest}
    if [ -n "${PODMAN_LANGS:-}" ] && [ "$repo" != llmsb/base ]; then
        case " $PODMAN_LANGS " in *" ${repo#llmsb/} "*) ;; *) continue ;; esac
    fi
    tags=$(docker image inspect --format '{{join .RepoTags " "}}' "$ref" 2>/dev/null) || continue
    hash=""
    for t in $tags; do
        case $t in "$repo":latest) ;; "$repo":*) hash=$t ;; esac
    done
    [ -n "$hash" ] || hash=$ref
    if podman image exists "$hash" && [ "$hash" != "$ref" ]; then
        continue
    fi
    log "copying $hash from docker to podman"
    docker save "$ref" "$hash" | podman load -q >&2 || die "copying $ref to podman failed"
    copied=$((copied + 1))
done
log "images: $copied copied, the rest up to date"
