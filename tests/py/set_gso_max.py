"""Sets a device's IPv4 GSO and GRO size limits (IFLA_GSO_IPV4_MAX_SIZE,
IFLA_GRO_IPV4_MAX_SIZE, and the generic IFLA_GSO_MAX_SIZE), which this
machine's iproute2 (6.1) cannot: the way to turn IPv4 BIG TCP on.

usage: set_gso_max.py DEVICE BYTES   (in the device's namespace)
"""
import socket
import struct
import sys

RTM_NEWLINK, NLM_F_REQUEST, NLM_F_ACK = 16, 1, 4
IFLA_GSO_MAX_SIZE, IFLA_GSO_IPV4_MAX_SIZE, IFLA_GRO_IPV4_MAX_SIZE = 41, 63, 64


def attr(kind, value):
    return struct.pack("=HHI", 8, kind, value)


def main():
    dev, size = sys.argv[1], int(sys.argv[2])
    index = socket.if_nametoindex(dev)
    body = struct.pack("=BxHiII", socket.AF_UNSPEC, 0, index, 0, 0)
    body += attr(IFLA_GSO_MAX_SIZE, size) + attr(IFLA_GSO_IPV4_MAX_SIZE, size)
    body += attr(IFLA_GRO_IPV4_MAX_SIZE, size)
    msg = struct.pack("=IHHII", 16 + len(body), RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, 1, 0) + body
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    s.send(msg)
    reply = s.recv(4096)
    err = struct.unpack_from("=i", reply, 16)[0]
    if err:
        sys.exit("RTM_NEWLINK %s gso/gro max %d: errno %d" % (dev, size, -err))


main()
