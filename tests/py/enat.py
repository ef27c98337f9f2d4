# SPDX-License-Identifier: GPL-2.0
"""Tools of the ENAT test (tests/vm/86-enat.sh).

  enat.py forge SRC DST DPORT SPORT KIND CLIENT CPORT
      sends one TCP SYN from SRC:SPORT to DST:DPORT (IPv4 or IPv6) over a
      raw socket, carrying an MSS option and a client address option of
      KIND (254: FullNAT's TOA, 253: ENAT's) that claims CLIENT:CPORT: what
      a director would send, from a host that is none; KIND 0: no client
      option (a director's SYN the companion must not take)
  enat.py packets PCAP
      one line per IP packet of the capture: "SRC DST PROTO" (PROTO the IP
      protocol number, IPv6's first next header)
"""
import random
import socket
import struct
import sys

import pcap
from inet import csum


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def client_option(kind, addr, port):
    """The option as a director writes it: kind, length (8 or 20), the
    client's port and address, network order."""
    a = socket.inet_pton(family(addr), addr)
    return bytes([kind, 4 + len(a)]) + struct.pack("!H", port) + a


def forge(src, dst, dport, sport, kind, client, cport):
    fam = family(dst)
    if family(src) != fam or family(client) != fam:
        sys.exit("forge: SRC, DST and CLIENT must be of one family")
    # MSS (4 bytes) then the option (8 or 20): a multiple of 4, no padding.
    opts = struct.pack("!BBH", 2, 4, 1460)
    if kind:
        opts += client_option(kind, client, cport)
    seg = struct.pack("!HHIIBBHHH", sport, dport, random.getrandbits(32), 0,
                      ((20 + len(opts)) // 4) << 4, 0x02, 64240, 0, 0) + opts
    s_ip, d_ip = socket.inet_pton(fam, src), socket.inet_pton(fam, dst)
    if fam == socket.AF_INET6:
        pseudo = s_ip + d_ip + struct.pack("!I3xB", len(seg), 6)
    else:
        pseudo = s_ip + d_ip + struct.pack("!BBH", 0, 6, len(seg))
    seg = seg[:16] + struct.pack("!H", csum(pseudo + seg)) + seg[18:]
    # The kernel writes the IP header (from SRC, routed to DST).
    s = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_TCP)
    s.bind((src, 0))
    s.sendto(seg, (dst, 0))
    s.close()


def packets(path):
    for _, src, dst, proto, _ in pcap.ip_packets(path):
        print(src, dst, proto)


def main():
    cmd, a = sys.argv[1] if len(sys.argv) > 1 else "", sys.argv[2:]
    if cmd == "forge" and len(a) == 7:
        forge(a[0], a[1], int(a[2]), int(a[3]), int(a[4]), a[5], int(a[6]))
    elif cmd == "packets" and len(a) == 1:
        packets(a[0])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
