#!/usr/bin/env bash
# setup.sh - everything llm-sandbox needs on a fresh Debian 12 machine, as
# root: build dependencies, docker.io and debootstrap, a running dockerd,
# the binaries, and the sandbox images (built only when missing).
#   scripts/setup.sh            install, build, build images, run an example
#   scripts/setup.sh --no-example
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== %s\n' "$*"; }

PKGS="build-essential pkg-config libhiredis-dev libcurl4-openssl-dev libcjson-dev
      libarchive-dev libpcre2-dev libyaml-dev docker.io debootstrap curl ca-certificates
      clang libclang-rt-14-dev socat redis-server redis-tools docker-compose jq iptables iproute2"

if [ "$(id -u)" -ne 0 ]; then
    echo "error: run as root (it installs packages and starts dockerd): sudo $0" >&2
    exit 1
fi

missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    log "installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $missing
fi

docker_up() { curl -fsS --max-time 3 --unix-socket /var/run/docker.sock http://d/_ping >/dev/null 2>&1; }
if ! docker_up; then
    log "starting dockerd"
    if [ -d /run/systemd/system ] && systemctl start docker 2>/dev/null; then
        :
    else
        nohup dockerd >/var/log/llmsb-dockerd.log 2>&1 &
    fi
    for _ in $(seq 1 60); do docker_up && break; sleep 0.5; done
    docker_up || { echo "error: dockerd did not come up; see /var/log/llmsb-dockerd.log" >&2; exit 1; }
fi

log "building"
make -j"$(nproc)" all

log "building sandbox images (cold: about 9 minutes; cached afterwards)"
bin/llm-sandbox images build

if [ "${1:-}" != "--no-example" ]; then
    log "one program: bin/llm-sandbox run examples/hello.py"
    bin/llm-sandbox run examples/hello.py </dev/null
    log "the main job: a worker, a job file, results (scripts/demo.sh)"
    scripts/demo.sh
fi
