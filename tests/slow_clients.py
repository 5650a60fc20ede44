#!/usr/bin/python3
"""slow_clients.py - clients that hold a server's connections without ever
finishing a request: N sockets to HOST:PORT, half sending nothing at all,
half a partial request line and then one more byte every DRIBBLE seconds;
a socket the server closes is opened again after REOPEN seconds, so the
pressure stays for the whole run.  Prints "ready N" once the first N are
open, and at the end (after SECONDS) one JSON line: sockets opened, the
server's answers to them by status ("408", "503", ..., "none" for a close
without one), the most open at once, the longest one lasted.
    python3 slow_clients.py HOST PORT N SECONDS [DRIBBLE [REOPEN]]
The standard library only (no PyPI on the test machines)."""
import json
import selectors
import socket
import sys
import time

host, port, n, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
dribble = float(sys.argv[5]) if len(sys.argv) > 5 else 5.0
reopen = float(sys.argv[6]) if len(sys.argv) > 6 else 0.5
sel = selectors.DefaultSelector()
stats = {"opened": 0, "answers": {}, "open_most": 0, "lasted_most_s": 0.0}
conns = {}  # socket -> [kind, opened at, next byte at, what was read]
reopen_at = []


def open_one(kind):
    try:
        s = socket.create_connection((host, port), timeout=5)
    except OSError:
        reopen_at.append((time.monotonic() + reopen, kind))
        return
    s.setblocking(False)
    now = time.monotonic()
    if kind == "dribble":
        try:
            s.send(b"POST /m")
        except OSError:
            pass
    conns[s] = [kind, now, now + dribble, b""]
    sel.register(s, selectors.EVENT_READ)
    stats["opened"] += 1
    stats["open_most"] = max(stats["open_most"], len(conns))


def closed(s):
    kind, t0, _, got = conns.pop(s)
    sel.unregister(s)
    s.close()
    first = got.split(b"\r\n", 1)[0].split(b" ")
    status = first[1].decode() if len(first) > 1 and got.startswith(b"HTTP/") else "none"
    stats["answers"][status] = stats["answers"].get(status, 0) + 1
    stats["lasted_most_s"] = max(stats["lasted_most_s"], round(time.monotonic() - t0, 1))
    reopen_at.append((time.monotonic() + reopen, kind))


for i in range(n):
    open_one("idle" if i % 2 else "dribble")
print("ready", len(conns), flush=True)
end = time.monotonic() + seconds
while time.monotonic() < end:
    for key, _ in sel.select(timeout=0.2):
        s = key.fileobj
        try:
            d = s.recv(4096)
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            d = b""
        if d:
            conns[s][3] += d
        else:
            closed(s)
    now = time.monotonic()
    for s, c in list(conns.items()):
        if c[0] == "dribble" and now >= c[2]:
            c[2] = now + dribble
            try:
                s.send(b"s")
            except OSError:
                pass
    due = [r for r in reopen_at if r[0] <= now]
    reopen_at[:] = [r for r in reopen_at if r[0] > now]
    for _, kind in due:
        open_one(kind)
for s, c in conns.items():
    stats["lasted_most_s"] = max(stats["lasted_most_s"], round(time.monotonic() - c[1], 1))
print(json.dumps(stats), flush=True)
