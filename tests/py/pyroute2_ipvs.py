# SPDX-License-Identifier: GPL-2.0
"""pyroute2's IPVS API (PyPI pyroute2, pyroute2/ipvs.py) against the
"IPVS" family of whichever engine is loaded, as its users call it.

  pyroute2_ipvs.py add VIP RIP1 RIP2   a TCP service VIP:8080 (pyroute2's
                                       defaults: wlc, timeout 0, netmask
                                       255.255.255.255) and two NAT real
                                       servers, weights 1 and 2
  pyroute2_ipvs.py check VIP RIP1 RIP2 dumps and gets them back, edits the
                                       scheduler and a weight, deletes one
                                       server, then the service

Prints what it sees; exits non-zero (with the reason) on any difference.
"""
import socket
import sys

from pyroute2 import IPVS, IPVSDest, IPVSService

PORT = 8080
MASQ = 0  # IP_VS_CONN_F_MASQ


def svc(vip, **kw):
    return IPVSService(addr=vip, port=PORT, protocol=socket.IPPROTO_TCP, **kw)


def call(f, *args):
    """Runs one pyroute2 request to its end (its answer is a generator)."""
    return list(f(*args))


def ours(ipvs, vip):
    found = []
    for m in call(ipvs.service, "dump"):
        s = IPVSService.from_message(m)
        if s.get("addr") == vip and s.get("port") == PORT:
            found.append(s)
    return found


def dests(ipvs, vip):
    out = {}
    for m in call(ipvs.dest, "dump", svc(vip)):
        d = IPVSDest.from_message(m)
        out[d["addr"]] = d
    return out


def expect(what, got, want):
    print("%s: %r" % (what, got), flush=True)
    if got != want:
        sys.exit("%s: expected %r, got %r" % (what, want, got))


def add(ipvs, vip, rip1, rip2):
    call(ipvs.service, "add", svc(vip))
    call(ipvs.dest, "add", svc(vip), IPVSDest(addr=rip1, port=PORT, fwd_method=MASQ, weight=1))
    call(ipvs.dest, "add", svc(vip), IPVSDest(addr=rip2, port=PORT, fwd_method=MASQ, weight=2))
    print("added %s:%d with %s and %s" % (vip, PORT, rip1, rip2), flush=True)


def check(ipvs, vip, rip1, rip2):
    found = ours(ipvs, vip)
    expect("services at %s:%d in the dump" % (vip, PORT), len(found), 1)
    s = found[0]
    expect("scheduler", s.get("sched_name"), "wlc")
    expect("protocol", s.get("protocol"), socket.IPPROTO_TCP)
    # from_message() leaves its defaults under the short names it does not
    # map (timeout, fwd_method): the kernel's values are under the
    # attribute names.
    expect("timeout", s.get("IPVS_SVC_ATTR_TIMEOUT"), 0)
    # A plain GET (not a dump) of the one service.
    got = [IPVSService.from_message(m) for m in call(ipvs.service, "get", svc(vip))]
    expect("GET of the service: its addresses", [(g.get("addr"), g.get("port")) for g in got], [(vip, PORT)])
    d = dests(ipvs, vip)
    expect("real servers", sorted(d), sorted([rip1, rip2]))
    expect("weights", [d[rip1].get("weight"), d[rip2].get("weight")], [1, 2])
    expect("forwarding", [d[r].get("IPVS_DEST_ATTR_FWD_METHOD") for r in (rip1, rip2)], [MASQ, MASQ])

    call(ipvs.service, "set", svc(vip, sched_name="rr"))
    expect("scheduler after set", ours(ipvs, vip)[0].get("sched_name"), "rr")
    call(ipvs.dest, "set", svc(vip), IPVSDest(addr=rip2, port=PORT, fwd_method=MASQ, weight=5))
    expect("rs2's weight after set", dests(ipvs, vip)[rip2].get("weight"), 5)
    call(ipvs.dest, "del", svc(vip), IPVSDest(addr=rip1, port=PORT))
    expect("real servers after del", sorted(dests(ipvs, vip)), [rip2])
    call(ipvs.service, "del", svc(vip))
    expect("services at %s:%d after del" % (vip, PORT), len(ours(ipvs, vip)), 0)


def main():
    cmd, vip, rip1, rip2 = sys.argv[1:5]
    with IPVS() as ipvs:
        {"add": add, "check": check}[cmd](ipvs, vip, rip1, rip2)


if __name__ == "__main__":
    main()
