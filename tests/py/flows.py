# SPDX-License-Identifier: GPL-2.0
"""Many TCP connections held open across a change, for the cluster test.

  flows.py ADDR PORT N SBASE
                         opens N connections to an echo server (one after
                         the other, from source ports SBASE to SBASE+N-1), sends
                         a line on each and reads it back; prints
                         "open K" (K that echoed). Then, on each line read
                         from stdin, sends another line on every
                         connection still alive and prints "kept K lost L"
                         (L reset, closed or silent for 5 s). Ends at EOF.
"""
import socket
import sys


def exchange(s, line):
    try:
        s.sendall(line)
        data = b""
        while not data.endswith(b"\n"):
            r = s.recv(64)
            if not r:
                return False
            data += r
        return data == line
    except OSError:
        return False


def main(addr, port, n, sbase):
    socks = []
    for i in range(n):
        s = socket.socket()
        s.settimeout(5)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("0.0.0.0", sbase + i))
            s.connect((addr, port))
        except OSError:
            s.close()
            continue
        if exchange(s, b"open %d\n" % i):
            socks.append(s)
        else:
            s.close()
    print("open %d" % len(socks), flush=True)
    round_ = 0
    for _ in sys.stdin:
        round_ += 1
        alive = []
        for i, s in enumerate(socks):
            if exchange(s, b"round %d %d\n" % (round_, i)):
                alive.append(s)
            else:
                s.close()
        print("kept %d lost %d" % (len(alive), len(socks) - len(alive)), flush=True)
        socks = alive


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
