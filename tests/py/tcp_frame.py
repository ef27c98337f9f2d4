# SPDX-License-Identifier: GPL-2.0
"""Sends one crafted TCP segment over AF_PACKET on IFACE to DST_MAC, in
IPv4 or (for IPv6 addresses) IPv6.

    tcp_frame.py IFACE DST_MAC SRC_IP DST_IP SPORT DPORT FLAGS [bad-csum]

FLAGS: "S" (SYN), "A" (ACK), "SA", ...; with bad-csum the TCP checksum is
wrong (the IP header's stays right). For tests that follow one segment:
whether it made a connection entry, reached a real server, was counted.
"""
import socket
import struct
import sys

from inet import csum

iface, dst_mac, src, dst = sys.argv[1:5]
sport, dport, flags = int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
bad = len(sys.argv) > 8 and sys.argv[8] == "bad-csum"
bits = sum({"F": 1, "S": 2, "R": 4, "P": 8, "A": 16}[c] for c in flags)


v6 = ":" in src
fam = socket.AF_INET6 if v6 else socket.AF_INET
s_ip, d_ip = socket.inet_pton(fam, src), socket.inet_pton(fam, dst)
ack = 1 if bits & 16 else 0
seg = struct.pack("!HHIIBBHHH", sport, dport, 1000, ack, 5 << 4, bits, 64240, 0, 0)
if v6:
    pseudo = s_ip + d_ip + struct.pack("!I3xB", len(seg), 6)
else:
    pseudo = s_ip + d_ip + struct.pack("!BBH", 0, 6, len(seg))
c = csum(pseudo + seg)
if bad:
    c ^= 0x1234
seg = seg[:16] + struct.pack("!H", c) + seg[18:]
if v6:
    hdr = struct.pack("!IHBB16s16s", 6 << 28, len(seg), 6, 64, s_ip, d_ip)
    ethertype = b"\x86\xdd"
else:
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(seg), 4242, 0, 64, 6, 0, s_ip, d_ip)
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    ethertype = b"\x08\x00"
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((iface, 0))
mac = bytes.fromhex(open("/sys/class/net/%s/address" % iface).read().strip().replace(":", ""))
s.send(bytes.fromhex(dst_mac.replace(":", "")) + mac + ethertype + hdr + seg)
