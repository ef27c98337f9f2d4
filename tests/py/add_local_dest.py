"""Adds a Local (IP_VS_CONN_F_LOCALNODE, forwarding method 1) real server
to a TCP service over raw generic netlink: neither ipvsadm nor rvsadm has
an option for it, but the kernel's IPVS takes it from any netlink client.
The same message goes to the "RVS" or the "IPVS" family (rvs.h keeps
IPVS's numbers).

usage: add_local_dest.py RVS|IPVS VIP PORT SERVER_ADDR SERVER_PORT
"""
import sys

import rvsnl

family, vip, port, addr, dport = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
g = rvsnl.Genl(family.encode())
local = rvsnl.U["RVS_CONN_F_LOCALNODE"]
err, msg, _ = g.rvs("RVS_CMD_NEW_DEST", rvsnl.svc(addr=vip, port=port, sched=None, flags=False),
                    rvsnl.dest(addr=addr, port=dport, fwd=local))
if err:
    sys.exit("NEW_DEST %s:%d -> %s:%d Local on %s: errno %d %s" % (vip, port, addr, dport, family, err, msg))
