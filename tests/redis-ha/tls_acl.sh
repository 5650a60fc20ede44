#!/bin/bash
# tls_acl.sh - the queue over TLS and with ACL users, against a real
# redis-server started here (Redis 7 has TLS built in): certificates made
# with the openssl CLI (a CA, a server certificate for 127.0.0.1 and
# localhost, a client certificate, and a second CA nobody trusts), client
# certificates required (--tls-auth-clients yes), the default user off and
# an ACL user bob.  A worker on rediss:// with a client certificate runs
# jobs that `submit --wait` sends through rediss:// and through redis://
# with user:password on the plain port; then each way of getting it wrong
# (another CA, no client certificate, another host name, a wrong password,
# an unknown user, no password) must fail with an error naming what
# failed, and never print a password.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
T=$(mktemp -d /tmp/llmsb-tlsacl.XXXXXX)
TPORT=${TLS_ACL_PORT:-$((17100 + $$ % 400))}  # TLS
PPORT=$((TPORT + 1))                           # plain, ACL only
PW=bob-s3cret-pw
export LLMSB_CONFIG=$T/config.yaml LLMSB_PREFIX=tlsacl
pass=0; fail=0; WORKERS=""

ok() { echo "ok   redis_tls_acl.$1"; pass=$((pass + 1)); }
bad() { echo "FAIL redis_tls_acl.$1: $2"; fail=$((fail + 1)); }
R() { redis-cli -p "$PPORT" --user bob --pass "$PW" --no-auth-warning "$@"; }

cleanup() {
    for p in $WORKERS; do kill -9 "$p" 2>/dev/null; done
    R shutdown nosave >/dev/null 2>&1
    sleep 0.3
    remove_containers_of $WORKERS
    rm -rf "$T"
}
trap cleanup EXIT

for tool in redis-server redis-cli openssl; do
    command -v $tool >/dev/null || { echo "FAIL redis_tls_acl: $tool is not installed"; echo "redis_tls_acl: 0 passed, 1 failed"; exit 1; }
done

cat > "$T/config.yaml" <<CFG
worker: {lease: 6, heartbeat_ttl: 3, block: 1, drain: 20}
pool: {min_idle: 1, wait: 30}
CFG

# certificates: ca signs server and client; other-ca signs nothing we use
mkcert() {  # mkcert NAME CA SUBJECT [SAN]
    openssl req -new -newkey rsa:2048 -nodes -keyout "$T/$1.key" -subj "$3" -out "$T/$1.csr" 2>/dev/null &&
    { [ -n "${4:-}" ] && printf 'subjectAltName=%s\n' "$4" > "$T/$1.ext" || : > "$T/$1.ext"; } &&
    openssl x509 -req -in "$T/$1.csr" -CA "$T/$2.crt" -CAkey "$T/$2.key" -CAcreateserial -days 2 \
        -extfile "$T/$1.ext" -out "$T/$1.crt" 2>/dev/null
}
for ca in ca other-ca; do
    openssl req -x509 -new -newkey rsa:2048 -nodes -days 2 -keyout "$T/$ca.key" -subj "/CN=llmsb test $ca" \
        -out "$T/$ca.crt" 2>/dev/null || { echo "FAIL redis_tls_acl: openssl cannot make a CA"; exit 1; }
done
mkcert server ca /CN=localhost "IP:127.0.0.1,DNS:localhost" && mkcert client ca /CN=llmsb-client ||
    { echo "FAIL redis_tls_acl: openssl cannot sign the certificates"; exit 1; }

redis-server --port "$PPORT" --bind 127.0.0.1 --tls-port "$TPORT" --tls-cert-file "$T/server.crt" \
    --tls-key-file "$T/server.key" --tls-ca-cert-file "$T/ca.crt" --tls-auth-clients yes \
    --user default off --user bob on ">$PW" '~*' '&*' '+@all' \
    --dir "$T" --save '' --daemonize yes --logfile "$T/redis.log" --pidfile "$T/redis.pid"
for _ in $(seq 1 50); do R ping >/dev/null 2>&1 && break; sleep 0.1; done
R ping >/dev/null 2>&1 || { echo "FAIL redis_tls_acl: redis did not start"; cat "$T/redis.log"; echo "redis_tls_acl: 0 passed, 1 failed"; exit 1; }

TLS_URL="rediss://bob:$PW@127.0.0.1:$TPORT?ca=$T/ca.crt&cert=$T/client.crt&key=$T/client.key"
ACL_URL="redis://bob:$PW@127.0.0.1:$PPORT"

# 1. a worker over TLS with a client certificate, as ACL user bob
LLMSB_REDIS_URL=$TLS_URL "$B" worker --name tw1 --slots 2 >"$T/tw1.log" 2>&1 &
WORKERS="$WORKERS $!"
up=0
for _ in $(seq 1 100); do [ "$(R exists tlsacl:worker:tw1)" = 1 ] && { up=1; break; }; sleep 0.1; done
if [ $up = 1 ]; then ok worker_over_tls_with_client_cert
else bad worker_over_tls_with_client_cert "no heartbeat: $(tail -5 "$T/tw1.log")"; fi
grep -q "$PW" "$T/tw1.log" && bad worker_log_hides_password "the log holds the password" || ok worker_log_hides_password

# 2. submit --wait through rediss:// and through redis:// user:password
submit_wait() {  # submit_wait NAME URL
    cat > "$T/$1.yaml" <<JOBS
defaults: {lang: python}
jobs:
  - {id: $1-a, code: 'print(6*7)', expect_stdout: "42"}
  - {id: $1-b, code: 'print("x")', expect_stdout: x}
JOBS
    LLMSB_REDIS_URL=$2 "$B" submit "$T/$1.yaml" --wait --out "$T/$1.jsonl" >"$T/$1.out" 2>&1; rc=$?
    if [ "$rc" = 0 ] && [ "$(wc -l < "$T/$1.jsonl")" = 2 ] && [ "$(R hget "tlsacl:result:$1-a" stdout)" = 42 ]; then
        ok "submit_wait_$1"
    else bad "submit_wait_$1" "rc=$rc $(tail -5 "$T/$1.out")"; fi
}
submit_wait tls "$TLS_URL"
submit_wait acl "$ACL_URL"

# 3. each mistake: the queue refuses at once, naming what failed
refused() {  # refused NAME URL PATTERN: status through URL fails with PATTERN, no password shown
    LLMSB_REDIS_URL=$2 timeout 30 "$B" status >"$T/$1.err" 2>&1; rc=$?
    if [ "$rc" != 0 ] && grep -q -- "$3" "$T/$1.err" && ! grep -q "$PW" "$T/$1.err"; then ok "$1"
    else bad "$1" "rc=$rc, wanted /$3/: $(head -3 "$T/$1.err")"; fi
}
refused wrong_ca_is_refused "rediss://bob:$PW@127.0.0.1:$TPORT?ca=$T/other-ca.crt&cert=$T/client.crt&key=$T/client.key" \
    "TLS handshake with 127.0.0.1:$TPORT: certificate verify failed"
refused no_client_cert_is_refused "rediss://bob:$PW@127.0.0.1:$TPORT?ca=$T/ca.crt" \
    "127.0.0.1:$TPORT: .*client certificate"
refused other_host_name_is_refused "rediss://bob:$PW@127.0.0.1:$TPORT?ca=$T/ca.crt&cert=$T/client.crt&key=$T/client.key&sni=redis.example.org" \
    "certificate verify failed (hostname mismatch)"
refused plain_to_tls_port_is_refused "redis://bob:$PW@127.0.0.1:$TPORT" "127.0.0.1:$TPORT"
refused wrong_password_is_refused "redis://bob:not-$PW@127.0.0.1:$PPORT" \
    "AUTH as user \"bob\" on 127.0.0.1:$PPORT: WRONGPASS"
refused unknown_user_is_refused "redis://eve:$PW@127.0.0.1:$PPORT" "AUTH as user \"eve\" on 127.0.0.1:$PPORT: WRONGPASS"
refused no_password_is_refused "redis://127.0.0.1:$PPORT" "127.0.0.1:$PPORT asks for a password (NOAUTH)"
refused tls_params_without_tls_are_refused "redis://bob:$PW@127.0.0.1:$PPORT?ca=$T/ca.crt" \
    "TLS parameters given but TLS is off"
refused missing_ca_file_is_refused "rediss://bob:$PW@127.0.0.1:$TPORT?ca=$T/nope.crt" "TLS ca \"$T/nope.crt\""

# 4. insecure=1: no verification (another CA passes), with a warning
LLMSB_REDIS_URL="rediss://bob:$PW@127.0.0.1:$TPORT?ca=$T/other-ca.crt&cert=$T/client.crt&key=$T/client.key&insecure=1" \
    "$B" status >"$T/insecure.out" 2>&1; rc=$?
if [ "$rc" = 0 ] && grep -q "without verifying the server" "$T/insecure.out"; then ok insecure_connects_with_a_warning
else bad insecure_connects_with_a_warning "rc=$rc $(head -3 "$T/insecure.out")"; fi

# 5. status shows the URL without the password
LLMSB_REDIS_URL=$ACL_URL "$B" status --json >"$T/status.json" 2>&1
if grep -q '"redis":.*bob:\*\*\*@' "$T/status.json" && ! grep -q "$PW" "$T/status.json"; then ok status_hides_password
else bad status_hides_password "$(grep redis "$T/status.json" | head -2)"; fi

echo "redis_tls_acl: $pass passed, $fail failed"
[ "$fail" = 0 ]
