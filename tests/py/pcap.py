"""Reading pcap files (tcpdump -w) in tests: the link type and each
record's captured bytes and length on the wire. Standard library only."""

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
