#!/usr/bin/python3
"""flood.py - N clients at once, each on its own connection with a whole
request (REQUEST's header block and BODY), each reading its answer until
the server closes or the answer's Content-Length is in, for at most
SECONDS; prints one JSON line: the answers by status ("none": closed or no
answer in time) and how many refusals (429, 503) came without a
Retry-After header.
    python3 flood.py HOST PORT N SECONDS REQUEST BODY
REQUEST's \\r\\n are written as such; its Content-Length is added.  The
standard library only (no PyPI on the test machines)."""
import json
import selectors
import socket
import sys
import time

host, port, n, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
head = sys.argv[5].replace("\\r", "\r").replace("\\n", "\n").encode()
body = sys.argv[6].encode()
request = head + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
sel = selectors.DefaultSelector()
stats = {"answers": {}, "refusals_without_retry_after": 0}
got = {}


def done(s):
    data = got.pop(s)
    sel.unregister(s)
    s.close()
    line = data.split(b"\r\n", 1)[0].split()
    code = line[1].decode() if len(line) > 1 else "none"
    stats["answers"][code] = stats["answers"].get(code, 0) + 1
    if code in ("429", "503") and b"\r\nretry-after:" not in data.lower():
        stats["refusals_without_retry_after"] += 1


for _ in range(n):
    try:
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(request)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        got[s] = b""
    except OSError:
        stats["answers"]["connect_failed"] = stats["answers"].get("connect_failed", 0) + 1
end = time.monotonic() + seconds
while got and time.monotonic() < end:
    for key, _ in sel.select(timeout=0.5):
        s = key.fileobj
        try:
            chunk = s.recv(65536)
        except OSError:
            chunk = b""
        if not chunk:
            done(s)
            continue
        got[s] += chunk
        data = got[s]
        if b"\r\n\r\n" in data:
            hdr, rest = data.split(b"\r\n\r\n", 1)
            for h in hdr.split(b"\r\n")[1:]:
                k, _, v = h.partition(b":")
                if k.strip().lower() == b"content-length" and len(rest) >= int(v):
                    done(s)
                    break
for s in list(got):
    got[s] = b""
    done(s)
print(json.dumps(stats, sort_keys=True))
