#!/bin/bash
# run.sh - backend kubernetes against a real API server and kubelet (the
# one-node cluster of scripts/k8s-up.sh), as the worker's least-rights
# service account: the hello/status suite and hardening audit
# (integration_kubernetes), `run` printing hello, a plot, and no pod left.
set -u
cd "$(dirname "$0")/../.."
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

out=$("${LLMSB_TBIN:-$PWD/bin/tests}/test_integ_docker" 2>&1); rc=$?
printf '%s\n' "$out" | grep -v '^ok' | head -20
line=$(printf '%s\n' "$out" | tail -1)
[ "$rc" = 0 ] && ok "status_suite ($line)" || bad status_suite "$line"

"$B" run examples/hello.py </dev/null >"$T/out" 2>"$T/err"; rc=$?
[ "$rc" = 0 ] && grep -q '^hello world from Python' "$T/out" && ok run_hello || bad run_hello "exit $rc: $(head -c 300 "$T/out")"

"$B" run --artifacts "$T/art" examples/plot.py </dev/null >"$T/out" 2>"$T/err"; rc=$?
[ "$rc" = 0 ] && [ -s "$T/art/plot-001.png" ] && head -c 8 "$T/art/plot-001.png" | grep -q PNG && ok plot_comes_back ||
    bad plot_comes_back "exit $rc, $(ls "$T/art" 2>&1)"

# every sandbox pod is gone (the worker's account may list pods)
left=$(kubectl --kubeconfig "$LLMSB_K8S_WORKER_KUBECONFIG" -n llmsb get pods -l llmsb.managed=1 --no-headers 2>/dev/null | grep -vc Terminating)
[ "$left" = 0 ] && ok no_pod_left || bad no_pod_left "$left pods: $(kubectl --kubeconfig "$LLMSB_K8S_WORKER_KUBECONFIG" -n llmsb get pods --no-headers 2>&1 | head -3)"

# the worker's account cannot read secrets (least rights)
if kubectl --kubeconfig "$LLMSB_K8S_WORKER_KUBECONFIG" -n llmsb get secrets >/dev/null 2>&1; then
    bad least_rights "the worker's account can list secrets"
else ok least_rights; fi

# the manifests of deploy/kubernetes are what this API server accepts
kubectl --kubeconfig "$KUBECONFIG" apply --dry-run=server -k deploy/kubernetes >"$T/out" 2>"$T/err" &&
    ok deploy_manifests_accepted || bad deploy_manifests_accepted "$(tail -3 "$T/err")"

echo "k8s: $pass passed, $fail failed"
[ "$fail" = 0 ]
