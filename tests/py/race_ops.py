"""Raw-netlink load for the races test (tests/vm/57-races.sh): one process
sends RVS requests in a loop until a deadline, so the module sees far more
concurrent requests than rvsadm processes (one exec each) can make under
TCG. Modes: "write" (add, edit, delete services and real servers from a
small pool, zero, set timeouts, rarely flush) and "read" (every dump and
get). Survives module reloads (re-resolves the family). Writes
"requests ok refused bad slowest_ms" to STATFILE; "bad" counts answers
other than success or the expected refusals, and timeouts.

usage: race_ops.py write|read ENDFILE SEED STATFILE

Python starts slowly in the test VM (tens of seconds under a loaded TCG
host), so the test starts it early: once connected it creates
STATFILE.ready, then waits for ENDFILE, which holds the deadline (epoch
seconds).
"""

import errno
import os
import random
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rvsnl  # noqa: E402

NLM_F_DUMP = 0x300
# Refusals the pool makes likely: exists, no such service / server, the
# family gone during an unload (ENOENT, EOPNOTSUPP), the namespace being
# set up again (ENODEV).
EXPECTED = {errno.EEXIST, errno.ESRCH, errno.ENOENT, errno.EOPNOTSUPP, errno.ENODEV}
SCHEDS = [b"rr\0", b"wrr\0", b"lc\0", b"wlc\0", b"sed\0", b"nq\0", b"sh\0", b"mh\0"]


FAILS = [0]


def connect():
    while True:
        try:
            g = rvsnl.Genl()
            g.sock.settimeout(60)
            return g
        except OSError as e:
            # The family is gone (an unload) or the controller is slow.
            FAILS[0] += 1
            if FAILS[0] <= 3:
                print("# race_ops: cannot resolve the family: %r" % (e,), file=sys.stderr)
            time.sleep(0.2)
            if END and time.time() > END:
                return None


def svc(rnd, full, udp=None):
    udp = rnd.random() < 0.2 if udp is None else udp
    addr = "10.0.100.%d" % rnd.randint(1, 3)
    if not full:
        return rvsnl.svc(proto=17 if udp else 6, addr=addr, port=53 if udp else 80, sched=None, flags=False)
    return rvsnl.svc(proto=17 if udp else 6, addr=addr, port=53 if udp else 80, sched=rnd.choice(SCHEDS))


def dest(rnd, udp_port=80):
    return rvsnl.dest(addr="10.0.1.%d" % rnd.randint(1, 3), port=udp_port, fwd=0, weight=rnd.randint(0, 3))


def write_op(g, rnd):
    k = rnd.randrange(100)
    udp = rnd.random() < 0.2
    port = 53 if udp else 80
    if k < 15:
        return g.rvs("RVS_CMD_NEW_SERVICE", svc(rnd, True, udp))
    if k < 25:
        return g.rvs("RVS_CMD_DEL_SERVICE", svc(rnd, False, udp))
    if k < 35:
        return g.rvs("RVS_CMD_SET_SERVICE", svc(rnd, True, udp))
    if k < 60:
        return g.rvs("RVS_CMD_NEW_DEST", svc(rnd, False, udp), dest(rnd, port))
    if k < 70:
        return g.rvs("RVS_CMD_SET_DEST", svc(rnd, False, udp), dest(rnd, port))
    if k < 85:
        return g.rvs("RVS_CMD_DEL_DEST", svc(rnd, False, udp), dest(rnd, port))
    if k < 92:
        return g.rvs("RVS_CMD_ZERO", *([svc(rnd, False, udp)] if rnd.random() < 0.5 else []))
    if k < 98:
        a = rvsnl.U
        return g.rvs("RVS_CMD_SET_CONFIG",
                     rvsnl.attr(a["RVS_CMD_ATTR_TIMEOUT_TCP"], rvsnl.u32(rnd.randint(1, 900))),
                     rvsnl.attr(a["RVS_CMD_ATTR_TIMEOUT_UDP"], rvsnl.u32(rnd.randint(1, 300))))
    return g.rvs("RVS_CMD_FLUSH")


def read_op(g, rnd):
    k = rnd.randrange(6)
    if k == 0:
        return g.rvs("RVS_CMD_GET_SERVICE", flags=1 | NLM_F_DUMP)
    if k == 1:
        return g.rvs("RVS_CMD_GET_DEST", svc(rnd, False), flags=1 | NLM_F_DUMP)
    if k == 2:
        return g.rvs("RVS_CMD_GET_CONN", flags=1 | NLM_F_DUMP)
    if k == 3:
        return g.rvs("RVS_CMD_GET_INFO")
    if k == 4:
        return g.rvs("RVS_CMD_GET_CONFIG")
    return g.rvs("RVS_CMD_GET_SERVICE", svc(rnd, False))


def main():
    global END
    mode, endfile, seed, statfile = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    rnd = random.Random(seed)
    op = write_op if mode == "write" else read_op
    n = ok = refused = bad = slowest = 0
    g = connect()
    open(statfile + ".ready", "w").close()
    while not os.path.exists(endfile):
        time.sleep(0.1)
    END = float(open(endfile).read())
    while g is not None and time.time() < END:
        t0 = time.time()
        try:
            err, msg, _ = op(g, rnd)
        except socket.timeout:
            bad += 1
            print("# race_ops %s: no answer in 60 s" % mode, file=sys.stderr)
            g = connect()
            continue
        except OSError as e:
            # A broken socket is a bug, not a refusal: unloading the
            # module answers requests with an errno, it does not break
            # the caller's socket.
            bad += 1
            n += 1
            print("# race_ops %s: socket error %r" % (mode, e), file=sys.stderr)
            g = connect()
            continue
        slowest = max(slowest, int((time.time() - t0) * 1000))
        n += 1
        if err == 0:
            ok += 1
        elif err in EXPECTED or (err == errno.EPROTONOSUPPORT and not msg):
            # EPROTONOSUPPORT without a message: a dump asked for while
            # rmmod is under way (the netlink core cannot take a reference
            # on the going module, __netlink_dump_start).
            refused += 1
            if err == errno.ENOENT and not msg:
                g = connect()  # the family may have been re-registered
        else:
            bad += 1
            print("# race_ops %s: errno %d (%s)" % (mode, err, msg), file=sys.stderr)
    with open(statfile, "w") as f:
        f.write("%d %d %d %d %d\n" % (n, ok, refused, bad, slowest))


END = 0.0
if __name__ == "__main__":
    main()
