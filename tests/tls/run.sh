#!/bin/bash
# tests/tls/run.sh - a remote Docker engine over TLS: a private dockerd
# listening only on tcp://127.0.0.1:PORT with --tlsverify and certificates
# this script makes (a CA, the daemon's, a client's; a second, unrelated
# CA), then `run`, `submit --local` and a worker through DOCKER_HOST,
# DOCKER_TLS_VERIFY and DOCKER_CERT_PATH (and through backend.host,
# backend.tls_verify and backend.cert_path), and the refusals, each with
# its message: a wrong CA, a client without a certificate, a missing
# ca.pem, plain TCP to the TLS port.
#
# The private dockerd has its own data root, exec root, pidfile, bridge,
# cgroup parent and daemon.json (never the system daemon's, whose docker0 a
# second daemon with --bridge=none would delete); llmsb/ruby (the smallest
# image) is copied into it with docker save | docker load over TLS.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
LANG_=ruby
FD=$(mktemp -d /tmp/llmsb-tls.XXXXXX)
BR=llmsbtls$(($$ % 100000))
suite tls; DPID=""; WPID=""; RPORT=

for tool in dockerd docker openssl ip redis-server redis-cli; do
    command -v "$tool" >/dev/null || { echo "FAIL tls.setup: $tool is not installed"; exit 1; }
done
PORT=$(free_port)
H=tcp://127.0.0.1:$PORT
export LLMSB_CONFIG=$FD/config.yaml
: >"$LLMSB_CONFIG"
unset DOCKER_TLS DOCKER_TLS_VERIFY DOCKER_CERT_PATH DOCKER_CONFIG DOCKER_CONTEXT

# ---- certificates ----------------------------------------------------------------

# cert NAME CA EXT: a P-256 key NAME-key.pem and NAME-cert.pem signed by CA
cert() {
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$FD/$1-key.pem" -out "$FD/$1.csr" -subj "/CN=llmsb-tls-$1" 2>/dev/null &&
        printf '%s\n' "$3" >"$FD/$1.ext" &&
        openssl x509 -req -in "$FD/$1.csr" -CA "$FD/$2.pem" -CAkey "$FD/$2-key.pem" \
            -CAcreateserial -days 2 -extfile "$FD/$1.ext" -out "$FD/$1-cert.pem" 2>/dev/null
}
ca() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -keyout "$FD/$1-key.pem" -out "$FD/$1.pem" -subj "/CN=llmsb-tls-$1" 2>/dev/null
}
# certdir DIR CA CLIENT: a DOCKER_CERT_PATH (CLIENT "" = no client certificate)
certdir() {
    mkdir -p "$FD/$1" && cp "$FD/$2.pem" "$FD/$1/ca.pem" || return 1
    [ -z "$3" ] || { cp "$FD/$3-cert.pem" "$FD/$1/cert.pem" && cp "$FD/$3-key.pem" "$FD/$1/key.pem"; }
}
ca ca && ca otherca &&
    cert server ca "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth" &&
    cert client ca "extendedKeyUsage=clientAuth" &&
    certdir good ca client && certdir wrongca otherca client && certdir nocert ca "" &&
    mkdir -p "$FD/empty" || { echo "FAIL tls.setup: openssl could not make the certificates"; exit 1; }

# ---- the private engine ------------------------------------------------------------

cleanup() {
    local cpid
    [ -n "$WPID" ] && kill -9 "$WPID" 2>/dev/null
    [ -n "$RPORT" ] && redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1
    if [ -n "$DPID" ]; then
        ids=$(docker -H "$H" --tlsverify --tlscacert "$FD/good/ca.pem" --tlscert "$FD/good/cert.pem" \
            --tlskey "$FD/good/key.pem" ps -aq 2>/dev/null)
        [ -n "$ids" ] && docker -H "$H" --tlsverify --tlscacert "$FD/good/ca.pem" \
            --tlscert "$FD/good/cert.pem" --tlskey "$FD/good/key.pem" rm -f $ids >/dev/null 2>&1
        kill "$DPID" 2>/dev/null
        for _ in $(seq 1 100); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.2; done
        # the containerd it started, when it outlived its daemon
        cpid=$(cat "$FD/x/containerd/containerd.pid" 2>/dev/null)
        [ -n "$cpid" ] && kill "$cpid" 2>/dev/null
    fi
    grep -o " $FD[^ ]*" /proc/mounts | sort -r | xargs -r umount -l 2>/dev/null
    ip link del "$BR" 2>/dev/null
    rm -rf "$FD"
}
trap cleanup EXIT

ip link add name "$BR" type bridge && ip addr add "10.214.$(($$ % 200)).1/24" dev "$BR" &&
    ip link set "$BR" up || { echo "FAIL tls.setup: cannot make bridge $BR"; exit 1; }
echo '{}' >"$FD/daemon.json"
t0=$(date +%s)
dockerd --config-file "$FD/daemon.json" --host "$H" --tlsverify --tlscacert "$FD/ca.pem" \
    --tlscert "$FD/server-cert.pem" --tlskey "$FD/server-key.pem" --data-root "$FD/data" \
    --exec-root "$FD/x" --pidfile "$FD/d.pid" --bridge "$BR" --iptables=false --ip-masq=false \
    --cgroup-parent /llmsb-tls >"$FD/dockerd.log" 2>&1 &
DPID=$!
disown "$DPID" 2>/dev/null
D="docker -H $H --tlsverify --tlscacert $FD/good/ca.pem --tlscert $FD/good/cert.pem --tlskey $FD/good/key.pem"
for _ in $(seq 1 100); do $D version >/dev/null 2>&1 && break; sleep 0.2; done
$D version >/dev/null 2>&1 ||
    { echo "FAIL tls.setup: the private dockerd did not start"; tail -5 "$FD/dockerd.log"; exit 1; }
docker save "llmsb/$LANG_:latest" | $D load >"$FD/load.log" 2>&1 ||
    { echo "FAIL tls.setup: cannot copy llmsb/$LANG_ to the private engine: $(tail -2 "$FD/load.log")"; exit 1; }
echo "  (private dockerd on $H with --tlsverify up, llmsb/$LANG_ loaded in $(( $(date +%s) - t0 )) s)"

# ---- jobs over TLS -------------------------------------------------------------------

printf 'puts "tls-run #{6 * 7}"\n' >"$FD/job.rb"
# as the docker CLI is configured
DOCKER_HOST=$H DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$FD/good "$B" run "$FD/job.rb" </dev/null \
    >"$FD/run.out" 2>"$FD/run.err"
rc=$?
[ "$rc" = 0 ] && grep -qx 'tls-run 42' "$FD/run.out" && ok run_env ||
    bad run_env "exit $rc: $(tail -c 400 "$FD/run.out" "$FD/run.err")"

# the default DOCKER_CERT_PATH: $DOCKER_CONFIG, as the CLI
DOCKER_HOST=$H DOCKER_TLS_VERIFY=1 DOCKER_CONFIG=$FD/good "$B" run "$FD/job.rb" </dev/null \
    >"$FD/run2.out" 2>"$FD/run2.err"
rc=$?
[ "$rc" = 0 ] && grep -qx 'tls-run 42' "$FD/run2.out" && ok run_default_cert_path ||
    bad run_default_cert_path "exit $rc: $(tail -c 400 "$FD/run2.err")"

# the config file's keys, no DOCKER_* variable
cat >"$FD/keys.yaml" <<EOF
backend: {host: "$H", tls_verify: true, cert_path: "$FD/good"}
EOF
LLMSB_CONFIG=$FD/keys.yaml "$B" run "$FD/job.rb" </dev/null >"$FD/run3.out" 2>"$FD/run3.err"
rc=$?
[ "$rc" = 0 ] && grep -qx 'tls-run 42' "$FD/run3.out" && ok run_config_keys ||
    bad run_config_keys "exit $rc: $(tail -c 400 "$FD/run3.err")"

# a small batch, 2 slots (a pool of containers, attach streams side by side)
for i in 1 2 3 4; do
    printf '{"id": "tls-%d", "lang": "%s", "code": "puts %d * 10", "expect_stdout": "%d0\\n"}\n' \
        "$i" "$LANG_" "$i" "$i"
done >"$FD/jobs.jsonl"
DOCKER_HOST=$H DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$FD/good "$B" submit "$FD/jobs.jsonl" --local \
    --slots 2 --out "$FD/results.jsonl" >"$FD/submit.out" 2>"$FD/submit.err"
rc=$?
n=$(grep '"status":"ok"' "$FD/results.jsonl" 2>/dev/null | grep -c '"passed":true')
[ "$rc" = 0 ] && [ "$n" = 4 ] && ok submit_local ||
    bad submit_local "exit $rc, $n of 4 ok: $(tail -c 400 "$FD/submit.err")"

# a worker on the remote engine, fed through a private redis-server
RPORT=$(free_port)
start_redis "$RPORT" "$FD"
export LLMSB_REDIS_URL=redis://127.0.0.1:$RPORT
DOCKER_HOST=$H DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$FD/good "$B" worker --name tlsw --slots 2 \
    >"$FD/worker.log" 2>&1 &
WPID=$!
sed 's/"tls-/"w-/' "$FD/jobs.jsonl" >"$FD/wjobs.jsonl"
"$B" submit "$FD/wjobs.jsonl" --wait --timeout 90 --out "$FD/wresults.jsonl" >"$FD/wsubmit.out" 2>&1
rc=$?
n=$(grep '"status":"ok"' "$FD/wresults.jsonl" 2>/dev/null | grep -c '"passed":true')
kill -TERM "$WPID" 2>/dev/null
for _ in $(seq 1 300); do kill -0 "$WPID" 2>/dev/null || break; sleep 0.1; done
WPID=""
[ "$rc" = 0 ] && [ "$n" = 4 ] && ok worker ||
    bad worker "exit $rc, $n of 4 ok: $(tail -c 300 "$FD/wsubmit.out") | $(tail -c 300 "$FD/worker.log")"

# ---- refusals --------------------------------------------------------------------------

# refused CASE PATTERN VAR=VALUE...: `run` fails and its stderr matches PATTERN
refused() {
    local name=$1 pat=$2 rc
    shift 2
    env "$@" "$B" run "$FD/job.rb" </dev/null >"$FD/$name.out" 2>"$FD/$name.err"
    rc=$?
    if [ "$rc" != 0 ] && grep -q -- "$pat" "$FD/$name.err" && ! grep -q 'tls-run' "$FD/$name.out"; then
        ok "$name"
        echo "     $(head -c 400 "$FD/$name.err" | tr '\n' ' ')"
    else
        bad "$name" "exit $rc, stderr does not match \"$pat\": $(head -c 400 "$FD/$name.err")"
    fi
}
refused wrong_ca "the TLS handshake failed.*SSL certificate problem.*DOCKER_CERT_PATH=$FD/wrongca" \
    DOCKER_HOST="$H" DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH="$FD/wrongca"
refused no_client_certificate "alert \\(certificate required\\|bad certificate\\).*no client certificate (no cert.pem), in DOCKER_CERT_PATH=$FD/nocert" \
    DOCKER_HOST="$H" DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH="$FD/nocert"
refused missing_ca "DOCKER_CERT_PATH=$FD/empty: ca.pem: No such file or directory" \
    DOCKER_HOST="$H" DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH="$FD/empty"
# DOCKER_CERT_PATH alone turns no TLS on (as the CLI): plain HTTP to the TLS port
refused plain_tcp "it speaks TLS: set DOCKER_TLS_VERIFY=1.*HTTP 400: Client sent an HTTP request to an HTTPS server\.$" \
    DOCKER_HOST="$H" DOCKER_CERT_PATH="$FD/good"

# nothing of these runs stays on the private engine (only this script uses it)
all=$($D ps -aq | wc -l)
[ "$all" = 0 ] && ok nothing_left ||
    bad nothing_left "$all containers: $($D ps -a --format '{{.Names}} {{.Status}}' | head -5)"

suite_end
