"""Every malformed or invalid RVS request gets the precise errno and an
extended-ACK message from the kernel itself (rvsadm's own checks are
bypassed by building the messages here), and leaves the table unchanged."""

import errno
import sys

from rvsnl import Genl, U, addr_any, attr, be16, dest, svc, u16, u32

nl = Genl()
failures = []


def case(name, want_errno, want_text, cmd, *attrs):
    err, text, _ = nl.rvs(cmd, *attrs)
    ok = err == want_errno and want_text.lower() in text.lower()
    print("# %-44s errno=%-3d %-15s %r" % (name, err, errno.errorcode.get(err, "0"), text))
    if not ok:
        failures.append("%s: want errno %d with %r, got %d %r" % (name, want_errno, want_text, err, text))


nl.rvs("RVS_CMD_FLUSH")
case("valid service", 0, "", "RVS_CMD_NEW_SERVICE", svc())
case("valid real server", 0, "", "RVS_CMD_NEW_DEST", svc(sched=None, flags=False), dest(fwd=0))
case("duplicate service", errno.EEXIST, "already exists", "RVS_CMD_NEW_SERVICE", svc())
case("duplicate real server", errno.EEXIST, "already exists", "RVS_CMD_NEW_DEST", svc(), dest())
case("unknown scheduler", errno.ENOENT, "unknown scheduler", "RVS_CMD_NEW_SERVICE", svc(port=81, sched=b"nosuch\0"))
case("port 0", errno.EINVAL, "port", "RVS_CMD_NEW_SERVICE", svc(port=0))
case("bad address family", errno.EAFNOSUPPORT, "", "RVS_CMD_NEW_SERVICE", svc(af=7))
V6 = "2001:db8::1"
case("valid IPv6 service", 0, "", "RVS_CMD_NEW_SERVICE", svc(af=10, addr=V6))
case("valid IPv6 real server", 0, "", "RVS_CMD_NEW_DEST", svc(af=10, addr=V6), dest(addr="2001:db8::10"))
case("IPv4 NAT server of IPv6 service", errno.EINVAL, "tunnelling", "RVS_CMD_NEW_DEST", svc(af=10, addr=V6), dest(addr="10.0.1.1", fwd=0))
case("IPv4 TUN server of IPv6 service", 0, "", "RVS_CMD_NEW_DEST", svc(af=10, addr=V6), dest(addr="10.0.1.1", fwd=2))
case("IPv6 DR server of IPv4 service", errno.EINVAL, "tunnelling", "RVS_CMD_NEW_DEST", svc(), dest(addr="2001:db8::11", fwd=3))
case("link-local IPv6 real server", errno.EINVAL, "unicast", "RVS_CMD_NEW_DEST", svc(af=10, addr=V6), dest(addr="fe80::1"))
case("multicast IPv6 real server", errno.EINVAL, "unicast", "RVS_CMD_NEW_DEST", svc(af=10, addr=V6), dest(addr="ff02::1"))
case("IPv6 netmask 129", errno.EINVAL, "prefix length", "RVS_CMD_NEW_SERVICE", svc(af=10, addr="2001:db8::2", netmask=129))
case("IPv6 address of 4 bytes", errno.EINVAL, "length", "RVS_CMD_NEW_SERVICE", svc(af=10, raw_addr=b"\x20\x01\0\0"))
case("protocol ICMP", errno.EPROTONOSUPPORT, "TCP, UDP or SCTP", "RVS_CMD_NEW_SERVICE", svc(proto=1, port=82))
case("address of 5 bytes", errno.EINVAL, "length", "RVS_CMD_NEW_SERVICE", svc(port=83, raw_addr=b"\x0a\0\0\x01\0"))
case("missing service attribute", errno.EINVAL, "service attribute missing", "RVS_CMD_NEW_SERVICE")
case("missing scheduler", errno.EINVAL, "scheduler", "RVS_CMD_NEW_SERVICE", svc(port=84, sched=None))
case("unknown nested attribute", errno.EINVAL, "unknown", "RVS_CMD_NEW_SERVICE", svc(port=85, extra=attr(40, u32(1))))
truncated = svc(port=86)[:-4]
fixed = u16(len(truncated)) + truncated[2:]
case("truncated nest", errno.EINVAL, "", "RVS_CMD_NEW_SERVICE", fixed)
case("nest without NLA_F_NESTED", errno.EINVAL, "", "RVS_CMD_NEW_SERVICE",
     attr(U["RVS_CMD_ATTR_SERVICE"], svc(port=87)[4:]))
case("u32 attribute of 2 bytes", errno.EINVAL, "", "RVS_CMD_NEW_SERVICE", svc(port=88), attr(U["RVS_CMD_ATTR_TIMEOUT_TCP"], u16(5)))
case("weight 70000", errno.ERANGE, "weight", "RVS_CMD_NEW_DEST", svc(), dest(addr="10.0.1.2", weight=70000))
case("unknown forwarding method", errno.EINVAL, "forwarding method", "RVS_CMD_NEW_DEST", svc(), dest(addr="10.0.1.3", fwd=7))
case("FullNAT without local addresses", errno.EINVAL, "local addresses", "RVS_CMD_NEW_DEST", svc(), dest(addr="10.0.1.3", fwd=5))
case("DR with port mapping", errno.EINVAL, "masquerading", "RVS_CMD_NEW_DEST", svc(), dest(addr="10.0.1.4", port=8080, fwd=3))
case("lower threshold above upper", errno.ERANGE, "threshold", "RVS_CMD_NEW_DEST", svc(), dest(addr="10.0.1.5", uth=5, lth=9))
case("server for missing service", errno.ESRCH, "no such service", "RVS_CMD_NEW_DEST", svc(port=99), dest())
case("edit missing server", errno.ENOENT, "no such real server", "RVS_CMD_SET_DEST", svc(), dest(addr="10.0.9.9"))
case("delete missing service", errno.ESRCH, "no such service", "RVS_CMD_DEL_SERVICE", svc(port=99, sched=None, flags=False))
case("missing dest attribute", errno.EINVAL, "real server attribute missing", "RVS_CMD_NEW_DEST", svc())
case("unknown command 99", errno.EOPNOTSUPP, "", 99)


def laddrs(*addrs):
    return attr(U["RVS_SVC_ATTR_LADDRS"], b"".join(attr(U["RVS_LADDR_ATTR_ADDR"], addr_any(a)) for a in addrs),
                nested=True)


# FullNAT's local addresses, on the IPv4 service (which stays in the table).
case("local address twice", errno.EINVAL, "given twice", "RVS_CMD_SET_SERVICE", svc(extra=laddrs("10.0.2.1", "10.0.2.1")))
case("multicast local address", errno.EINVAL, "unicast", "RVS_CMD_SET_SERVICE", svc(extra=laddrs("224.0.0.1")))
case("65 local addresses", errno.EINVAL, "at most 64", "RVS_CMD_SET_SERVICE",
     svc(extra=laddrs(*["10.0.2.%d" % i for i in range(1, 66)])))
case("IPv6 local address, IPv4 service", errno.EINVAL, "are IPv4 addresses", "RVS_CMD_SET_SERVICE", svc(extra=laddrs("fd00::1")))
case("local addresses set", 0, "", "RVS_CMD_SET_SERVICE", svc(extra=laddrs("10.0.2.1")))
case("FullNAT real server", 0, "", "RVS_CMD_NEW_DEST", svc(), dest(addr="10.0.1.6", port=8080, fwd=5))
case("local addresses cleared under FullNAT", errno.EBUSY, "need its local addresses", "RVS_CMD_SET_SERVICE",
     svc(extra=laddrs()))
case("FullNAT port range upside down", errno.EINVAL, "must not exceed", "RVS_CMD_SET_CONFIG",
     attr(U["RVS_CMD_ATTR_FULLNAT_PORT_MIN"], u32(2000)), attr(U["RVS_CMD_ATTR_FULLNAT_PORT_MAX"], u32(1999)))
case("FullNAT port 0", errno.ERANGE, "1 to 65535", "RVS_CMD_SET_CONFIG", attr(U["RVS_CMD_ATTR_FULLNAT_PORT_MIN"], u32(0)))

# The table holds exactly what the valid requests made.
err, _, replies = nl.rvs("RVS_CMD_GET_SERVICE", flags=1 | 0x300)
if len(replies) != 2:
    failures.append("expected 2 services (IPv4, IPv6) after all cases, dump returned %d" % len(replies))
nl.rvs("RVS_CMD_FLUSH")

for f in failures:
    print("# FAIL: " + f)
sys.exit(1 if failures else 0)
