# SPDX-License-Identifier: GPL-2.0
"""Connections that stay open, for tests of the load-counting schedulers.

  held.py serve PORT NAME      answers NAME to every TCP connection and keeps
                               it open until the client ends it
  held.py connect ADDR PORT N  opens N connections one after the other, each
                               held open once it has read its server's name
                               (so the director has seen it ESTABLISHED:
                               an active connection), prints the names, one
                               per connection ("REFUSED" when the director
                               turned one away), then resets them all
  held.py hold ADDR PORT N     the same, but keeps them open after printing
                               the names, until its stdin ends or it is
                               killed (load that later connections see)

lc, wlc, sed, nq and ovf choose by the number of active connections; with
every earlier connection held, each choice is exact and a model
(load_model.py) can say it in advance.
"""
import socket
import struct
import sys
import threading


def serve(port, name):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(256)
    msg = (name + "\n").encode()

    def hold(c):
        try:
            c.sendall(msg)
            while c.recv(256):
                pass
        except OSError:
            pass
        c.close()

    while True:
        c, _ = s.accept()
        threading.Thread(target=hold, args=(c,), daemon=True).start()


def connect(addr, port, n, hold=False):
    socks, names = [], []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.connect((addr, port))
            data = b""
            while not data.endswith(b"\n"):
                r = s.recv(64)
                if not r:
                    raise OSError("closed before the name")
                data += r
            names.append(data.decode().strip())
            socks.append(s)
        except ConnectionRefusedError:
            names.append("REFUSED")
            s.close()
        except OSError as e:
            names.append("ERR:" + type(e).__name__)
            s.close()
    print(" ".join(names), flush=True)
    if hold:
        sys.stdin.read()
    for s in socks:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(int(sys.argv[2]), sys.argv[3])
    else:
        connect(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[1] == "hold")
