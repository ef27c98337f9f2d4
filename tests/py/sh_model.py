# SPDX-License-Identifier: GPL-2.0
"""The sh (source hashing) scheduler's choice, computed in userspace.

A model of IPVS's ip_vs_sh.c (and so of rvs/core/sched.rs's sh): 256
buckets filled in list order (newest server first), each server taking as
many consecutive buckets as its weight; a client goes to bucket
hash_32(port + address, 8), port 0 unless the service has sh-port. A VM
test can then say which server each client must reach, and the same test
run against IPVS checks the model. IPv4, every server available.
"""
import ipaddress

TAB_BITS = 8
GOLDEN_RATIO_32 = 0x61C88647


def hash_32(v, bits=TAB_BITS):
    return ((v * GOLDEN_RATIO_32) & 0xFFFFFFFF) >> (32 - bits)


def table(servers):
    """servers: [(name, weight)], newest first. Returns the 256 buckets."""
    out, i, count = [], 0, 0
    for _ in range(1 << TAB_BITS):
        name, weight = servers[i]
        out.append(name)
        count += 1
        if count >= weight:
            i, count = (i + 1) % len(servers), 0
    return out


def server_of(buckets, caddr, cport=0):
    key = (int(ipaddress.IPv4Address(caddr)) + cport) & 0xFFFFFFFF
    return buckets[hash_32(key)]
