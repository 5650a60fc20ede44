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
. "$(dirname "$0")/../lib.sh"
T=$(mktemp -d)
NET=llmsb-test-pypi-$$ # the index's network and container: this run's alone
cleanup() {
    docker rm -f "$NET" >/dev/null 2>&1
    docker network rm "$NET" >/dev/null 2>&1
    rm -rf "$T"
}
trap cleanup EXIT
[ -n "${KEEP_T:-}" ] && trap - EXIT
suite libraries
WHY_FILE=$T/err WHY_SHOW="head -8"

# field FILE LINE KEY: one field of the LINE-th result of a JSON Lines file
field() { sed -n "$2p" "$1" | python3 -c 'import json,sys; v=json.load(sys.stdin).get(sys.argv[1]); print(v if isinstance(v, str) else json.dumps(v))' "$3"; }
expect() {  # expect NAME FILE LINE STATUS STDOUT
    st=$(field "$2" "$3" status); out=$(field "$2" "$3" stdout)
    if [ "$st" = "$4" ] && [ "$out" = "$5" ]; then ok "$1"; else
        bad "$1" "status $st, stdout \"$out\"; want $4, \"$5\"; error: $(field "$2" "$3" error); compile_output: $(field "$2" "$3" compile_output | head -c 600)"
    fi
}

# --- a local package index with one wheel, served on a network of its own;
# the answer comes from a shared object in the wheel, so the test fails if
# installed libraries land on a noexec mount
mkdir -p "$T/index/simple/llmsb-demo"
echo 'int answer(void) { return 42; }' > "$T/answer.c"
gcc -shared -fPIC -o "$T/libanswer.so" "$T/answer.c" || { echo "FAIL libraries.wheel_so: gcc"; exit 1; }
python3 - "$T/index/simple/llmsb-demo/llmsb_demo-1.0-py3-none-any.whl" "$T/libanswer.so" <<'PY'
import sys, zipfile
files = {
    "llmsb_demo/__init__.py": "import ctypes, os\n"
        "_lib = ctypes.CDLL(os.path.join(os.path.dirname(__file__), 'libanswer.so'))\n"
        "def answer():\n    return _lib.answer()\n",
    "llmsb_demo/libanswer.so": open(sys.argv[2], "rb").read(),
    "llmsb_demo-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: llmsb-demo\nVersion: 1.0\n",
    "llmsb_demo-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: llm-sandbox-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = "".join("%s,,\n" % n for n in files) + "llmsb_demo-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for n, t in files.items():
        z.writestr(n, t)
    z.writestr("llmsb_demo-1.0.dist-info/RECORD", record)
PY
# an sdist only: its setup.py must never run (pip installs wheels only)
mkdir -p "$T/index/simple/llmsb-sdist"
printf 'sdist\n' > "$T/index/simple/llmsb-sdist/llmsb-sdist-1.0.tar.gz"
# an npm package whose preinstall script would leave a mark (npm runs
# lifecycle scripts of no package: --ignore-scripts)
mkdir -p "$T/npm/package"
cat > "$T/npm/package/package.json" <<'JSON'
{"name": "llmsb-scripted", "version": "1.0.0", "main": "index.js",
 "scripts": {"preinstall": "node -e \"require('fs').writeFileSync('/tmp/preinstall-ran', 'x')\""}}
JSON
echo 'module.exports = 11;' > "$T/npm/package/index.js"
tar -C "$T/npm" -czf "$T/index/llmsb-scripted-1.0.0.tgz" package
sha=$(sha1sum "$T/index/llmsb-scripted-1.0.0.tgz" | cut -d' ' -f1)
printf '{"name":"llmsb-scripted","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"name":"llmsb-scripted","version":"1.0.0","dist":{"tarball":"http://%s:8080/llmsb-scripted-1.0.0.tgz","shasum":"%s"}}}}' \
    "$NET" "$sha" > "$T/index/llmsb-scripted"
# a gem with a dependency and a rake "extension" that records whether it
# could reach the network when it ran (it must run offline)
mkdir -p "$T/gem/dep/lib" "$T/gem/ext/ext" "$T/gem/ext/lib" "$T/index/gems/gems"
cat > "$T/gem/dep/dep.gemspec" <<'RB'
Gem::Specification.new { |s| s.name = "llmsb_dep"; s.version = "1.0"; s.summary = "t"; s.authors = ["t"]; s.files = ["lib/llmsb_dep.rb"] }
RB
echo 'module LlmsbDep; def self.x; 7; end; end' > "$T/gem/dep/lib/llmsb_dep.rb"
cat > "$T/gem/ext/ext.gemspec" <<'RB'
Gem::Specification.new do |s|
  s.name = "llmsb_ext"; s.version = "1.0"; s.summary = "t"; s.authors = ["t"]
  s.files = ["lib/llmsb_ext.rb", "ext/Rakefile"]; s.extensions = ["ext/Rakefile"]
  s.add_runtime_dependency "llmsb_dep", "= 1.0"
end
RB
cat > "$T/gem/ext/ext/Rakefile" <<RB
require "socket"
task :default do
  state = (Socket.tcp("$NET", 8080, connect_timeout: 3).close; "online") rescue "offline"
  File.write(File.join(__dir__, "..", "lib", "ran.txt"), state)
end
RB
echo 'module LlmsbExt; def self.ran; File.read(File.join(__dir__, "ran.txt")); end; end' > "$T/gem/ext/lib/llmsb_ext.rb"
# an R source package whose configure script records the same
mkdir -p "$T/rpkg/llmsbdemo/R" "$T/index/R/src/contrib"
printf 'Package: llmsbdemo\nVersion: 1.0\nTitle: t\nDescription: t.\nAuthor: t\nMaintainer: t <t@t>\nLicense: MIT\n' > "$T/rpkg/llmsbdemo/DESCRIPTION"
echo 'hello <- function() "hi"' > "$T/rpkg/llmsbdemo/R/hello.R"
echo 'export(hello)' > "$T/rpkg/llmsbdemo/NAMESPACE"
cat > "$T/rpkg/llmsbdemo/configure" <<SH
#!/bin/sh
mkdir -p inst
Rscript -e 'x <- tryCatch({ close(socketConnection("$NET", 8080, timeout = 3)); "online" }, error = function(e) "offline"); writeLines(x, "inst/ran.txt")'
SH
chmod +x "$T/rpkg/llmsbdemo/configure"
chmod -R a+rwX "$T"
docker run --rm -v "$T:/t" -w /t/gem --entrypoint sh llmsb/ruby:latest -c \
    'cd dep && gem build dep.gemspec -o /t/index/gems/gems/llmsb_dep-1.0.gem && cd ../ext && gem build ext.gemspec -o /t/index/gems/gems/llmsb_ext-1.0.gem && gem generate_index --directory /t/index/gems' >"$T/gembuild.log" 2>&1 ||
    { echo "FAIL libraries.gem_index: $(tail -3 "$T/gembuild.log")"; exit 1; }
docker run --rm -v "$T:/t" -w /t/rpkg --entrypoint sh llmsb/r:latest -c \
    'R CMD build --no-build-vignettes llmsbdemo >/dev/null && mv llmsbdemo_1.0.tar.gz /t/index/R/src/contrib/ && Rscript -e "tools::write_PACKAGES(\"/t/index/R/src/contrib\", type = \"source\")"' >"$T/rbuild.log" 2>&1 ||
    { echo "FAIL libraries.cran_index: $(tail -3 "$T/rbuild.log")"; exit 1; }
chmod -R a+rX "$T"
docker rm -f "$NET" >/dev/null 2>&1; docker network rm "$NET" >/dev/null 2>&1
docker network create --internal "$NET" >/dev/null &&
docker run -d --name "$NET" --network "$NET" -v "$T/index:/srv:ro" --entrypoint python3 \
    llmsb/python:latest -m http.server 8080 --directory /srv >/dev/null || { echo "FAIL libraries.index_server: could not start"; exit 1; }

cat > "$T/pip.yaml" <<YAML
libraries:
  network: $NET
  pip_index_url: http://$NET:8080/simple
  npm_registry: http://$NET:8080/
  gem_source: http://$NET:8080/gems/
  cran: http://$NET:8080/R
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
          urllib.request.urlopen("http://INDEX:8080/simple/", timeout=5)
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
  - id: pip-cases
    libraries: ["llmsb-demo==1.0"]
    code: |
      import llmsb_demo
      print(llmsb_demo.answer() + int(input()))
    cases: [{stdin: "0", expect_stdout: "42"}, {stdin: "1", expect_stdout: "43"}, {stdin: "2", expect_stdout: "44"}]
YAML
sed -i "s/INDEX/$NET/" "$T/pip-jobs.yaml"
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
# the installed library is read-only to the cases (not copied between them)
expect pip_library_with_cases "$T/pip.jsonl" 4 ok 44

# --- what runs at install time, and with which network: nothing of a
# package's own with the network (npm lifecycle scripts never, pip sdists
# never, gem extensions and R configure scripts only after the network is
# gone); names that are not registry names never reach an installer
mkdir -p "$T/pkg"; echo '{"name":"p","version":"1.0.0","scripts":{"preinstall":"touch /tmp/pwned"}}' > "$T/pkg/package.json"
cat > "$T/code-jobs.yaml" <<'YAML'
defaults: {timeout: 30}
jobs:
  - id: npm-scripts
    lang: javascript
    libraries: ["llmsb-scripted@1.0.0"]
    code: |
      console.log(require("llmsb-scripted"), require("fs").existsSync("/tmp/preinstall-ran") ? "scripts ran" : "no scripts");
  - id: npm-file-spec
    lang: javascript
    libraries: ["file:/work/pkg"]
    files: {"pkg/package.json": '{"name":"p","version":"1.0.0","scripts":{"preinstall":"touch /tmp/pwned"}}'}
    code: console.log("never")
  - id: pip-sdist
    lang: python
    libraries: ["llmsb-sdist"]
    code: print("never")
  - id: gem-offline-build
    lang: ruby
    libraries: ["llmsb_ext"]
    code: |
      require "llmsb_ext"; require "llmsb_dep"
      puts LlmsbExt.ran, LlmsbDep.x
  - id: r-offline-configure
    lang: r
    libraries: ["llmsbdemo"]
    code: |
      library(llmsbdemo)
      cat(readLines(system.file("ran.txt", package = "llmsbdemo")), hello(), sep = "\n")
YAML
$B submit "$T/code-jobs.yaml" --local --slots 1 --allow-invalid --config "$T/pip.yaml" --out "$T/code.jsonl" </dev/null >"$T/o" 2>"$T/err"
expect npm_install_runs_no_scripts "$T/code.jsonl" 1 ok "11 no scripts"
if [ "$(field "$T/code.jsonl" 2 status)" = invalid ] &&
   field "$T/code.jsonl" 2 error | grep -q 'libraries: "file:/work/pkg" is not a npm package name'; then
    ok file_spec_is_not_a_registry_name
else bad file_spec_is_not_a_registry_name "$(sed -n 2p "$T/code.jsonl" | head -c 600)"; fi
if [ "$(field "$T/code.jsonl" 3 status)" = install_error ] &&
   field "$T/code.jsonl" 3 compile_output | grep -qi "no matching distribution"; then
    ok pip_sdist_is_never_built
else bad pip_sdist_is_never_built "$(sed -n 3p "$T/code.jsonl" | head -c 800)"; fi
expect gem_extension_builds_offline "$T/code.jsonl" 4 ok "$(printf 'offline\n7')"
expect r_configure_runs_offline "$T/code.jsonl" 5 ok "$(printf 'offline\nhi')"

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
    libraries: ["nlohmann-json3-dev", "libfmt9"]
    code: |
      #include <nlohmann/json.hpp>
      #include <dlfcn.h>
      #include <iostream>
      int main() {
        std::cout << nlohmann::json::parse(R"({"a": 42})")["a"] << "\n";
        // a shared library of an installed package loads (LD_LIBRARY_PATH, exec mount)
        void *h = dlopen("libfmt.so.9", RTLD_NOW);
        std::cout << (h ? "loaded" : dlerror()) << "\n";
      }
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
expect apt_header_and_shared_library_for_cpp "$T/eg.jsonl" 3 ok "$(printf '42\nloaded')"
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
         "ruby c.rb colorize colorize" "r p.R praise not_in_the_repository:_praise"; do
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

# --- turned off by the config: invalid, naming the key; Java libraries are
# Debian jar packages on the class path (a name that is not one fails the
# install, naming it)
printf 'libraries:\n  enabled: false\n' > "$T/off.yaml"
echo 'print(1)' > "$T/p.py"
$B run --config "$T/off.yaml" --lib requests "$T/p.py" </dev/null >"$T/o" 2>"$T/err"; rc=$?
if [ $rc = 2 ] && grep -q "libraries.enabled" "$T/err"; then ok disabled_by_config; else bad disabled_by_config "exit $rc"; fi
printf '%s\n' 'import org.apache.commons.lang3.StringUtils;' 'public class Main { public static void main(String[] a) { System.out.println(StringUtils.capitalize("abc")); } }' > "$T/Main.java"
$B run --lib libcommons-lang3-java "$T/Main.java" </dev/null >"$T/o" 2>"$T/err"; rc=$?
if [ $rc = 0 ] && [ "$(cat "$T/o")" = Abc ]; then ok java_library_from_debian_jar; else bad java_library_from_debian_jar "exit $rc: $(tail -3 "$T/err")"; fi
$B run --lib guava "$T/Main.java" </dev/null >"$T/o" 2>"$T/err"; rc=$?
if [ $rc = 119 ] && grep -q "guava" "$T/err"; then ok java_library_not_in_debian_is_install_error; else bad java_library_not_in_debian_is_install_error "exit $rc: $(tail -3 "$T/err")"; fi

suite_end
