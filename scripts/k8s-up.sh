#!/usr/bin/env bash
# k8s-up.sh - a real one-node Kubernetes 1.20.2 on this Debian 12 host, for
# testing the Kubernetes backend: etcd, kube-apiserver and a kubelet
# (dockershim on the local dockerd) registered as node llmsb-node, plus the
# namespace `llmsb` and the least-rights ServiceAccount `llmsb-worker` of
# deploy/kubernetes/{namespace,rbac}.yaml.
#
#   eval "$(scripts/k8s-up.sh)"      # KUBECONFIG (admin), LLMSB_K8S_NODE,
#                                    # LLMSB_K8S_WORKER_KUBECONFIG
#   scripts/k8s-up.sh --build-only   # only build and cache the binaries
#   scripts/k8s-down.sh              # stop it again
#
# stdout carries only `export` lines, `export KUBECONFIG=...` last; progress
# and errors go to stderr. Idempotent: with everything up it changes nothing
# and returns in about a second; a daemon whose flags, certificates or tokens
# changed is restarted.
#
# No registry is needed: kube-apiserver and kubelet are built once from
# Debian's `kubernetes` source package (its orig tarball carries vendor/)
# and cached, keyed by version, under $LLMSB_K8S_CACHE (default
# /var/cache/llmsb-k8s); the pause image is compiled from the same tree and
# `docker import`ed as k8s.gcr.io/pause:3.2. Cold: ~10 min on 2 cores and
# a few GB of disk while building; warm: seconds.
#
# Test-only patches applied before the build (a real cluster needs none):
#   - defaultSandboxOOMAdj (-998) and guaranteedOOMScoreAdj (-997) -> 0: this
#     kind of machine refuses a negative oom_score_adj, so no pod could start.
#   - the kubelet only warns about kernel tunables (vm.overcommit_memory,
#     kernel.panic, kernel.panic_on_oops, ...) instead of rewriting the host's.
#   - vendored modern-go/reflect2 1.0.1 -> Debian's 1.0.2 (1.0.1 crashes under
#     Go >= 1.18 on the first JSON encoding of a map).
#
# Layout: the kubelet lives in network namespace llmsb-k8s (node IP
# 10.200.0.2, veth to the host side 10.200.0.1, where the API server
# listens), so it has a non-loopback node IP and its iptables chains stay out
# of the host. No scheduler or controller-manager runs: pods need
# spec.nodeName: llmsb-node, and imagePullPolicy Never or IfNotPresent (the
# kubelet uses the host's dockerd, so every local image, llmsb/* included, is
# already there; image garbage collection is off). Pod network: by default
# none (LLMSB_K8S_POD_NETWORK=none): the stock macvlan CNI plugin, mode
# private, on one end of a veth pair inside the node's namespace whose other
# end stays down, so each pod gets an eth0 with an address from 10.201.0.0/24
# (the kubelet insists on a pod IP) but reaches nothing: no route, no peer, no
# pod-to-pod traffic, like the docker backend's network-less containers.
# LLMSB_K8S_POD_NETWORK=bridge gives pods docker0 (and the internet) instead.
# NetworkPolicy objects are accepted but not enforced (no policy CNI). The
# ServiceAccount admission plugin is off and no token controller runs, so
# the worker's identity is a static token (tokens.csv) for
# system:serviceaccount:llmsb:llmsb-worker.
#
# Environment: LLMSB_K8S_CACHE, LLMSB_K8S_RUN (default /var/lib/llmsb-k8s/run),
# LLMSB_K8S_ETCD_PORT (23791), LLMSB_K8S_API_PORT (16443), LLMSB_K8S_TIMEOUT
# (seconds to wait for the node, 180), LLMSB_K8S_POD_NETWORK (none|bridge),
# LLMSB_K8S_POD_MAX_PIDS (kubelet --pod-max-pids, 1024),
# LLMSB_K8S_KUBELET_FLAGS (extra kubelet flags, split on spaces).
set -euo pipefail

BUILD_ONLY=0
case "${1:-}" in
    "") ;;
    --build-only) BUILD_ONLY=1 ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) printf 'error: k8s-up: unknown argument %s (try --help)\n' "$1" >&2; exit 2 ;;
esac

exec 3>&1 1>&2          # progress to stderr; only the export lines to stdout

K8S_VERSION=1.20.2
CACHE=${LLMSB_K8S_CACHE:-/var/cache/llmsb-k8s}/$K8S_VERSION
BIN=$CACHE/bin
RUN=${LLMSB_K8S_RUN:-/var/lib/llmsb-k8s/run}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MANIFESTS=$REPO/deploy/kubernetes
NODE=llmsb-node
NAMESPACE=llmsb
WORKER_SA=llmsb-worker
NETNS=llmsb-k8s
VETH_HOST=llmsbk8s0
VETH_NODE=llmsbk8s1
HOST_IP=10.200.0.1
NODE_IP=10.200.0.2
ETCD_PORT=${LLMSB_K8S_ETCD_PORT:-23791}
ETCD_PEER_PORT=$((ETCD_PORT + 1))
API_PORT=${LLMSB_K8S_API_PORT:-16443}
KUBELET_PORT=10250
TIMEOUT=${LLMSB_K8S_TIMEOUT:-180}
POD_NETWORK=${LLMSB_K8S_POD_NETWORK:-none}
POD_MAX_PIDS=${LLMSB_K8S_POD_MAX_PIDS:-1024}
CNI_BIN_DIR=/usr/lib/cni
PODS_LINK=llmsb-pods
POD_SUBNET=10.201.0.0/24
PAUSE_IMAGE=k8s.gcr.io/pause:3.2
PKI=$RUN/pki
ADMIN_KC=$RUN/admin.kubeconfig
WORKER_KC=$RUN/worker.kubeconfig
KUBELET_KC=$RUN/kubelet.kubeconfig
API=https://$HOST_IP:$API_PORT
LOCK=/run/lock/llmsb-k8s.lock

log() { printf '== k8s-up: %s\n' "$*" >&2; }
die() {
    printf 'error: k8s-up: %s\n' "$1" >&2
    if [ -n "${2:-}" ] && [ -f "$2" ]; then
        printf -- '--- last lines of %s:\n' "$2" >&2
        tail -n "${3:-30}" "$2" >&2
    fi
    exit 1
}

[ "$(id -u)" -eq 0 ] || die "run as root (it installs packages, builds into $CACHE, makes a network namespace)"
case "$POD_NETWORK" in none|bridge) ;; *) die "LLMSB_K8S_POD_NETWORK must be none or bridge (got '$POD_NETWORK')" ;; esac
[[ $POD_MAX_PIDS =~ ^[0-9]+$ ]] || die "LLMSB_K8S_POD_MAX_PIDS must be a number (got '$POD_MAX_PIDS')"

# ---------------------------------------------------------------- packages
apt_updated=0
apt_install() {
    local missing="" p installed
    # dpkg-query fails when it knows none of a name (never installed):
    # that is an answer here, not an error
    installed=" $({ dpkg-query -W -f='${Package} ${Status}\n' "$@" 2>/dev/null || true; } \
        | awk '$NF == "installed" && $(NF-1) == "ok" { printf "%s ", $1 }')"
    for p in "$@"; do
        [[ $installed == *" $p "* ]] || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    log "installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    if [ "$apt_updated" -eq 0 ]; then
        apt-get update -qq || die "apt-get update failed"
        apt_updated=1
    fi
    # shellcheck disable=SC2086
    apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends $missing >&2 || die "apt-get install$missing failed"
}

# A deb-src entry for bookworm main, in one-line or deb822 form.
have_deb_src() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        grep -Eq '^[[:space:]]*deb-src[[:space:]].*[[:space:]]bookworm[[:space:]]+(.*[[:space:]])?main([[:space:]]|$)' "$f" && return 0
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk 'BEGIN { RS = ""; found = 0 }
             tolower($0) ~ /(^|\n)types:[^\n]*deb-src/ &&
             tolower($0) ~ /(^|\n)suites:[^\n]*[ \t]bookworm([ \t]|\n|$)/ &&
             tolower($0) ~ /(^|\n)components:[^\n]*[ \t]main([ \t]|\n|$)/ &&
             tolower($0) !~ /(^|\n)enabled:[ \t]*no/ { found = 1 }
             END { exit !found }' "$f" && return 0
    done
    return 1
}
ensure_deb_src() {
    have_deb_src && return 0
    log "adding a deb-src entry for bookworm main: /etc/apt/sources.list.d/llmsb-k8s-src.sources"
    cat >/etc/apt/sources.list.d/llmsb-k8s-src.sources <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    apt-get update -qq || die "apt-get update (after adding deb-src) failed"
    apt_updated=1
}

# ---------------------------------------------------------------- build once
patch_file() {   # FILE SED-EXPRESSION: fail loudly if it changed nothing
    local f=$1 expr=$2
    [ -f "$f" ] || die "patch: $f not found in the source tree"
    cp "$f" "$f.llmsb-orig"
    sed -i -E "$expr" "$f"
    if cmp -s "$f" "$f.llmsb-orig"; then
        die "patch: '$expr' changed nothing in $f (source changed?)"
    fi
    rm -f "$f.llmsb-orig"
}

build_k8s() {
    local work=$CACHE/work src orig blog=$CACHE/build.log avail_kb
    mkdir -p "$work"
    avail_kb=$(df -Pk "$CACHE" | awk 'NR == 2 { print $4 }')
    [ "${avail_kb:-0}" -ge $((4 * 1024 * 1024)) ] \
        || die "the build needs about 4 GB free under $CACHE (have $((${avail_kb:-0} / 1024)) MB)"
    log "building kube-apiserver and kubelet $K8S_VERSION once (about 10 min on 2 cores); log: $blog"
    apt_install golang-go make rsync gcc libc6-dev golang-github-modern-go-reflect2-dev dpkg-dev \
        debian-archive-keyring
    ensure_deb_src
    : >"$blog"
    find_orig() { find "$work" -maxdepth 1 -name "kubernetes_*really$K8S_VERSION.orig.tar.gz" | head -n1; }
    orig=$(find_orig)
    if [ -z "$orig" ]; then
        log "apt-get source --download-only kubernetes"
        if ! (cd "$work" && apt-get source --download-only kubernetes >>"$blog" 2>&1); then
            apt-get update -qq && apt_updated=1
            (cd "$work" && apt-get source --download-only kubernetes >>"$blog" 2>&1) \
                || die "apt-get source kubernetes failed" "$blog"
        fi
        orig=$(find_orig)
        [ -n "$orig" ] || die "no kubernetes_*really$K8S_VERSION.orig.tar.gz from apt-get source (Debian moved on?)" "$blog"
    fi
    src=$work/src
    rm -rf "$src"
    mkdir -p "$src"
    log "unpacking $(basename "$orig")"
    tar -C "$src" --strip-components=1 -xzf "$orig" || die "unpacking $orig failed"
    cd "$src"

    log "patching (test-only): sandbox/guaranteed oom_score_adj -> 0, kernel tunables -> warn, reflect2 1.0.2"
    patch_file pkg/kubelet/dockershim/docker_sandbox.go \
        's/^([[:space:]]*defaultSandboxOOMAdj[[:space:]]+int[[:space:]]*=[[:space:]]*)-998[[:space:]]*$/\10/'
    patch_file pkg/kubelet/qos/policy.go \
        's/^([[:space:]]*guaranteedOOMScoreAdj[[:space:]]+int[[:space:]]*=[[:space:]]*)-997[[:space:]]*$/\10/'
    patch_file pkg/kubelet/cm/container_manager_linux.go \
        's/^([[:space:]]*b := )KernelTunableModify[[:space:]]*$/\1KernelTunableWarn/'
    local r2=vendor/github.com/modern-go/reflect2 dr2=/usr/share/gocode/src/github.com/modern-go/reflect2
    [ -f "$dr2/go_above_118.go" ] || die "$dr2/go_above_118.go missing (golang-github-modern-go-reflect2-dev >= 1.0.2 needed)"
    [ -d "$r2" ] || die "$r2 missing in the source tree"
    rm -f "$r2"/*.go "$r2"/*.s
    find "$dr2" -maxdepth 1 -type f \( -name '*.s' -o \( -name '*.go' ! -name '*_test.go' \) \) \
        -exec cp {} "$r2"/ \;

    mkdir -p .go/src/k8s.io
    ln -sfn ../../.. .go/src/k8s.io/kubernetes
    log "make WHAT=\"cmd/kube-apiserver cmd/kubelet\" (started $(date +%T))"
    if ! env GOPATH="$src/.go" CGO_ENABLED=0 HOME="$CACHE" GOFLAGS= GOPROXY=off GOTOOLCHAIN=local \
            make WHAT="cmd/kube-apiserver cmd/kubelet" >>"$blog" 2>&1 </dev/null; then
        die "the Kubernetes build failed (the tree stays in $src)" "$blog" 40
    fi
    log "pause: gcc -static build/pause/linux/pause.c"
    gcc -Os -Wall -static -DVERSION=v3.2-llmsb -o _output/pause build/pause/linux/pause.c >>"$blog" 2>&1 \
        || die "building pause failed" "$blog"
    local b
    for b in kube-apiserver kubelet; do
        [ -s "_output/bin/$b" ] || die "_output/bin/$b missing after the build" "$blog"
    done
    rm -rf "$BIN.tmp"
    mkdir -p "$BIN.tmp"
    cp _output/bin/kube-apiserver _output/bin/kubelet _output/pause "$BIN.tmp"/
    "$BIN.tmp/kube-apiserver" --version >>"$blog" 2>&1 || die "the built kube-apiserver does not run" "$blog"
    "$BIN.tmp/kubelet" --version >>"$blog" 2>&1 || die "the built kubelet does not run" "$blog"
    rm -rf "$BIN"
    mv "$BIN.tmp" "$BIN"
    cd /
    rm -rf "$src" "$CACHE/.cache"      # the tree and Go's build cache (GBs); keep the source package
    log "built and cached in $BIN"
}

have_bin() { [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kubelet" ] && [ -x "$BIN/pause" ]; }
if have_bin; then
    log "cached binaries: $BIN"
else
    mkdir -p "$CACHE"
    exec 8>"$CACHE.lock"
    if ! flock -n 8; then
        log "another k8s-up.sh is building into $CACHE: waiting for it"
        flock 8
    fi
    if ! have_bin; then
        t0=$(date +%s)
        build_k8s
        log "build took $(( $(date +%s) - t0 )) s"
    fi
    exec 8>&-
fi
[ "$BUILD_ONLY" -eq 1 ] && exit 0

# ---------------------------------------------------------------- one at a time
mkdir -p "$(dirname "$LOCK")"
exec 9>"$LOCK"
if ! flock -n 9; then
    log "another k8s-up.sh or k8s-down.sh is running: waiting (up to 10 min)"
    flock -w 600 9 || die "$LOCK stayed locked for 10 min"
fi

apt_install etcd-server iproute2 openssl curl util-linux ca-certificates
[ "$POD_NETWORK" = none ] && apt_install containernetworking-plugins
# kubectl applies the manifests (and is handy for people and tests). Debian's
# kubernetes-client (1.20) ships /usr/bin/kubectl without Conflicts/Replaces,
# so it cannot be installed next to Google's `kubectl` package: only install
# it when there is no kubectl.
command -v kubectl >/dev/null 2>&1 || apt_install kubernetes-client
ETCD_BIN=$(command -v etcd) || die "etcd not found after installing etcd-server"
if [ "$POD_NETWORK" = none ]; then
    for f in loopback macvlan host-local; do
        [ -x "$CNI_BIN_DIR/$f" ] || die "$CNI_BIN_DIR/$f missing (containernetworking-plugins)"
    done
fi
for f in namespace.yaml rbac.yaml; do
    [ -f "$MANIFESTS/$f" ] || die "$MANIFESTS/$f not found (run the script from its checkout)"
done

# ---------------------------------------------------------------- dockerd
docker_up() { curl -fsS --max-time 3 --unix-socket /var/run/docker.sock http://d/_ping >/dev/null 2>&1; }
if ! docker_up; then
    command -v dockerd >/dev/null 2>&1 || die "dockerd is not running and not installed (run scripts/setup.sh first)"
    log "starting dockerd (log: /var/log/llmsb-dockerd.log)"
    if [ -d /run/systemd/system ] && systemctl start docker 2>/dev/null; then
        :
    else
        setsid nohup dockerd >/var/log/llmsb-dockerd.log 2>&1 </dev/null 3>&- 9>&- &
    fi
    for _ in $(seq 1 60); do docker_up && break; sleep 0.5; done
    docker_up || die "dockerd did not come up" /var/log/llmsb-dockerd.log
fi

if ! docker image inspect "$PAUSE_IMAGE" >/dev/null 2>&1; then
    log "importing $PAUSE_IMAGE into the local dockerd"
    tar -C "$BIN" -c pause | docker import -c 'ENTRYPOINT ["/pause"]' - "$PAUSE_IMAGE" >/dev/null \
        || die "docker import of $PAUSE_IMAGE failed"
fi

# ---------------------------------------------------------------- processes
# Each daemon has $RUN/NAME.pid and NAME.log, and NAME.want: a hash of its
# command line and of the files it reads at start (certificates, tokens).
# A running daemon whose hash changed is restarted.
daemon_pid() {  # NAME: print the pid if the pidfile names a live process of ours
    # (its command line names $RUN; the binary may be of another cache dir:
    # then the hash differs and ensure_daemon restarts it).
    local pf=$RUN/$1.pid pid cmd
    [ -s "$pf" ] || return 1
    pid=$(cat "$pf" 2>/dev/null) || return 1
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
    [[ $cmd == *"$RUN/"* ]] || return 1
    echo "$pid"
}
stop_pid() {    # NAME PID
    local i
    kill -TERM "$2" 2>/dev/null || true
    for ((i = 0; i < 60; i++)); do
        [ -d "/proc/$2" ] || break
        sleep 0.25
    done
    if [ -d "/proc/$2" ]; then
        log "$1 (pid $2) did not stop in 15 s: SIGKILL"
        kill -KILL "$2" 2>/dev/null || true
        sleep 0.5
    fi
    rm -f "$RUN/$1.pid" "$RUN/$1.want"
}
start_bg() {    # NAME CMD...: detached, own session, log and pidfile in $RUN
    # fds 3 (our stdout) and 9 (the lock) must not leak into the daemons, or
    # `eval "$(k8s-up.sh)"` would wait for them and the lock would stay held.
    local name=$1; shift
    rm -f "$RUN/$name.pid"
    : >"$RUN/$name.log"
    # shellcheck disable=SC2016
    # in $RUN: the kubelet leaves files (an empty "oom") in its working directory
    (cd "$RUN" && exec setsid bash -c 'echo $$ >"$0"; exec "$@"' "$RUN/$name.pid" "$@" \
        >>"$RUN/$name.log" 2>&1 </dev/null 3>&- 9>&-) &
    for _ in $(seq 1 50); do [ -s "$RUN/$name.pid" ] && break; sleep 0.1; done
    [ -s "$RUN/$name.pid" ] || die "$name did not start" "$RUN/$name.log"
}
ensure_daemon() {   # NAME STAMP CMD...: start, or restart if CMD or STAMP changed
    local name=$1 stamp=$2 want pid; shift 2
    want=$({ printf '%s\0' "$@"; printf '%s' "$stamp"; } | sha256sum | cut -d' ' -f1)
    if pid=$(daemon_pid "$name"); then
        [ "$(cat "$RUN/$name.want" 2>/dev/null)" = "$want" ] && return 0
        log "restarting $name (pid $pid): its flags, certificates or tokens changed"
        stop_pid "$name" "$pid"
    else
        rm -f "$RUN/$name.pid" "$RUN/$name.want"
        pre_start_"$name"
        log "starting $name"
    fi
    start_bg "$name" "$@"
    echo "$want" >"$RUN/$name.want"
}
wait_for() {    # WHAT NAME SECONDS CMD...
    local what=$1 name=$2 secs=$3 i; shift 3
    for ((i = 0; i < secs * 4; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        daemon_pid "$name" >/dev/null || die "$what exited" "$RUN/$name.log"
        sleep 0.25
    done
    die "$what not ready after ${secs}s" "$RUN/$name.log"
}
port_busy() { [ -n "$(ss -Hltn "( sport = :$1 )" 2>/dev/null)" ]; }
files_hash() { { cat "$@" 2>/dev/null || true; } | sha256sum | cut -d' ' -f1; }

mkdir -p "$RUN" "$PKI"
chmod 700 "$RUN" "$PKI"

# ---------------------------------------------------------------- certificates
sign() {        # NAME SUBJECT EXTENSIONS
    openssl genrsa -out "$PKI/$1.key" 2048 2>/dev/null || die "openssl genrsa ($1) failed"
    openssl req -new -key "$PKI/$1.key" -subj "$2" -out "$PKI/$1.csr" 2>/dev/null \
        || die "openssl req ($1) failed"
    printf '[ext]\n%s\n' "$3" >"$PKI/$1.ext"
    openssl x509 -req -in "$PKI/$1.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
        -days 3650 -extfile "$PKI/$1.ext" -extensions ext -out "$PKI/$1.crt" 2>/dev/null \
        || die "openssl x509 (signing $1) failed"
    rm -f "$PKI/$1.csr" "$PKI/$1.ext"
}
pki_ok=1
for f in ca.crt ca.key apiserver.crt apiserver.key apiserver-kubelet-client.crt apiserver-kubelet-client.key \
         kubelet.crt kubelet.key sa.key sa.pub; do
    [ -s "$PKI/$f" ] || pki_ok=0
done
if [ "$pki_ok" -eq 0 ]; then
    log "generating a CA and certificates in $PKI"
    rm -f "$PKI"/*
    openssl genrsa -out "$PKI/ca.key" 2048 2>/dev/null || die "openssl genrsa failed"
    openssl req -x509 -new -key "$PKI/ca.key" -subj /CN=llmsb-k8s-ca -days 3650 -out "$PKI/ca.crt" 2>/dev/null \
        || die "openssl req (CA) failed"
    sign apiserver /CN=kube-apiserver "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:$HOST_IP,IP:127.0.0.1,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:localhost"
    sign apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
    sign kubelet "/CN=$NODE" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:$NODE_IP,DNS:$NODE"
    openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null || die "openssl genrsa (sa) failed"
    openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null || die "openssl rsa -pubout (sa) failed"
    chmod 600 "$PKI"/*.key
    if [ ! -s "$PKI/kubelet.crt" ] || [ ! -s "$PKI/sa.pub" ]; then die "generating certificates in $PKI failed"; fi
fi

# ---------------------------------------------------------------- tokens, kubeconfigs
token() {       # NAME: the token in $RUN/NAME.token, made once
    local f=$RUN/$1.token
    if [ ! -s "$f" ]; then
        (umask 077; openssl rand -hex 24 >"$f")
    fi
    cat "$f"
}
write_if_changed() {    # FILE: stdin replaces FILE (mode 600) only if it differs
    local tmp
    tmp=$(mktemp "$1.XXXXXX")
    chmod 600 "$tmp"
    cat >"$tmp"
    if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv -f "$tmp" "$1"; fi
}
kubeconfig() {  # USER TOKEN NAMESPACE
    cat <<EOF
apiVersion: v1
kind: Config
clusters:
- name: llmsb
  cluster:
    server: $API
    certificate-authority-data: $(base64 -w0 <"$PKI/ca.crt")
users:
- name: $1
  user:
    token: $2
contexts:
- name: llmsb
  context:
    cluster: llmsb
    user: $1
    namespace: $3
current-context: llmsb
EOF
}
ADMIN_TOKEN=$(token admin)
NODE_TOKEN=$(token node)
WORKER_TOKEN=$(token worker)
WORKER_USER=system:serviceaccount:$NAMESPACE:$WORKER_SA
# token,user,uid,"group,group"
write_if_changed "$RUN/tokens.csv" <<EOF
$ADMIN_TOKEN,admin,admin,system:masters
$NODE_TOKEN,system:node:$NODE,system:node:$NODE,system:nodes
$WORKER_TOKEN,$WORKER_USER,$WORKER_USER,"system:serviceaccounts,system:serviceaccounts:$NAMESPACE"
EOF
kubeconfig admin "$ADMIN_TOKEN" "$NAMESPACE" | write_if_changed "$ADMIN_KC"
kubeconfig "$WORKER_USER" "$WORKER_TOKEN" "$NAMESPACE" | write_if_changed "$WORKER_KC"
kubeconfig "system:node:$NODE" "$NODE_TOKEN" default | write_if_changed "$KUBELET_KC"

CNI_CONF_DIR=$RUN/cni/net.d
if [ "$POD_NETWORK" = none ]; then
    mkdir -p "$CNI_CONF_DIR"
    write_if_changed "$CNI_CONF_DIR/10-llmsb-none.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "llmsb-none",
  "plugins": [
    { "type": "macvlan", "master": "$PODS_LINK", "mode": "private",
      "ipam": { "type": "host-local", "ranges": [ [ { "subnet": "$POD_SUBNET" } ] ],
                "dataDir": "$RUN/cni/ipam" } }
  ]
}
EOF
fi

# ---------------------------------------------------------------- network namespace
if ! ip netns list 2>/dev/null | awk -v n="$NETNS" '$1 == n { f = 1 } END { exit !f }'; then
    ip netns add "$NETNS" || die "ip netns add $NETNS failed"
fi
if ! ip link show "$VETH_HOST" >/dev/null 2>&1; then
    used=$(ip -4 -o addr show | awk -v v="$VETH_HOST" -v p="${HOST_IP%.*}." '$2 != v && index($4, p) == 1')
    [ -z "$used" ] || die "${HOST_IP%.*}.0/24 is already used by another interface: $used"
    log "network namespace $NETNS: veth $VETH_HOST $HOST_IP <-> $VETH_NODE $NODE_IP"
    ip -n "$NETNS" link del "$VETH_NODE" 2>/dev/null || true
    ip link add "$VETH_HOST" type veth peer name "$VETH_NODE" || die "ip link add $VETH_HOST failed"
    ip link set "$VETH_NODE" netns "$NETNS"
fi
ip addr replace "$HOST_IP/24" dev "$VETH_HOST"
ip link set "$VETH_HOST" up
ip -n "$NETNS" link set lo up
ip -n "$NETNS" addr replace "$NODE_IP/24" dev "$VETH_NODE" || die "the node side $VETH_NODE is missing in $NETNS (run scripts/k8s-down.sh, then again)"
ip -n "$NETNS" link set "$VETH_NODE" up
ip -n "$NETNS" route replace default via "$HOST_IP"
if [ "$POD_NETWORK" = none ]; then
    # The pods' macvlan parent: a veth pair inside the namespace, one end up
    # (macvlan needs a parent; this kernel may lack the dummy driver), the
    # other end down, so nothing a pod sends goes anywhere.
    if ! ip -n "$NETNS" link show "$PODS_LINK" >/dev/null 2>&1; then
        ip -n "$NETNS" link add "$PODS_LINK" type veth peer name "${PODS_LINK}x" \
            || die "ip link add $PODS_LINK (veth) in $NETNS failed"
    fi
    ip -n "$NETNS" link set "${PODS_LINK}x" down
    ip -n "$NETNS" link set "$PODS_LINK" up
fi

# ---------------------------------------------------------------- etcd
etcd_ok() { [[ $(curl -fsS --max-time 3 "http://127.0.0.1:$ETCD_PORT/health") == *'"health":"true"'* ]]; }
pre_start_etcd() {
    port_busy "$ETCD_PORT" && die "port $ETCD_PORT (etcd) is taken by another process (set LLMSB_K8S_ETCD_PORT; or run scripts/k8s-down.sh if it is a leftover etcd of this script)"
    port_busy "$ETCD_PEER_PORT" && die "port $ETCD_PEER_PORT (etcd peer) is taken by another process"
    mkdir -p "$RUN/etcd"
    chmod 700 "$RUN/etcd"
}
ensure_daemon etcd "" "$ETCD_BIN" --name llmsb --data-dir "$RUN/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "llmsb=http://127.0.0.1:$ETCD_PEER_PORT"
wait_for etcd etcd 30 etcd_ok

# ---------------------------------------------------------------- kube-apiserver
api_get() {     # PATH [TOKEN]
    curl -fsS --max-time 5 --cacert "$PKI/ca.crt" -H "Authorization: Bearer ${2:-$ADMIN_TOKEN}" "$API$1"
}
api_ready() { [ "$(api_get /readyz 2>/dev/null)" = ok ]; }
pre_start_apiserver() {
    ss -Hltn "( sport = :$API_PORT )" 2>/dev/null | grep -Eq "($HOST_IP|0\.0\.0\.0|\*|\[::\]):$API_PORT" \
        && die "port $API_PORT (kube-apiserver) is taken by another process (set LLMSB_K8S_API_PORT; or run scripts/k8s-down.sh if it is a leftover of this script)"
    return 0
}
ensure_daemon apiserver \
    "$(files_hash "$RUN/tokens.csv" "$PKI/ca.crt" "$PKI/apiserver.crt" "$PKI/apiserver-kubelet-client.crt" "$PKI/sa.pub")" \
    "$BIN/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address="$HOST_IP" --advertise-address="$HOST_IP" \
    --secure-port="$API_PORT" --insecure-port=0 \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --client-ca-file="$PKI/ca.crt" \
    --token-auth-file="$RUN/tokens.csv" \
    --service-cluster-ip-range=10.96.0.0/24 \
    --service-account-key-file="$PKI/sa.pub" \
    --service-account-signing-key-file="$PKI/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc \
    --authorization-mode=Node,RBAC \
    --disable-admission-plugins=ServiceAccount \
    --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority="$PKI/ca.crt" \
    --kubelet-preferred-address-types=InternalIP \
    --profiling=false
wait_for kube-apiserver apiserver 90 api_ready

# ---------------------------------------------------------------- namespace and the worker's identity
# Applied before the kubelet so the node wait covers the first apply; skipped
# when this etcd already got these very files and the RoleBinding is there.
applied=$(cat "$MANIFESTS/namespace.yaml" "$MANIFESTS/rbac.yaml" "$RUN/etcd.pid" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$RUN/manifests.applied" 2>/dev/null)" != "$applied" ] \
        || ! api_get "/apis/rbac.authorization.k8s.io/v1/namespaces/$NAMESPACE/rolebindings/$WORKER_SA" >/dev/null 2>&1; then
    kubectl --kubeconfig "$ADMIN_KC" apply -f "$MANIFESTS/namespace.yaml" -f "$MANIFESTS/rbac.yaml" \
        | sed 's/^/   /' >&2 || die "kubectl apply of $MANIFESTS/namespace.yaml and rbac.yaml failed"
    echo "$applied" >"$RUN/manifests.applied"
fi

# ---------------------------------------------------------------- kubelet
other_kubelets() {   # kubelets (of any cache dir) using our run dir
    local p cmd
    # find exits 1 when a process vanishes under it: not an error here
    for p in $(find /proc -mindepth 2 -maxdepth 2 -name exe -lname '*/kubelet' 2>/dev/null || true); do
        p=${p%/exe}
        cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
        if [[ $cmd == *"$RUN/"* ]]; then echo "${p#/proc/}"; fi
    done
}
pre_start_kubelet() {
    local others
    others=$(other_kubelets | tr '\n' ' ')
    [ -z "$others" ] || die "a kubelet using $RUN runs without our pidfile (pid $others): run scripts/k8s-down.sh first"
    mkdir -p "$RUN/kubelet" "$RUN/dockershim"
}
driver=$(curl -fsS --max-time 5 --unix-socket /var/run/docker.sock http://d/info \
    | grep -o '"CgroupDriver":"[a-z]*"' | cut -d'"' -f4 || true)
[ -n "$driver" ] || driver=cgroupfs
net_flags=()
if [ "$POD_NETWORK" = none ]; then
    net_flags=(--network-plugin=cni --cni-conf-dir="$CNI_CONF_DIR" --cni-bin-dir="$CNI_BIN_DIR"
               --cni-cache-dir="$RUN/cni/cache")
fi
read -r -a extra_flags <<<"${LLMSB_K8S_KUBELET_FLAGS:-}"
ensure_daemon kubelet \
    "$(files_hash "$KUBELET_KC" "$PKI/ca.crt" "$PKI/kubelet.crt" "$CNI_CONF_DIR/10-llmsb-none.conflist")" \
    nsenter --net="/var/run/netns/$NETNS" -- "$BIN/kubelet" \
    --kubeconfig="$KUBELET_KC" \
    --container-runtime=docker --docker-endpoint=unix:///var/run/docker.sock \
    --container-runtime-endpoint="unix://$RUN/dockershim.sock" \
    --experimental-dockershim-root-directory="$RUN/dockershim" \
    --cgroup-driver="$driver" --fail-swap-on=false \
    --pod-infra-container-image="$PAUSE_IMAGE" \
    --root-dir="$RUN/kubelet" --cert-dir="$RUN/kubelet/pki" \
    --volume-plugin-dir="$RUN/kubelet/volume-plugins" \
    --hostname-override="$NODE" --node-ip="$NODE_IP" \
    --address="$NODE_IP" --port="$KUBELET_PORT" --read-only-port=0 \
    --tls-cert-file="$PKI/kubelet.crt" --tls-private-key-file="$PKI/kubelet.key" \
    --anonymous-auth=false --client-ca-file="$PKI/ca.crt" --authorization-mode=AlwaysAllow \
    --healthz-bind-address=127.0.0.1 --node-status-update-frequency=2s \
    --oom-score-adj=0 --hairpin-mode=none \
    --pod-max-pids="$POD_MAX_PIDS" --cpu-cfs-quota=true \
    --feature-gates=SizeMemoryBackedVolumes=true \
    --image-gc-high-threshold=100 --image-gc-low-threshold=99 \
    --eviction-hard='memory.available<1Mi,nodefs.available<1%,imagefs.available<1%,nodefs.inodesFree<1%' \
    "${net_flags[@]}" "${extra_flags[@]}"

# (No `| grep -q` on long output: with pipefail its early exit can fail the pipe.)
node_json() { api_get "/api/v1/nodes/$NODE" 2>/dev/null | tr -d ' \n'; }
node_ready() { [[ $(node_json) == *'"type":"Ready","status":"True"'* ]]; }
if ! node_ready; then
    log "waiting for node $NODE to be Ready (up to ${TIMEOUT}s)"
    t0=$(date +%s)
    wait_for "node $NODE (kubelet)" kubelet "$TIMEOUT" node_ready
    log "node $NODE Ready after $(( $(date +%s) - t0 )) s"
fi

# The TaintNodesByCondition admission plugin gives a new node the
# not-ready:NoSchedule taint; only the controller-manager (not run here) would
# lift it once the node is Ready. Lift it ourselves.
NODE_JSON=$(node_json)
if [[ $NODE_JSON == *'"taints":[{"key":"node.kubernetes.io/not-ready","effect":"NoSchedule"'* ]]; then
    curl -fsS --max-time 5 --cacert "$PKI/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" -X PATCH \
        -H 'Content-Type: application/json-patch+json' \
        --data '[{"op":"test","path":"/spec/taints/0/key","value":"node.kubernetes.io/not-ready"},{"op":"remove","path":"/spec/taints/0"}]' \
        "$API/api/v1/nodes/$NODE" >/dev/null 2>&1 || log "warning: could not lift the not-ready taint of $NODE"
fi

# The worker's token must work and see its namespace (RBAC may need a moment).
for ((i = 0; i < 20; i++)); do
    api_get "/api/v1/namespaces/$NAMESPACE/pods?limit=1" "$WORKER_TOKEN" >/dev/null 2>&1 && break
    sleep 0.25
done
api_get "/api/v1/namespaces/$NAMESPACE/pods?limit=1" "$WORKER_TOKEN" >/dev/null \
    || die "the worker account $WORKER_USER cannot list pods in $NAMESPACE"

log "up: node $NODE Ready; API $API; pod network: $POD_NETWORK; logs and pids in $RUN"
log "admin: $ADMIN_KC; worker ($WORKER_USER): $WORKER_KC"
{
    echo "export LLMSB_K8S_NODE=$NODE"
    echo "export LLMSB_K8S_WORKER_KUBECONFIG=$WORKER_KC"
    echo "export KUBECONFIG=$ADMIN_KC"
} >&3
