#!/bin/bash
# run.sh - backend podman as a user meets it, against the real Podman API
# service (scripts/podman-up.sh): `run` prints hello, the filtered egress
# network on Podman's own bridge, `images build` through Podman, a custom
# image (`images build --dockerfile`) through Podman (and two refused by
# the audit of its files from outside), plots, and
# the seccomp profile file Podman is given.  The same hello/status suite,
# hardening audit and hostile suite as Docker run in `make test-podman`
# with LLMSB_BACKEND=podman (integration_podman, hostile_podman).
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
B=${LLMSB_BIN:-$PWD/bin/llm-sandbox}
export LLMSB_BACKEND=podman
SOCK=/run/podman/podman.sock ENGINE_SOCK=/run/podman/podman.sock
T=$(mktemp -d)
trap 'rm -rf "$T"; [ -n "${lpid:-}" ] && kill "$lpid" 2>/dev/null' EXIT
pass=0; fail=0
ok() { echo "ok   podman.$1"; pass=$((pass + 1)); }
bad() { echo "FAIL podman.$1: $2"; sed 's/^/  | /' "$T/err" 2>/dev/null | head -5; fail=$((fail + 1)); }

if ! curl -fs --max-time 5 --unix-socket "$SOCK" http://d/_ping >/dev/null; then
    echo "FAIL podman.service: nothing answers on $SOCK (run scripts/podman-up.sh)"
    echo "podman: 0 passed, 1 failed"; exit 1
fi

"$B" run examples/hello.py </dev/null >"$T/out" 2>"$T/err"; rc=$?
[ "$rc" = 0 ] && grep -q '^hello world from Python' "$T/out" && ok run_hello || bad run_hello "exit $rc: $(head -c 200 "$T/out")"

# the container was Podman's, not Docker's: this run's container (its
# llmsb.pid label) is on Podman's list while it runs
printf 'import time\nprint("up", flush=True)\ntime.sleep(12)\n' > "$T/slow.py"
"$B" run "$T/slow.py" </dev/null >"$T/out" 2>"$T/err" & rpid=$!
n=0
for _ in $(seq 1 40); do
    n=$(containers_of "$rpid" | grep -vc engine-unreachable)
    [ "$n" -ge 1 ] && break
    sleep 0.25
done
wait $rpid
[ "$n" -ge 1 ] && ok container_is_podmans || bad container_is_podmans "no llmsb container on Podman's list while a job ran"

# egress: Podman has no DOCKER-USER chain and netavark puts its FORWARD
# ACCEPTs first whenever it likes; the blocks are DROPs in raw PREROUTING on
# llmsb-egress1, which nothing reorders
lport=$((30000 + $$ % 20000))
socat TCP-LISTEN:$lport,bind=0.0.0.0,reuseaddr,fork SYSTEM:'echo hi' & lpid=$!
cat > "$T/net.py" <<PYEOF
import socket
def probe(host, port):
    try:
        socket.create_connection((host, port), timeout=3).close()
        return "open"
    except OSError:
        return "blocked"
routes = [l.split() for l in open("/proc/net/route").read().split("\n")[1:] if l.strip()]
gw = routes[0][2] if routes else "0100007F"
gw = ".".join(str(int(gw[i:i+2], 16)) for i in (6, 4, 2, 0))
print("gateway", probe(gw, $lport), "docker0", probe("172.17.0.1", $lport), "registry", probe("deb.debian.org", 80))
PYEOF
"$B" run --network --timeout 20 "$T/net.py" </dev/null >"$T/out" 2>"$T/err"
grep -q '^gateway blocked docker0 blocked registry open$' "$T/out" && ok network_egress_filtered ||
    bad network_egress_filtered "$(cat "$T/out")"
rules=0
for r in 10.0.0.0/8 172.16.0.0/12 192.168.0.0/16 169.254.0.0/16 100.64.0.0/10; do
    iptables -t raw -C PREROUTING -i llmsb-egress1 -d $r -j DROP 2>/dev/null && rules=$((rules + 1))
done
iptables -C INPUT -i llmsb-egress1 -j REJECT 2>/dev/null && rules=$((rules + 1))
[ "$rules" = 6 ] && ok network_rules_in_place || bad network_rules_in_place "$rules of 6 rules"
"$B" run "$T/net.py" </dev/null >"$T/out" 2>"$T/err"
grep -q '^gateway blocked docker0 blocked registry blocked$' "$T/out" && ok no_network_by_default ||
    bad no_network_by_default "$(cat "$T/out")"
kill $lpid 2>/dev/null; wait $lpid 2>/dev/null; lpid=

# the profile Podman reads: a file only root can read, with the same
# content as the one Docker gets inline
f=$(ls /run/llmsb/seccomp-*.json 2>/dev/null | head -1)
if [ -n "$f" ] && [ "$(stat -c %a "$f")" = 600 ] && [ "$(stat -c %a /run/llmsb)" = 700 ] &&
   jq -e '.defaultAction == "SCMP_ACT_ERRNO"' "$f" >/dev/null; then ok seccomp_profile_file
else bad seccomp_profile_file "file ${f:-none}"; fi

# a memory limit hit by the job: Podman does not set OOMKilled, the
# agent's cgroup counter tells
printf 'b = []\nwhile True:\n    b.append(bytearray(32 << 20))\n' > "$T/mem.py"
"$B" run --memory 128 --json "$T/mem.py" </dev/null >"$T/out" 2>"$T/err"
jq -e '.status == "memory_limit"' "$T/out" >/dev/null && ok memory_limit_status || bad memory_limit_status "$(head -c 300 "$T/out")"

# images build through Podman: the ruby image, rebuilt from its Dockerfile
LLMSB_AGENT=${LLMSB_AGENT:-$PWD/bin/llmsb-agent} "$B" images build --force ruby >"$T/out" 2>"$T/err"; rc=$?
if [ "$rc" = 0 ] && grep -q 'built llmsb/ruby:' "$T/err" "$T/out" &&
   podman image exists llmsb/ruby:latest; then ok images_build_ruby
else bad images_build_ruby "exit $rc: $(tail -3 "$T/err")"; fi
echo 'puts "hi from ruby"' > "$T/h.rb"
"$B" run "$T/h.rb" </dev/null >"$T/out" 2>"$T/err"
grep -q '^hi from ruby$' "$T/out" && ok ruby_after_build || bad ruby_after_build "$(cat "$T/out")"

# a custom image through Podman (docs/images.md, "Custom images"): our
# layer on llmsb/ruby with a file of the context (and ignore files that
# would leave out our .llmsb/ if Podman read them), checked and audited in
# Podman's sandbox, used by a job, refused to a job of another language
mkdir -p "$T/cust"; CN=pc$$
printf 'FROM llmsb/ruby:latest\nCOPY note.txt /usr/local/share/note.txt\n' >"$T/cust/Dockerfile"
echo "from podman" >"$T/cust/note.txt"
# Podman's build reads ignore files from the context: ours are left out of it
printf '.llmsb\n*.rb\n' >"$T/cust/.dockerignore"; cp "$T/cust/.dockerignore" "$T/cust/.containerignore"
echo 'puts File.read("/usr/local/share/note.txt")' >"$T/note.rb"
if LLMSB_AGENT=${LLMSB_AGENT:-$PWD/bin/llmsb-agent} "$B" images build --dockerfile "$T/cust/Dockerfile" \
        --name "$CN" --lang ruby >"$T/err" 2>&1 && grep -q "built llmsb/custom/$CN:" "$T/err" &&
    "$B" run --lang ruby --image "llmsb/custom/$CN" "$T/note.rb" </dev/null >"$T/out" 2>"$T/err" &&
    grep -q '^from podman$' "$T/out" &&
    ! "$B" run --lang python --image "llmsb/custom/$CN" "$T/note.rb" </dev/null >"$T/err" 2>&1 &&
    grep -q "was built for language ruby" "$T/err"; then ok custom_image
else bad custom_image "$(tail -3 "$T/err")"; fi
# its unchecked name is gone; list and rm find it under Podman's docker.io/ prefix
if ! podman images --format '{{.Repository}}' | grep -q "llmsb-unchecked/$CN" &&
    "$B" images list 2>"$T/err" | grep -q "llmsb/custom/$CN:latest" &&
    "$B" images rm "$CN" >"$T/out" 2>"$T/err" && grep -q "^removed .*llmsb/custom/$CN:latest" "$T/out" &&
    ! podman image exists "llmsb/custom/$CN:latest"; then ok custom_image_list_rm
else bad custom_image_list_rm "$(cat "$T/out" "$T/err" | tail -3)"; fi

# the image's files, read through Podman's export: a setuid-root shell in a
# mode-711 directory behind a find of the image's that reports nothing, and
# a /bin/sh that does nothing for root (our steps leave no mark): each
# refused, and no image of it left
mkdir -p "$T/hid" "$T/gate"
printf 'FROM llmsb/ruby:latest\nRUN mkdir -m 711 /opt/hid && cp /bin/dash /opt/hid/sh && chmod 4755 /opt/hid/sh && printf "#!/bin/sh\\nexit 0\\n" >/usr/local/bin/find && chmod 755 /usr/local/bin/find && echo %s\n' "$CN" >"$T/hid/Dockerfile"
printf 'FROM llmsb/ruby:latest\nRUN find / -xdev -type f -perm /6000 -exec chmod ug-s {} + ; printf "#!/bin/dash\\n[ \\"\\$(id -u)\\" = 0 ] && exit 0\\nexec /bin/dash \\"\\$@\\"\\n" >/usr/local/bin/sh-gate && chmod 755 /usr/local/bin/sh-gate && ln -sf /usr/local/bin/sh-gate /bin/sh && echo %s\n' "$CN" >"$T/gate/Dockerfile"
for c in "hid:in the image's files: a setuid or setgid file: /opt/hid/sh (mode 4755, owner 0:0)" \
         "gate:our layer's step \"strip\" left no mark in /usr/local/lib/llmsb/custom-steps"; do
    d=${c%%:*} want=${c#*:}
    if ! LLMSB_AGENT=${LLMSB_AGENT:-$PWD/bin/llmsb-agent} "$B" images build --dockerfile "$T/$d/Dockerfile" \
            --name "$CN-$d" --lang ruby >"$T/err" 2>&1 && grep -q 'the hardening audit refused' "$T/err" &&
        grep -qF "$want" "$T/err" && ! podman images --format '{{.Repository}}' | grep -q "$CN-$d"; then
        ok "custom_image_refused_$d"
    else bad "custom_image_refused_$d" "want: $want"; fi
done

# plots and the rest of the plot suite, on Podman
out=$(sh tests/integration/test_plots.sh 2>&1); rc=$?
line=$(printf '%s\n' "$out" | tail -1)
if [ "$rc" = 0 ]; then ok "plots_suite ($line)"; else printf '%s\n' "$out" | grep -v '^ok' | head; bad plots_suite "$line"; fi

echo "podman: $pass passed, $fail failed"
[ "$fail" = 0 ]
