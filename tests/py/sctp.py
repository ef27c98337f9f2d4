# SPDX-License-Identifier: GPL-2.0
"""SCTP endpoints for the SCTP service tests (tests/vm/72-sctp.sh).

  sctp.py serve ADDR PORT NAME    answers NAME to every association on
                                  ADDR:PORT, then shuts it down
  sctp.py names BIND ADDR PORT N  makes N associations one after the other
                                  from BIND to ADDR:PORT and prints one line
                                  per attempt: the server's answer, or
                                  ERR:<reason>
  sctp.py probe ADDR PORT good|bad
                                  sends ADDR one SCTP INIT from a raw socket
                                  (nobody listening on PORT), its CRC32c
                                  right or off by one bit; prints ABORT if
                                  ADDR's SCTP stack answered with an ABORT
                                  within 2 s, else "none"
  sctp.py crccheck PCAP MIN       checks the CRC32c of every SCTP packet in
                                  PCAP (an Ethernet capture); prints how many
                                  and the first wrong ones; fails if any is
                                  wrong or there are fewer than MIN

ADDR and BIND are IPv4 or IPv6 addresses. Servers and clients bind one
address: an endpoint bound to several lists them all in its INIT or
INIT-ACK, and the peer would then also reach it at an address that is not
the VIP (around the director).
"""
import socket
import struct
import sys
import time

import pcap


def _table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 & -(c & 1))
        t.append(c)
    return t


_T = _table()


def crc32c(data):
    """CRC32c (Castagnoli), as SCTP computes it (RFC 4960, appendix B)."""
    crc = 0xFFFFFFFF
    for b in data:
        crc = _T[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def serve(addr, port, name):
    s = socket.socket(family(addr), socket.SOCK_STREAM, socket.IPPROTO_SCTP)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(128)
    msg = (name + "\n").encode()
    while True:
        c, _ = s.accept()
        try:
            c.sendall(msg)
        except OSError:
            pass
        c.close()


def names(bind, addr, port, n):
    for _ in range(n):
        s = socket.socket(family(addr), socket.SOCK_STREAM, socket.IPPROTO_SCTP)
        try:
            s.settimeout(5)
            s.bind((bind, 0))
            s.connect((addr, port))
            data = b""
            while True:
                d = s.recv(256)
                if not d:
                    break
                data += d
            print(data.decode(errors="replace").strip() or "ERR:empty")
        except socket.timeout:
            print("ERR:timeout")
        except OSError as e:
            print("ERR:" + (type(e).__name__ if type(e) is not OSError else "errno%d" % (e.errno or 0)))
        finally:
            s.close()
        sys.stdout.flush()


def probe(addr, port, good):
    sport = 40000 + (port if good else port + 1)
    # INIT: type 1, flags 0, length 20, initiate tag, a_rwnd, outbound and
    # inbound streams, initial TSN; the common header's tag 0.
    init = struct.pack("!BBHIIHHI", 1, 0, 20, 0x1A2B3C4D, 65536, 1, 1, 1)
    crc = crc32c(struct.pack("!HHII", sport, port, 0, 0) + init)
    if not good:
        crc ^= 1
    # The CRC goes in little-endian, as Linux's sctp_compute_cksum stores it.
    pkt = struct.pack("!HHI", sport, port, 0) + struct.pack("<I", crc) + init
    fam = family(addr)
    s = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_SCTP)
    s.sendto(pkt, (addr, 0))
    end = time.monotonic() + 2
    while True:
        left = end - time.monotonic()
        if left <= 0:
            print("none")
            return
        s.settimeout(left)
        try:
            data, peer = s.recvfrom(2048)
        except socket.timeout:
            continue
        # IPv4 raw sockets see the IP header, IPv6 ones do not.
        off = (data[0] & 0xF) * 4 if fam == socket.AF_INET else 0
        if peer[0] != addr or len(data) < off + 16:
            continue
        p_sport, p_dport = struct.unpack("!HH", data[off:off + 4])
        if (p_sport, p_dport) == (port, sport) and data[off + 12] == 6:
            print("ABORT")
            return


def crccheck(path, least):
    """Checks the CRC32c of every SCTP packet in a pcap file (Ethernet)."""
    link, recs = pcap.records(path)
    if link != 1:
        sys.exit("%s: not an Ethernet capture" % path)
    n, bad = 0, []
    for pkt, wirelen in recs:
        caplen = len(pkt)
        if caplen != wirelen:
            sys.exit("%s: a packet captured truncated (%d of %d bytes)" % (path, caplen, wirelen))
        eth = struct.unpack("!H", pkt[12:14])[0]
        if eth == 0x0800 and pkt[23] == 132:
            ihl = (pkt[14] & 0xF) * 4
            ip = pkt[14:14 + struct.unpack("!H", pkt[16:18])[0]]
            sctp, src, dst = ip[ihl:], socket.inet_ntop(socket.AF_INET, ip[12:16]), socket.inet_ntop(socket.AF_INET, ip[16:20])
        elif eth == 0x86DD and pkt[20] == 132:
            ip = pkt[14:54 + struct.unpack("!H", pkt[18:20])[0]]
            sctp, src, dst = ip[40:], socket.inet_ntop(socket.AF_INET6, ip[8:24]), socket.inet_ntop(socket.AF_INET6, ip[24:40])
        else:
            continue
        n += 1
        got = struct.unpack("<I", sctp[8:12])[0]
        want = crc32c(sctp[:8] + b"\0\0\0\0" + sctp[12:])
        if got != want:
            sport, dport = struct.unpack("!HH", sctp[:4])
            bad.append("%s:%d > %s:%d chunk %d len %d: CRC %08x, should be %08x" %
                       (src, sport, dst, dport, sctp[12] if len(sctp) > 12 else -1, len(sctp), got, want))
    print("%d SCTP packets, %d with a wrong CRC" % (n, len(bad)))
    for b in bad[:5]:
        print("  " + b)
    return n >= least and not bad


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "serve":
        serve(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif cmd == "names":
        names(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif cmd == "crccheck":
        sys.exit(0 if crccheck(sys.argv[2], int(sys.argv[3])) else 1)
    elif cmd == "probe":
        probe(sys.argv[2], int(sys.argv[3]), sys.argv[4] == "good")
    else:
        sys.exit("unknown command " + cmd)
