# SPDX-License-Identifier: GPL-2.0
"""A TCP connection that pauses, for the sloppy_tcp test.

  resume.py ADDR PORT   connects to an echo server, sends a line and reads
                        it back, prints "open", then waits for a line on
                        stdin; sends a second line and prints "echoed" if
                        it comes back within 5 s, "reset" if the
                        connection is reset, "timeout" otherwise.

Between the two lines the director may forget the connection (its entry
times out); the second line is then a mid-stream segment, no SYN.
"""
import socket
import sys


def exchange(s, line):
    s.sendall(line)
    data = b""
    while not data.endswith(b"\n"):
        r = s.recv(64)
        if not r:
            raise ConnectionResetError("closed")
        data += r
    return data == line


def main(addr, port):
    s = socket.create_connection((addr, port), timeout=5)
    if not exchange(s, b"one\n"):
        print("garbled", flush=True)
        return
    print("open", flush=True)
    sys.stdin.readline()
    try:
        print("echoed" if exchange(s, b"two\n") else "garbled", flush=True)
    except ConnectionResetError:
        print("reset", flush=True)
    except socket.timeout:
        print("timeout", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
