"""moby/ipvs's requests to the "IPVS" family, byte for byte as it builds
them (netlink_linux.go, ipvs.go): Docker swarm and kube-proxy drive IPVS
through it. Every request carries NLM_F_ACK; nested attributes have no
NLA_F_NESTED flag; IPv4 addresses are 4 bytes; real servers carry no
address family; a service dump carries an empty SERVICE attribute; replies
are read as moby reads them (the first top-level attribute only, the
32-bit STATS, the family of a real server guessed from its address when
the reply has none). Runs against whichever engine owns "IPVS": the
kernel's IPVS or rvs with ipvs_compat=1. Prints one line a step; exits 1
on the first difference."""

import errno
import socket
import struct
import sys

from rvsnl import NLM_F_ACK, NLM_F_REQUEST, Genl, attr, u16, u32

NLM_F_DUMP = 0x300
# IPVS's numbers (include/uapi/linux/ip_vs.h), as moby/ipvs spells them.
CMD_NEW_SERVICE, CMD_SET_SERVICE, CMD_DEL_SERVICE, CMD_GET_SERVICE = 1, 2, 3, 4
CMD_NEW_DEST, CMD_SET_DEST, CMD_DEL_DEST, CMD_GET_DEST = 5, 6, 7, 8
CMD_SET_CONFIG, CMD_GET_CONFIG, CMD_FLUSH = 12, 13, 17
ATTR_SERVICE, ATTR_DEST = 1, 2
ATTR_TIMEOUT_TCP, ATTR_TIMEOUT_TCP_FIN, ATTR_TIMEOUT_UDP = 4, 5, 6
SVC_AF, SVC_PROTOCOL, SVC_ADDR, SVC_PORT, SVC_FWMARK = 1, 2, 3, 4, 5
SVC_SCHED, SVC_FLAGS, SVC_TIMEOUT, SVC_NETMASK, SVC_STATS = 6, 7, 8, 9, 10
DEST_ADDR, DEST_PORT, DEST_FWD, DEST_WEIGHT, DEST_UTH, DEST_LTH = 1, 2, 3, 4, 5, 6
DEST_ACTIVE, DEST_INACT, DEST_STATS, DEST_AF = 7, 8, 10, 11
STATS_CONNS = 1
F_HASHED = 0x2

nl = Genl(b"IPVS")


def rta(kind, payload):
    """nl.NewRtAttr: no NLA_F_NESTED, even for nested attributes."""
    return attr(kind, payload)


def raw_ip(a):
    """rawIPData: 4 bytes for IPv4, 16 for IPv6."""
    return socket.inet_pton(socket.AF_INET6 if ":" in a else socket.AF_INET, a)


def fill_service(af, proto=6, addr=None, port=0, fwmark=0, sched="rr", flags=0, netmask=0xFFFFFFFF):
    b = rta(SVC_AF, u16(af))
    if fwmark:
        b += rta(SVC_FWMARK, u32(fwmark))
    else:
        b += rta(SVC_PROTOCOL, u16(proto)) + rta(SVC_ADDR, raw_ip(addr)) + rta(SVC_PORT, struct.pack(">H", port))
    b += rta(SVC_SCHED, sched.encode() + b"\0")
    b += rta(SVC_FLAGS, u32(flags) + u32(0xFFFFFFFF))
    b += rta(SVC_TIMEOUT, u32(0)) + rta(SVC_NETMASK, u32(netmask))
    return rta(ATTR_SERVICE, b)


def fill_dest(addr, port, fwd=0, weight=1):
    b = rta(DEST_ADDR, raw_ip(addr)) + rta(DEST_PORT, struct.pack(">H", port))
    b += rta(DEST_FWD, u32(fwd)) + rta(DEST_WEIGHT, u32(weight))
    b += rta(DEST_UTH, u32(0)) + rta(DEST_LTH, u32(0))
    return rta(ATTR_DEST, b)


def attrs(buf):
    out, off = [], 0
    while off + 4 <= len(buf):
        ln, kind = struct.unpack_from("=HH", buf, off)
        if ln < 4:
            break
        out.append((kind & 0x3FFF, buf[off + 4:off + ln]))
        off += (ln + 3) & ~3
    return out


def first_nest(reply):
    """moby's parseService/parseDestination: the first top-level attribute."""
    top = attrs(reply[4:])
    if not top:
        die("a reply without attributes")
    return dict(attrs(top[0][1]))


def request(cmd, *parts, dump=False, want=0):
    flags = NLM_F_REQUEST | NLM_F_ACK | (NLM_F_DUMP if dump else 0)
    err, text, replies = nl.request(nl.family, cmd, b"".join(parts), version=1, flags=flags)
    if err != want:
        die("command %d: errno %d (%s), expected %d" % (cmd, err, text, want))
    return replies


def die(msg):
    print("# FAIL: " + msg)
    sys.exit(1)


def check(what, got, want):
    print("# %-58s %s" % (what, got))
    if got != want:
        die("%s: expected %r, got %r" % (what, want, got))


def get_services():
    """GetServices: a dump carrying an empty SERVICE attribute."""
    return [first_nest(r) for r in request(CMD_GET_SERVICE, rta(ATTR_SERVICE, b""), dump=True)]


def ip_of(d):
    a = d.get(SVC_ADDR, b"")
    af = struct.unpack("=H", d[SVC_AF])[0]
    return socket.inet_ntop(socket.AF_INET if af == 2 else socket.AF_INET6, a[:4] if af == 2 else a[:16])


request(CMD_FLUSH)

# kube-proxy's start-up probe: add 198.51.100.0:20000, find it in a dump, delete it.
probe = fill_service(2, 6, "198.51.100.0", 20000)
request(CMD_NEW_SERVICE, probe)
found = [s for s in get_services() if SVC_ADDR in s and ip_of(s) == "198.51.100.0"]
check("kube-proxy probe service in the dump", len(found), 1)
s = found[0]
check("its address, 16 bytes in the reply", len(s[SVC_ADDR]), 16)
check("its port", struct.unpack(">H", s[SVC_PORT])[0], 20000)
check("its flags include HASHED", struct.unpack_from("=I", s[SVC_FLAGS])[0] & F_HASHED, F_HASHED)
check("its netmask", struct.unpack("=I", s[SVC_NETMASK])[0], 0xFFFFFFFF)
check("its scheduler", s[SVC_SCHED].rstrip(b"\0"), b"rr")
check("its 32-bit STATS connections", struct.unpack("=I", dict(attrs(s[SVC_STATS]))[STATS_CONNS])[0], 0)
request(CMD_DEL_SERVICE, probe)
check("probe gone after DelService", [ip_of(s) for s in get_services() if SVC_ADDR in s], [])

# kube-proxy's IPv6 service (netmask 128) with a real server.
v6 = fill_service(10, 6, "2001:db8:100::5", 443, netmask=128)
request(CMD_NEW_SERVICE, v6)
request(CMD_NEW_DEST, v6, fill_dest("2001:db8:1::5", 8443, fwd=0, weight=3))
d = [first_nest(r) for r in request(CMD_GET_DEST, v6, dump=True)]
check("IPv6 service's real servers", len(d), 1)
check("its weight", struct.unpack("=I", d[0][DEST_WEIGHT])[0], 3)
check("its port", struct.unpack(">H", d[0][DEST_PORT])[0], 8443)
check("its address family", struct.unpack("=H", d[0][DEST_AF])[0], 10)

# Docker swarm: a firewall-mark service, read back with a plain GetService.
fwm = fill_service(2, fwmark=257, sched="rr")
request(CMD_NEW_SERVICE, fwm)
r = request(CMD_GET_SERVICE, fwm)
check("plain GetService of the fwmark service: replies", len(r), 1)
check("its firewall mark", struct.unpack("=I", first_nest(r[0])[SVC_FWMARK])[0], 257)
for ip in ("10.0.1.7", "10.0.1.8"):
    request(CMD_NEW_DEST, fwm, fill_dest(ip, 0, fwd=0, weight=1))
request(CMD_SET_DEST, fwm, fill_dest("10.0.1.8", 0, fwd=0, weight=0))
d = sorted((first_nest(r) for r in request(CMD_GET_DEST, fwm, dump=True)), key=lambda x: x[DEST_ADDR])
check("fwmark service's real servers", len(d), 2)
for x in d:
    a = x[DEST_ADDR]
    # moby guesses the family from the bytes when ADDR_FAMILY is absent.
    check("a real server address: 16 bytes, IPv4 in the first 4", (len(a), a[4:]), (16, b"\0" * 12))
check("weights after UpdateDestination", [struct.unpack("=I", x[DEST_WEIGHT])[0] for x in d], [1, 0])
check("ActiveConn, InActConn (graceful termination polls them)",
      [struct.unpack("=I", x[DEST_ACTIVE])[0] + struct.unpack("=I", x[DEST_INACT])[0] for x in d], [0, 0])
request(CMD_DEL_DEST, fwm, fill_dest("10.0.1.8", 0))
check("after DelDestination", len(request(CMD_GET_DEST, fwm, dump=True)), 1)
request(CMD_DEL_DEST, fwm, fill_dest("10.0.1.8", 0), want=errno.ENOENT)  # gone
request(CMD_NEW_SERVICE, fwm, want=errno.EEXIST)

# GetConfig / SetConfig (moby's timeouts).
request(CMD_SET_CONFIG, rta(ATTR_TIMEOUT_TCP, u32(600)), rta(ATTR_TIMEOUT_TCP_FIN, u32(60)),
        rta(ATTR_TIMEOUT_UDP, u32(90)))
c = dict(attrs(request(CMD_GET_CONFIG)[0][4:]))
check("timeouts after SetConfig", [struct.unpack("=I", c[k])[0] for k in (4, 5, 6)], [600, 60, 90])

request(CMD_FLUSH)
check("services after Flush", get_services(), [])
print("# moby/ipvs requests answered as IPVS answers them")
