#!/bin/bash
# run.sh - backend kubernetes against a real API server and kubelet (the
# one-node cluster of scripts/k8s-up.sh), as the worker's least-rights
# service account: the hello/status suite and hardening audit
# (integration_kubernetes), `run` printing hello, a plot, a pod that never
# starts (no node, no image) saying why within the start timeout, no pod left,
# kill -9 of a worker mid-job (one result, its pods reaped), least rights,
# the manifests of deploy/kubernetes.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
B=${LLMSB_BIN:-$PWD/bin/llm-sandbox}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok() { echo "ok   k8s.$1"; pass=$((pass + 1)); }
bad() { echo "FAIL k8s.$1: $2"; sed 's/^/  | /' "$T/err" 2>/dev/null | head -5; fail=$((fail + 1)); }

if ! up=$(scripts/k8s-up.sh 2>"$T/up.log"); then
    tail -20 "$T/up.log"; echo "FAIL k8s.cluster_up"; echo "k8s: 0 passed, 1 failed"; exit 1
fi
eval "$up"
cat > "$T/llm-sandbox.yaml" <<YEOF
backend: kubernetes
kubernetes:
  kubeconfig: $LLMSB_K8S_WORKER_KUBECONFIG
  namespace: llmsb
  node: $LLMSB_K8S_NODE
  image_pull_policy: Never
YEOF
export LLMSB_CONFIG=$T/llm-sandbox.yaml LLMSB_BACKEND=kubernetes

track "${LLMSB_TBIN:-$PWD/bin/tests}/test_integ_docker" >"$T/status.out" 2>&1; rc=$?
grep -v '^ok' "$T/status.out" | head -20
line=$(tail -1 "$T/status.out")
[ "$rc" = 0 ] && ok "status_suite ($line)" || bad status_suite "$line"

track "$B" run examples/hello.py </dev/null >"$T/out" 2>"$T/err"; rc=$?
[ "$rc" = 0 ] && grep -q '^hello world from Python' "$T/out" && ok run_hello || bad run_hello "exit $rc: $(head -c 300 "$T/out")"

track "$B" run --artifacts "$T/art" examples/plot.py </dev/null >"$T/out" 2>"$T/err"; rc=$?
[ "$rc" = 0 ] && [ -s "$T/art/plot-001.png" ] && head -c 8 "$T/art/plot-001.png" | grep -q PNG && ok plot_comes_back ||
    bad plot_comes_back "exit $rc, $(ls "$T/art" 2>&1)"

# pods_of PID...: the pods of those processes of this host still there
# (the worker's account may list pods); another run's are not counted
pods_of() {
    kubectl --kubeconfig "$LLMSB_K8S_WORKER_KUBECONFIG" -n llmsb get pods \
        -l "llmsb.pid in ($(echo "$@" | tr ' ' ','))" --no-headers 2>&1 | grep -v -e Terminating -e '^No resources found'
}

# a sandbox that never starts says why, within kubernetes.pod_start_timeout:
# with no node named on this cluster without a scheduler the pod is never
# bound; an image that is not on the node with pull policy Never. Neither
# leaves a pod
sed -e '/^  node:/d' -e 's/^  image_pull_policy: Never$/&\n  pod_start_timeout: 5/' "$T/llm-sandbox.yaml" >"$T/nonode.yaml"
t0=$(date +%s)
env -u LLMSB_K8S_NODE LLMSB_CONFIG="$T/nonode.yaml" "$B" run examples/hello.py </dev/null >"$T/out" 2>"$T/err" &
pid=$!; RUN_PIDS="$RUN_PIDS $pid"; wait $pid; rc=$?
took=$(( $(date +%s) - t0 ))
if [ "$rc" = 3 ] && [ "$took" -le 12 ] && [ -z "$(pods_of $pid)" ] && grep -q 'not running after 5 s (kubernetes.pod_start_timeout): Pending: not scheduled: no node is assigned' "$T/err"; then
    ok unscheduled_pod_says_why
else bad unscheduled_pod_says_why "exit $rc after ${took}s, $(pods_of $pid | wc -l) pods left: $(head -c 400 "$T/err")"; fi
sed -e 's/^  image_pull_policy: Never$/&\n  pod_start_timeout: 5/' "$T/llm-sandbox.yaml" >"$T/short.yaml"
t0=$(date +%s)
LLMSB_CONFIG="$T/short.yaml" "$B" run --image llmsb/no-such-image:1 examples/hello.py </dev/null >"$T/out" 2>"$T/err" &
pid=$!; RUN_PIDS="$RUN_PIDS $pid"; wait $pid; rc=$?
took=$(( $(date +%s) - t0 ))
if [ "$rc" = 3 ] && [ "$took" -le 12 ] && [ -z "$(pods_of $pid)" ] && grep -q 'did not start: ErrImageNeverPull: Container image "llmsb/no-such-image:1" is not present' "$T/err"; then
    ok missing_image_says_why
else bad missing_image_says_why "exit $rc after ${took}s, $(pods_of $pid | wc -l) pods left: $(head -c 400 "$T/err")"; fi

# every sandbox pod of the runs above is gone
pods_of $RUN_PIDS >"$T/pods"
[ ! -s "$T/pods" ] && ok no_pod_left || bad no_pod_left "$(wc -l <"$T/pods") pods: $(head -3 "$T/pods")"

# the worker's account cannot read secrets (least rights)
if kubectl --kubeconfig "$LLMSB_K8S_WORKER_KUBECONFIG" -n llmsb get secrets >/dev/null 2>&1; then
    bad least_rights "the worker's account can list secrets"
else ok least_rights; fi

# kill -9 of a worker mid-job: the other worker finishes the job, one
# result, and reaps the dead worker's pods (they carry another host's name:
# in a cluster every worker reaps every dead worker of its queue)
PORT=$((17400 + $$ % 1000))
R="redis-cli -p $PORT"
redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
    --pidfile "$T/redis.pid" --logfile "$T/redis.log" >/dev/null
for _ in $(seq 1 50); do $R ping >/dev/null 2>&1 && break; sleep 0.1; done
cat >>"$T/llm-sandbox.yaml" <<YEOF
worker: {lease: 6, heartbeat_ttl: 3, block: 1, drain: 5}
pool: {min_idle: 1, wait: 60}
jobs: {max_attempts: 3}
YEOF
export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT
# kw1 on a host of another name (its own UTS namespace), as two worker pods
# would be: the survivor must reap pods labelled with the other's host
unshare --uts sh -c 'hostname llmsb-other-host && exec "$0" worker --name kw1 --slots 1' "$B" >"$T/kw1.log" 2>&1 & p1=$!
"$B" worker --name kw2 --slots 1 >"$T/kw2.log" 2>&1 & p2=$!
$R xadd llmsb:jobs '*' id k9 lang python code 'import time; time.sleep(4); print("survived")' timeout 60 >/dev/null
for _ in $(seq 1 600); do [ "$($R hget llmsb:result:k9 status)" = running ] && break; sleep 0.1; done
owner=$($R hget llmsb:result:k9 worker)
if [ "$owner" = kw1 ]; then victim=$p1 other=$p2; else victim=$p2 other=$p1; fi
kill -9 "$victim"
for _ in $(seq 1 900); do
    case $($R hget llmsb:result:k9 status) in ok|runtime_error|timeout|internal_error) break ;; esac
    sleep 0.1
done
n=$($R xrange llmsb:results - + | grep -cx k9)
if [ "$($R hget llmsb:result:k9 status)" = ok ] && [ "$($R hget llmsb:result:k9 stdout)" = survived ] &&
   [ "$($R hget llmsb:result:k9 worker)" != "$owner" ] && [ "$n" = 1 ]; then ok kill9_worker_job_finished_once
else bad kill9_worker_job_finished_once "owner=$owner status=$($R hget llmsb:result:k9 status) now=$($R hget llmsb:result:k9 worker) results=$n"; fi
left=1
for _ in $(seq 1 60); do
    left=$(pods_of "$victim" | wc -l)
    [ "$left" = 0 ] && break
    sleep 1
done
[ "$left" = 0 ] && ok kill9_worker_pods_reaped || bad kill9_worker_pods_reaped "$left pods of $owner after 60 s; $(grep -h reaper "$T"/kw*.log | head -3)"
kill -TERM "$other" 2>/dev/null; wait "$other" 2>/dev/null
$R shutdown nosave >/dev/null 2>&1
left=$(pods_of "$p1" "$p2" | wc -l)
[ "$left" = 0 ] && ok no_pod_left_after_workers || bad no_pod_left_after_workers "$left pods"
unset LLMSB_REDIS_URL

# the manifests of deploy/kubernetes are what this API server accepts
kubectl --kubeconfig "$KUBECONFIG" apply --dry-run=server -k deploy/kubernetes >"$T/out" 2>"$T/err" &&
    ok deploy_manifests_accepted || bad deploy_manifests_accepted "$(tail -3 "$T/err")"

echo "k8s: $pass passed, $fail failed"
[ "$fail" = 0 ]
