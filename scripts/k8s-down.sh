#!/usr/bin/env bash
# k8s-down.sh - stop the one-node Kubernetes of scripts/k8s-up.sh: kubelet,
# kube-apiserver and etcd (by pidfile, or by executable when the pidfile is
# lost), the pod containers the kubelet left on the local dockerd, kubelet
# mounts and pod cgroups, the network namespace and veth.
# Cluster state (etcd data, kubelet, dockershim and CNI dirs) is wiped, so
# the next k8s-up.sh starts empty; keys, tokens, kubeconfigs and logs stay in
# the run dir (the kubeconfigs work again after the next k8s-up.sh).
# Idempotent: with nothing running it does nothing.
#   scripts/k8s-down.sh            stop and wipe state
#   scripts/k8s-down.sh --purge    also delete the run dir (keys, tokens, logs)
# The build cache (LLMSB_K8S_CACHE, default /var/cache/llmsb-k8s) is kept.
set -euo pipefail

PURGE=0
case "${1:-}" in
    "") ;;
    --purge) PURGE=1 ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) printf 'error: k8s-down: unknown argument %s (try --help)\n' "$1" >&2; exit 2 ;;
esac

RUN=${LLMSB_K8S_RUN:-/var/lib/llmsb-k8s/run}
NETNS=llmsb-k8s
VETH_HOST=llmsbk8s0
LOCK=/run/lock/llmsb-k8s.lock

log() { printf '== k8s-down: %s\n' "$*" >&2; }
die() { printf 'error: k8s-down: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root"

mkdir -p "$(dirname "$LOCK")"
exec 9>"$LOCK"
if ! flock -n 9; then
    log "another k8s-up.sh or k8s-down.sh is running: waiting (up to 10 min)"
    flock -w 600 9 || die "$LOCK stayed locked for 10 min"
fi

# PIDs of one component: the process of its pidfile and any other whose
# executable is named EXE-NAME (from any cache dir: LLMSB_K8S_CACHE may have
# changed since k8s-up.sh) and whose command line names the run dir.
pids_of() {     # NAME EXE-NAME
    local name=$1 exe=$2 pid p cmd cands=""
    if [ -f "$RUN/$name.pid" ]; then
        pid=$(cat "$RUN/$name.pid" 2>/dev/null || true)
        if [[ $pid =~ ^[0-9]+$ ]]; then cands="/proc/$pid/exe"; fi
    fi
    # find exits 1 when a process vanishes under it: not an error here
    cands="$cands $(find /proc -mindepth 2 -maxdepth 2 -name exe -lname "*/$exe" 2>/dev/null || true)"
    for p in $cands; do
        p=${p%/exe}
        [[ $(readlink "$p/exe" 2>/dev/null) == */"$exe" ]] || continue
        cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
        if [[ $cmd == *"$RUN/"* ]]; then echo "${p#/proc/}"; fi
    done | sort -u
}
stop() {        # NAME EXE-NAME
    local name=$1 pids pid i alive=""
    pids=$(pids_of "$@")
    if [ -n "$pids" ]; then
        log "stopping $name (pid ${pids//$'\n'/ })"
        # shellcheck disable=SC2086
        kill -TERM $pids 2>/dev/null || true
        for ((i = 0; i < 60; i++)); do
            alive=""
            for pid in $pids; do [ -d "/proc/$pid" ] && alive="$alive $pid"; done
            [ -z "$alive" ] && break
            sleep 0.25
        done
        if [ -n "$alive" ]; then
            log "$name did not stop in 15 s: SIGKILL$alive"
            # shellcheck disable=SC2086
            kill -KILL $alive 2>/dev/null || true
            sleep 0.5
        fi
    fi
    rm -f "$RUN/$name.pid" "$RUN/$name.want"
}

stop kubelet kubelet

# Pod containers (sandboxes and app containers) the kubelet left behind:
# dockershim names them k8s_* and labels them io.kubernetes.*.
if curl -fsS --max-time 3 --unix-socket /var/run/docker.sock http://d/_ping >/dev/null 2>&1; then
    ids=$(docker ps -a --filter label=io.kubernetes.docker.type --format '{{.ID}} {{.Names}}' \
          | awk '$2 ~ /^k8s_/ { print $1 }')
    if [ -n "$ids" ]; then
        log "removing $(echo "$ids" | wc -l) pod container(s)"
        # shellcheck disable=SC2086
        docker rm -f $ids >/dev/null 2>&1 || log "warning: docker rm -f of some pod containers failed"
    fi
else
    log "dockerd does not answer: pod containers not checked"
fi

# Both at once: their state is wiped anyway, and each takes a few seconds.
stop apiserver kube-apiserver &
stop etcd etcd &
wait

if [ -d "$RUN" ]; then
    # Kubelet volume mounts (emptyDir on tmpfs, ...) under the run dir.
    awk -v r="$RUN/" 'index($2, r) == 1 { print $2 }' /proc/self/mounts | sort -r | while read -r m; do
        umount -l "$m" 2>/dev/null || log "warning: umount $m failed"
    done
    # The pods' log dirs (/var/log/pods/<ns>_<name>_<uid>, fixed in the
    # kubelet) of this kubelet's pods, and dangling links to them.
    if [ -d "$RUN/kubelet/pods" ]; then
        for d in "$RUN"/kubelet/pods/*/; do
            [ -d "$d" ] || continue
            uid=$(basename "$d")
            rm -rf /var/log/pods/*_"$uid"
        done
        if [ -d /var/log/containers ]; then
            find /var/log/containers -maxdepth 1 -xtype l -delete 2>/dev/null || true
        fi
    fi
fi

# Empty pod cgroups the kubelet made (cgroupfs driver, cgroup v1 or v2).
for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
    if [ -d "$d" ]; then find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true; fi
done

if ip link show "$VETH_HOST" >/dev/null 2>&1; then
    log "removing veth $VETH_HOST"
    ip link del "$VETH_HOST" 2>/dev/null || log "warning: ip link del $VETH_HOST failed"
fi
if ip netns list 2>/dev/null | awk -v n="$NETNS" '$1 == n { f = 1 } END { exit !f }'; then
    log "removing network namespace $NETNS"
    ip netns del "$NETNS" 2>/dev/null || log "warning: ip netns del $NETNS failed"
fi

if [ "$PURGE" -eq 1 ]; then
    [ -d "$RUN" ] && log "deleting $RUN"
    rm -rf "$RUN"
elif [ -d "$RUN" ]; then
    rm -rf "$RUN/etcd" "$RUN/kubelet" "$RUN/dockershim" "$RUN/dockershim.sock" "$RUN/cni" \
        "$RUN/manifests.applied"
fi
log "down"
