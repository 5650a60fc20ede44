#!/bin/bash
# openapi.sh - front/openapi.json, the HTTP front's OpenAPI document: valid
# OpenAPI 3.0.3 (@apidevtools/swagger-parser, installed from the npm
# registry by scripts/setup.sh into tests/http/openapi/node_modules) naming
# every route with the bearer scheme and the 401/413/429 answers
# (tests/http/openapi/validate.mjs); three broken copies of it must fail
# the same check (so it can fail); and, given a running server's BASE_URL,
# its GET /openapi.json must be the same document, valid too.  A missing
# node or validator is a failure, never a skip.
#   bash tests/http/openapi.sh [BASE_URL]    (its token: LLMSB_HTTP_TOKEN)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
BASE=${1:-}
DOC=$ROOT/front/openapi.json
V=$ROOT/tests/http/openapi
T=$(mktemp -d /tmp/llmsb-openapi.XXXXXX)
trap 'rm -rf "$T"' EXIT
suite openapi

validate() { (cd "$V" && node validate.mjs "$1") >"$T/why" 2>&1; }

# break NAME PYTHON: a copy of the document changed by PYTHON (d: the document)
break_copy() {
    python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
$2
json.dump(d, open(sys.argv[2], 'w'))" "$DOC" "$T/$1.json"
}

if ! command -v node >/dev/null; then
    bad node "node is not installed (scripts/setup.sh installs it)"
elif [ ! -d "$V/node_modules/@apidevtools/swagger-parser" ]; then
    bad validator "the validator is not installed: npm ci --prefix tests/http/openapi (scripts/setup.sh does it)"
else
    if validate "$DOC"; then ok file_is_valid; else bad file_is_valid "$(cat "$T/why")"; fi

    break_copy no_route "del d['paths']['/run_code']"
    break_copy bad_ref "d['paths']['/about']['get']['responses']['200']['content']['application/json']['schema'] = {'\$ref': '#/components/schemas/Nope'}"
    break_copy bad_type "d['paths']['/statuses']['get']['responses']['200']['description'] = 5"
    for b in no_route bad_ref bad_type; do
        if validate "$T/$b.json"; then bad "broken_copy_fails.$b" "a broken copy passed the check"
        else ok "broken_copy_fails.$b"; fi
    done

    if [ -n "$BASE" ]; then
        : >"$T/why"
        auth=()
        [ -n "${LLMSB_HTTP_TOKEN:-}" ] && auth=(-H "Authorization: Bearer $LLMSB_HTTP_TOKEN")
        code=$(curl -s -o "$T/served.json" -w '%{http_code} %{content_type}' "${auth[@]}" "${BASE%/}/openapi.json")
        if [ "${code%% *}" != 200 ] || [[ "${code#* }" != application/json* ]]; then
            bad served "GET ${BASE%/}/openapi.json: HTTP $code: $(head -c 300 "$T/served.json" 2>/dev/null)"
        elif ! python3 -c "import json, sys
sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))" "$DOC" "$T/served.json" 2>"$T/why"; then
            bad served_is_the_file "GET /openapi.json is not front/openapi.json: $(diff <(python3 -m json.tool "$DOC") <(python3 -m json.tool "$T/served.json") | head -10)"
        elif ! validate "$T/served.json"; then
            bad served_is_valid "$(cat "$T/why")"
        else
            ok served_is_the_file
        fi
    fi
fi
suite_end
