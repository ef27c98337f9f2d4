# SPDX-License-Identifier: GPL-2.0
"""TCP connections held open, and how each one ended, for the tests of
flushing and draining a real server's connections (rvsadm --flush-conns,
-d --drain).

  flush_probe.py serve PORT NAME LOG   answers NAME to each connection,
                                       then echoes what it reads; appends
                                       "reset PEER" or "eof PEER" to LOG
                                       when a connection ends
  flush_probe.py hold ADDR PORT N GO   opens N connections to ADDR:PORT,
                                       prints each server's NAME (one line
                                       each, then "held"), waits until the
                                       file GO exists, then probes each
                                       connection and prints one line per
                                       connection, "NAME RESULT": alive
                                       (its echo came back), reset, eof or
                                       silent; then "done"
A connection that was reset while held is "reset" without sending anything:
the probe first looks for a pending error or end (non-blocking read), and
only then sends.
"""
import os
import socket
import sys
import threading
import time


def serve(port, name, log):
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(("::", port))
    s.listen(64)
    lock = threading.Lock()

    def note(what, peer):
        with lock, open(log, "a") as f:
            f.write("%s %s\n" % (what, peer))

    def handle(c, peer):
        how = "eof"
        try:
            c.sendall((name + "\n").encode())
            while True:
                d = c.recv(256)
                if not d:
                    break
                c.sendall(d)
        except ConnectionResetError:
            how = "reset"
        except OSError as e:
            how = "error:%s" % e.errno
        note(how, peer.removeprefix("::ffff:"))
        c.close()

    while True:
        c, peer = s.accept()
        threading.Thread(target=handle, args=(c, peer[0]), daemon=True).start()


def probe(s):
    s.setblocking(False)
    try:
        d = s.recv(256)
        return "eof" if not d else "unexpected-data"
    except BlockingIOError:
        pass
    except ConnectionResetError:
        return "reset"
    except OSError as e:
        return "error:%d" % e.errno
    s.settimeout(3)
    try:
        s.sendall(b"ping\n")
        d = s.recv(256)
        return "alive" if d == b"ping\n" else ("eof" if not d else "garbled")
    except socket.timeout:
        return "silent"
    except (ConnectionResetError, BrokenPipeError):
        return "reset"
    except OSError as e:
        return "error:%d" % e.errno


def hold(addr, port, n, go):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    held = []
    for _ in range(n):
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect((addr, port))
        data = b""
        while not data.endswith(b"\n"):
            r = s.recv(64)
            if not r:
                raise SystemExit("closed before the name")
            data += r
        name = data.decode().strip()
        held.append((name, s))
        print(name, flush=True)
    print("held", flush=True)
    while not os.path.exists(go):
        time.sleep(0.1)
    for name, s in held:
        print(name, probe(s), flush=True)
    print("done", flush=True)


def main():
    if sys.argv[1] == "serve":
        serve(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    elif sys.argv[1] == "hold":
        hold(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
