# SPDX-License-Identifier: GPL-2.0
"""The sh and dh (source and destination hashing) schedulers' choices,
computed in userspace.

A model of IPVS's ip_vs_sh.c and ip_vs_dh.c (and so of rvs/core/sched/hashing.rs's
sh and dh): 256 buckets filled in list order (newest server first). sh
gives each server as many consecutive buckets as its weight and sends a
client to bucket hash_32(port + address, 8), port 0 unless the service has
sh-port; dh gives each server one bucket in turn (weights only say
whether a server is available) and sends a packet to bucket
hash_32(destination address, 8). A VM test can then say which server each
flow must reach, and the same test run against IPVS checks the model.
IPv4, every server available.
"""
import ipaddress

TAB_BITS = 8
GOLDEN_RATIO_32 = 0x61C88647


def hash_32(v, bits=TAB_BITS):
    return ((v * GOLDEN_RATIO_32) & 0xFFFFFFFF) >> (32 - bits)


def sh_table(servers):
    """servers: [(name, weight)], newest first. Returns the 256 buckets."""
    out, i, count = [], 0, 0
    for _ in range(1 << TAB_BITS):
        name, weight = servers[i]
        out.append(name)
        count += 1
        if count >= weight:
            i, count = (i + 1) % len(servers), 0
    return out


def dh_table(servers):
    """servers: [name], newest first. Returns the 256 buckets."""
    return [servers[i % len(servers)] for i in range(1 << TAB_BITS)]


def dh_server_of(buckets, daddr):
    return buckets[hash_32(int(ipaddress.IPv4Address(daddr)))]


def sh_server_of(buckets, caddr, cport=0):
    key = (int(ipaddress.IPv4Address(caddr)) + cport) & 0xFFFFFFFF
    return buckets[hash_32(key)]
