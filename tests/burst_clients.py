#!/usr/bin/python3
"""burst_clients.py - N connections to HOST:PORT opened at once, each
sending the header block of REQUEST (a body its Content-Length promises
is never sent), held HOLD seconds, then closed; prints one JSON line: the
server's answers by status ("none": closed or nothing before the hold
ended).  A server must take such a burst past its connection cap and go on
serving (libmicrohttpd 0.9.75 deadlocked on a connection handed to it past
its cap).  REQUEST's \\r\\n are written as such.
    python3 burst_clients.py HOST PORT N HOLD REQUEST
The standard library only (no PyPI on the test machines)."""
import json
import socket
import sys
import time

host, port, n, hold = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
request = sys.argv[5].replace("\\r", "\r").replace("\\n", "\n").encode()
socks = []
for _ in range(n):
    try:
        s = socket.create_connection((host, port), timeout=5)
        s.sendall(request)
        s.setblocking(False)
        socks.append([s, b""])
    except OSError:
        pass
end = time.monotonic() + hold
while time.monotonic() < end:
    for c in socks:
        try:
            c[1] += c[0].recv(4096)
        except (BlockingIOError, OSError):
            pass
    time.sleep(0.05)
answers = {}
for s, got in socks:
    first = got.split(b"\r\n", 1)[0].split(b" ")
    status = first[1].decode() if len(first) > 1 and got.startswith(b"HTTP/") else "none"
    answers[status] = answers.get(status, 0) + 1
    s.close()
print(json.dumps({"opened": len(socks), "answers": answers}))
