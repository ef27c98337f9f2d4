#!/usr/bin/env python3
"""Control-plane batch loader for the benchmark: adds N TCP services with
10 NAT real servers each over ONE generic netlink socket, one request (and
ACK) per operation, to the kernel's IPVS (family "IPVS") or to rvs ("RVS").
Both families share IPVS's message and attribute numbers, so the same bytes
go to both engines and only the kernel side differs. Prints the seconds.

With "rvs-apply" the same operations go to rvs as ONE request,
RVS_CMD_APPLY (what rvsadm -R --atomic sends): all or nothing, one ACK.
IPVS has no such request; one request per operation is the fastest it
can be loaded over one socket.

usage: nlbatch.py ipvs|rvs|rvs-apply NSVCS
The services are 10.100.x.y:80 (x.y from the service index), real servers
172.16.(i % 250).1-10:80, as tests/bench/in-vm.sh's per-call loop makes them.
"""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
import rvsnl  # noqa: E402

T0 = 0.0


def main():
    eng, n = sys.argv[1], int(sys.argv[2])
    g = rvsnl.Genl(b"IPVS" if eng == "ipvs" else b"RVS")
    t0 = time.monotonic()
    global T0
    T0 = t0
    if eng == "rvs-apply":
        apply(g, n)
        print("%.3f" % (time.monotonic() - t0))
        return
    for i in range(n):
        a = "10.%d.%d.%d" % (100 + i // 65536, i // 256 % 256, i % 256)
        s = rvsnl.svc(proto=6, addr=a, port=80, sched=b"rr\0")
        err, msg, _ = g.rvs("RVS_CMD_NEW_SERVICE", s)
        if err:
            sys.exit("nlbatch: add service %s: errno %d %s" % (a, err, msg))
        key = rvsnl.svc(proto=6, addr=a, port=80, sched=None, flags=False)
        for j in range(1, 11):
            d = rvsnl.dest(addr="172.16.%d.%d" % (i % 250, j), port=80, fwd=0, weight=1)
            err, msg, _ = g.rvs("RVS_CMD_NEW_DEST", key, d)
            if err:
                sys.exit("nlbatch: add real server to %s: errno %d %s" % (a, err, msg))
    print("%.3f" % (time.monotonic() - t0))


def apply(g, n):
    """All operations in one RVS_CMD_APPLY request."""
    U = rvsnl.U
    op = U["RVS_CMD_ATTR_OP"]
    cmd = U["RVS_OP_ATTR_CMD"]
    new_svc = rvsnl.attr(cmd, rvsnl.u32(U["RVS_CMD_NEW_SERVICE"]))
    new_dest = rvsnl.attr(cmd, rvsnl.u32(U["RVS_CMD_NEW_DEST"]))
    parts = []
    for i in range(n):
        a = "10.%d.%d.%d" % (100 + i // 65536, i // 256 % 256, i % 256)
        parts.append(rvsnl.attr(op, new_svc + rvsnl.svc(proto=6, addr=a, port=80, sched=b"rr\0"), nested=True))
        key = rvsnl.svc(proto=6, addr=a, port=80, sched=None, flags=False)
        for j in range(1, 11):
            d = rvsnl.dest(addr="172.16.%d.%d" % (i % 250, j), port=80, fwd=0, weight=1)
            parts.append(rvsnl.attr(op, new_dest + key + d, nested=True))
    body = b"".join(parts)
    # How much of the time is this script's own encoding (stderr).
    print("nlbatch: %d bytes encoded in %.3f s" % (len(body), time.monotonic() - T0), file=sys.stderr)
    # SO_SNDBUFFORCE (root), NETLINK_CAP_ACK: the request is megabytes and
    # must not come back inside an error.
    g.sock.setsockopt(socket.SOL_SOCKET, 32, len(body) + 65536)
    g.sock.setsockopt(270, 10, 1)
    g.sock.settimeout(900)
    err, msg, _ = g.rvs("RVS_CMD_APPLY", body)
    if err:
        sys.exit("nlbatch: apply: errno %d %s" % (err, msg))


if __name__ == "__main__":
    main()
