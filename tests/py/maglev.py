# SPDX-License-Identifier: GPL-2.0
"""The mh (Maglev) scheduler's table, computed in userspace.

A model of rvs/core/sched/mh.rs, which reproduces IPVS's ip_vs_mh.c on a 64-bit
kernel: a VM test can then say which real server each client must reach
(and the same test run against IPVS checks the model). Only what the tests
need: IPv4, every server available, no mh-fallback.
"""
import ipaddress
from math import gcd

M = 4093  # table slots (IPVS's default CONFIG_IP_VS_MH_TAB_INDEX)
KEY1 = 2654435761  # IPVS's fixed hsiphash keys
KEY2 = 2654446892
TAB_BITS = 6
MASK = (1 << 64) - 1


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & MASK


def hsiphash_u32(k0, k1, v):
    """hsiphash of a 4-byte value on a 64-bit kernel: SipHash-1-3, 32 bits."""
    s = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D,
         k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def rnd():
        v0, v1, v2, v3 = s
        v0 = (v0 + v1) & MASK; v1 = _rotl(v1, 13); v1 ^= v0; v0 = _rotl(v0, 32)
        v2 = (v2 + v3) & MASK; v3 = _rotl(v3, 16); v3 ^= v2
        v0 = (v0 + v3) & MASK; v3 = _rotl(v3, 21); v3 ^= v0
        v2 = (v2 + v1) & MASK; v1 = _rotl(v1, 17); v1 ^= v2; v2 = _rotl(v2, 32)
        s[:] = [v0, v1, v2, v3]

    b = (4 << 56) | v
    s[3] ^= b
    rnd()
    s[0] ^= b
    s[2] ^= 0xFF
    rnd(); rnd(); rnd()
    return (s[0] ^ s[1] ^ s[2] ^ s[3]) & 0xFFFFFFFF


def _slot1(v):
    return hsiphash_u32(KEY1, KEY1, v & 0xFFFFFFFF) % M


def _skip(v):
    return hsiphash_u32(KEY2, KEY2, v & 0xFFFFFFFF) % (M - 1) + 1


def _fold(addr):
    return int(ipaddress.IPv4Address(addr))


def table(servers):
    """servers: [(addr, port, weight)] in the service's list order (newest
    first, as ipvsadm -L shows them). Returns the slot -> list index table."""
    keys = [(port + _fold(a)) & 0xFFFFFFFF for a, port, _ in servers]
    weights = [w for _, _, w in servers]
    lookup = [None] * M
    g = 0
    for w in weights:
        if w > 0:
            g = gcd(g, w)
    if g == 0:
        return lookup
    shift = max((max(weights) // g).bit_length() - TAB_BITS, 0)
    turns = [((w // g) >> shift) or (1 if w else 0) for w in weights]
    perm = [_slot1(k) for k in keys]
    filled = 0
    for _ in range(M):
        for i, k in enumerate(keys):
            step = _skip(k)
            for _ in range(turns[i]):
                c = perm[i]
                while lookup[c] is not None:
                    c = (c + step) % M
                perm[i] = c
                lookup[c] = i
                filled += 1
                if filled >= M:
                    return lookup
    return lookup


def server_of(lookup, caddr, cport=0):
    """The list index client caddr (cport with mh-port) maps to, or None."""
    return lookup[_slot1(cport + _fold(caddr))]
