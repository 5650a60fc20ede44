#!/usr/bin/env python3
"""fusion_client.py - a scripted client of SandboxFusion's published API, run
against `llm-sandbox serve --http`: each case sends what SandboxFusion's
docs and SDK send and checks what they say comes back.

    python3 tests/http/fusion_client.py BASE_URL     # e.g. http://127.0.0.1:8080

The token, when the server has one, comes from LLMSB_HTTP_TOKEN and is sent
as `Authorization: Bearer TOKEN`.  Standard library only.  Prints `ok - NAME`
or `not ok - NAME: why` per case; exits 1 when any failed.

The documents cited are of bytedance/SandboxFusion:
  get-started   docs/docs/docs/get-started.mdx
  files         docs/docs/docs/how-to/run-code/upload-download-files.mdx
  api           docs/docs/api/run-code-run-code-post.api.mdx (the OpenAPI page:
                RunCodeRequest, RunCodeResponse, 422 HTTPValidationError)
  ping          docs/docs/api/index-v-1-ping-get.api.mdx, sandbox/server/server.py
  status        sandbox/server/sandbox_api.py (parse_run_status)
  sdk           scripts/client/src/sandbox_fusion/client.py
                (summary_run_code_result)
  languages     sandbox/runners/types.py (Language)
"""

import base64
import json
import os
import sys
import urllib.error
import urllib.request

TIMEOUT_S = 120  # a cold image may take its time to start


class Failure(Exception):
    pass


def request(base, method, path, body=None, raw=None):
    """Sends one request; returns (HTTP status, parsed JSON body)."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(base.rstrip("/") + path, data=data, method=method)
    req.add_header("Accept", "application/json")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    token = os.environ.get("LLMSB_HTTP_TOKEN")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
            status, text = resp.status, resp.read()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read()
    try:
        return status, json.loads(text) if text else None
    except ValueError:
        raise Failure("HTTP %d, the body is not JSON: %r" % (status, text[:200]))


def expect(cond, why):
    if not cond:
        raise Failure(why)


def run_code(base, body):
    """POST /run_code, expecting 200 and a RunCodeResponse (api)."""
    status, resp = request(base, "POST", "/run_code", body)
    expect(status == 200, "HTTP %d: %s" % (status, json.dumps(resp)[:300]))
    expect(isinstance(resp, dict), "not an object: %r" % (resp,))
    for key in ("status", "message", "compile_result", "run_result", "executor_pod_name", "files"):
        expect(key in resp, "RunCodeResponse has no %r: %s" % (key, json.dumps(resp)[:300]))
    expect(resp["status"] in ("Success", "Failed", "SandboxError"),
           "status %r is not a RunStatus" % resp["status"])
    return resp


def command_ok(result, what):
    """A CommandRunResult that finished with 0 (api, status)."""
    expect(isinstance(result, dict), "%s is %r" % (what, result))
    expect(result.get("status") == "Finished", "%s.status is %r" % (what, result.get("status")))
    expect(result.get("return_code") == 0, "%s.return_code is %r" % (what, result.get("return_code")))
    expect(isinstance(result.get("execution_time"), (int, float)),
           "%s.execution_time is %r" % (what, result.get("execution_time")))


def show(resp):
    return json.dumps(resp)[:400]


# get-started: curl /run_code with {"code": "print(\"Hello, world!\")",
# "language": "python"} -> Success, compile_result null, run_result Finished,
# return_code 0, stdout "Hello, world!\n".
def case_python_hello(base):
    resp = run_code(base, {"code": 'print("Hello, world!")', "language": "python"})
    expect(resp["status"] == "Success", "status %r: %s" % (resp["status"], show(resp)))
    expect(resp["message"] == "", "message %r" % resp["message"])
    expect(resp["compile_result"] is None, "compile_result %r for python" % resp["compile_result"])
    command_ok(resp["run_result"], "run_result")
    expect(resp["run_result"]["stdout"] == "Hello, world!\n", "stdout %r" % resp["run_result"]["stdout"])
    expect(resp["files"] == {}, "files %r" % resp["files"])


# get-started: the C++ example (requests.post with 'language': 'cpp') ->
# Success with a compile_result and a run_result that finished with 0.
def case_cpp_hello(base):
    code = ('#include <iostream>\nint main() {\n    std::cout << "Hello, world!" << std::endl;\n'
            '    return 0;\n}\n')
    resp = run_code(base, {"code": code, "language": "cpp"})
    expect(resp["status"] == "Success", "status %r: %s" % (resp["status"], show(resp)))
    command_ok(resp["compile_result"], "compile_result")
    command_ok(resp["run_result"], "run_result")
    expect(resp["run_result"]["stdout"] == "Hello, world!\n", "stdout %r" % resp["run_result"]["stdout"])


# api: stdin, "optional string to pass into stdin"; status: Success when
# every step finished with 0.
def case_stdin(base):
    resp = run_code(base, {"code": "a, b = map(int, input().split())\nprint(a + b)",
                           "language": "python", "stdin": "20 22\n"})
    expect(resp["status"] == "Success", "status %r: %s" % (resp["status"], show(resp)))
    expect(resp["run_result"]["stdout"] == "42\n", "stdout %r" % resp["run_result"]["stdout"])


# status: a non-zero return code -> Failed with message ""; sdk: run_result
# Finished with return_code != 0 is RunFailed.
def case_runtime_error(base):
    resp = run_code(base, {"code": "raise ValueError('boom')", "language": "python"})
    expect(resp["status"] == "Failed", "status %r: %s" % (resp["status"], show(resp)))
    run = resp["run_result"]
    expect(isinstance(run, dict) and run.get("status") == "Finished", "run_result %r" % (run,))
    expect(run.get("return_code") == 1, "return_code %r" % run.get("return_code"))
    expect("ValueError" in (run.get("stderr") or ""), "stderr %r" % run.get("stderr"))


# api: run_timeout, "code run timeout" (seconds); status: TimeLimitExceeded ->
# Failed; sdk: run_result TimeLimitExceeded is RunTimeout.
def case_timeout(base):
    resp = run_code(base, {"code": "while True:\n    pass\n", "language": "python",
                           "run_timeout": 1})
    expect(resp["status"] == "Failed", "status %r: %s" % (resp["status"], show(resp)))
    run = resp["run_result"]
    expect(isinstance(run, dict) and run.get("status") == "TimeLimitExceeded",
           "run_result %r" % (run,))


# sdk: run_result null and compile_result Finished with return_code != 0 is
# CompileFailed (status: Failed).
def case_compile_error(base):
    resp = run_code(base, {"code": "int main( {\n", "language": "cpp"})
    expect(resp["status"] == "Failed", "status %r: %s" % (resp["status"], show(resp)))
    expect(resp["run_result"] is None, "run_result %r after a failed compile" % (resp["run_result"],))
    comp = resp["compile_result"]
    expect(isinstance(comp, dict), "compile_result %r" % (comp,))
    expect(comp.get("status") == "Finished" and comp.get("return_code") not in (None, 0),
           "compile_result %r" % (comp,))
    expect("error" in (comp.get("stderr") or "") + (comp.get("stdout") or ""),
           "no compiler message in %r" % (comp,))


# files: upload with files {path: base64}, download with fetch_files [path],
# the answer's files {path: base64}.
def case_files(base):
    flag = base64.b64encode(b"secret flag").decode()
    code = ("text = open('flag.txt').read()\n"
            "open('out.txt', 'w').write(text.upper())\n"
            "print(text)\n")
    resp = run_code(base, {"code": code, "language": "python", "files": {"flag.txt": flag},
                           "fetch_files": ["out.txt"]})
    expect(resp["status"] == "Success", "status %r: %s" % (resp["status"], show(resp)))
    expect(resp["run_result"]["stdout"] == "secret flag\n", "stdout %r" % resp["run_result"]["stdout"])
    got = resp["files"].get("out.txt")
    expect(got is not None, "files has no out.txt: %r" % (resp["files"],))
    expect(base64.b64decode(got) == b"SECRET FLAG", "out.txt holds %r" % base64.b64decode(got))


# languages: an id outside the Language literal is refused by FastAPI with
# 422, detail[].type "literal_error" at loc ["body", "language"] (api: 422
# Validation Error).
def case_unknown_language(base):
    status, resp = request(base, "POST", "/run_code", {"code": "x", "language": "cobol"})
    expect(status == 422, "HTTP %d: %s" % (status, show(resp)))
    detail = resp.get("detail") if isinstance(resp, dict) else None
    expect(isinstance(detail, list) and detail, "no detail list: %s" % show(resp))
    expect(detail[0].get("loc") == ["body", "language"], "loc %r" % detail[0].get("loc"))
    expect(detail[0].get("type") == "literal_error", "type %r" % detail[0].get("type"))
    expect(isinstance(detail[0].get("msg"), str), "msg %r" % detail[0].get("msg"))


# languages + status: an id of the literal that cannot run here (lean) is a
# SandboxError with a message and no results, as SandboxFusion answers a
# language it has no runner for (sql).
def case_unserved_language(base):
    resp = run_code(base, {"code": "theorem t : 1 = 1 := rfl", "language": "lean"})
    expect(resp["status"] == "SandboxError", "status %r: %s" % (resp["status"], show(resp)))
    expect(resp["message"], "an empty message")
    expect(resp["run_result"] is None and resp["compile_result"] is None, show(resp))


# api: 422 Validation Error, {"detail": [{"loc": [...], "msg": ..., "type": ...}]}:
# a body that is not JSON, and one without the required code.
def case_malformed(base):
    status, resp = request(base, "POST", "/run_code", raw=b'{"code": ')
    expect(status == 422, "not JSON: HTTP %d: %s" % (status, show(resp)))
    detail = resp.get("detail") if isinstance(resp, dict) else None
    expect(isinstance(detail, list) and detail, "not JSON: no detail list: %s" % show(resp))
    for key in ("loc", "msg", "type"):
        expect(key in detail[0], "not JSON: detail[0] has no %r: %s" % (key, show(resp)))
    expect(detail[0]["loc"][0] == "body", "not JSON: loc %r" % detail[0]["loc"])
    status, resp = request(base, "POST", "/run_code", {"language": "python"})
    expect(status == 422, "no code: HTTP %d: %s" % (status, show(resp)))
    detail = resp.get("detail") if isinstance(resp, dict) else None
    expect(isinstance(detail, list) and detail, "no code: no detail list: %s" % show(resp))
    expect(detail[0].get("loc") == ["body", "code"], "no code: loc %r" % detail[0].get("loc"))
    expect(detail[0].get("type") == "missing", "no code: type %r" % detail[0].get("type"))


# ping: GET /v1/ping -> "pong" (server.py returns the string, FastAPI sends
# it as JSON).
def case_ping(base):
    status, resp = request(base, "GET", "/v1/ping")
    expect(status == 200, "HTTP %d" % status)
    expect(resp == "pong", "body %r" % (resp,))


CASES = [
    ("ping", case_ping),
    ("python hello", case_python_hello),
    ("cpp hello", case_cpp_hello),
    ("stdin", case_stdin),
    ("runtime error", case_runtime_error),
    ("timeout", case_timeout),
    ("compile error", case_compile_error),
    ("files and fetch_files", case_files),
    ("unknown language", case_unknown_language),
    ("unserved language", case_unserved_language),
    ("malformed body", case_malformed),
]


def main(argv):
    if len(argv) != 2:
        print("usage: %s BASE_URL" % argv[0], file=sys.stderr)
        return 2
    failed = 0
    for name, fn in CASES:
        try:
            fn(argv[1])
            print("ok - %s" % name)
        except Failure as e:
            failed += 1
            print("not ok - %s: %s" % (name, e))
        except Exception as e:  # a shape the case did not expect: its failure, not the run's
            failed += 1
            print("not ok - %s: %s: %s" % (name, type(e).__name__, e))
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
