# SPDX-License-Identifier: GPL-2.0
"""What lc, wlc, sed, nq and ovf choose, computed in userspace.

A model of IPVS's ip_vs_{lc,wlc,sed,nq,ovf}.c (and so of rvs's
schedulers) for connections that all stay open: every server's inactive
count is 0 and its active count is what the model has sent it. Servers
are listed newest first, as IPVS keeps them; ties go to the first listed.

  load_model.py SCHED NAME:WEIGHT... N   prints the N choices, one a word
                                         ("REFUSED" when none is allowed)
"""
import sys


def overhead(sched, active):
    # lc/wlc: active connections weigh 256 inactive ones (none here);
    # sed/nq: the expected delay, active + 1.
    return active * 256 if sched in ("lc", "wlc") else active + 1


def choose(sched, servers, active):
    """servers: [(name, weight)] newest first; active: {name: count}."""
    least = None
    for name, w in servers:
        if w == 0:
            continue
        if sched == "ovf":
            # The highest weight whose active connections do not exceed it.
            if active[name] > w:
                continue
            if least is None or w > dict(servers)[least]:
                least = name
            continue
        if sched == "nq" and active[name] == 0:
            return name
        doh = overhead(sched, active[name])
        if least is None:
            least = name
            continue
        loh = overhead(sched, active[least])
        if sched == "lc":
            better = doh < loh
        else:
            better = loh * w > doh * dict(servers)[least]
        if better:
            least = name
    return least


def run(sched, servers, n):
    active = {name: 0 for name, _ in servers}
    out = []
    for _ in range(n):
        name = choose(sched, servers, active)
        if name is None:
            out.append("REFUSED")
            continue
        active[name] += 1
        out.append(name)
    return out


if __name__ == "__main__":
    sched = sys.argv[1]
    servers = [(a.split(":")[0], int(a.split(":")[1])) for a in sys.argv[2:-1]]
    print(" ".join(run(sched, servers, int(sys.argv[-1]))))
