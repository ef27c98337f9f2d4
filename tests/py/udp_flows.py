"""Opens N UDP flows to a VIP as fast as Python can: one datagram each from
distinct (source address, source port) pairs, sent through a raw IPv4
socket so no socket per port is needed. Usage:
    udp_flows.py VIP PORT N SRC1 [SRC2 ...]
Source ports 1024..65535 are used for each source address in turn."""

import socket
import struct
import sys

vip, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
srcs = sys.argv[4:]
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
dst = socket.inet_aton(vip)
payload = b"x"
sent = 0
for src in srcs:
    saddr = socket.inet_aton(src)
    for sport in range(1024, 65536):
        if sent == n:
            break
        # UDP checksum 0 (none); the kernel fills the IP checksum and ID.
        udp = struct.pack("!HHHH", sport, port, 8 + len(payload), 0) + payload
        iph = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, saddr, dst)
        s.sendto(iph + udp, (vip, 0))
        sent += 1
print(sent)
