#!/usr/bin/env python3
"""A Judge0 CE client, scripted from Judge0's own published API docs, run
against llm-sandbox's `serve --http` (docs/http/judge0.md).

    python3 tests/http/judge0_client.py BASE_URL

BASE_URL is the server's root (http://127.0.0.1:2358).  When LLMSB_HTTP_TOKEN
is set it is sent as X-Auth-Token, the header Judge0's clients send
(judge0/judge0: docs/api/authentication/authentication.md).  Each case prints
`ok - NAME` or `not ok - NAME: why`; the exit status is 1 when one failed.
The callback case starts an HTTP server on 127.0.0.1 and needs the server
run with --callback-allow 127.0.0.1.  The standard library only.

Where each request comes from (judge0/judge0, docs/api/):
  submissions/create_a_submission.md         POST /submissions, ?wait, ?base64_encoded, 422 shapes
  submissions/get_a_submission.md            GET /submissions/{token}, ?fields, 404
  submissions/create_a_submission_batch.md   POST /submissions/batch
  submissions/get_a_submission_batch.md      GET /submissions/batch?tokens=
  submissions/submissions.md                 the attributes, callback_url (a PUT)
  statuses_and_languages/get_languages.md    GET /languages
  statuses_and_languages/get_statuses.md     GET /statuses
"""

import base64
import http.server
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

BASE = ""
FAILED = []
POLL_S = 90  # how long a case waits for a submission to finish
MLE_ID = 15  # our Memory Limit Exceeded (docs/http/judge0.md)


def request(method, path, body=None, query=None):
    """Returns (HTTP status, parsed JSON body or None)."""
    url = BASE + path
    if query:
        url += "?" + urllib.parse.urlencode(query)
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    token = os.environ.get("LLMSB_HTTP_TOKEN")
    if token:
        req.add_header("X-Auth-Token", token)
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            status, raw = resp.status, resp.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, raw


def case(name):
    """Runs fn as a case named name: an AssertionError is its failure."""
    def wrap(fn):
        try:
            fn()
            print("ok - " + name)
        except AssertionError as e:
            print("not ok - %s: %s" % (name, e))
            FAILED.append(name)
        except Exception as e:  # a client error is a failure too
            print("not ok - %s: %s: %s" % (name, type(e).__name__, e))
            FAILED.append(name)
        return fn
    return wrap


def check(cond, why):
    if not cond:
        raise AssertionError(why)


def b64(s):
    return base64.b64encode(s.encode()).decode()


def unb64(s):
    return base64.b64decode(s).decode() if s is not None else None


def run_wait(body, query=None):
    """create_a_submission.md: POST /submissions?wait=true; the submission."""
    q = {"wait": "true"}
    q.update(query or {})
    status, sub = request("POST", "/submissions", body, q)
    check(status == 201, "POST /submissions?wait=true: HTTP %s %r" % (status, sub))
    return sub


def status_is(sub, want):
    got = (sub.get("status") or {}).get("id")
    check(got == want, "status %r, want %s; submission %r" % (sub.get("status"), want, sub))


def poll(token, fields="*"):
    """get_a_submission.md: GET until the status is past 1 In Queue, 2 Processing."""
    deadline = time.time() + POLL_S
    while time.time() < deadline:
        status, sub = request("GET", "/submissions/" + token, query={"fields": fields})
        check(status == 200, "GET /submissions/%s: HTTP %s %r" % (token, status, sub))
        if sub["status"]["id"] not in (1, 2):
            return sub
        time.sleep(0.25)
    raise AssertionError("submission %s not done after %s s" % (token, POLL_S))


PY_HELLO = {"language_id": 71, "source_code": "print('hello, judge0')"}


def cpp(src, **extra):
    body = {"language_id": 54, "source_code": src}
    body.update(extra)
    return body


def cases():
    @case("GET /languages has Judge0 CE's ids")
    def _():
        status, langs = request("GET", "/languages")
        check(status == 200 and isinstance(langs, list), "HTTP %s %r" % (status, langs))
        ids = {l["id"]: l["name"] for l in langs}
        for want in (71, 54, 62, 63, 60, 72, 80):
            check(want in ids, "no language %d in %r" % (want, ids))
        check(ids[71].startswith("Python ("), "71 is %r" % ids[71])
        check(ids[54].startswith("C++ ("), "54 is %r" % ids[54])

    @case("GET /statuses")
    def _():
        status, sts = request("GET", "/statuses")
        check(status == 200, "HTTP %s" % status)
        names = {s["id"]: s["description"] for s in sts}
        check(names.get(3) == "Accepted" and names.get(6) == "Compilation Error",
              "statuses %r" % names)
        check(names.get(MLE_ID) == "Memory Limit Exceeded", "no %d: %r" % (MLE_ID, names))

    @case("wait=true: Python, Accepted, stdout")
    def _():
        sub = run_wait(PY_HELLO)
        status_is(sub, 3)
        check(sub["stdout"] == "hello, judge0\n", "stdout %r" % sub["stdout"])
        check(sub["stderr"] is None, "stderr %r" % sub["stderr"])
        check(len(sub["token"]) == 36, "token %r" % sub["token"])
        check(isinstance(sub["time"], str), "time %r" % sub["time"])

    @case("base64_encoded=true round trip")
    def _():
        src = "import sys\nprint(sys.stdin.read().upper(), end='')"
        sub = run_wait({"language_id": 71, "source_code": b64(src), "stdin": b64("héllo\n")},
                       {"base64_encoded": "true"})
        status_is(sub, 3)
        check(unb64(sub["stdout"]) == "HÉLLO\n", "stdout %r" % sub["stdout"])

    @case("expected_output wrong: Wrong Answer")
    def _():
        sub = run_wait({"language_id": 71, "source_code": "print(1)", "expected_output": "2"})
        status_is(sub, 4)
        ok = run_wait({"language_id": 71, "source_code": "print(1)",
                       "expected_output": "1  \n\n"})
        status_is(ok, 3)

    @case("cpu_time_limit 1, a loop: Time Limit Exceeded")
    def _():
        sub = run_wait({"language_id": 71, "source_code": "while True:\n    pass",
                        "cpu_time_limit": 1})
        status_is(sub, 5)

    @case("C++ compile error: 6, compile_output")
    def _():
        sub = run_wait(cpp("int main( {"))
        status_is(sub, 6)
        check(sub["compile_output"], "compile_output %r" % sub["compile_output"])

    @case("exit 3: Runtime Error (NZEC)")
    def _():
        sub = run_wait({"language_id": 71, "source_code": "import sys\nsys.exit(3)"},
                       {"fields": "status,exit_code"})
        status_is(sub, 11)
        check(sub["exit_code"] == 3, "exit_code %r" % sub["exit_code"])

    @case("C++ null write: Runtime Error (SIGSEGV)")
    def _():
        sub = run_wait(cpp("int main() { volatile int *p = nullptr; *p = 1; return 0; }"))
        status_is(sub, 7)

    @case("C++ integer divide by zero: Runtime Error (SIGFPE)")
    def _():
        # both operands volatile: g++ -O2 turns 1 / z into a compare, no idiv
        sub = run_wait(cpp("#include <cstdio>\nint main() { volatile int a = 7, z = 0; "
                           "int x = a / z; std::printf(\"%d\", x); return 0; }"))
        status_is(sub, 9)

    # a file past the sandbox's file size limit (64 MB) in /work (256 MB)
    @case("C++ file past the size limit: Runtime Error (SIGXFSZ)")
    def _():
        sub = run_wait(cpp("#include <cstdio>\n#include <vector>\nint main() { "
                           "std::FILE *f = std::fopen(\"big\", \"wb\"); std::vector<char> b(1 << 20, 'x');"
                           " for (int i = 0; i < 200; i++) std::fwrite(b.data(), 1, b.size(), f);"
                           " std::fclose(f); return 0; }"))
        status_is(sub, 8)

    @case("C++ abort(): Runtime Error (SIGABRT)")
    def _():
        sub = run_wait(cpp("#include <cstdlib>\nint main() { std::abort(); }"))
        status_is(sub, 10)

    @case("memory_limit exceeded: Memory Limit Exceeded")
    def _():
        # every page written through a volatile pointer: g++ -O2 may drop a
        # memset whose bytes it can fold
        src = ("#include <cstdlib>\n#include <cstdio>\n"
               "int main() { size_t n = (size_t)1 << 30; volatile char *p = (volatile char *)"
               "std::malloc(n); if (!p) return 1; for (size_t i = 0; i < n; i += 4096) p[i] = 1;"
               " std::printf(\"%d\", p[n - 4096]); }")
        sub = run_wait(cpp(src, memory_limit=131072))
        status_is(sub, MLE_ID)

    # ours past Judge0's 14 (GET /statuses lists it): the output cap passed
    @case("output past the cap: Output Limit Exceeded (16)")
    def _():
        sub = run_wait({"language_id": 71,
                        "source_code": "import sys\nsys.stdout.write('y' * 6000000)"})
        status_is(sub, 16)

    @case("wait=false, then GET until done")
    def _():
        status, created = request("POST", "/submissions", PY_HELLO)
        check(status == 201 and set(created) == {"token"}, "HTTP %s %r" % (status, created))
        sub = poll(created["token"])
        status_is(sub, 3)
        check(sub["stdout"] == "hello, judge0\n", "stdout %r" % sub["stdout"])
        check(sub["language_id"] == 71, "language_id %r" % sub["language_id"])

    # create_a_submission.md: the answer of wait=true carries the token, and
    # get_a_submission.md reads any submission by its token
    @case("wait=true, then GET of its token")
    def _():
        sub = run_wait(PY_HELLO)
        status, again = request("GET", "/submissions/" + sub["token"], query={"fields": "*"})
        check(status == 200, "GET: HTTP %s %r" % (status, again))
        status_is(again, 3)
        check(again["stdout"] == "hello, judge0\n", "stdout %r" % again["stdout"])

    @case("batch create and batch GET")
    def _():
        subs = [{"language_id": 71, "source_code": "print(%d)" % i} for i in range(3)]
        status, created = request("POST", "/submissions/batch", {"submissions": subs})
        check(status == 201 and len(created) == 3, "HTTP %s %r" % (status, created))
        tokens = [c["token"] for c in created]
        deadline = time.time() + POLL_S
        while True:
            status, got = request("GET", "/submissions/batch",
                                  query={"tokens": ",".join(tokens),
                                         "fields": "token,stdout,status_id"})
            check(status == 200, "HTTP %s %r" % (status, got))
            done = [s for s in got["submissions"] if s and s["status_id"] not in (1, 2)]
            if len(done) == 3:
                break
            check(time.time() < deadline, "batch not done: %r" % got)
            time.sleep(0.25)
        for i, s in enumerate(got["submissions"]):
            check(s["token"] == tokens[i] and s["stdout"] == "%d\n" % i, "entry %d: %r" % (i, s))

    @case("fields=stdout,status")
    def _():
        sub = run_wait(PY_HELLO, {"fields": "stdout,status"})
        check(set(sub) == {"stdout", "status"}, "keys %r" % sorted(sub))

    @case("unknown language_id: 422")
    def _():
        status, body = request("POST", "/submissions",
                               {"language_id": 150000, "source_code": "x"})
        check(status == 422, "HTTP %s %r" % (status, body))
        check(body == {"language_id": ["language with id 150000 doesn't exist"]}, "%r" % body)

    @case("no source_code: 422")
    def _():
        status, body = request("POST", "/submissions", {"language_id": 71})
        check(status == 422, "HTTP %s %r" % (status, body))
        check(body == {"source_code": ["can't be blank"]}, "%r" % body)

    @case("GET of an unknown token: 404")
    def _():
        status, body = request("GET", "/submissions/00000000-0000-4000-8000-000000000000")
        check(status == 404, "HTTP %s %r" % (status, body))

    @case("callback_url gets a PUT of the submission")
    def _():
        got = []
        arrived = threading.Event()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_PUT(self):
                n = int(self.headers.get("Content-Length") or 0)
                got.append(json.loads(self.rfile.read(n)))
                self.send_response(200)
                self.end_headers()
                arrived.set()

            def log_message(self, *args):
                pass

        srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        try:
            url = "http://127.0.0.1:%d/judge0-callback" % srv.server_address[1]
            body = dict(PY_HELLO, callback_url=url)
            status, created = request("POST", "/submissions", body)
            check(status == 201, "HTTP %s %r" % (status, created))
            check(arrived.wait(POLL_S), "no PUT came to %s" % url)
            sub = got[0]
            check(sub["token"] == created["token"], "token %r" % sub.get("token"))
            status_is(sub, 3)
            # isolate_job.rb's call_callback sends the texts Base64-encoded
            check(unb64(sub["stdout"]) == "hello, judge0\n", "stdout %r" % sub["stdout"])
        finally:
            srv.shutdown()


def main():
    global BASE
    if len(sys.argv) != 2:
        print("usage: judge0_client.py BASE_URL", file=sys.stderr)
        return 2
    BASE = sys.argv[1].rstrip("/")
    cases()
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
