"""Reading pcap files (tcpdump -w) in tests: the link type and each
record's captured bytes and length on the wire, or each record's IP
packet with its addresses. Standard library only."""

import socket
import struct
import sys


def records(path):
    """(link type, [(captured bytes, length on the wire), ...]) of the pcap
    file at path; exits with a message if it is not one."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        sys.exit("%s: no pcap header (%d bytes)" % (path, len(data)))
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        e = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        e = ">"
    else:
        sys.exit("%s: not a pcap file" % path)
    link = struct.unpack(e + "I", data[20:24])[0]
    out, off = [], 24
    while off + 16 <= len(data):
        caplen, wirelen = struct.unpack(e + "II", data[off + 8:off + 16])
        out.append((data[off + 16:off + 16 + caplen], wirelen))
        off += 16 + caplen
    return link, out


def ip_packets(path):
    """(family, source, destination, protocol, payload) of each IPv4 or IPv6
    packet of the pcap file at path (Ethernet, Linux cooked v1 or v2, or
    raw IP; other records skipped): addresses as text, the payload cut to
    the IP header's length. IPv6 extension headers are not followed (the
    protocol is then the first next header)."""
    link, recs = records(path)
    for pkt, _ in recs:
        if link == 1:  # Ethernet
            eth, ip = struct.unpack("!H", pkt[12:14])[0], pkt[14:]
        elif link == 113:  # Linux cooked (SLL)
            eth, ip = struct.unpack("!H", pkt[14:16])[0], pkt[16:]
        elif link == 276:  # Linux cooked v2 (SLL2)
            eth, ip = struct.unpack("!H", pkt[0:2])[0], pkt[20:]
        elif link in (12, 101):  # raw IP
            eth, ip = (0x86DD if pkt and pkt[0] >> 4 == 6 else 0x0800), pkt
        else:
            sys.exit("%s: link type %d not handled" % (path, link))
        if eth == 0x0800 and len(ip) >= 20:
            ihl = (ip[0] & 0xF) * 4
            end = struct.unpack("!H", ip[2:4])[0]
            yield (socket.AF_INET, socket.inet_ntop(socket.AF_INET, ip[12:16]),
                   socket.inet_ntop(socket.AF_INET, ip[16:20]), ip[9], ip[ihl:end])
        elif eth == 0x86DD and len(ip) >= 40:
            yield (socket.AF_INET6, socket.inet_ntop(socket.AF_INET6, ip[8:24]),
                   socket.inet_ntop(socket.AF_INET6, ip[24:40]), ip[6],
                   ip[40:40 + struct.unpack("!H", ip[4:6])[0]])
