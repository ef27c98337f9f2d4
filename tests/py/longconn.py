# SPDX-License-Identifier: GPL-2.0
"""A long-lived TCP connection that echoes lines on demand, for the
connection-sync fail-over test.

  longconn.py ADDR PORT   connects to an echo server and prints
                          "open LOCALPORT"; then, for every number N read
                          from stdin, makes N round trips 150 ms apart (a
                          line sent, its echo read back within 3 s) and
                          prints "ok N", or "fail K REASON" after K good
                          ones (REASON: reset, closed, timeout, garbled;
                          "dead" once an earlier batch failed). Closes the
                          connection when stdin ends.
  longconn.py ADDR PORT later
                          the same, but connects only once it reads a
                          line "connect" (python starts slowly under
                          TCG: a test starts it early, connects later).

Between two batches the test moves the client's route to the VIP to
another director: the next batch shows whether that director carried the
connection on (it knew it from the sync daemon) or reset it.
"""
import socket
import sys
import time


def round_trip(s, line):
    s.sendall(line)
    data = b""
    while not data.endswith(b"\n"):
        r = s.recv(256)
        if not r:
            return "closed"
        data += r
    return None if data == line else "garbled"


def main(addr, port, later=False):
    if later and sys.stdin.readline().strip() != "connect":
        return
    try:
        s = socket.create_connection((addr, port), timeout=5)
    except OSError as e:
        print("fail 0 connect:" + type(e).__name__, flush=True)
        return
    s.settimeout(3)
    print("open %d" % s.getsockname()[1], flush=True)
    seq, dead = 0, False
    for cmd in sys.stdin:
        n = int(cmd)
        if dead:
            print("fail 0 dead", flush=True)
            continue
        why = None
        for k in range(n):
            if k:
                time.sleep(0.15)
            seq += 1
            try:
                why = round_trip(s, b"line %d\n" % seq)
            except ConnectionResetError:
                why = "reset"
            except socket.timeout:
                why = "timeout"
            except OSError as e:
                why = type(e).__name__
            if why:
                dead = True
                print("fail %d %s" % (k, why), flush=True)
                break
        if not why:
            print("ok %d" % n, flush=True)
    s.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3:] == ["later"])
