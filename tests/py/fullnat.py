# SPDX-License-Identifier: GPL-2.0
"""Endpoints and a capture reader for the FullNAT test (tests/vm/79-fullnat.sh).

  fullnat.py serve PORT            TCP and UDP on PORT (both families): answers
                                   each connection or datagram with the
                                   address and port it came from, "ADDR PORT"
                                   (what the real server sees as its client);
                                   keeps a TCP connection open until the
                                   client ends it
  fullnat.py ask tcp|udp ADDR PORT [SRC [SRCPORT]]
                                   one connection or datagram to ADDR:PORT
                                   (from SRC:SRCPORT if given); prints the
                                   answer's first line, or ERR:<reason>
                                   (ERR:timeout after 3 s)
  fullnat.py hold ADDR PORT GO SRC:SRCPORT...
                                   one TCP connection to ADDR:PORT from each
                                   SRC:SRCPORT (port 0: any), one after the
                                   other; prints each answer, then "held";
                                   keeps them open until the file GO exists
                                   (at most 120 s), then closes them
  fullnat.py segments PCAP         one line per TCP segment of the capture
                                   (IPv4 or IPv6; Ethernet, Linux cooked or
                                   raw IP):
                                   "SRC SPORT DST DPORT FLAGS LEN OPTIONS",
                                   FLAGS of S F R P A, LEN the payload's
                                   length, OPTIONS each TCP option but NOP
                                   and EOL as its bytes in hex (kind, length,
                                   data), comma-separated, "-" if none
ADDR, SRC: IPv4 or IPv6 addresses.
"""
import os
import socket
import struct
import sys
import threading
import time

import pcap


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def peer_line(peer):
    return ("%s %d\n" % (peer[0].removeprefix("::ffff:"), peer[1])).encode()


def serve(port):
    t = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    t.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    t.bind(("::", port))
    t.listen(64)
    u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    u.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    u.bind(("::", port))

    def udp():
        while True:
            _, peer = u.recvfrom(2048)
            u.sendto(peer_line(peer), peer)

    def hold(c, peer):
        try:
            c.sendall(peer_line(peer))
            while c.recv(256):
                pass
        except OSError:
            pass
        c.close()

    threading.Thread(target=udp, daemon=True).start()
    while True:
        c, peer = t.accept()
        threading.Thread(target=hold, args=(c, peer), daemon=True).start()


def read_line(s):
    data = b""
    while not data.endswith(b"\n"):
        r = s.recv(256)
        if not r:
            break
        data += r
    return data.decode(errors="replace").strip() or "ERR:empty"


def ask(proto, addr, port, src=None, sport=0):
    s = socket.socket(family(addr), socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM)
    s.settimeout(3)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if src is not None:
            s.bind((src, sport))
        s.connect((addr, port))
        if proto == "udp":
            s.send(b"who\n")
        print(read_line(s))
    except socket.timeout:
        print("ERR:timeout")
    except OSError as e:
        print("ERR:" + type(e).__name__)
    finally:
        s.close()


def hold(addr, port, go, srcs):
    held = []
    for src in srcs:
        a, p = src.rsplit(":", 1)
        s = socket.socket(family(addr), socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.settimeout(5)
        try:
            s.bind((a.strip("[]"), int(p)))
            s.connect((addr, port))
            print(read_line(s), flush=True)
        except socket.timeout:
            print("ERR:timeout", flush=True)
        except OSError as e:
            print("ERR:" + type(e).__name__, flush=True)
        held.append(s)
    print("held", flush=True)
    end = time.monotonic() + 120
    while not os.path.exists(go) and time.monotonic() < end:
        time.sleep(0.1)
    for s in held:
        s.close()


def segments(path):
    for _, src, dst, proto, tcp in pcap.ip_packets(path):
        if proto != 6:
            continue
        if len(tcp) < 20:
            continue
        sport, dport, _, _, doff_flags = struct.unpack("!HHIIH", tcp[:14])
        hlen = (doff_flags >> 12) * 4
        flags = "".join(c for c, bit in (("S", 2), ("F", 1), ("R", 4), ("P", 8), ("A", 16)) if doff_flags & bit)
        opts, i, raw = [], 0, tcp[20:hlen]
        while i < len(raw):
            kind = raw[i]
            if kind == 0:
                break
            if kind == 1:
                i += 1
                continue
            if i + 1 >= len(raw) or raw[i + 1] < 2:
                opts.append(raw[i:].hex() + "(bad)")
                break
            opts.append(raw[i:i + raw[i + 1]].hex())
            i += raw[i + 1]
        print(src, sport, dst, dport, flags or "-", len(tcp) - hlen, ",".join(opts) or "-")


def main():
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == "serve":
        serve(int(a[0]))
    elif cmd == "ask":
        ask(a[0], a[1], int(a[2]), a[3] if len(a) > 3 else None, int(a[4]) if len(a) > 4 else 0)
    elif cmd == "hold":
        hold(a[0], int(a[1]), a[2], a[3:])
    elif cmd == "segments":
        segments(a[0])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
