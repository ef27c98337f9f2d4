# SPDX-License-Identifier: GPL-2.0
"""The Internet checksum (RFC 1071), for the tools that craft packets."""
import struct


def csum(data):
    """One's complement of the one's complement sum of 16-bit words."""
    if len(data) % 2:
        data += b"\0"
    t = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while t >> 16:
        t = (t & 0xFFFF) + (t >> 16)
    return ~t & 0xFFFF
