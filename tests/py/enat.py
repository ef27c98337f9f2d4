# SPDX-License-Identifier: GPL-2.0
"""Tools of tests/vm/86-enat.sh.

  enat.py forge SRC DST PORT KIND CLIENT CPORT SPORT
      sends one TCP SYN from SRC:SPORT to DST:PORT carrying a client address
      option of KIND (254: FullNAT's TOA, 253: ENAT's): CLIENT:CPORT, what a
      director would claim. A raw socket: the host sending it is not a
      director, which is the point (the companion must ignore it).
  enat.py option KIND ADDR PORT
      prints that option's bytes in hex (kind, length 8 or 20, port, address),
      as fullnat.py segments prints options.
"""
import os
import random
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inet import csum  # noqa: E402


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def option(kind, addr, port):
    a = socket.inet_pton(family(addr), addr)
    return bytes([kind, 4 + len(a)]) + struct.pack("!H", port) + a


def forge(src, dst, port, kind, client, cport, sport):
    af = family(dst)
    # MSS, then the option (a multiple of 4 bytes: 8 or 20).
    opts = struct.pack("!BBH", 2, 4, 1460) + option(kind, client, cport)
    hlen = 20 + len(opts)
    seq = random.getrandbits(32)
    tcp = struct.pack("!HHIIBBHHH", sport, port, seq, 0, (hlen // 4) << 4, 0x02, 64240, 0, 0) + opts
    s = socket.socket(af, socket.SOCK_RAW, socket.IPPROTO_TCP)
    s.bind((src, 0))
    if af == socket.AF_INET:
        pseudo = socket.inet_pton(af, src) + socket.inet_pton(af, dst) + struct.pack("!BBH", 0, 6, len(tcp))
        c = csum(pseudo + tcp)
        tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
    else:
        # The kernel fills the checksum at offset 16 (IPV6_CHECKSUM).
        s.setsockopt(socket.IPPROTO_IPV6, 7, 16)
    s.sendto(tcp, (dst, 0))
    s.close()


def main():
    cmd = sys.argv[1]
    if cmd == "forge":
        src, dst, port, kind, client, cport, sport = sys.argv[2:9]
        forge(src, dst, int(port), int(kind), client, int(cport), int(sport))
    elif cmd == "option":
        kind, addr, port = sys.argv[2:5]
        print(option(int(kind), addr, int(port)).hex())
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
