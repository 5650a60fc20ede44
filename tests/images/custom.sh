#!/bin/bash
# custom.sh - custom images (docs/images.md, "Custom images") against the
# real dockerd: `images build --dockerfile` builds a Dockerfile the suite
# writes (llmsb/python plus Debian's python3-yaml), and
#   - a job naming image llmsb/custom/<name> imports yaml through `run`
#     and through a worker (a redis-server of its own, temp port, its own
#     prefix), while the same job on the stock image cannot;
#   - a second build with nothing changed is skipped (the hash tag exists);
#   - a job of another language on it is refused;
#   - a setuid-root binary the Dockerfile adds has its bit stripped (the
#     build lists it, a job sees no setuid file left), and an image that
#     declares a VOLUME is refused by the hardening audit;
#   - a Dockerfile that switches the layer off (a last SHELL, root renamed
#     in /etc/passwd, a file capability) is built with all of it undone;
#     a last line that continues (also behind a byte-order mark, or with a
#     comment before "# escape="), a sparse file and 200,000 empty files
#     that pass the context cap, are refused; a setuid-root shell in a
#     mode-711 directory behind a find of the image's, and a /bin/sh that
#     does nothing for root, are refused by the audit of the image's files
#     from outside, and deleted; no tag of a custom image but :latest and
#     its hash may be named by a job;
#   - images list shows it, images rm removes its tags, judging by the
#     repo (another name of the same image, as one built FROM it carries
#     the labels, is neither listed nor removed), with its operands
#     counted and options after NAME taken as options;
#   - bad input (a bad --name, a missing --dockerfile, an unknown --lang,
#     a base without python3, a Dockerfile that fails) is refused naming
#     the option, the value and why.
# Its tags are llmsb/custom/ct<pid>-* (llmsb-unchecked/ct<pid>-* while
# checked) and ct<pid>-base (llmsb/python as the run found it, the yaml
# image's base), removed at the end.  Run it under
# the images lock (make integration does, as every docker suite).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
B=${LLMSB_BIN:-$ROOT/bin/llm-sandbox}
# the agent the build copies in (a sanitizer build's binary has none beside it)
export LLMSB_AGENT=${LLMSB_AGENT:-$ROOT/bin/llmsb-agent}
T=$(mktemp -d /tmp/llmsb-custom.XXXXXX)
N=ct$$
PORT=$(free_port)
PREFIX=customtest$$
R="redis-cli -p $PORT"
suite custom; WORKER=""

cleanup() {
    stop_worker_and_redis
    remove_containers_of $RUN_PIDS
    # our tags only (their layers go with the last tag)
    local f tag
    f=$(jq -rn --arg r "llmsb/custom/$N-*" --arg u "llmsb-unchecked/$N-*" --arg d "$N-derived" \
        --arg b "$N-base" '{reference: [$r, $u, $d, $b]} | tojson | @uri')
    for tag in $(engine_get "/images/json?filters=$f" | jq -r '.[].RepoTags[]?'); do
        curl -fs -X DELETE --max-time 30 --unix-socket "$ENGINE_SOCK" \
            "http://d/v1.41/images/$(jq -rn --arg t "$tag" '$t | @uri')?force=1" >/dev/null
    done
    rm -rf "$T"
}
trap cleanup EXIT

WHY_SHOW="tail -12"

# build NAME DIR LANG: images build --dockerfile DIR/Dockerfile, output in $T/why
build() {
    track "$B" images build --dockerfile "$2/Dockerfile" --name "$N-$1" --lang "$3" >"$T/why" 2>&1
}

expect_refused() { # NAME WANT CMD...
    local name=$1 want=$2; shift 2
    if ! "$@" >"$T/why" 2>&1 && grep -qF -- "$want" "$T/why"; then ok "$name"; else bad "$name" "want: $want"; fi
}

refused_and_gone() { # CASE NAME WANT...: a build of $T/NAME refused saying each WANT, no tag of it left
    local case=$1 name=$2 w; shift 2
    if build "$name" "$T/$name" python; then bad "$case" "built"; return; fi
    for w in "$@"; do
        grep -qF -- "$w" "$T/why" || { bad "$case" "want: $w"; return; }
    done
    if engine_get "/images/json" | jq -r '.[].RepoTags[]?' | grep -q "$N-$name:"; then
        bad "$case" "a tag of it is left"
    else
        ok "$case"
    fi
}

mkdir -p "$T/yaml" "$T/nopy" "$T/suid" "$T/vol" "$T/broken" "$T/hostile" "$T/cont" "$T/sparse" \
    "$T/bom" "$T/comment" "$T/hidden" "$T/gate" "$T/many"
# the yaml image's base: llmsb/python:latest as it is now, under a tag of
# this run's, so that another run on the host that tags llmsb/python:latest
# anew (its agent differs) does not move the base between two builds here
curl -fs -X POST --max-time 30 --unix-socket "$ENGINE_SOCK" \
    "http://d/v1.41/images/llmsb%2Fpython:latest/tag?repo=$N-base&tag=latest" >/dev/null ||
    { echo "custom: cannot tag llmsb/python:latest as $N-base"; exit 1; }
{ echo "FROM $N-base:latest"; cat <<'EOF'; } >"$T/yaml/Dockerfile"
RUN apt-get update && apt-get install -y --no-install-recommends python3-yaml \
    && rm -rf /var/lib/apt/lists/*
COPY greeting.txt /usr/local/share/greeting.txt
EOF
echo "from the context" >"$T/yaml/greeting.txt"
printf 'import yaml\nprint(yaml.safe_dump({"a": [1, 2]}), end="")\nprint(open("/usr/local/share/greeting.txt").read(), end="")\n' >"$T/yaml.py"

# 1. the build: checked, audited, tagged with its hash and latest
if build yaml "$T/yaml" python && grep -q "built llmsb/custom/$N-yaml:[0-9a-f]\{12\} and llmsb/custom/$N-yaml:latest (lang python)" "$T/why" &&
    grep -q "checking llmsb-unchecked/$N-yaml:[0-9a-f]\{12\}-[0-9]* (sha256:[0-9a-f]\{64\}): a hello world in python, the hardening audit" "$T/why" &&
    ! engine_get "/images/json" | jq -r '.[].RepoTags[]?' | grep -q "^llmsb-unchecked/$N-yaml:"; then
    ok build
else
    bad build "no image built and checked"
fi

if "$B" images list >"$T/why" 2>&1 &&
    grep -Eq "^llmsb/custom/$N-yaml:latest +python +custom " "$T/why" &&
    grep -Eq "^llmsb/python:latest +python +stock " "$T/why"; then
    ok listed
else
    bad listed "images list does not show it"
fi

# 2. a job on it imports yaml and reads the context's file; on the stock image it cannot
if track "$B" run --lang python --image "llmsb/custom/$N-yaml" "$T/yaml.py" >"$T/out" 2>"$T/why" &&
    [ "$(cat "$T/out")" = "$(printf 'a:\n- 1\n- 2\nfrom the context')" ]; then
    ok run_uses_the_custom_image
else
    cp "$T/out" "$T/why" 2>/dev/null; bad run_uses_the_custom_image "wrong output"
fi
if ! track "$B" run --lang python "$T/yaml.py" >"$T/out" 2>"$T/why" && grep -q "No module named 'yaml'" "$T/why"; then
    ok stock_image_lacks_the_package
else
    bad stock_image_lacks_the_package "the stock image imported yaml"
fi

# 3. nothing changed: skipped
if build yaml "$T/yaml" python && grep -q "llmsb/custom/$N-yaml:[0-9a-f]\{12\} is up to date" "$T/why" &&
    ! grep -q "Step 1/" "$T/why"; then
    ok rebuild_skipped
else
    bad rebuild_skipped "rebuilt with nothing changed"
fi
# a changed context file is a new hash
echo "changed" >"$T/yaml/greeting.txt"
if build yaml "$T/yaml" python && grep -q "building llmsb/custom/$N-yaml" "$T/why"; then
    ok context_change_rebuilds
else
    bad context_change_rebuilds "a changed context file did not rebuild"
fi

# 4. a job of another language on it is refused
if ! track "$B" run --lang ruby --image "llmsb/custom/$N-yaml" "$T/yaml.py" >"$T/why" 2>&1 &&
    grep -q "image: \"llmsb/custom/$N-yaml\" was built for language python (its llmsb.lang label), and this job's language is ruby" "$T/why"; then
    ok other_language_refused
else
    bad other_language_refused "not refused"
fi

# 5. through a worker: the job file names the image
start_redis "$PORT" "$T" || { echo "custom: redis-server did not start"; exit 1; }
export LLMSB_REDIS_URL=redis://127.0.0.1:$PORT LLMSB_PREFIX=$PREFIX
"$B" worker --name cw --slots 1 >"$T/worker.log" 2>&1 &
WORKER=$!
jq -cn --rawfile code "$T/yaml.py" --arg img "llmsb/custom/$N-yaml" \
    '{id: "y1", lang: "python", code: $code, image: $img}' >"$T/jobs.jsonl"
if timeout 120 "$B" submit "$T/jobs.jsonl" --wait --out "$T/res.jsonl" </dev/null >"$T/why" 2>&1 &&
    [ "$(jq -r '.status + " " + .image + " " + .stdout' "$T/res.jsonl")" = "ok llmsb/custom/$N-yaml $(printf 'a:\n- 1\n- 2\nchanged')" ]; then
    ok worker_uses_the_custom_image
else
    cat "$T/res.jsonl" >>"$T/why" 2>/dev/null; bad worker_uses_the_custom_image "wrong result"
fi

# 6. a setuid-root binary: stripped, listed, none left for a job (the
# step names this run, so the engine's cache does not hide the listing)
cat >"$T/suid/Dockerfile" <<EOF
FROM llmsb/python:latest
RUN cp /bin/true /usr/local/bin/sneaky && chmod 4755 /usr/local/bin/sneaky && echo $N
EOF
printf 'import os\nprint(oct(os.stat("/usr/local/bin/sneaky").st_mode & 0o7777))\n' >"$T/suid.py"
if build suid "$T/suid" python && grep -q "llmsb-stripped: /usr/local/bin/sneaky" "$T/why" &&
    track "$B" run --lang python --image "llmsb/custom/$N-suid" "$T/suid.py" >"$T/out" 2>>"$T/why" &&
    [ "$(cat "$T/out")" = "0o755" ]; then
    ok setuid_stripped
else
    bad setuid_stripped "the setuid bit was not stripped"
fi

# 6b. a Dockerfile that tries to switch the layer off: root renamed in
# /etc/passwd, a file with a capability, a setuid file, and a last SHELL
# that makes shell-form steps no-ops: built, with all of it undone
cat >"$T/hostile/Dockerfile" <<EOF
FROM llmsb/python:latest
RUN apt-get update && apt-get install -y --no-install-recommends libcap2-bin \\
    && rm -rf /var/lib/apt/lists/* \\
    && cp /bin/true /usr/local/bin/capped && setcap cap_net_raw+ep /usr/local/bin/capped \\
    && cp /bin/true /usr/local/bin/sneaky && chmod 4755 /usr/local/bin/sneaky \\
    && sed -i 's/^root:x:0:0:/root:x:65534:65534:/' /etc/passwd && echo $N
SHELL ["/bin/true"]
EOF
printf 'import os\nprint(oct(os.stat("/usr/local/bin/sneaky").st_mode & 0o7777))\ntry:\n    os.getxattr("/usr/local/bin/capped", "security.capability")\n    print("caps")\nexcept OSError:\n    print("no caps")\n' >"$T/hostile.py"
if build hostile "$T/hostile" python && grep -q "llmsb-stripped: /usr/local/bin/sneaky" "$T/why" &&
    grep -q "llmsb-stripped: capabilities of /usr/local/bin/capped" "$T/why" &&
    track "$B" run --lang python --image "llmsb/custom/$N-hostile" "$T/hostile.py" >"$T/out" 2>>"$T/why" &&
    [ "$(cat "$T/out")" = "$(printf '0o755\nno caps')" ]; then
    ok hostile_layer_holds
else
    cat "$T/out" >>"$T/why" 2>/dev/null; bad hostile_layer_holds "the layer was switched off"
fi
# 6c. Dockerfiles that switch our layer off where the engine's parser and
# a naive reading of it disagree, each planting a setuid-root shell in a
# mode-711 directory (which the sandbox user cannot list) after taking
# Debian's own setuid bits off: refused before any build, naming the line
# and the escape character.  A byte-order mark before "# escape=`" (the
# engines drop it, so the directive holds):
PLANT="find / -xdev -type f -perm /6000 -exec chmod ug-s {} + ; mkdir -m 711 /opt/hid && cp /bin/dash /opt/hid/sh && chmod 4755 /opt/hid/sh && echo $N"
printf '\xef\xbb\xbf# escape=`\nFROM llmsb/python:latest\nRUN %s\nSHELL ["/bin/true"]\nRUN true `\n' "$PLANT" >"$T/bom/Dockerfile"
refused_and_gone bom_refused bom "--dockerfile \"$T/bom/Dockerfile\":5: the last instruction ends in a line continuation ('\`', the escape character of line 1's \"# escape=\")"
# a comment before "# escape=" (it is a comment too, so '\' continues):
printf '# a comment first\n# escape=`\nFROM llmsb/python:latest\nRUN %s\nSHELL ["/bin/true"]\nRUN true \\\n' "$PLANT" >"$T/comment/Dockerfile"
refused_and_gone comment_refused comment "--dockerfile \"$T/comment/Dockerfile\":6: the last instruction ends in a line continuation ('\\')"
# 6d. the same shell with a find of the Dockerfile's that reports nothing
# (our strip and the audit in a sandbox run the image's find): the image's
# files, read from outside as root, show it (and only it: our images keep
# no set-uid file of Debian's); refused, and the unchecked image deleted
printf 'FROM llmsb/python:latest\nRUN mkdir -m 711 /opt/hid && cp /bin/dash /opt/hid/sh && chmod 4755 /opt/hid/sh && printf "#!/bin/sh\\nexit 0\\n" >/usr/local/bin/find && chmod 755 /usr/local/bin/find && echo %s\n' "$N" >"$T/hidden/Dockerfile"
refused_and_gone hidden_setuid_refused hidden "the hardening audit refused" \
    "in the image's files: a setuid or setgid file: /opt/hid/sh (mode 4755, owner 0:0)"
# 6e. a /bin/sh that does nothing for root (so our steps do nothing) and
# runs the audit for the sandbox user: each step left no mark; refused
printf 'FROM llmsb/python:latest\nRUN find / -xdev -type f -perm /6000 -exec chmod ug-s {} + ; printf "#!/bin/dash\\n[ \\"\\$(id -u)\\" = 0 ] && exit 0\\nexec /bin/dash \\"\\$@\\"\\n" >/usr/local/bin/sh-gate && chmod 755 /usr/local/bin/sh-gate && ln -sf /usr/local/bin/sh-gate /bin/sh && echo %s\n' "$N" >"$T/gate/Dockerfile"
refused_and_gone steps_without_marks_refused gate "the hardening audit refused" \
    "our layer's step \"tools\" left no mark in /usr/local/lib/llmsb/custom-steps: it did not run" \
    "our layer's step \"strip\" left no mark"
# a last line that continues would swallow the layer's first line: refused
printf 'FROM llmsb/python:latest\nUSER nobody\nRUN echo hi \\\n\n# a comment\n' >"$T/cont/Dockerfile"
expect_refused trailing_continuation_refused "--dockerfile \"$T/cont/Dockerfile\":3: the last instruction ends in a line continuation ('\\')" \
    "$B" images build --dockerfile "$T/cont/Dockerfile" --name "$N-cont" --lang python
# a sparse file counts by its size, not the bytes its tar entry holds
printf 'FROM llmsb/python:latest\nRUN false\n' >"$T/sparse/Dockerfile"
truncate -s 300M "$T/sparse/big"
expect_refused sparse_context_refused "--context \"$T/sparse\": with \"big\" (314572800 bytes) its files pass 256 MB" \
    track "$B" images build --dockerfile "$T/sparse/Dockerfile" --name "$N-sparse" --lang python
rm -f "$T/sparse/big"
# 200,000 empty files whose names take a tar header of their own: 0 bytes
# of contents, over 256 MB as a tar; the error names the cap, the figure
# reached and the count
printf 'FROM llmsb/python:latest\nRUN false\n' >"$T/many/Dockerfile"
python3 -c 'import sys
for i in range(200000):
    open("%s/%0120d" % (sys.argv[1], i), "w").close()' "$T/many"
if ! track "$B" images build --dockerfile "$T/many/Dockerfile" --name "$N-many" --lang python >"$T/why" 2>&1 &&
    grep -Eq -- "--context \"$T/many\": the context tar passes its cap of 256 MB: [0-9]+ bytes written and the next block does not fit, with [0-9]+ files and directories of the context in it \(0 bytes of contents; each takes a tar header of 512 bytes or more\)" "$T/why"; then
    ok many_empty_files_refused
else
    bad many_empty_files_refused "no error naming the cap, the figure and the count"
fi
rm -rf "$T/many"

# 7. a VOLUME: the hardening audit refuses it, naming it; no name of it
# stays (the unchecked one is outside llmsb/, and gone), and no tag of a
# custom image but :latest and its hash may be named by a job
cat >"$T/vol/Dockerfile" <<'EOF'
FROM llmsb/python:latest
RUN mkdir -m 1777 /data
VOLUME /data
EOF
if ! build vol "$T/vol" python && grep -q 'the hardening audit refused' "$T/why" &&
    grep -q 'VOLUME /data' "$T/why" && grep -q 'a writable mount (a VOLUME?): /data' "$T/why" &&
    ! engine_get "/images/llmsb/custom/$N-vol:latest/json" >/dev/null &&
    ! engine_get "/images/json" | jq -r '.[].RepoTags[]?' | grep -q "$N-vol:"; then
    ok volume_refused_by_audit
else
    bad volume_refused_by_audit "the audit let a VOLUME through"
fi
for img in "llmsb/custom/$N-vol:unchecked" "llmsb/custom/$N-yaml:unchecked" "llmsb/custom/$N-yaml:v2"; do
    jq -cn --arg img "$img" '{id: "u", lang: "python", code: "print(1)", image: $img}' >"$T/u.jsonl"
    rm -f "$T/u.res"
    track "$B" submit --local --allow-invalid "$T/u.jsonl" --out "$T/u.res" >"$T/why" 2>&1
    if [ -s "$T/u.res" ] &&
        [ "$(jq -r .status "$T/u.res")" = invalid ] &&
        jq -r .error "$T/u.res" | grep -qF "image: \"$img\" is not a checked custom image"; then
        ok "unchecked_tag_refused:${img##*:}"
    else
        cat "$T/u.res" >>"$T/why" 2>/dev/null; bad "unchecked_tag_refused:${img##*:}" "a job ran it"
    fi
done

# 8. bad input, each naming the option, the value and why
printf 'FROM llmsb/base:latest\n' >"$T/nopy/Dockerfile"
printf 'FROM llmsb/python:latest\nRUN echo the-step-that-fails && false\n' >"$T/broken/Dockerfile"
expect_refused bad_name "--name \"Bad_Name\" is not an image name component" \
    "$B" images build --dockerfile "$T/yaml/Dockerfile" --name Bad_Name --lang python
expect_refused missing_dockerfile "--dockerfile \"$T/none/Dockerfile\" cannot be read: No such file or directory" \
    "$B" images build --dockerfile "$T/none/Dockerfile" --name "$N-x" --lang python
expect_refused unknown_lang "--lang \"cobol\" is not a language (known: python," \
    "$B" images build --dockerfile "$T/yaml/Dockerfile" --name "$N-x" --lang cobol
expect_refused missing_lang "--dockerfile, --name and --lang go together (missing: --lang)" \
    "$B" images build --dockerfile "$T/yaml/Dockerfile" --name "$N-x"
expect_refused no_interpreter "--dockerfile \"$T/nopy/Dockerfile\": --lang python needs the command python3 on PATH, and this image has none" \
    track "$B" images build --dockerfile "$T/nopy/Dockerfile" --name "$N-nopy" --lang python
if ! build broken "$T/broken" python && grep -q "the-step-that-fails" "$T/why" &&
    grep -qF "error: images build: --dockerfile \"$T/broken/Dockerfile\" failed to build (its output above)" "$T/why" &&
    grep -qF "The command '/bin/sh -c echo the-step-that-fails && false' returned a non-zero code: 1" "$T/why"; then
    ok build_failure_shown
else
    bad build_failure_shown "no clear build failure"
fi

# 9. images rm: every tag of the name goes, and only those: an image of
# another name with the same labels (as one built FROM it) is neither
# listed nor removed; options after NAME are options
curl -fs -X POST --max-time 30 --unix-socket "$ENGINE_SOCK" \
    "http://d/v1.41/images/llmsb%2Fcustom%2F$N-suid:latest/tag?repo=$N-derived&tag=latest" >/dev/null
if "$B" images list >"$T/why" 2>&1 && grep -q "llmsb/custom/$N-suid:latest" "$T/why" &&
    ! grep -q "$N-derived" "$T/why"; then
    ok list_judges_by_repo
else
    bad list_judges_by_repo "images list shows another repo"
fi
if "$B" images rm "$N-suid" --log-level warn >"$T/why" 2>&1 && grep -q "removed llmsb/custom/$N-suid:latest" "$T/why" &&
    ! grep -q "$N-derived" "$T/why" && engine_get "/images/$N-derived:latest/json" >/dev/null &&
    ! engine_get "/images/llmsb/custom/$N-suid:latest/json" >/dev/null &&
    "$B" images list >"$T/why" 2>&1 && ! grep -q "llmsb/custom/$N-suid:" "$T/why"; then
    ok removed
else
    bad removed "images rm left a tag, or removed another repo's"
fi
expect_refused rm_two_names "images rm: takes one NAME; \"b\" is one too many" "$B" images rm a b
expect_refused list_operand "images list: takes no operand; \"junk\" is one too many" "$B" images list junk
expect_refused rm_unknown_option "images rm: unknown option \"--force\"" "$B" images rm a --force

echo "custom: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
