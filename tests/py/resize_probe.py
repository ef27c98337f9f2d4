# SPDX-License-Identifier: GPL-2.0
"""Established TCP connections exercised while the director's connection
table resizes.

  resize_probe.py serve PORT NAME
        an echo server: each line a client sends comes back as
        "NAME line" (one thread per connection).
  resize_probe.py hold ADDR PORT N STOPFILE
        opens N connections, prints "held", then makes round trips on
        each in turn (a line sent, "NAME line" read back within 3 s) until
        STOPFILE exists, and prints one summary line:
          rounds R trips T fails F moved M
        F counts round trips that failed (reset, closed, timeout,
        garbled); M those answered by another real server than the
        connection's first answer (the director lost track of it). Each
        failure is also printed, as "fail CONN ROUND REASON".
"""
import os
import socket
import sys
import threading
import time


def serve(port, name):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(256)

    def echo(c):
        f = c.makefile("rb")
        try:
            for line in f:
                c.sendall(name + b" " + line)
        except OSError:
            pass
        c.close()

    while True:
        c, _ = s.accept()
        threading.Thread(target=echo, args=(c,), daemon=True).start()


def trip(s, line):
    s.sendall(line)
    data = b""
    while not data.endswith(b"\n"):
        r = s.recv(256)
        if not r:
            return None, "closed"
        data += r
    name, _, rest = data.partition(b" ")
    if rest != line:
        return None, "garbled"
    return name, None


def hold(addr, port, n, stop):
    conns = []
    for _ in range(n):
        s = socket.create_connection((addr, port), timeout=5)
        s.settimeout(3)
        conns.append(s)
    first = [None] * n
    print("held", flush=True)
    rounds = trips = fails = moved = 0
    dead = set()
    while True:
        last = os.path.exists(stop)
        for i, s in enumerate(conns):
            if i in dead:
                continue
            try:
                name, err = trip(s, b"r%d c%d\n" % (rounds, i))
            except socket.timeout:
                name, err = None, "timeout"
            except OSError as e:
                name, err = None, "reset" if isinstance(e, ConnectionResetError) else type(e).__name__
            trips += 1
            if err:
                fails += 1
                dead.add(i)
                print("fail %d %d %s" % (i, rounds, err), flush=True)
            elif first[i] is None:
                first[i] = name
            elif name != first[i]:
                moved += 1
                print("fail %d %d moved %s %s" % (i, rounds, first[i].decode(), name.decode()), flush=True)
        rounds += 1
        if last:
            break
        time.sleep(0.01)
    print("rounds %d trips %d fails %d moved %d" % (rounds, trips, fails, moved), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(int(sys.argv[2]), sys.argv[3].encode())
    else:
        hold(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
