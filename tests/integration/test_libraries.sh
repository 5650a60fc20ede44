#!/bin/sh
# test_libraries.sh - per-job libraries against the real dockerd:
#  - pip against a local package index this test serves (PyPI is not
#    reachable here) from a container on a Docker network of its own, which
#    the worker's config names as the install network;
#  - npm against the real npm registry and a Debian package for C++ over
#    the filtered egress bridge (the default install network);
#  - the program itself runs with the network taken away again;
#  - a failed install is install_error with the installer's output;
#  - a container that installed libraries is not handed to the next job.
B=${LLMSB_BIN:-bin/llm-sandbox}
T=$(mktemp -d)
NET=llmsb-test-pypi
cleanup() {
    docker rm -f "$NET" >/dev/null 2>&1
    docker network rm "$NET" >/dev/null 2>&1
    rm -rf "$T"
}
trap cleanup EXIT
pass=0; fail=0
ok() { echo "ok   libraries.$1"; pass=$((pass + 1)); }
bad() { echo "FAIL libraries.$1: $2"; [ -f "$T/err" ] && sed 's/^/  | /' "$T/err" | head -8; fail=$((fail + 1)); }

# field FILE LINE KEY: one field of the LINE-th result of a JSON Lines file
field() { sed -n "$2p" "$1" | python3 -c 'import json,sys; v=json.load(sys.stdin).get(sys.argv[1]); print(v if isinstance(v, str) else json.dumps(v))' "$3"; }
expect() {  # expect NAME FILE LINE STATUS STDOUT
    st=$(field "$2" "$3" status); out=$(field "$2" "$3" stdout)
    if [ "$st" = "$4" ] && [ "$out" = "$5" ]; then ok "$1"; else
        bad "$1" "status $st, stdout \"$out\"; want $4, \"$5\"; error: $(field "$2" "$3" error); compile_output: $(field "$2" "$3" compile_output | head -c 600)"
    fi
}

# --- a local package index with one wheel, served on a network of its own
mkdir -p "$T/index/simple/llmsb-demo"
python3 - "$T/index/simple/llmsb-demo/llmsb_demo-1.0-py3-none-any.whl" <<'PY'
import sys, zipfile
files = {
    "llmsb_demo/__init__.py": "def answer():\n    return 42\n",
    "llmsb_demo-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: llmsb-demo\nVersion: 1.0\n",
    "llmsb_demo-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: llm-sandbox-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = "".join("%s,,\n" % n for n in files) + "llmsb_demo-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for n, t in files.items():
        z.writestr(n, t)
    z.writestr("llmsb_demo-1.0.dist-info/RECORD", record)
PY
chmod -R a+rX "$T"
docker rm -f "$NET" >/dev/null 2>&1; docker network rm "$NET" >/dev/null 2>&1
docker network create --internal "$NET" >/dev/null &&
docker run -d --name "$NET" --network "$NET" -v "$T/index:/srv:ro" --entrypoint python3 \
    llmsb/python:latest -m http.server 8080 --directory /srv >/dev/null || { echo "FAIL libraries.index_server: could not start"; exit 1; }

cat > "$T/pip.yaml" <<YAML
libraries:
  network: $NET
  pip_index_url: http://$NET:8080/simple
  timeout: 120
YAML
cat > "$T/pip-jobs.yaml" <<'YAML'
defaults: {lang: python, timeout: 20}
jobs:
  - id: pip-ok
    libraries: ["llmsb-demo==1.0"]
    code: |
      import urllib.request
      import llmsb_demo
      print(llmsb_demo.answer())
      try:
          urllib.request.urlopen("http://llmsb-test-pypi:8080/simple/", timeout=5)
          print("online")
      except Exception:
          print("offline")
  - id: pip-missing
    libraries: ["llmsb-no-such-package"]
    code: print("never")
  - id: pip-after
    code: |
      try:
          import llmsb_demo
          print("leaked")
      except ImportError:
          print("clean")
YAML
t0=$(date +%s%N)
$B submit "$T/pip-jobs.yaml" --local --slots 1 --config "$T/pip.yaml" --out "$T/pip.jsonl" </dev/null >"$T/o" 2>"$T/err"
echo "  (pip jobs took $(( ($(date +%s%N) - t0) / 1000000 )) ms)"
expect pip_local_index_then_offline "$T/pip.jsonl" 1 ok "$(printf '42\noffline')"
if [ "$(field "$T/pip.jsonl" 2 status)" = install_error ] &&
   field "$T/pip.jsonl" 2 compile_output | grep -q "llmsb-no-such-package"; then
    ok pip_failed_install_is_install_error
else
    bad pip_failed_install_is_install_error "$(sed -n 2p "$T/pip.jsonl" | head -c 800)"
fi
expect pip_container_not_reused "$T/pip.jsonl" 3 ok clean

# --- npm (the real registry; left-pad is not among Debian's node modules in
# the image, lodash would be) and a Debian package for C++, over egress
cat > "$T/egress-jobs.yaml" <<'YAML'
defaults: {timeout: 20}
jobs:
  - id: npm-ok
    lang: javascript
    libraries: ["left-pad@1.3.0"]
    code: |
      const leftPad = require("left-pad");
      console.log(leftPad("7", 3, "0"));
      // the install network is gone: no name lookups answered, no connections
      const r = new (require("dns").Resolver)({timeout: 1000, tries: 1});
      r.resolve4("registry.npmjs.org", (e) => {
        console.log(e ? "no dns" : "dns");
        require("https").get("https://registry.npmjs.org/left-pad", () => console.log("online"))
          .on("error", () => console.log("offline"));
      });
  - id: npm-after
    lang: javascript
    code: |
      try { require("left-pad"); console.log("leaked"); } catch (e) { console.log("clean"); }
  - id: apt-ok
    lang: cpp
    libraries: ["nlohmann-json3-dev"]
    code: |
      #include <nlohmann/json.hpp>
      #include <iostream>
      int main() { std::cout << nlohmann::json::parse(R"({"a": 42})")["a"] << "\n"; }
  - id: npm-missing
    lang: javascript
    libraries: ["llmsb-no-such-package-zz9"]
    code: console.log("never")
YAML
t0=$(date +%s%N)
$B submit "$T/egress-jobs.yaml" --local --slots 1 --out "$T/eg.jsonl" </dev/null >"$T/o" 2>"$T/err"
echo "  (npm/apt jobs took $(( ($(date +%s%N) - t0) / 1000000 )) ms)"
expect npm_registry_then_offline "$T/eg.jsonl" 1 ok "$(printf '007\nno dns\noffline')"
expect npm_container_not_reused "$T/eg.jsonl" 2 ok clean
expect apt_header_package_for_cpp "$T/eg.jsonl" 3 ok 42
if [ "$(field "$T/eg.jsonl" 4 status)" = install_error ] &&
   field "$T/eg.jsonl" 4 compile_output | grep -qi "404\|not found\|E404"; then
    ok npm_failed_install_is_install_error
else
    bad npm_failed_install_is_install_error "$(sed -n 4p "$T/eg.jsonl" | head -c 800)"
fi

# --- registries that do not answer from here (Go proxy, RubyGems, CRAN):
# the install runs and fails as install_error in the installer's own words
printf 'package main\nimport "github.com/google/uuid"\nfunc main() { println(uuid.New().String()) }\n' > "$T/u.go"
echo 'require "colorize"; puts "x"' > "$T/c.rb"
echo 'library(praise); cat(praise(), "\n")' > "$T/p.R"
for c in "go u.go github.com/google/uuid@v1.6.0 proxy.golang.org" \
         "ruby c.rb colorize colorize" "r p.R praise not_installed:_praise"; do
    set -- $c
    $B run --lib "$3" "$T/$2" </dev/null >"$T/o" 2>"$T/err"; rc=$?
    if [ $rc = 119 ] && grep -q "$(echo "$4" | tr _ ' ')" "$T/err" && ! [ -s "$T/o" ]; then
        ok "${1}_unreachable_registry_is_install_error"
    else
        bad "${1}_unreachable_registry_is_install_error" "exit $rc"
    fi
done

# --- pool.preinstall: a set baked into an image of the config's own name;
# jobs asking for it need no install step (no install network here at all,
# so an install would fail) and their containers are reused
cat > "$T/pre.yaml" <<'YAML'
images:
  javascript: llmsb/javascript-preinstall-test
pool:
  preinstall:
    javascript: ["left-pad@1.3.0"]
libraries:
  network: none
  timeout: 10
YAML
t0=$(date +%s%N)
# (the agent of this checkout, also when $B is the sanitizer build elsewhere)
if $B images build --agent "${LLMSB_AGENT:-bin/llmsb-agent}" --config "$T/pre.yaml" javascript \
        >"$T/build.log" 2>&1; then
    echo "  (preinstall image ready in $(( ($(date +%s%N) - t0) / 1000000 )) ms)"
    echo 'console.log(require("left-pad")("5", 2, "0"))' > "$T/pad.js"
    $B run --config "$T/pre.yaml" --lib left-pad@1.3.0 "$T/pad.js" </dev/null >"$T/o" 2>"$T/err"; rc=$?
    if [ $rc = 0 ] && [ "$(cat "$T/o")" = 05 ]; then ok preinstalled_set_needs_no_install; else
        bad preinstalled_set_needs_no_install "exit $rc, stdout $(cat "$T/o")"; fi
    # with no install network npm retries until the install timeout
    $B run --config "$T/pre.yaml" --lib left-pad@1.2.0 "$T/pad.js" </dev/null >"$T/o" 2>"$T/err"; rc=$?
    if [ $rc = 119 ] && grep -q "the install timed out after 10000 ms" "$T/err" &&
       grep -q "install_error: the libraries could not be installed (npm's output above)" "$T/err"; then
        ok other_version_still_installs
    else
        bad other_version_still_installs "exit $rc (want 119: install_error, install timeout)"
    fi
else
    bad preinstall_image_build "$(tail -5 "$T/build.log")"
fi

# --- turned off by the config: invalid, naming the key; java has no installer
printf 'libraries:\n  enabled: false\n' > "$T/off.yaml"
echo 'print(1)' > "$T/p.py"
$B run --config "$T/off.yaml" --lib requests "$T/p.py" </dev/null >"$T/o" 2>"$T/err"; rc=$?
if [ $rc = 2 ] && grep -q "libraries.enabled" "$T/err"; then ok disabled_by_config; else bad disabled_by_config "exit $rc"; fi
printf 'public class Main { public static void main(String[] a) {} }\n' > "$T/Main.java"
$B run --lib guava "$T/Main.java" </dev/null >"$T/o" 2>"$T/err"; rc=$?
if [ $rc = 2 ] && grep -q "java jobs cannot install libraries" "$T/err"; then ok java_has_no_installer; else bad java_has_no_installer "exit $rc"; fi

echo "libraries: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
